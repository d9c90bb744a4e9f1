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
    /// `"vocab_size": 50257`: the number of token ids, the BPE tokenizer's vocabulary.
    struct vocab_size : axis<"vocab_size", 50257> {};
    /// `"context_length": 1024`: the most tokens the model reads at once (positional embeddings, causal mask).
    struct context_length : axis<"context_length", 1024> {};
    /// `"emb_dim": 768`: the embedding dimension, the width of every token's vector.
    struct emb_dim : axis<"emb_dim", 768> {};
    /// `"n_heads": 12`: the number of attention heads per transformer block.
    struct n_heads : axis<"n_heads", 12> {};
    /// The sequences of one forward pass, any number of them.
    struct batch : dynamic_axis<"batch"> {};
    /// The tokens of each sequence, 1 to `context_length` of them.
    struct num_tokens : dynamic_axis<"num_tokens", at_most<context_length>> {};
    /// `"n_layers": 12`: the number of transformer blocks.
    static constexpr std::size_t n_layers = 12;
    /// `"drop_rate": 0.1`: the dropout probability, after the embeddings, in attention and on the shortcuts.
    static constexpr double drop_rate = 0.1;
    /// `"qkv_bias": False`: whether the query, key and value projections have a bias.
    static constexpr bool qkv_bias = false;
};

/// OpenAI's GPT-2 checkpoints, as the book's chapter 5 loads them: `GPT_CONFIG_124M` with `qkv_bias=True`
/// (`gpt2_small`), and the larger sizes. What `io::load_gpt2_weights` loads into.
///
/// Shapes: vocab_size 50257 and context_length 1024 for all; emb_dim / n_heads / n_layers 768 / 12 / 12
/// (small, 124M), 1024 / 16 / 24 (medium, 355M), 1280 / 20 / 36 (large, 774M), 1600 / 25 / 48 (xl, 1558M).
/// Errors: none. Source: the book's `model_configs` (chapter 5), Hugging Face's `gpt2` ... `gpt2-xl`.
struct gpt2_small : gpt2_124m {
    /// `qkv_bias=True`: OpenAI's checkpoints have query, key and value biases.
    static constexpr bool qkv_bias = true;
};
/// A GPT-2 checkpoint's configuration of another size: `gpt2_small` with `emb_dim`, `n_heads` and
/// `n_layers` replaced.
///
/// Shapes: emb_dim `Emb`, n_heads `Heads` (heads of `Emb / Heads`), `Layers` transformer blocks; vocab_size,
/// context_length, dropout and `qkv_bias=True` as `gpt2_small`. Errors: compile time, in the attention
/// modules, `Emb` not divisible by `Heads`. Source: the book's `model_configs` (chapter 5).
template <std::size_t Emb, std::size_t Heads, std::size_t Layers>
struct gpt2_sized : gpt2_small {
    /// `"emb_dim"`: `Emb`.
    struct emb_dim : axis<"emb_dim", Emb> {};
    /// `"n_heads"`: `Heads`.
    struct n_heads : axis<"n_heads", Heads> {};
    /// `"n_layers"`: `Layers` transformer blocks.
    static constexpr std::size_t n_layers = Layers;
};
/// GPT-2 medium (355M): emb_dim 1024, n_heads 16, n_layers 24.
struct gpt2_medium : gpt2_sized<1024, 16, 24> {};
/// GPT-2 large (774M): emb_dim 1280, n_heads 20, n_layers 36.
struct gpt2_large : gpt2_sized<1280, 20, 36> {};
/// GPT-2 XL (1558M): emb_dim 1600, n_heads 25, n_layers 48.
struct gpt2_xl : gpt2_sized<1600, 25, 48> {};

}  // namespace shaped::nn

#endif
