#ifndef SHAPED_NN_LLAMA_CONFIG_HPP
#define SHAPED_NN_LLAMA_CONFIG_HPP

/// \file
/// A Llama 3 or Qwen3 model's configuration as a type: its axes and the numbers of Hugging Face's
/// `config.json` that change the computation, and the parameter counts that follow from them.

#include <concepts>
#include <cstddef>
#include <optional>

#include "../axis.hpp"
#include "parameters.hpp"
#include "rope.hpp"

namespace shaped::nn {

/// What a Llama 3 configuration holds: the static axes `vocab_size`, `context_length`, `emb_dim`,
/// `num_kv_heads`, `num_heads` (declared as `num_kv_heads` times a group, key/value heads outermost),
/// `head_dim` and `hidden_dim`; the run-time axes `batch` and `num_tokens` (declared within
/// `context_length`) that the model's inputs take; and `n_layers`, `rope_theta`, `rope_scaling` (Llama 3's
/// smoothing of the RoPE frequencies, or `std::nullopt`), `rms_norm_eps` and `tie_word_embeddings`; and
/// optionally `qk_norm` (Qwen3's, see `qk_norm_of`) and `weight_type` (`shaped::bfloat16` keeps the weights
/// in BF16, see `weight_type_of`).
template <class C>
concept LlamaConfig =
    StaticAxis<typename C::vocab_size> && StaticAxis<typename C::context_length> && StaticAxis<typename C::emb_dim> &&
    StaticAxis<typename C::num_heads> && StaticAxis<typename C::num_kv_heads> && StaticAxis<typename C::head_dim> &&
    StaticAxis<typename C::hidden_dim> && Axis<typename C::batch> && Axis<typename C::num_tokens> && requires {
        { C::n_layers } -> std::convertible_to<std::size_t>;
        { C::rope_theta } -> std::convertible_to<double>;
        { C::rope_scaling } -> std::convertible_to<std::optional<llama3_rope_scaling>>;
        { C::rms_norm_eps } -> std::convertible_to<float>;
        { C::tie_word_embeddings } -> std::convertible_to<bool>;
    };

/// Llama 3.2 1B (Hugging Face's `meta-llama/Llama-3.2-1B`): 1,498,482,688 parameters counted as the book
/// counts them (the output head apart from the token embeddings), 1,235,814,400 unique (the two are one
/// tensor).
///
/// Shapes: vocab_size 128256, context_length 131072, emb_dim 2048, 32 query heads on 8 key/value heads (groups
/// of 4), head_dim 64, hidden_dim 8192, 16 layers. Errors: none. Source: the book's `LLAMA32_CONFIG_1B`
/// (rasbt/LLMs-from-scratch ch05/07_gpt_to_llama, standalone-llama32), and the checkpoint's `config.json`.
struct llama32_1b {
    /// `"vocab_size": 128256`: the token ids of Llama 3's tokenizer.
    struct vocab_size : axis<"vocab_size", 128256> {};
    /// `"max_position_embeddings": 131072`: the longest input, and the RoPE table's length.
    struct context_length : axis<"context_length", 131072> {};
    /// `"hidden_size": 2048`: the width of every token's vector (the book's `emb_dim`).
    struct emb_dim : axis<"emb_dim", 2048> {};
    /// `"num_key_value_heads": 8` (the book's `n_kv_groups`).
    struct num_kv_heads : axis<"num_kv_heads", 8> {};
    /// Query heads per key/value head: 32 / 8.
    struct group_size : axis<"group_size", 4> {};
    /// `"num_attention_heads": 32`, key/value heads outermost.
    struct num_heads : product<"num_heads", num_kv_heads, group_size> {};
    /// `"head_dim": 64` (`hidden_size / num_attention_heads`).
    struct head_dim : axis<"head_dim", 64> {};
    /// `"intermediate_size": 8192`: the gated feed-forward layer's width.
    struct hidden_dim : axis<"hidden_dim", 8192> {};
    /// The sequences of one forward pass, any number of them.
    struct batch : dynamic_axis<"batch"> {};
    /// The tokens of each sequence, 1 to `context_length` of them.
    struct num_tokens : dynamic_axis<"num_tokens", at_most<context_length>> {};
    /// `"num_hidden_layers": 16`.
    static constexpr std::size_t n_layers = 16;
    /// `"rope_theta": 500000.0`.
    static constexpr double rope_theta = 500000.0;
    /// `"rope_scaling"`: Llama 3's smoothing, factor 32, low 1, high 4, original context 8192.
    static constexpr std::optional<llama3_rope_scaling> rope_scaling = llama3_rope_scaling{32.0f, 1.0f, 4.0f, 8192.0f};
    /// `"rms_norm_eps": 1e-05`.
    static constexpr float rms_norm_eps = 1e-5f;
    /// `"tie_word_embeddings": true`: the output head is the token embeddings' tensor.
    static constexpr bool tie_word_embeddings = true;
};

/// Whether a configuration's attention norms each head's queries and keys (QK-norm, `Config::qk_norm`):
/// Qwen3's do, Llama 3's do not (a configuration without the field).
template <class Config>
constexpr bool qk_norm_of() {
    if constexpr (requires { { Config::qk_norm } -> std::convertible_to<bool>; })
        return Config::qk_norm;
    else
        return false;
}

/// Qwen3 0.6B (Hugging Face's `Qwen/Qwen3-0.6B`): the Llama 3 layout with QK-norm, heads of 128 on a width of
/// 1024, no RoPE smoothing; 751,632,384 parameters counted as the book counts them, 596,049,920 unique (tied
/// embeddings). `llama_model<qwen3_0_6b>` (also `qwen3_model`) is the book's `Qwen3Model`.
///
/// Shapes: vocab_size 151936, context_length 40960, emb_dim 1024, 16 query heads on 8 key/value heads (groups
/// of 2), head_dim 128 (not 1024 / 16), hidden_dim 3072, 28 layers. Errors: none. Source: the book's
/// `QWEN_CONFIG_06_B` (rasbt/LLMs-from-scratch ch05/11_qwen3), and the checkpoint's `config.json`.
struct qwen3_0_6b {
    /// `"vocab_size": 151936`.
    struct vocab_size : axis<"vocab_size", 151936> {};
    /// `"max_position_embeddings": 40960`.
    struct context_length : axis<"context_length", 40960> {};
    /// `"hidden_size": 1024`.
    struct emb_dim : axis<"emb_dim", 1024> {};
    /// `"num_key_value_heads": 8`.
    struct num_kv_heads : axis<"num_kv_heads", 8> {};
    /// Query heads per key/value head: 16 / 8.
    struct group_size : axis<"group_size", 2> {};
    /// `"num_attention_heads": 16`, key/value heads outermost.
    struct num_heads : product<"num_heads", num_kv_heads, group_size> {};
    /// `"head_dim": 128`: its own axis, the queries 2048 wide on a width of 1024.
    struct head_dim : axis<"head_dim", 128> {};
    /// `"intermediate_size": 3072`.
    struct hidden_dim : axis<"hidden_dim", 3072> {};
    /// The sequences of one forward pass, any number of them.
    struct batch : dynamic_axis<"batch"> {};
    /// The tokens of each sequence, 1 to `context_length` of them.
    struct num_tokens : dynamic_axis<"num_tokens", at_most<context_length>> {};
    /// `"num_hidden_layers": 28`.
    static constexpr std::size_t n_layers = 28;
    /// `"rope_theta": 1000000`.
    static constexpr double rope_theta = 1000000.0;
    /// `"rope_scaling": null`.
    static constexpr std::optional<llama3_rope_scaling> rope_scaling = std::nullopt;
    /// `"rms_norm_eps": 1e-06` (the QK-norms' too).
    static constexpr float rms_norm_eps = 1e-6f;
    /// `"tie_word_embeddings": true` (the larger Qwen3 sizes do not tie).
    static constexpr bool tie_word_embeddings = true;
    /// QK-norm: an RMSNorm over `head_dim` on each query and key head, before RoPE.
    static constexpr bool qk_norm = true;
};

/// The parameter counts of `llama_model<Config>`, computed from the configuration alone (no weights are
/// allocated), so that a published size's count is checked when the program compiles.
///
/// Shapes: none. Errors: none. Source: the book's parameter count and "unique parameters" (standalone-llama32).
template <LlamaConfig Config>
constexpr parameter_counts llama_parameter_counts() {
    constexpr std::size_t E = Config::emb_dim::extent, V = Config::vocab_size::extent;
    constexpr std::size_t Q = Config::num_heads::extent * Config::head_dim::extent;
    constexpr std::size_t KV = Config::num_kv_heads::extent * Config::head_dim::extent;
    constexpr std::size_t F = Config::hidden_dim::extent;
    // W_query, W_key, W_value and out_proj; fc1, fc2, fc3; norm1 and norm2; q_norm and k_norm under QK-norm.
    constexpr std::size_t block = E * Q + 2 * E * KV + Q * E + 3 * E * F + 2 * E +
                                  (qk_norm_of<Config>() ? 2 * Config::head_dim::extent : 0);
    constexpr std::size_t head = V * E;
    constexpr std::size_t unique = V * E + Config::n_layers * block + E + (Config::tie_word_embeddings ? 0 : head);
    return {unique + (Config::tie_word_embeddings ? head : 0), unique};
}

}  // namespace shaped::nn

#endif
