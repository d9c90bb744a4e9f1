#ifndef SHAPED_NN_GPT_CONFIG_HPP
#define SHAPED_NN_GPT_CONFIG_HPP

/// \file
/// A GPT model's configuration as a type: its axes and numbers, as the book's `GPT_CONFIG_124M` dictionary.

#include <concepts>
#include <cstddef>

#include "../axis.hpp"

namespace shaped::nn {

/// What a GPT configuration holds: the axes `vocab_size`, `context_length`, `emb_dim` and `n_heads` (static),
/// the run-time axes `batch` and `num_tokens` (declared within `context_length`) that the model's inputs take,
/// and `n_layers`, `drop_rate` and `qkv_bias`.
template <class C>
concept GptConfig = StaticAxis<typename C::vocab_size> && StaticAxis<typename C::context_length> &&
                    StaticAxis<typename C::emb_dim> && StaticAxis<typename C::n_heads> &&
                    Axis<typename C::batch> && Axis<typename C::num_tokens> && requires {
                        { C::n_layers } -> std::convertible_to<std::size_t>;
                        { C::drop_rate } -> std::convertible_to<double>;
                        { C::qkv_bias } -> std::convertible_to<bool>;
                    };

/// The book's `GPT_CONFIG_124M`: GPT-2 small, 163,009,536 parameters with its own output head.
///
/// Shapes: vocab_size 50257, context_length 1024, emb_dim 768, n_heads 12 (heads of 64), 12 layers; dropout
/// 0.1; no query/key/value bias. Errors: none. Source: the book's chapter 4.
struct gpt2_124m {
    struct vocab_size : axis<"vocab_size", 50257> {};
    struct context_length : axis<"context_length", 1024> {};
    struct emb_dim : axis<"emb_dim", 768> {};
    struct n_heads : axis<"n_heads", 12> {};
    struct batch : dynamic_axis<"batch"> {};
    struct num_tokens : dynamic_axis<"num_tokens", at_most<context_length>> {};
    static constexpr std::size_t n_layers = 12;
    static constexpr double drop_rate = 0.1;
    static constexpr bool qkv_bias = false;
};

}  // namespace shaped::nn

#endif
