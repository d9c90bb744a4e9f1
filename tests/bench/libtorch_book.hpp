// The book's classes in LibTorch's C++ API, member for member and in the book's creation order, so that
// torch::manual_seed gives the weights PyTorch gives: MultiHeadAttention (listing 3.5) and chapter 4's
// LayerNorm, GELU, FeedForward, TransformerBlock and GPTModel. The benchmarks' peer.
#ifndef SHAPED_BENCH_LIBTORCH_BOOK_HPP
#define SHAPED_BENCH_LIBTORCH_BOOK_HPP

#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace book {

struct MultiHeadAttentionImpl : torch::nn::Module {
    MultiHeadAttentionImpl(int64_t d_in, int64_t d_out, int64_t context_length, int64_t num_heads, double drop_rate = 0.0,
                           bool qkv_bias = false)
        : d_out(d_out), num_heads(num_heads), head_dim(d_out / num_heads) {
        W_query = register_module("W_query", torch::nn::Linear(torch::nn::LinearOptions(d_in, d_out).bias(qkv_bias)));
        W_key = register_module("W_key", torch::nn::Linear(torch::nn::LinearOptions(d_in, d_out).bias(qkv_bias)));
        W_value = register_module("W_value", torch::nn::Linear(torch::nn::LinearOptions(d_in, d_out).bias(qkv_bias)));
        out_proj = register_module("out_proj", torch::nn::Linear(d_out, d_out));
        dropout = register_module("dropout", torch::nn::Dropout(drop_rate));
        mask = register_buffer("mask", torch::triu(torch::ones({context_length, context_length}), 1));
    }

    // The book's KV-cache forward (ch04/03_kv-cache): the new keys and values are appended to the cache, and
    // the mask is mask[:num_tokens, :num_tokens] as the book slices it (right for the prompt, and for one new
    // token at a time, which is how generate_text_simple_cached calls it).
    torch::Tensor forward(const torch::Tensor& x, bool use_cache = false) {
        const auto b = x.size(0), num_tokens = x.size(1);
        auto keys = W_key(x).view({b, num_tokens, num_heads, head_dim});
        auto values = W_value(x).view({b, num_tokens, num_heads, head_dim});
        auto queries = W_query(x).view({b, num_tokens, num_heads, head_dim}).transpose(1, 2);
        if (use_cache) {
            if (!cache_k.defined()) {
                cache_k = keys;
                cache_v = values;
            } else {
                cache_k = torch::cat({cache_k, keys}, 1);
                cache_v = torch::cat({cache_v, values}, 1);
            }
            keys = cache_k;
            values = cache_v;
        }
        keys = keys.transpose(1, 2);
        values = values.transpose(1, 2);
        auto attn_scores = torch::matmul(queries, keys.transpose(2, 3));
        auto mask_bool = mask.to(torch::kBool).index({torch::indexing::Slice(0, num_tokens),
                                                      torch::indexing::Slice(0, num_tokens)});
        attn_scores.masked_fill_(mask_bool, -std::numeric_limits<float>::infinity());
        auto attn_weights = dropout(torch::softmax(attn_scores / std::sqrt(static_cast<double>(head_dim)), -1));
        auto context_vec = torch::matmul(attn_weights, values).transpose(1, 2);
        return out_proj(context_vec.contiguous().view({b, num_tokens, d_out}));
    }
    void reset_cache() {
        cache_k = torch::Tensor();
        cache_v = torch::Tensor();
    }

    int64_t d_out, num_heads, head_dim;
    torch::nn::Linear W_query{nullptr}, W_key{nullptr}, W_value{nullptr}, out_proj{nullptr};
    torch::nn::Dropout dropout{nullptr};
    torch::Tensor mask, cache_k, cache_v;
};
TORCH_MODULE(MultiHeadAttention);

struct Config {
    int64_t vocab_size = 50257, context_length = 1024, emb_dim = 768, n_heads = 12, n_layers = 12;
    double drop_rate = 0.1;
    bool qkv_bias = false;
};

struct LayerNormImpl : torch::nn::Module {
    explicit LayerNormImpl(int64_t emb_dim)
        : scale(register_parameter("scale", torch::ones({emb_dim}))),
          shift(register_parameter("shift", torch::zeros({emb_dim}))) {}
    torch::Tensor forward(const torch::Tensor& x) {
        auto mean = x.mean(-1, true);
        auto var = x.var(-1, /*unbiased=*/false, /*keepdim=*/true);
        return scale * ((x - mean) / torch::sqrt(var + eps)) + shift;
    }
    double eps = 1e-5;
    torch::Tensor scale, shift;
};
TORCH_MODULE(LayerNorm);

struct GELUImpl : torch::nn::Module {
    torch::Tensor forward(const torch::Tensor& x) {
        const auto c = torch::sqrt(torch::tensor(2.0 / M_PI));
        return 0.5 * x * (1 + torch::tanh(c * (x + 0.044715 * torch::pow(x, 3))));
    }
};
TORCH_MODULE(GELU);

