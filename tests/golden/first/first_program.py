# What examples/first_program.cpp prints, in PyTorch (the golden: first_program.out, written by
# `python3 first_program.py > first_program.out`).
import torch

torch.manual_seed(123)
queries = torch.rand(1, 2, 6)
keys = torch.rand(1, 2, 6)
values = torch.rand(1, 2, 6)

# [heads]
# (batch, num_tokens, d_out) -> (batch, num_heads, num_tokens, head_dim)
q = queries.view(1, 2, 3, 2).transpose(1, 2)
k = keys.view(1, 2, 3, 2).transpose(1, 2)
v = values.view(1, 2, 3, 2).transpose(1, 2)
attn_scores = q @ k.transpose(2, 3)
# [heads]
attn_weights = torch.softmax(attn_scores / k.shape[-1] ** 0.5, dim=-1)
context_vec = (attn_weights @ v).transpose(1, 2).contiguous().view(1, 2, 6)

print("q.shape =", q.shape)
print("attn_weights.shape =", attn_weights.shape)
print("context_vec.shape =", context_vec.shape)
print("context_vec =", context_vec)
