"""The attention of today's models, as the book's bonus notebooks write it (rasbt/LLMs-from-scratch:
ch05/07_gpt_to_llama, ch05/11_qwen3, ch05/12_gemma3), ported to Debian's PyTorch 1.13: the reference that
make_goldens.py runs to make modern_goldens.hpp. Written out where the notebooks call PyTorch 2 functions.
Imported by make_goldens.py; prints nothing."""
import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    """Root-mean-square norm over the last axis, in float32: x / sqrt(mean(x^2) + eps), then times `scale`
    (Llama 3, Qwen3: `scale` starts at ones) or, with one_plus=True, times (1 + scale) (Gemma 3: `scale`
    starts at zeros); plus `shift` when bias=True."""

    def __init__(self, emb_dim, eps=1e-6, bias=False, one_plus=False):
        super().__init__()
        self.eps = eps
        self.one_plus = one_plus
        self.scale = nn.Parameter(torch.zeros(emb_dim) if one_plus else torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim)) if bias else None

    def forward(self, x):
        x = x.to(torch.float32)
        variance = x.pow(2).mean(dim=-1, keepdim=True)
        norm_x = x * torch.rsqrt(variance + self.eps)
        norm_x = norm_x * ((1.0 + self.scale) if self.one_plus else self.scale)
        if self.shift is not None:
            norm_x = norm_x + self.shift
        return norm_x


class FeedForward(nn.Module):
    """The gated feed-forward layer: fc3(act(fc1(x)) * fc2(x)), no biases; act is SiLU (Llama 3, Qwen3:
    SwiGLU) or the tanh approximation of GELU (Gemma 3)."""

    def __init__(self, emb_dim, hidden_dim, activation="silu"):
        super().__init__()
        self.fc1 = nn.Linear(emb_dim, hidden_dim, bias=False)
        self.fc2 = nn.Linear(emb_dim, hidden_dim, bias=False)
        self.fc3 = nn.Linear(hidden_dim, emb_dim, bias=False)
        self.activation = activation

    def forward(self, x):
        x_fc1 = self.fc1(x)
        x_fc2 = self.fc2(x)
        if self.activation == "silu":
            gate = nn.functional.silu(x_fc1)
        else:
            gate = nn.functional.gelu(x_fc1, approximate="tanh")
        return self.fc3(gate * x_fc2)