struct FeedForwardImpl : torch::nn::Module {
    explicit FeedForwardImpl(const Config& cfg) {
        // One after the other: the order of a call's arguments is unspecified, the order of draws is not.
        torch::nn::Linear first(cfg.emb_dim, 4 * cfg.emb_dim);
        torch::nn::Linear second(4 * cfg.emb_dim, cfg.emb_dim);
        layers = register_module("layers", torch::nn::Sequential(first, GELU(), second));
    }
    torch::Tensor forward(const torch::Tensor& x) { return layers->forward(x); }
    torch::nn::Sequential layers{nullptr};
};
TORCH_MODULE(FeedForward);

struct TransformerBlockImpl : torch::nn::Module {
    explicit TransformerBlockImpl(const Config& cfg)
        : att(register_module("att", MultiHeadAttention(cfg.emb_dim, cfg.emb_dim, cfg.context_length, cfg.n_heads,
                                                        cfg.drop_rate, cfg.qkv_bias))),
          ff(register_module("ff", FeedForward(cfg))),
          norm1(register_module("norm1", LayerNorm(cfg.emb_dim))),
          norm2(register_module("norm2", LayerNorm(cfg.emb_dim))),
          drop_shortcut(register_module("drop_shortcut", torch::nn::Dropout(cfg.drop_rate))) {}
    torch::Tensor forward(torch::Tensor x, bool use_cache = false) {
        x = drop_shortcut(att->forward(norm1(x), use_cache)) + x;
        return drop_shortcut(ff(norm2(x))) + x;
    }
    MultiHeadAttention att;
    FeedForward ff;
    LayerNorm norm1, norm2;
    torch::nn::Dropout drop_shortcut;
};
TORCH_MODULE(TransformerBlock);

struct GPTModelImpl : torch::nn::Module {
    explicit GPTModelImpl(const Config& cfg)
        : tok_emb(register_module("tok_emb", torch::nn::Embedding(cfg.vocab_size, cfg.emb_dim))),
          pos_emb(register_module("pos_emb", torch::nn::Embedding(cfg.context_length, cfg.emb_dim))),
          drop_emb(register_module("drop_emb", torch::nn::Dropout(cfg.drop_rate))) {
        for (int64_t i = 0; i < cfg.n_layers; ++i) {
            blocks.push_back(TransformerBlock(cfg));
            trf_blocks->push_back(blocks.back());
        }
        register_module("trf_blocks", trf_blocks);
        final_norm = register_module("final_norm", LayerNorm(cfg.emb_dim));
        out_head = register_module("out_head", torch::nn::Linear(torch::nn::LinearOptions(cfg.emb_dim, cfg.vocab_size)
                                                                     .bias(false)));
    }
    torch::Tensor forward(const torch::Tensor& in_idx, bool use_cache = false) {
        const auto seq_len = in_idx.size(1);
        torch::Tensor pos_ids;
        if (use_cache) {
            pos_ids = torch::arange(current_pos, current_pos + seq_len, torch::kLong);
            current_pos += seq_len;
        } else {
            pos_ids = torch::arange(seq_len, torch::kLong);
        }
        auto x = drop_emb(tok_emb(in_idx) + pos_emb(pos_ids).unsqueeze(0));
        for (auto& block : blocks) x = block->forward(x, use_cache);
        return out_head(final_norm(x));
    }
    void reset_kv_cache() {
        for (auto& block : blocks) block->att->reset_cache();
        current_pos = 0;
    }
    torch::nn::Embedding tok_emb, pos_emb;
    torch::nn::Dropout drop_emb;
    torch::nn::Sequential trf_blocks;
    std::vector<TransformerBlock> blocks;
    int64_t current_pos = 0;
    LayerNorm final_norm{nullptr};
    torch::nn::Linear out_head{nullptr};
};
TORCH_MODULE(GPTModel);

// The book's generate_text_simple: greedy, cropping to the last context_size ids.
inline torch::Tensor generate_text_simple(GPTModel& model, torch::Tensor idx, int64_t max_new_tokens,
                                          int64_t context_size) {
    for (int64_t i = 0; i < max_new_tokens; ++i) {
        auto idx_cond = idx.index({torch::indexing::Slice(), torch::indexing::Slice(-context_size, torch::indexing::None)});
        auto logits = model->forward(idx_cond).index({torch::indexing::Slice(), -1, torch::indexing::Slice()});
        idx = torch::cat({idx, torch::argmax(logits, -1, /*keepdim=*/true)}, 1);
    }
    return idx;
}

// The book's generate_text_simple_cached: the prompt once, then each new token alone.
inline torch::Tensor generate_text_simple_cached(GPTModel& model, torch::Tensor idx, int64_t max_new_tokens) {
    model->eval();
    model->reset_kv_cache();
    auto logits = model->forward(idx, true);
    for (int64_t i = 0; i < max_new_tokens; ++i) {
        auto next_idx = logits.index({torch::indexing::Slice(), -1}).argmax(-1, /*keepdim=*/true);
        idx = torch::cat({idx, next_idx}, 1);
        logits = model->forward(next_idx, true);
    }
    return idx;
}

}  // namespace book

#endif
