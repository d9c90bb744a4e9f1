#ifndef SHAPED_NN_GEMMA_CONFIG_HPP
#define SHAPED_NN_GEMMA_CONFIG_HPP

/// \file
/// A Gemma 3 model's configuration as a type: its axes, which layers attend within the sliding window, and
/// the numbers of Hugging Face's `config.json` that change the computation; the parameter counts that follow.

#include <array>
#include <concepts>
#include <cstddef>

#include "../axis.hpp"
#include "parameters.hpp"

namespace shaped::nn {

/// The attention of one Gemma 3 layer, under Hugging Face's names in `config.json`'s `layer_types`:
/// `sliding_attention` (local: causal within `sliding_window` positions, RoPE of `rope_local_base_freq`) or
/// `full_attention` (global: causal over every position, RoPE of `rope_theta`).
enum class layer_type { sliding_attention, full_attention };

/// Gemma 3's layer pattern: every `Pattern`-th layer global, the others local (Hugging Face's
/// `sliding_window_pattern`, 6: five local layers, then one global).
///
/// Shapes: none. Errors: compile time, `Pattern` of 0. Source: transformers' `Gemma3TextConfig`
/// (`layer_types` from `sliding_window_pattern`); the book's `GEMMA3_CONFIG_270M["layer_types"]`.
template <std::size_t NLayers, std::size_t Pattern = 6>
constexpr std::array<layer_type, NLayers> gemma3_layer_types() {
    static_assert(Pattern > 0, "shaped::nn::gemma3_layer_types<NLayers, Pattern>: the pattern is at least 1");
    std::array<layer_type, NLayers> types{};
    for (std::size_t i = 0; i < NLayers; ++i)
        types[i] = (i + 1) % Pattern == 0 ? layer_type::full_attention : layer_type::sliding_attention;
    return types;
}

/// What a Gemma 3 configuration holds: the static axes `vocab_size`, `context_length`, `emb_dim`,
/// `num_kv_heads`, `num_heads` (declared as `num_kv_heads` times a group), `head_dim`, `hidden_dim` and
/// `sliding_window`; the run-time axes `batch` and `num_tokens` (declared within `context_length`); and
/// `n_layers`, `layer_types` (a `std::array<layer_type, n_layers>`), `rope_theta` (the global layers' base),
/// `rope_local_base_freq` (the local layers'), `rms_norm_eps`, `query_pre_attn_scalar` (the scores are
/// scaled by its inverse square root) and `tie_word_embeddings`; optionally `weight_type`
/// (`shaped::bfloat16` keeps the weights in BF16, see `weight_type_of`).
template <class C>
concept GemmaConfig =
    StaticAxis<typename C::vocab_size> && StaticAxis<typename C::context_length> && StaticAxis<typename C::emb_dim> &&
    StaticAxis<typename C::num_heads> && StaticAxis<typename C::num_kv_heads> && StaticAxis<typename C::head_dim> &&
    StaticAxis<typename C::hidden_dim> && StaticAxis<typename C::sliding_window> && Axis<typename C::batch> &&
    Axis<typename C::num_tokens> && requires {
        { C::n_layers } -> std::convertible_to<std::size_t>;
        { C::layer_types } -> std::convertible_to<std::array<layer_type, C::n_layers>>;
        { C::rope_theta } -> std::convertible_to<double>;
        { C::rope_local_base_freq } -> std::convertible_to<double>;
        { C::rms_norm_eps } -> std::convertible_to<float>;
        { C::query_pre_attn_scalar } -> std::convertible_to<double>;
        { C::tie_word_embeddings } -> std::convertible_to<bool>;
    };

/// Gemma 3 270M (Hugging Face's `google/gemma-3-270m`): one key/value head for four query heads of 256 on a
/// width of 640, 18 layers of which every sixth is global, a window of 512; 435,870,336 parameters counted as
/// the book counts them (the output head apart from the token embeddings), 268,098,176 unique (tied).
///
/// Shapes: vocab_size 262144, context_length 32768, emb_dim 640, 4 query heads on 1 key/value head, head_dim
/// 256, hidden_dim 2048, sliding_window 512. Errors: none. Source: the book's `GEMMA3_CONFIG_270M`
/// (rasbt/LLMs-from-scratch ch05/12_gemma3), and the checkpoint's `config.json`.
struct gemma3_270m {
    /// `"vocab_size": 262144`.
    struct vocab_size : axis<"vocab_size", 262144> {};
    /// `"max_position_embeddings": 32768`: the longest input, and the RoPE tables' length.
    struct context_length : axis<"context_length", 32768> {};
    /// `"hidden_size": 640`.
    struct emb_dim : axis<"emb_dim", 640> {};
    /// `"num_key_value_heads": 1`: multi-query attention.
    struct num_kv_heads : axis<"num_kv_heads", 1> {};
    /// Query heads per key/value head: 4.
    struct group_size : axis<"group_size", 4> {};
    /// `"num_attention_heads": 4`.
    struct num_heads : product<"num_heads", num_kv_heads, group_size> {};
    /// `"head_dim": 256`: queries 1024 wide on a width of 640.
    struct head_dim : axis<"head_dim", 256> {};
    /// `"intermediate_size": 2048`.
    struct hidden_dim : axis<"hidden_dim", 2048> {};
    /// `"sliding_window": 512`: a local layer's query sees its own position and the 511 before it.
    struct sliding_window : axis<"sliding_window", 512> {};
    /// The sequences of one forward pass, any number of them.
    struct batch : dynamic_axis<"batch"> {};
    /// The tokens of each sequence, 1 to `context_length` of them.
    struct num_tokens : dynamic_axis<"num_tokens", at_most<context_length>> {};
    /// `"num_hidden_layers": 18`.
    static constexpr std::size_t n_layers = 18;
    /// `"layer_types"`: five local layers, then one global, three times.
    static constexpr std::array<layer_type, n_layers> layer_types = gemma3_layer_types<n_layers>();
    /// `"rope_theta": 1000000.0`: the global layers' RoPE base.
    static constexpr double rope_theta = 1000000.0;
    /// `"rope_local_base_freq": 10000.0`: the local layers' RoPE base.
    static constexpr double rope_local_base_freq = 10000.0;
    /// `"rms_norm_eps": 1e-06` (every norm's, the QK-norms' too).
    static constexpr float rms_norm_eps = 1e-6f;
    /// `"query_pre_attn_scalar": 256`: the scores are scaled by `256 ** -0.5`.
    static constexpr double query_pre_attn_scalar = 256.0;
    /// Gemma 3 ties the output head to the token embeddings (`lm_head.weight` is not in the checkpoint).
    static constexpr bool tie_word_embeddings = true;
};

/// The parameter counts of `gemma_model<Config>`, from the configuration alone (no weights are allocated).
///
/// Shapes: none. Errors: none. Source: the book's parameter count and "unique parameters" (ch05/12_gemma3).
template <GemmaConfig Config>
constexpr parameter_counts gemma_parameter_counts() {
    constexpr std::size_t E = Config::emb_dim::extent, V = Config::vocab_size::extent;
    constexpr std::size_t D = Config::head_dim::extent;
    constexpr std::size_t Q = Config::num_heads::extent * D, KV = Config::num_kv_heads::extent * D;
    constexpr std::size_t F = Config::hidden_dim::extent;
    // W_query, W_key, W_value, out_proj; q_norm, k_norm; fc1, fc2, fc3; the four norms of the block.
    constexpr std::size_t block = E * Q + 2 * E * KV + Q * E + 2 * D + 3 * E * F + 4 * E;
    constexpr std::size_t head = V * E;
    constexpr std::size_t unique = V * E + Config::n_layers * block + E + (Config::tie_word_embeddings ? 0 : head);
    return {unique + (Config::tie_word_embeddings ? head : 0), unique};
}

}  // namespace shaped::nn

#endif
