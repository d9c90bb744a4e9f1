# The book's MultiHeadAttention at GPT-2 small's sizes (d_in = d_out = 768, 12 heads, context 1024) on a
# batch of 2 x 1024 tokens; examples/book/gpt2_small.cpp prints the same lines.
import runpy
import pathlib

import torch

book = runpy.run_path(str(pathlib.Path(__file__).with_name("chapter3.py")))
torch.manual_seed(123)
mha = book["MultiHeadAttention"](768, 768, 1024, 0.0, num_heads=12)
mha.eval()
x = torch.rand(2, 1024, 768)
context_vecs = mha(x)
print(f'{context_vecs.shape = }')
print(f'{context_vecs = }')
