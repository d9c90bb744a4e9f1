# The book's MultiHeadAttention (listing 3.5) at GPT-2 small's sizes on a prompt of N tokens:
#   /usr/bin/python3 prompt_length.py N
# examples/book/prompt_length.cpp prints the same text for the same N.
import pathlib
import runpy
import sys

import torch


def main(n):
    book = runpy.run_path(str(pathlib.Path(__file__).with_name("chapter3.py")))
    torch.manual_seed(123)
    mha = book["MultiHeadAttention"](d_in=768, d_out=768, context_length=1024, dropout=0.0, num_heads=12)
    x = torch.rand(2, n, 768)
    mha.eval()
    with torch.no_grad():
        print(mha(x))


if __name__ == "__main__":
    main(int(sys.argv[1]))
