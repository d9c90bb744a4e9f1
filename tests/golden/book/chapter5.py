# The opening of chapter 5 of "Build a Large Language Model (From Scratch)", as the book writes it and runs it
# (sections 5.1 to 5.3, without training): the seed-123 GPT at context 256, its text, the target
# probabilities, cross-entropy and perplexity, the loss over the-verdict.txt's training and validation
# loaders, and sampling with temperature and top-k. examples/book/chapter5.cpp prints the same lines. The
# tokenizer is gpt2_bpe.py's (tiktoken's ids); the model is untrained, so the last generation is not the
# book's trained text, only what the book's `generate` makes of this model and seed.
import pathlib
import runpy
import sys

import torch

here = pathlib.Path(__file__).parent
sys.path.insert(0, str(here))
from gpt2_bpe import Tokenizer  # noqa: E402

ch4 = runpy.run_path(str(here / "chapter4.py"))
ch2 = runpy.run_path(str(here / "chapter2.py"))
GPTModel, generate_text_simple = ch4["GPTModel"], ch4["generate_text_simple"]
create_dataloader_v1 = ch2["create_dataloader_v1"]
tokenizer = Tokenizer()

GPT_CONFIG_124M = {"vocab_size": 50257, "context_length": 256, "emb_dim": 768, "n_heads": 12, "n_layers": 12,
                   "drop_rate": 0.1, "qkv_bias": False}


def text_to_token_ids(text, tokenizer):
    return torch.tensor(tokenizer.encode(text, allowed_special={"<|endoftext|>"})).unsqueeze(0)


def token_ids_to_text(token_ids, tokenizer):
    return tokenizer.decode(token_ids.squeeze(0).tolist())


def calc_loss_batch(input_batch, target_batch, model):
    logits = model(input_batch)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())


def calc_loss_loader(data_loader, model, num_batches=None):
    total_loss = 0.
    if len(data_loader) == 0:
        return float("nan")
    num_batches = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i < num_batches:
            total_loss += calc_loss_batch(input_batch, target_batch, model).item()
        else:
            break
    return total_loss / num_batches


# [py_generate]
def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        if top_k is not None:
            top_logits, _ = torch.topk(logits, top_k)
            min_val = top_logits[:, -1]
            logits = torch.where(logits < min_val, torch.tensor(float("-inf")), logits)
        if temperature > 0.0:
            logits = logits / temperature
            logits = logits - logits.max(dim=-1, keepdim=True).values
            probs = torch.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        if idx_next == eos_id:
            break
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
# [py_generate]


