# The answer's corrected simple form: per-head split, cat, out_proj d_out -> d_out.
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

context_vec = []
q_split = q.split(head_dim, dim=-1)
k_split = k.split(head_dim, dim=-1)
v_split = v.split(head_dim, dim=-1)

for h in range(num_heads):
    q_h = q_split[h]
    k_h = k_split[h]
    v_h = v_split[h]
    attn_scores1 = q_h @ k_h.transpose(1, 2)
    context_vec1 = attn_scores1 @ v_h
    context_vec.append(context_vec1)

context_vec_concat = torch.cat(context_vec, dim=-1)
context_vec_Final = out_proj(context_vec_concat)
print(f'{context_vec_Final.shape = } {context_vec_Final = }')
