# Chapter 2 of "Build a Large Language Model (From Scratch)" from GPT-2's tokenizer on, as the book writes it
# and runs it: the-verdict.txt tokenized, input-target pairs, GPTDatasetV1 and create_dataloader_v1, token and
# position embeddings. examples/book/chapter2.cpp prints the same lines. The tokenizer is gpt2_bpe.py's (the
# book uses tiktoken's, whose ids it gives); printed tensors are detached (no requires_grad, no grad_fn).
import pathlib
import sys

import torch
from torch.utils.data import DataLoader, Dataset

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from gpt2_bpe import Tokenizer  # noqa: E402

tokenizer = Tokenizer()


# [py_dataset]
class GPTDatasetV1(Dataset):
    def __init__(self, txt, tokenizer, max_length, stride):
        self.input_ids = []
        self.target_ids = []
        token_ids = tokenizer.encode(txt, allowed_special={"<|endoftext|>"})
        assert len(token_ids) > max_length, "Number of tokenized inputs must at least be equal to max_length+1"
        for i in range(0, len(token_ids) - max_length, stride):
            input_chunk = token_ids[i:i + max_length]
            target_chunk = token_ids[i + 1: i + max_length + 1]
            self.input_ids.append(torch.tensor(input_chunk))
            self.target_ids.append(torch.tensor(target_chunk))

    def __len__(self):
        return len(self.input_ids)

    def __getitem__(self, idx):
        return self.input_ids[idx], self.target_ids[idx]


def create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128, shuffle=True, drop_last=True,
                         num_workers=0):
    dataset = GPTDatasetV1(txt, tokenizer, max_length, stride)
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
                      num_workers=num_workers)
# [py_dataset]


def main():
    raw_text = (pathlib.Path(__file__).resolve().parents[2] / "data" / "the-verdict.txt").read_text(encoding="utf-8")
    print("Total number of character:", len(raw_text))
    print(raw_text[:99])

    text = "Hello, do you like tea? <|endoftext|> In the sunlit terraces" "of someunknownPlace."
    integers = tokenizer.encode(text, allowed_special={"<|endoftext|>"})
    print(integers)
    print(tokenizer.decode(integers))

    enc_text = tokenizer.encode(raw_text)
    print(len(enc_text))
    enc_sample = enc_text[50:]
    context_size = 4
    x = enc_sample[:context_size]
    y = enc_sample[1:context_size + 1]
    print(f"x: {x}")
    print(f"y:      {y}")
    for i in range(1, context_size + 1):
        print(enc_sample[:i], "---->", enc_sample[i])
    for i in range(1, context_size + 1):
        print(tokenizer.decode(enc_sample[:i]), "---->", tokenizer.decode([enc_sample[i]]))

    dataloader = create_dataloader_v1(raw_text, batch_size=1, max_length=4, stride=1, shuffle=False)
    data_iter = iter(dataloader)
    print(next(data_iter))
    print(next(data_iter))

    dataloader = create_dataloader_v1(raw_text, batch_size=8, max_length=4, stride=4, shuffle=False)
    inputs, targets = next(iter(dataloader))
    print("Inputs:\n", inputs)
    print("\nTargets:\n", targets)

    # Shuffled, as chapter 5's training loader is: the first inputs of each batch, two passes.
    torch.manual_seed(123)
    dataloader = create_dataloader_v1(raw_text, batch_size=8, max_length=4, stride=4, shuffle=True)
    print("Batches:", len(dataloader))
    for epoch in range(2):
        print("First ids:", [int(x[0, 0]) for x, _ in dataloader][:6])

    input_ids = torch.tensor([2, 3, 5, 1])
    torch.manual_seed(123)
    embedding_layer = torch.nn.Embedding(6, 3)
    with torch.no_grad():
        print(embedding_layer.weight.detach())
        print(embedding_layer(torch.tensor([3])))
        print(embedding_layer(input_ids))

        vocab_size, output_dim = 50257, 256
        token_embedding_layer = torch.nn.Embedding(vocab_size, output_dim)
        max_length = 4
        dataloader = create_dataloader_v1(raw_text, batch_size=8, max_length=max_length, stride=max_length,
                                          shuffle=False)
        inputs, targets = next(iter(dataloader))
        print("Token IDs:\n", inputs)
        print("\nInputs shape:\n", inputs.shape)
        token_embeddings = token_embedding_layer(inputs)
        print(token_embeddings.shape)
        pos_embedding_layer = torch.nn.Embedding(max_length, output_dim)
        pos_embeddings = pos_embedding_layer(torch.arange(max_length))
        print(pos_embeddings.shape)
        input_embeddings = token_embeddings + pos_embeddings
        print(input_embeddings.shape)
        print(input_embeddings[:, :, 0])


if __name__ == "__main__":
    main()
