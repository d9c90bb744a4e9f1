// Grouped-query and latent attention's savings, as the book's ch04/04_gqa and ch04/05_mla count them: the
// parameters of one attention layer at Llama's width (4096, 32 query heads of 128) with 32 key/value heads
// (multi-head attention), with 8 (grouped, in groups of 4), and with a latent of 1024 per token (multi-head
// latent attention), and the KV cache each keeps per token; then the cache with a sliding window of 1024 tokens
// in five of every six layers (Gemma 3's pattern, the book's ch04/06_swa estimator). It prints what tests/golden/book/gqa_memory.py
// prints with PyTorch and the book's memory estimators.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include <shaped/nn/grouped_query_attention.hpp>
#include <shaped/nn/multi_head_latent_attention.hpp>
#include <shaped/shaped.hpp>

namespace nn = shaped::nn;

// [axes]
struct emb_dim : shaped::axis<"emb_dim", 4096> {};
struct context_length : shaped::axis<"context_length", 32768> {};
struct head_dim : shaped::axis<"head_dim", 128> {};
struct num_kv_heads : shaped::axis<"num_kv_heads", 8> {};
struct group_size : shaped::axis<"group_size", 4> {};
struct num_heads : shaped::product<"num_heads", num_kv_heads, group_size> {};  // 32 = 8 groups of 4
struct latent_dim : shaped::axis<"latent_dim", 1024> {};
struct sliding_window : shaped::axis<"sliding_window", 1024> {};
// [axes]

// 1234567 as "1,234,567".
std::string with_commas(std::size_t n) {
    const std::string digits = std::to_string(n);
    std::string s;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
        s += digits[i];
    }
    return s;
}
std::string gigabytes(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
    return buf;
}

int main() {
    // [modules]
    // Multi-head attention is the case of as many key/value heads as query heads.
    using mha_t = nn::grouped_query_attention<emb_dim, num_heads, num_heads, head_dim, context_length>;
    using gqa_t = nn::grouped_query_attention<emb_dim, num_heads, num_kv_heads, head_dim, context_length>;
    const mha_t mha(nn::skip_init);  // allocated, not drawn: only counted here
    const gqa_t gqa(nn::skip_init);
    using mla_t = nn::multi_head_latent_attention<emb_dim, emb_dim, context_length, num_heads, latent_dim>;
    const mla_t mla(nn::skip_init);
    // [modules]
    std::cout << "width 4096, 32 query heads of 128; grouped: 8 key/value heads, groups of " << gqa_t::group_size << "\n";
    std::cout << "parameters, MHA: " << with_commas(nn::parameter_count(mha)) << "\n";
    std::cout << "parameters, GQA: " << with_commas(nn::parameter_count(gqa)) << "\n";
    std::cout << "parameters, MLA (latent 1024): " << with_commas(nn::parameter_count(mla)) << "\n";

    // The cache of one layer holds keys and values of its key/value heads for every token.
    const std::size_t mha_token = decltype(mha.cache)::bytes_per_token, gqa_token = decltype(gqa.cache)::bytes_per_token,
                      mla_token = decltype(mla.cache)::bytes_per_token;
    std::cout << "KV cache per token and layer (float32): MHA " << with_commas(mha_token) << " bytes, GQA "
              << with_commas(gqa_token) << " bytes, MLA " << with_commas(mla_token) << " bytes\n";
    // The book's estimate: 32 layers, 32,768 tokens, batch 1, in bf16 (2 bytes an element, half of float32).
    const double layers = 32, tokens = context_length::extent;
    std::cout << "KV cache, 32 layers, 32768 tokens, batch 1, bf16: MHA " << gigabytes(mha_token / 2 * tokens * layers)
              << ", GQA " << gigabytes(gqa_token / 2 * tokens * layers) << ", MLA "
              << gigabytes(mla_token / 2 * tokens * layers) << "\n";
    std::cout << "ratio (MHA / GQA): " << mha_token / gqa_token << "\n";

    // A local layer: the same grouped attention within a window, its cache the last 1024 tokens.
    using swa_t = nn::sliding_window_attention<emb_dim, num_heads, num_kv_heads, head_dim, context_length, sliding_window>;
    // Five local layers for every global one, as Gemma 3 (and the book's --swa_ratio 5:1): 32 layers give
    // 5 blocks of six and two layers more, both local.
    const std::size_t n_layers = 32, blocks = n_layers / 6, rest = n_layers % 6;
    const std::size_t n_local = blocks * 5 + std::min<std::size_t>(5, rest), n_global = n_layers - n_local;
    const double local_bytes = double(swa_t::cache_type::bytes_per_token) / 2 * sliding_window::extent,
                 global_bytes = double(gqa_token) / 2 * tokens;
    std::cout << "KV cache, GQA with a window of 1024 in " << n_local << " of 32 layers (5 local : 1 global), bf16: "
              << gigabytes(n_local * local_bytes + n_global * global_bytes) << "\n";
}
