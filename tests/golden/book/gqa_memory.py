"""What examples/gqa_memory.cpp prints, from PyTorch and the book's estimators (ch04/04_gqa,
memory_estimator_gqa.py; ch04/05_mla, memory_estimator_mla.py; ch04/06_swa, memory_estimator_swa.py): one attention layer's parameters at width
4096, 32 query heads of 128, with 32 and with 8 key/value heads (tests/golden/modern/reference.py's
GroupedQueryAttention, no biases) and with a latent of 1024 (its MultiHeadLatentAttention), and the KV
cache's bytes, also with a sliding window of 1024 in five of every six layers."""
import math
import pathlib
import runpy

HERE = pathlib.Path(__file__).resolve().parent
ref = runpy.run_path(str(HERE.parent / "modern" / "reference.py"))


def count(module):
    return sum(p.numel() for p in module.parameters())


def calc_kv_bytes_total(batch, context_length, emb_dim, n_heads, n_kv_heads, n_layers, bytes_per_elem):
    # The book's estimator, as memory_estimator_gqa.py writes it.
    head_dim = math.ceil(emb_dim / n_heads)
    per_layer = batch * context_length * head_dim * n_kv_heads * 2 * bytes_per_elem
    return per_layer * n_layers


def calc_mla_bytes_total(batch, context_length, n_layers, latent_dim, bytes_per_elem):
    # The book's MLA estimator: one latent per token.
    return batch * context_length * n_layers * latent_dim * bytes_per_elem


def distribute_layers(n_layers, a, b):
    # The book's SWA estimator: a sliding-window layers for every b full ones.
    block = a + b
    blocks, rem = n_layers // block, n_layers % block
    return blocks * a + min(a, rem), blocks * b + max(0, rem - a)


def calc_swa_bytes_total(batch, context_length, window, emb_dim, n_heads, n_kv_heads, n_layers, bytes_per_elem, a, b):
    # The book's estimate_totals (total_mixed_gqa): a window's tokens in the local layers, all in the others.
    n_swa, n_full = distribute_layers(n_layers, a, b)
    local = calc_kv_bytes_total(batch, min(context_length, window), emb_dim, n_heads, n_kv_heads, 1, bytes_per_elem)
    full = calc_kv_bytes_total(batch, context_length, emb_dim, n_heads, n_kv_heads, 1, bytes_per_elem)
    return n_swa, n_full, n_swa * local + n_full * full


mha = ref["GroupedQueryAttention"](4096, 32, 32, 128)
gqa = ref["GroupedQueryAttention"](4096, 32, 8, 128)
mla = ref["MultiHeadLatentAttention"](4096, 4096, 32, 1024)
print(f"width 4096, 32 query heads of 128; grouped: 8 key/value heads, groups of {gqa.group_size}")
print(f"parameters, MHA: {count(mha):,}")
print(f"parameters, GQA: {count(gqa):,}")
print(f"parameters, MLA (latent 1024): {count(mla):,}")
mha_token = calc_kv_bytes_total(1, 1, 4096, 32, 32, 1, 4)
gqa_token = calc_kv_bytes_total(1, 1, 4096, 32, 8, 1, 4)
mla_token = calc_mla_bytes_total(1, 1, 1, 1024, 4)
print(f"KV cache per token and layer (float32): MHA {mha_token:,} bytes, GQA {gqa_token:,} bytes, MLA {mla_token:,} bytes")
mha_total = calc_kv_bytes_total(1, 32768, 4096, 32, 32, 32, 2)
gqa_total = calc_kv_bytes_total(1, 32768, 4096, 32, 8, 32, 2)
mla_total = calc_mla_bytes_total(1, 32768, 32, 1024, 2)
print(f"KV cache, 32 layers, 32768 tokens, batch 1, bf16: MHA {mha_total / 1000**3:,.2f} GB, "
      f"GQA {gqa_total / 1000**3:,.2f} GB, MLA {mla_total / 1000**3:,.2f} GB")
print(f"ratio (MHA / GQA): {mha_total // gqa_total}")
n_swa, n_full, swa_total = calc_swa_bytes_total(1, 32768, 1024, 4096, 32, 8, 32, 2, 5, 1)
print(f"KV cache, GQA with a window of 1024 in {n_swa} of 32 layers (5 local : 1 global), bf16: "
      f"{swa_total / 1000**3:,.2f} GB")
