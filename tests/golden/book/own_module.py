# The book's TransformerBlock (chapter 4) on a small configuration, as examples/own_module.cpp writes it by
# hand in shaped: the same seed, the same input, the block's output. The example prints the same lines.
import pathlib
import runpy

import torch

TransformerBlock = runpy.run_path(str(pathlib.Path(__file__).with_name("chapter4.py")))["TransformerBlock"]

CONFIG = {
    "vocab_size": 11,
    "context_length": 6,
    "emb_dim": 8,
    "n_heads": 2,
    "n_layers": 1,
    "drop_rate": 0.0,
    "qkv_bias": False,
}


def main():
    torch.manual_seed(123)
    x = torch.rand(2, 4, 8)
    block = TransformerBlock(CONFIG)
    with torch.no_grad():
        output = block(x)
    print(f"Input shape: {x.shape}")
    print(f"Output shape: {output.shape}")
    print(output)
    with torch.no_grad():
        print(block(x[:, :3]))


if __name__ == "__main__":
    main()
