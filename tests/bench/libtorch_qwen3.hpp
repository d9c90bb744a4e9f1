// The book's Qwen3Model with its KV cache (rasbt/LLMs-from-scratch pkg/llms_from_scratch/kv_cache/qwen3.py) in
// LibTorch's C++ API, float32, member for member and in the book's creation order, so that torch::manual_seed
// gives the weights PyTorch gives (tests/golden/modern/reference.py's Llama3Model with qk_norm, which
// model_bench's shaped model draws too). The prefill benchmark's peer.
#ifndef SHAPED_BENCH_LIBTORCH_QWEN3_HPP
#define SHAPED_BENCH_LIBTORCH_QWEN3_HPP

#include <torch/torch.h>

#include <utility>
#include <vector>

namespace book {

struct Qwen3Config {
    int64_t vocab_size = 151936, context_length = 40960, emb_dim = 1024, n_heads = 16, n_layers = 28,
            hidden_dim = 3072, head_dim = 128, n_kv_groups = 8;
    double rope_base = 1000000.0;
};

// cos and sin of the angles, each frequency in both halves: (context_length, head_dim).
inline std::pair<torch::Tensor, torch::Tensor> compute_rope_params(int64_t head_dim, double theta_base,
                                                                   int64_t context_length) {
    auto inv_freq = 1.0 / torch::pow(theta_base, torch::arange(0, head_dim, 2, torch::kFloat) / head_dim);
    auto positions = torch::arange(context_length, torch::kFloat);
    auto angles = positions.unsqueeze(1) * inv_freq.unsqueeze(0);
    angles = torch::cat({angles, angles}, 1);
    return {torch::cos(angles), torch::sin(angles)};
}

// x (batch, heads, tokens, head_dim) at positions offset, offset + 1, ...
inline torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                                int64_t offset) {
    using torch::indexing::Slice;
    const auto seq_len = x.size(2), half = x.size(3) / 2;
    auto x1 = x.index({"...", Slice(0, half)});
    auto x2 = x.index({"...", Slice(half, torch::indexing::None)});
    auto c = cos.index({Slice(offset, offset + seq_len)}).unsqueeze(0).unsqueeze(0);
    auto s = sin.index({Slice(offset, offset + seq_len)}).unsqueeze(0).unsqueeze(0);
    return x * c + torch::cat({-x2, x1}, -1) * s;
}

struct RMSNormImpl : torch::nn::Module {
    explicit RMSNormImpl(int64_t emb_dim) : scale(register_parameter("scale", torch::ones({emb_dim}))) {}
    torch::Tensor forward(const torch::Tensor& x) {
        auto variance = x.pow(2).mean(-1, /*keepdim=*/true);
        return x * torch::rsqrt(variance + eps) * scale;
    }
    double eps = 1e-6;
    torch::Tensor scale;
};
TORCH_MODULE(RMSNorm);

struct GroupedQueryAttentionImpl : torch::nn::Module {
    GroupedQueryAttentionImpl(int64_t d_in, int64_t num_heads, int64_t num_kv_groups, int64_t head_dim)
        : num_heads(num_heads), num_kv_groups(num_kv_groups), group_size(num_heads / num_kv_groups),
          head_dim(head_dim), d_out(num_heads * head_dim) {
        auto linear = [](int64_t i, int64_t o) { return torch::nn::Linear(torch::nn::LinearOptions(i, o).bias(false)); };
        W_query = register_module("W_query", linear(d_in, d_out));
        W_key = register_module("W_key", linear(d_in, num_kv_groups * head_dim));
        W_value = register_module("W_value", linear(d_in, num_kv_groups * head_dim));
        out_proj = register_module("out_proj", linear(d_out, d_in));
        q_norm = register_module("q_norm", RMSNorm(head_dim));
        k_norm = register_module("k_norm", RMSNorm(head_dim));
    }

    // mask (1, 1, tokens, keys): true where a key is hidden. The new keys and values are appended to the cache.
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask, const torch::Tensor& cos,
                          const torch::Tensor& sin, int64_t start_pos) {
        const auto b = x.size(0), num_tokens = x.size(1);
        auto queries = W_query(x).view({b, num_tokens, num_heads, head_dim}).transpose(1, 2);
        auto keys_new = W_key(x).view({b, num_tokens, num_kv_groups, head_dim}).transpose(1, 2);
        auto values_new = W_value(x).view({b, num_tokens, num_kv_groups, head_dim}).transpose(1, 2);
        queries = apply_rope(q_norm(queries), cos, sin, start_pos);
        keys_new = apply_rope(k_norm(keys_new), cos, sin, start_pos);
        if (cache_k.defined()) {
            cache_k = torch::cat({cache_k, keys_new}, 2);
            cache_v = torch::cat({cache_v, values_new}, 2);
        } else {
            cache_k = keys_new;
            cache_v = values_new;
        }
        auto keys = cache_k.repeat_interleave(group_size, 1);
        auto values = cache_v.repeat_interleave(group_size, 1);
        auto attn_scores = torch::matmul(queries, keys.transpose(2, 3)).masked_fill(mask, -INFINITY);
        auto attn_weights = torch::softmax(attn_scores / std::sqrt(static_cast<double>(head_dim)), -1);
        auto context = torch::matmul(attn_weights, values).transpose(1, 2).reshape({b, num_tokens, d_out});
        return out_proj(context);
    }
    void reset_cache() {
        cache_k = torch::Tensor();
        cache_v = torch::Tensor();
    }

    int64_t num_heads, num_kv_groups, group_size, head_dim, d_out;
    torch::nn::Linear W_query{nullptr}, W_key{nullptr}, W_value{nullptr}, out_proj{nullptr};
    RMSNorm q_norm{nullptr}, k_norm{nullptr};
    torch::Tensor cache_k, cache_v;
};
TORCH_MODULE(GroupedQueryAttention);

