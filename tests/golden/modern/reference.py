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


def compute_rope_params(head_dim, theta_base=10_000, context_length=4096, freq_config=None, interleaved=False):
    """The cos/sin tables of rotary position embeddings, (context_length, head_dim), in float32: each
    frequency twice, in the two halves (Hugging Face's layout, the book's) or in adjacent pairs (Meta's), with
    Llama 3's smoothing of the frequencies when freq_config is given."""
    assert head_dim % 2 == 0
    inv_freq = 1.0 / (theta_base ** (torch.arange(0, head_dim, 2, dtype=torch.float32)[: head_dim // 2].float() / head_dim))
    if freq_config is not None:
        low_freq_wavelen = freq_config["original_context_length"] / freq_config["low_freq_factor"]
        high_freq_wavelen = freq_config["original_context_length"] / freq_config["high_freq_factor"]
        wavelen = 2 * torch.pi / inv_freq
        inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / freq_config["factor"], inv_freq)
        smooth_factor = (freq_config["original_context_length"] / wavelen - freq_config["low_freq_factor"]) / (
            freq_config["high_freq_factor"] - freq_config["low_freq_factor"])
        smoothed_inv_freq = (1 - smooth_factor) * (inv_freq / freq_config["factor"]) + smooth_factor * inv_freq
        is_medium_freq = (wavelen <= low_freq_wavelen) & (wavelen >= high_freq_wavelen)
        inv_freq = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
    positions = torch.arange(context_length, dtype=torch.float32)
    angles = positions.unsqueeze(1) * inv_freq.unsqueeze(0)
    if interleaved:
        angles = angles.repeat_interleave(2, dim=1)
    else:
        angles = torch.cat([angles, angles], dim=1)
    return torch.cos(angles), torch.sin(angles)


def apply_rope(x, cos, sin, offset=0, interleaved=False):
    """x (batch, heads, tokens, head_dim), its tokens at positions offset, offset + 1, ...:
    x * cos + rotate(x) * sin, rotate pairing the halves, (-x2, x1), or adjacent elements, (-x1, x0)."""
    seq_len, head_dim = x.shape[-2], x.shape[-1]
    if interleaved:
        pairs = x.view(*x.shape[:-1], head_dim // 2, 2)
        rotated = torch.stack((-pairs[..., 1], pairs[..., 0]), dim=-1).view(x.shape)
    else:
        x1, x2 = x[..., : head_dim // 2], x[..., head_dim // 2:]
        rotated = torch.cat((-x2, x1), dim=-1)
    cos = cos[offset:offset + seq_len, :].unsqueeze(0).unsqueeze(0)
    sin = sin[offset:offset + seq_len, :].unsqueeze(0).unsqueeze(0)
    return (x * cos) + (rotated * sin)


class GroupedQueryAttention(nn.Module):
    """Grouped-query attention as the book's Qwen3 writes it (pkg/llms_from_scratch/qwen3.py; ch04/04_gqa
    without head_dim and qk_norm): num_kv_heads key/value heads, each read by group_size = num_heads //
    num_kv_heads query heads (keys and values expanded with repeat_interleave), head_dim of its own, optional
    QK-norm, RoPE, the causal mask. With start_pos and cache (a dict), the KV-cache form of the book's
    qwen3 KV-cache code: new tokens rotated at start_pos, their keys and values appended. With window, causal
    attention within the last `window` positions and the book's sliding-window cache (ch04/06_swa)."""

    def __init__(self, d_in, num_heads, num_kv_heads, head_dim, qk_norm=False, window=None, qk_norm_eps=1e-6,
                 qk_norm_one_plus=False, query_pre_attn_scalar=None):
        super().__init__()
        # Gemma 3 (ch05/12_gemma3): the queries, once rotated, are scaled by query_pre_attn_scalar ** -0.5 and the
        # scores are not divided again; its QK-norms are of the (1 + scale) form.
        self.scaling = None if query_pre_attn_scalar is None else query_pre_attn_scalar ** -0.5
        assert num_heads % num_kv_heads == 0
        self.window = window
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        self.group_size = num_heads // num_kv_heads
        self.head_dim = head_dim
        self.d_out = num_heads * head_dim
        self.W_query = nn.Linear(d_in, self.d_out, bias=False)
        self.W_key = nn.Linear(d_in, num_kv_heads * head_dim, bias=False)
        self.W_value = nn.Linear(d_in, num_kv_heads * head_dim, bias=False)
        self.out_proj = nn.Linear(self.d_out, d_in, bias=False)
        if qk_norm:
            self.q_norm = RMSNorm(head_dim, eps=qk_norm_eps, one_plus=qk_norm_one_plus)
            self.k_norm = RMSNorm(head_dim, eps=qk_norm_eps, one_plus=qk_norm_one_plus)
        else:
            self.q_norm = self.k_norm = None

    def forward(self, x, cos, sin, start_pos=0, cache=None, interleaved=False):
        b, num_tokens, _ = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_kv_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_kv_heads, self.head_dim).transpose(1, 2)
        if self.q_norm is not None:
            queries = self.q_norm(queries)
        if self.k_norm is not None:
            keys = self.k_norm(keys)
        queries = apply_rope(queries, cos, sin, start_pos, interleaved)
        keys = apply_rope(keys, cos, sin, start_pos, interleaved)
        if self.scaling is not None:
            queries = queries * self.scaling
        if cache is not None:
            if "k" in cache:
                keys = torch.cat([cache["k"], keys], dim=2)
                values = torch.cat([cache["v"], values], dim=2)
            cache["k"], cache["v"] = keys, values
            if self.window is not None:
                # The book's sliding-window cache (ch04/06_swa): attention reads the last W + num_tokens - 1
                # keys, the cache keeps the last W.
                attn_keep = min(keys.shape[2], self.window + num_tokens - 1)
                cache_keep = min(keys.shape[2], self.window)
                cache["k"], cache["v"] = keys[:, :, -cache_keep:], values[:, :, -cache_keep:]
                keys, values = keys[:, :, -attn_keep:], values[:, :, -attn_keep:]
        num_keys = keys.shape[2]
        keys = keys.repeat_interleave(self.group_size, dim=1)
        values = values.repeat_interleave(self.group_size, dim=1)
        attn_scores = queries @ keys.transpose(2, 3)
        # Query i (position start_pos + i) sees keys 0 .. start_pos + i (the last W of them with a window).
        if self.window is not None:
            mask = sliding_window_mask(num_tokens, num_keys, self.window)
        else:
            mask = torch.triu(torch.ones(num_tokens, num_keys, dtype=torch.bool), diagonal=num_keys - num_tokens + 1)
        attn_scores = attn_scores.masked_fill(mask, -torch.inf)
        if self.scaling is None:
            attn_scores = attn_scores / self.head_dim ** 0.5
        attn_weights = torch.softmax(attn_scores, dim=-1)
        context = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.out_proj(context)


def sliding_window_mask(num_queries, num_keys, window):
    """The book's causal sliding-window mask (ch04/06_swa): True where a key is masked out. The queries are
    the last num_queries of the num_keys positions (after a KV cache's earlier tokens)."""
    q_positions = torch.arange(num_keys - num_queries, num_keys)
    k_positions = torch.arange(num_keys)
    diff = q_positions.unsqueeze(-1) - k_positions.unsqueeze(0)
    return (diff < 0) | (diff >= window)


def sdpa_math(q, k, v, attn_mask=None):
    """PyTorch 2's scaled_dot_product_attention on its math path, written out for PyTorch 1.13: a bool
    attn_mask is True where a query may attend, a float one is added to the scaled scores."""
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, -torch.inf)
        else:
            scores = scores + attn_mask
    return torch.softmax(scores, dim=-1) @ v


class MultiHeadLatentAttention(nn.Module):
    """Multi-head latent attention as the book's ch04/05_mla writes it (gpt_with_kv_mla.py), without dropout:
    per-head queries, keys and values projected up from a latent of latent_dim per token, which the cache
    (a dict, with use_cache) keeps."""

    def __init__(self, d_in, d_out, num_heads, latent_dim, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_DKV = nn.Linear(d_in, latent_dim, bias=qkv_bias)
        self.W_UK = nn.Linear(latent_dim, d_out, bias=qkv_bias)
        self.W_UV = nn.Linear(latent_dim, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def heads(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, cache=None):
        b, num_tokens, _ = x.shape
        latent = self.W_DKV(x)
        start = 0
        if cache is not None:
            if "c" in cache:
                start = cache["c"].shape[1]
                latent = torch.cat([cache["c"], latent], dim=1)
            cache["c"] = latent
        queries = self.heads(self.W_query(x))
        keys = self.heads(self.W_UK(latent))
        values = self.heads(self.W_UV(latent))
        scores = queries @ keys.transpose(-2, -1)
        q_positions = torch.arange(start, start + num_tokens)
        k_positions = torch.arange(keys.shape[-2])
        scores = scores.masked_fill(q_positions.unsqueeze(-1) < k_positions.unsqueeze(0), -torch.inf)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        context = (weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)


class LlamaBlock(nn.Module):
    """The book's Llama 3.2 TransformerBlock (standalone-llama32): x + att(norm1(x)), then h + ff(norm2(h));
    att, ff, norm1, norm2 created in that order. With cfg["qk_norm"], Qwen3's block (ch05/11_qwen3)."""

    def __init__(self, cfg):
        super().__init__()
        self.att = GroupedQueryAttention(cfg["emb_dim"], cfg["n_heads"], cfg["n_kv_groups"], cfg["head_dim"],
                                         qk_norm=cfg.get("qk_norm", False))
        self.ff = FeedForward(cfg["emb_dim"], cfg["hidden_dim"], "silu")
        self.norm1 = RMSNorm(cfg["emb_dim"], eps=cfg["rms_norm_eps"])
        self.norm2 = RMSNorm(cfg["emb_dim"], eps=cfg["rms_norm_eps"])

    def forward(self, x, cos, sin, start_pos=0, cache=None):
        shortcut = x
        x = self.att(self.norm1(x), cos, sin, start_pos, cache) + shortcut
        shortcut = x
        return self.ff(self.norm2(x)) + shortcut


class Llama3Model(nn.Module):
    """The book's Llama3Model (standalone-llama32) in float32: tok_emb, trf_blocks, final_norm, out_head,
    created in that order; the RoPE tables of compute_rope_params with Llama 3's freq_config. With
    tie_word_embeddings the output head is the token embeddings' tensor (the book ties them when it loads
    the checkpoint). With caches (a list of dicts, one per block) and start_pos, the KV-cache form."""

    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.trf_blocks = nn.ModuleList([LlamaBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = RMSNorm(cfg["emb_dim"], eps=cfg["rms_norm_eps"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
        if cfg["tie_word_embeddings"]:
            self.out_head.weight = self.tok_emb.weight
        self.cos, self.sin = compute_rope_params(cfg["head_dim"], cfg["rope_base"], cfg["context_length"],
                                                 cfg["rope_freq"])

    def forward(self, in_idx, start_pos=0, caches=None):
        x = self.tok_emb(in_idx)
        for i, block in enumerate(self.trf_blocks):
            x = block(x, self.cos, self.sin, start_pos, None if caches is None else caches[i])
        return self.out_head(self.final_norm(x))


class GemmaBlock(nn.Module):
    """The book's Gemma 3 TransformerBlock (ch05/12_gemma3): x + post_attention_layernorm(att(input_layernorm(x))),
    then h + post_feedforward_layernorm(ff(pre_feedforward_layernorm(h))); att (QK-norm of the (1 + scale) form,
    query_pre_attn_scalar, the sliding window when the layer is "sliding_attention"), ff (GELU-tanh), then the
    four norms, created in that order."""

    def __init__(self, cfg, attn_type):
        super().__init__()
        self.sliding = attn_type == "sliding_attention"
        self.att = GroupedQueryAttention(cfg["emb_dim"], cfg["n_heads"], cfg["n_kv_groups"], cfg["head_dim"],
                                         qk_norm=True, window=cfg["sliding_window"] if self.sliding else None,
                                         qk_norm_eps=cfg["rms_norm_eps"], qk_norm_one_plus=True,
                                         query_pre_attn_scalar=cfg["query_pre_attn_scalar"])
        self.ff = FeedForward(cfg["emb_dim"], cfg["hidden_dim"], "gelu_tanh")
        self.input_layernorm = RMSNorm(cfg["emb_dim"], eps=cfg["rms_norm_eps"], one_plus=True)
        self.post_attention_layernorm = RMSNorm(cfg["emb_dim"], eps=cfg["rms_norm_eps"], one_plus=True)
        self.pre_feedforward_layernorm = RMSNorm(cfg["emb_dim"], eps=cfg["rms_norm_eps"], one_plus=True)
        self.post_feedforward_layernorm = RMSNorm(cfg["emb_dim"], eps=cfg["rms_norm_eps"], one_plus=True)

    def forward(self, x, cos, sin, start_pos=0, cache=None):
        shortcut = x
        x = shortcut + self.post_attention_layernorm(self.att(self.input_layernorm(x), cos, sin, start_pos, cache))
        shortcut = x
        return shortcut + self.post_feedforward_layernorm(self.ff(self.pre_feedforward_layernorm(x)))


class Gemma3Model(nn.Module):
    """The book's Gemma3Model (ch05/12_gemma3) in float32: tok_emb, blocks, final_norm, out_head, created in that
    order; the local layers' RoPE tables of rope_local_base, the global layers' of rope_base; the embeddings
    scaled by emb_dim ** 0.5. With tie_word_embeddings the output head is the token embeddings' tensor. With
    caches (a list of dicts, one per block) and start_pos, the KV-cache form (a local layer's cache keeps its
    window)."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.blocks = nn.ModuleList([GemmaBlock(cfg, t) for t in cfg["layer_types"]])
        self.final_norm = RMSNorm(cfg["emb_dim"], eps=cfg["rms_norm_eps"], one_plus=True)
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
        if cfg["tie_word_embeddings"]:
            self.out_head.weight = self.tok_emb.weight
        self.cos_local, self.sin_local = compute_rope_params(cfg["head_dim"], cfg["rope_local_base"], cfg["context_length"])
        self.cos_global, self.sin_global = compute_rope_params(cfg["head_dim"], cfg["rope_base"], cfg["context_length"])

    def forward(self, in_idx, start_pos=0, caches=None):
        x = self.tok_emb(in_idx) * (self.cfg["emb_dim"] ** 0.5)
        for i, block in enumerate(self.blocks):
            cos, sin = (self.cos_local, self.sin_local) if block.sliding else (self.cos_global, self.sin_global)
            x = block(x, cos, sin, start_pos, None if caches is None else caches[i])
        return self.out_head(self.final_norm(x))
