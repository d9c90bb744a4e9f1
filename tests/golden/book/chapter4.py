# The GPT model of chapter 4 of "Build a Large Language Model (From Scratch)", as the book writes it, run as
# the chapter runs it. examples/book/chapter4.cpp prints the same lines. Token ids are given as numbers
# ("Every effort moves you", "Every day holds a", "Hello, I am" in GPT-2's tokenizer).
import pathlib
import runpy

import torch
import torch.nn as nn

MultiHeadAttention = runpy.run_path(str(pathlib.Path(__file__).with_name("chapter3.py")))["MultiHeadAttention"]

GPT_CONFIG_124M = {
    "vocab_size": 50257,     # vocabulary size
    "context_length": 1024,  # context length
    "emb_dim": 768,          # embedding dimension
    "n_heads": 12,           # number of attention heads
    "n_layers": 12,          # number of layers
    "drop_rate": 0.1,        # dropout rate
    "qkv_bias": False,       # query-key-value bias
}


# [py_layer_norm]
class LayerNorm(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        norm_x = (x - mean) / torch.sqrt(var + self.eps)
        return self.scale * norm_x + self.shift
# [py_layer_norm]


class GELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi)) * (x + 0.044715 * torch.pow(x, 3))))


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]), GELU(),
                                    nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]))

    def forward(self, x):
        return self.layers(x)


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(d_in=cfg["emb_dim"], d_out=cfg["emb_dim"], context_length=cfg["context_length"],
                                      num_heads=cfg["n_heads"], dropout=cfg["drop_rate"], qkv_bias=cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

    def forward(self, x):
        shortcut = x
        x = self.drop_shortcut(self.att(self.norm1(x)))
        x = x + shortcut
        shortcut = x
        x = self.drop_shortcut(self.ff(self.norm2(x)))
        return x + shortcut


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    # [py_gpt_forward]
    def forward(self, in_idx):
        batch_size, seq_len = in_idx.shape
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(seq_len))
        x = self.drop_emb(x)
        x = self.trf_blocks(x)
        return self.out_head(self.final_norm(x))
    # [py_gpt_forward]


# [py_generate]
def generate_text_simple(model, idx, max_new_tokens, context_size):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)
        logits = logits[:, -1, :]
        idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx
# [py_generate]


def main():
    # Layer normalisation, step by step (section 4.2).
    torch.manual_seed(123)
    batch_example = torch.randn(2, 5)
    layer = nn.Sequential(nn.Linear(5, 6), nn.ReLU())
    out = layer(batch_example)
    print(f'out = {out}')
    mean = out.mean(dim=-1, keepdim=True)
    var = out.var(dim=-1, keepdim=True)
    print(f'mean = {mean}')
    print(f'var = {var}')
    out_norm = (out - mean) / torch.sqrt(var)
    print(f'out_norm = {out_norm}')
    print(f'mean = {out_norm.mean(dim=-1, keepdim=True)}')
    print(f'var = {out_norm.var(dim=-1, keepdim=True)}')
    ln = LayerNorm(emb_dim=5)
    out_ln = ln(batch_example)
    print(f'mean = {out_ln.mean(dim=-1, keepdim=True)}')
    print(f'var = {out_ln.var(dim=-1, unbiased=False, keepdim=True)}')

    # The feed-forward network and the transformer block (sections 4.3, 4.5).
    ffn = FeedForward(GPT_CONFIG_124M)
    x = torch.rand(2, 3, 768)
    print(f'ffn(x).shape = {ffn(x).shape}')
    torch.manual_seed(123)
    x = torch.rand(2, 4, 768)
    block = TransformerBlock(GPT_CONFIG_124M)
    output = block(x)
    print(f'Input shape: {x.shape}')
    print(f'Output shape: {output.shape}')

    # The GPT model, in training mode as the book runs it (section 4.6).
    batch = torch.tensor([[6109, 3626, 6100, 345], [6109, 1110, 6622, 257]])
    torch.manual_seed(123)
    model = GPTModel(GPT_CONFIG_124M)
    out = model(batch)
    print(f'Input batch:\n{batch}')
    print(f'Output shape: {out.shape}')
    print(out)
    total_params = sum(p.numel() for p in model.parameters())
    print(f'Total number of parameters: {total_params:,}')
    print(f'Token embedding layer shape: {model.tok_emb.weight.shape}')
    print(f'Output layer shape: {model.out_head.weight.shape}')

    # Greedy generation (section 4.7).
    model.eval()
    encoded_tensor = torch.tensor([15496, 11, 314, 716]).unsqueeze(0)
    out = generate_text_simple(model=model, idx=encoded_tensor, max_new_tokens=6,
                               context_size=GPT_CONFIG_124M["context_length"])
    print(f'Output: {out}')
    print(f'Output length: {len(out[0])}')


if __name__ == "__main__":
    main()