struct Qwen3FeedForwardImpl : torch::nn::Module {
    explicit Qwen3FeedForwardImpl(const Qwen3Config& cfg) {
        auto linear = [](int64_t i, int64_t o) { return torch::nn::Linear(torch::nn::LinearOptions(i, o).bias(false)); };
        fc1 = register_module("fc1", linear(cfg.emb_dim, cfg.hidden_dim));
        fc2 = register_module("fc2", linear(cfg.emb_dim, cfg.hidden_dim));
        fc3 = register_module("fc3", linear(cfg.hidden_dim, cfg.emb_dim));
    }
    torch::Tensor forward(const torch::Tensor& x) { return fc3(torch::silu(fc1(x)) * fc2(x)); }
    torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};
TORCH_MODULE(Qwen3FeedForward);

struct Qwen3BlockImpl : torch::nn::Module {
    explicit Qwen3BlockImpl(const Qwen3Config& cfg)
        : att(register_module("att", GroupedQueryAttention(cfg.emb_dim, cfg.n_heads, cfg.n_kv_groups, cfg.head_dim))),
          ff(register_module("ff", Qwen3FeedForward(cfg))),
          norm1(register_module("norm1", RMSNorm(cfg.emb_dim))),
          norm2(register_module("norm2", RMSNorm(cfg.emb_dim))) {}
    torch::Tensor forward(torch::Tensor x, const torch::Tensor& mask, const torch::Tensor& cos,
                          const torch::Tensor& sin, int64_t start_pos) {
        x = att->forward(norm1(x), mask, cos, sin, start_pos) + x;
        return ff(norm2(x)) + x;
    }
    GroupedQueryAttention att;
    Qwen3FeedForward ff;
    RMSNorm norm1, norm2;
};
TORCH_MODULE(Qwen3Block);

struct Qwen3ModelImpl : torch::nn::Module {
    explicit Qwen3ModelImpl(const Qwen3Config& cfg)
        : tok_emb(register_module("tok_emb", torch::nn::Embedding(cfg.vocab_size, cfg.emb_dim))) {
        for (int64_t i = 0; i < cfg.n_layers; ++i) blocks.push_back(register_module("trf_blocks_" + std::to_string(i),
                                                                                    Qwen3Block(cfg)));
        final_norm = register_module("final_norm", RMSNorm(cfg.emb_dim));
        out_head = register_module("out_head", torch::nn::Linear(torch::nn::LinearOptions(cfg.emb_dim, cfg.vocab_size)
                                                                     .bias(false)));
        out_head->weight = tok_emb->weight;  // Qwen3 0.6B ties them, as the book's loader does
        std::tie(cos, sin) = compute_rope_params(cfg.head_dim, cfg.rope_base, cfg.context_length);
    }

    // The KV-cache forward: the tokens at positions current_pos, current_pos + 1, ... With last_only, the output
    // head reads the last position alone (what llama.cpp and shaped compute for a prompt); without, every
    // position, as the book's class does.
    torch::Tensor forward(const torch::Tensor& in_idx, bool last_only = false) {
        using torch::indexing::Slice;
        const auto num_tokens = in_idx.size(1), pos_start = current_pos, pos_end = current_pos + num_tokens;
        current_pos = pos_end;
        auto mask = torch::triu(torch::ones({pos_end, pos_end}, torch::kBool), 1)
                        .index({Slice(pos_start, pos_end), Slice(0, pos_end)})
                        .unsqueeze(0)
                        .unsqueeze(0);
        auto x = tok_emb(in_idx);
        for (auto& block : blocks) x = block->forward(x, mask, cos, sin, pos_start);
        if (last_only) x = x.index({Slice(), Slice(-1, torch::indexing::None)});
        return out_head(final_norm(x));
    }
    void reset_kv_cache() {
        for (auto& block : blocks) block->att->reset_cache();
        current_pos = 0;
    }

    torch::nn::Embedding tok_emb;
    std::vector<Qwen3Block> blocks;
    RMSNorm final_norm{nullptr};
    torch::nn::Linear out_head{nullptr};
    torch::Tensor cos, sin;
    int64_t current_pos = 0;
};
TORCH_MODULE(Qwen3Model);

}  // namespace book

#endif
