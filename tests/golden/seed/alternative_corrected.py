# The answer's corrected alternative form: view/transpose, then out_proj d_out -> d_out.
import torch
import torch.nn as nn
torch.manual_seed(1223)

batch = 1
num_tokens = 2
d_out = 6
num_heads = 3
head_dim = d_out // num_heads

out_proj = nn.Linear(d_out, d_out)
print(f'{batch = } {num_tokens = } {d_out = } {num_heads = } {head_dim = }')

q = torch.rand(batch, num_tokens, d_out)
k = torch.rand(batch, num_tokens, d_out)
v = torch.rand(batch, num_tokens, d_out)
print(f'{q.shape = } {k.shape = } {v.shape = }')

q = q.view(batch, num_tokens, num_heads, head_dim).transpose(1, 2)
k = k.view(batch, num_tokens, num_heads, head_dim).transpose(1, 2)
v = v.view(batch, num_tokens, num_heads, head_dim).transpose(1, 2)
print(f'{q.shape = } {k.shape = } {v.shape = }')

attn_scores = q @ k.transpose(2, 3)
context_vec = attn_scores @ v

context_vec = context_vec.transpose(1, 2).contiguous().view(batch, num_tokens, d_out)
context_vec_Final = out_proj(context_vec)
print(f'{context_vec_Final.shape = } {context_vec_Final = }')
