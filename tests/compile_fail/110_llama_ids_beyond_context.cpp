// Ids whose token axis is not declared within the model's context_length: a static axis of 30 tokens for a
// model of 24. PyTorch's Llama3Model would index past its RoPE table (or, in the book's, fail inside
// apply_rope at run time); shaped refuses the call.
// expect-error: shaped::nn::llama_model(in_idx): the token axis must be declared within context_length
#include <cstdint>
#include <optional>
#include <vector>

#include <shaped/nn/llama_model.hpp>

namespace nn = shaped::nn;

struct small {
    struct vocab_size : shaped::axis<"vocab_size", 50> {};
    struct context_length : shaped::axis<"context_length", 24> {};
    struct emb_dim : shaped::axis<"emb_dim", 32> {};
    struct num_kv_heads : shaped::axis<"num_kv_heads", 2> {};
    struct group_size : shaped::axis<"group_size", 2> {};
    struct num_heads : shaped::product<"num_heads", num_kv_heads, group_size> {};
    struct head_dim : shaped::axis<"head_dim", 8> {};
    struct hidden_dim : shaped::axis<"hidden_dim", 48> {};
    struct batch : shaped::dynamic_axis<"batch"> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
    static constexpr std::size_t n_layers = 2;
    static constexpr double rope_theta = 500000.0;
    static constexpr std::optional<nn::llama3_rope_scaling> rope_scaling = std::nullopt;
    static constexpr float rms_norm_eps = 1e-5f;
    static constexpr bool tie_word_embeddings = true;
};

int main() {
    nn::llama_model<small> model;
#ifdef SHAPE_BUG
    struct tokens : shaped::axis<"num_tokens", 30> {};  // 30 tokens, declared within nothing
    const auto idx = shaped::tensor<std::int64_t, small::batch, tokens>::from_buffer(std::vector<std::int64_t>(30, 1), 1);
#else
    const auto idx = shaped::tensor<std::int64_t, small::batch, small::num_tokens>::from_buffer(std::vector<std::int64_t>(7, 1), 1, 7);
#endif
    auto logits = model(idx);
    (void)logits;
}