def main():
    torch.manual_seed(123)
    model = GPTModel(GPT_CONFIG_124M)
    model.eval()
    with torch.no_grad():
        token_ids = generate_text_simple(model=model, idx=text_to_token_ids("Every effort moves you", tokenizer),
                                         max_new_tokens=10, context_size=GPT_CONFIG_124M["context_length"])
        print("Output text:\n", token_ids_to_text(token_ids, tokenizer))

        inputs = torch.tensor([[16833, 3626, 6100], [40, 1107, 588]])
        targets = torch.tensor([[3626, 6100, 345], [1107, 588, 11311]])
        logits = model(inputs)
        probas = torch.softmax(logits, dim=-1)
        print(probas.shape)
        token_ids = torch.argmax(probas, dim=-1, keepdim=True)
        print("Token IDs:\n", token_ids)
        print(f"Targets batch 1: {token_ids_to_text(targets[0], tokenizer)}")
        print(f"Outputs batch 1: {token_ids_to_text(token_ids[0].flatten(), tokenizer)}")
        target_probas_1 = probas[0, [0, 1, 2], targets[0]]
        print("Text 1:", target_probas_1)
        target_probas_2 = probas[1, [0, 1, 2], targets[1]]
        print("Text 2:", target_probas_2)
        log_probas = torch.log(torch.cat((target_probas_1, target_probas_2)))
        print(log_probas)
        avg_log_probas = torch.mean(log_probas)
        print(avg_log_probas)
        neg_avg_log_probas = avg_log_probas * -1
        print(neg_avg_log_probas)
        print("Logits shape:", logits.shape)
        print("Targets shape:", targets.shape)
        logits_flat = logits.flatten(0, 1)
        targets_flat = targets.flatten()
        print("Flattened logits:", logits_flat.shape)
        print("Flattened targets:", targets_flat.shape)
        loss = torch.nn.functional.cross_entropy(logits_flat, targets_flat)
        print(loss)
        perplexity = torch.exp(loss)
        print(perplexity)

    text_data = (here.parents[1] / "data" / "the-verdict.txt").read_text(encoding="utf-8")
    total_characters = len(text_data)
    total_tokens = len(tokenizer.encode(text_data))
    print("Characters:", total_characters)
    print("Tokens:", total_tokens)
    train_ratio = 0.90
    split_idx = int(train_ratio * len(text_data))
    train_data, val_data = text_data[:split_idx], text_data[split_idx:]
    torch.manual_seed(123)
    train_loader = create_dataloader_v1(train_data, batch_size=2, max_length=256, stride=256, drop_last=True,
                                        shuffle=True, num_workers=0)
    val_loader = create_dataloader_v1(val_data, batch_size=2, max_length=256, stride=256, drop_last=False,
                                      shuffle=False, num_workers=0)
    print("Train loader:")
    for x, y in train_loader:
        print(x.shape, y.shape)
    print("\nValidation loader:")
    for x, y in val_loader:
        print(x.shape, y.shape)
    train_tokens = sum(x.numel() for x, _ in train_loader)
    val_tokens = sum(x.numel() for x, _ in val_loader)
    print("Training tokens:", train_tokens)
    print("Validation tokens:", val_tokens)
    print("All tokens:", train_tokens + val_tokens)
    torch.manual_seed(123)
    with torch.no_grad():
        train_loss = calc_loss_loader(train_loader, model)
        val_loss = calc_loss_loader(val_loader, model)
    print("Training loss:", train_loss)
    print("Validation loss:", val_loss)

    vocab = {"closer": 0, "every": 1, "effort": 2, "forward": 3, "inches": 4, "moves": 5, "pizza": 6,
             "toward": 7, "you": 8}
    inverse_vocab = {v: k for k, v in vocab.items()}
    next_token_logits = torch.tensor([4.51, 0.89, -1.90, 6.75, 1.63, -1.62, -1.89, 6.28, 1.79])
    probas = torch.softmax(next_token_logits, dim=0)
    print(inverse_vocab[torch.argmax(probas).item()])
    torch.manual_seed(123)
    print(inverse_vocab[torch.multinomial(probas, num_samples=1).item()])

    def print_sampled_tokens(probas):
        torch.manual_seed(123)
        sample = [torch.multinomial(probas, num_samples=1).item() for i in range(1_000)]
        sampled_ids = torch.bincount(torch.tensor(sample), minlength=len(probas))
        for i, freq in enumerate(sampled_ids):
            print(f"{freq} x {inverse_vocab[i]}")

    print_sampled_tokens(probas)
    scaled_probas = [torch.softmax(next_token_logits / T, dim=0) for T in [1, 0.1, 5]]
    print_sampled_tokens(scaled_probas[1])
    print_sampled_tokens(scaled_probas[2])
    top_logits, top_pos = torch.topk(next_token_logits, 3)
    print("Top logits:", top_logits)
    print("Top positions:", top_pos)
    new_logits = torch.where(condition=next_token_logits < top_logits[-1], input=torch.tensor(float("-inf")),
                             other=next_token_logits)
    print(new_logits)
    print(torch.softmax(new_logits, dim=0))

    torch.manual_seed(123)
    token_ids = generate(model=model, idx=text_to_token_ids("Every effort moves you", tokenizer),
                         max_new_tokens=15, context_size=GPT_CONFIG_124M["context_length"], top_k=25,
                         temperature=1.4)
    print("Output text:\n", token_ids_to_text(token_ids, tokenizer))


if __name__ == "__main__":
    main()
