#ifndef SHAPED_NN_GEMMA_MODEL_HPP
#define SHAPED_NN_GEMMA_MODEL_HPP

/// \file
/// `nn::gemma_model<Config>`: the book's Gemma 3 (local layers within a sliding window and global layers, each
/// with its RoPE base; `(1 + w)` RMSNorms before and after each sub-layer; embeddings scaled by the square root
/// of the width; a GELU-tanh gated feed-forward layer), any size its configuration type declares. Not in the
/// umbrella header `<shaped/shaped.hpp>`.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../diagnostics.hpp"
#include "../ops/matmul.hpp"
#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "embedding.hpp"
#include "gated_feed_forward.hpp"
#include "gemma_config.hpp"
#include "grouped_query_attention.hpp"
#include "linear.hpp"
#include "parameters.hpp"
#include "rms_norm.hpp"
#include "rope.hpp"
#include "weight_type.hpp"

namespace shaped::nn {

/// One Gemma 3 transformer block, local (`Sliding`: causal attention within `Config::sliding_window`
/// positions, a ring cache of that many tokens) or global: `x + post_attention_layernorm(att(input_layernorm(x)))`,
/// then `h + post_feedforward_layernorm(ff(pre_feedforward_layernorm(h)))`.
///
/// Shapes: `(batch, num_tokens, emb_dim)` to the same, `num_tokens` declared within the config's
/// `context_length`; the RoPE table is `rope<context_length, head_dim>` (the model's local or global one).
/// Element type: float. Errors: compile time, as `grouped_query_attention`. Thrown: `shape_error` from the
/// cache (more than `context_length` positions, another batch).
/// Source: the book's `TransformerBlock` (rasbt/LLMs-from-scratch ch05/12_gemma3): `att` (QK-norm,
/// `query_pre_attn_scalar`), `ff`, `input_layernorm`, `post_attention_layernorm`, `pre_feedforward_layernorm`,
/// `post_feedforward_layernorm`, created in that order, every norm `(1 + scale)` with `rms_norm_eps`.
template <GemmaConfig Config, bool Sliding>
class gemma_block {
public:
    /// Whether the block is local (`sliding_attention`).
    static constexpr bool sliding = Sliding;
    /// The attention: `grouped_query_attention` without biases, QK-norm of Gemma's form, within the window
    /// when local.
    using attention_type =
        grouped_query_attention<typename Config::emb_dim, typename Config::num_heads, typename Config::num_kv_heads,
                                typename Config::head_dim, typename Config::context_length, rope_layout::split_halves,
                                std::conditional_t<Sliding, typename Config::sliding_window, void>,
                                rms_form::one_plus_scale, weight_type_of<Config>>;
    /// The RoPE table the call takes.
    using rope_type = typename attention_type::rope_type;
    /// Gemma's norm: `x / rms(x) * (1 + scale)`, the scale zeros until loaded.
    using norm_type = rms_norm<typename Config::emb_dim, rms_form::one_plus_scale>;

    /// `att`: queries from `emb_dim` to `num_heads × head_dim`, keys and values to `num_kv_heads × head_dim`.
    attention_type att;
    /// `ff`: `fc3(gelu_tanh(fc1(x)) * fc2(x))`, `emb_dim → hidden_dim → emb_dim`.
    geglu_feed_forward<typename Config::emb_dim, typename Config::hidden_dim, weight_type_of<Config>> ff;
    /// The norm before the attention.
    norm_type input_layernorm{Config::rms_norm_eps};
    /// The norm of the attention's output, before the shortcut is added.
    norm_type post_attention_layernorm{Config::rms_norm_eps};
    /// The norm before the feed-forward layer.
    norm_type pre_feedforward_layernorm{Config::rms_norm_eps};
    /// The norm of the feed-forward layer's output, before the shortcut is added.
    norm_type post_feedforward_layernorm{Config::rms_norm_eps};

    /// Draws `att` and `ff` from `gen` in the book's order (the norms start at zeros).
    explicit gemma_block(torch::generator& gen = torch::default_generator()) : att(true, false, gen), ff(gen) {
        configure();
    }
    /// Allocates the weights without drawing them, for weights that will be loaded.
    explicit gemma_block(skip_init_t) : att(skip_init, true), ff(skip_init) { configure(); }

    /// The forward pass, the book's `forward(x, mask_global, mask_local, cos_global, ...)` without a cache.
    template <class L, Axis... X>
    auto operator()(const basic_tensor<float, L, X...>& x, const rope_type& rope) const {
        auto h = post_attention_layernorm(att(input_layernorm(x), rope)) + x;
        return post_feedforward_layernorm(ff(pre_feedforward_layernorm(h))) + h;
    }
    /// The forward pass with the attention's cache: the new tokens at the positions after those seen.
    template <class L, Axis... X>
    auto operator()(const basic_tensor<float, L, X...>& x, const rope_type& rope, use_cache_t) {
        auto h = post_attention_layernorm(att(input_layernorm(x), rope, use_cache)) + x;
        return post_feedforward_layernorm(ff(pre_feedforward_layernorm(h))) + h;
    }

    /// Under the book's `state_dict()` names: `att.W_query.weight`, ..., `att.q_norm.scale`, `att.k_norm.scale`,
    /// `ff.fc1.weight`, ..., `input_layernorm.scale`, ..., `post_feedforward_layernorm.scale`.
    static constexpr auto parameters() {
        return parameter_list(submodule("att", &gemma_block::att), submodule("ff", &gemma_block::ff),
                              submodule("input_layernorm", &gemma_block::input_layernorm),
                              submodule("post_attention_layernorm", &gemma_block::post_attention_layernorm),
                              submodule("pre_feedforward_layernorm", &gemma_block::pre_feedforward_layernorm),
                              submodule("post_feedforward_layernorm", &gemma_block::post_feedforward_layernorm));
    }

private:
    void configure() {
        att.scaling = 1.0 / std::sqrt(Config::query_pre_attn_scalar);
        att.q_norm->eps = Config::rms_norm_eps;
        att.k_norm->eps = Config::rms_norm_eps;
    }
};

namespace detail {
template <class Config, class Indices>
struct gemma_blocks_t;
template <class Config, std::size_t... I>
struct gemma_blocks_t<Config, std::index_sequence<I...>> {
    using type = std::tuple<gemma_block<Config, Config::layer_types[I] == layer_type::sliding_attention>...>;
};
}  // namespace detail

/// The book's Gemma 3 model: token embeddings scaled by `sqrt(emb_dim)`, `n_layers` blocks, local or global as
/// `layer_types` says, a final norm and the output head, which with `tie_word_embeddings` is the token
/// embeddings' own tensor (one tensor, not a copy).
///
/// Shapes: ids `(batch, num_tokens)` (`std::int64_t`, `num_tokens` declared within `context_length`, static
/// or run-time) to logits `(batch, num_tokens, vocab_size)`, float. A configuration of any size is a type
/// (see `GemmaConfig`, `gemma3_270m`). Errors: compile time, ids of another rank or a token axis not within
/// `context_length`; a config that is not a `GemmaConfig`, whose `num_tokens` is not declared within its
/// `context_length`, or whose `sliding_window` is longer than its `context_length`. Thrown: `shape_error`
/// from the caches (more than `context_length` positions, another batch).
/// Source: the book's `Gemma3Model` (rasbt/LLMs-from-scratch ch05/12_gemma3): `tok_emb`, `blocks`,
/// `final_norm`, `out_head` created in that order; `cos_local`, `sin_local` of `rope_local_base`,
/// `cos_global`, `sin_global` of `rope_base`; `forward`: `tok_emb(ids) * emb_dim ** 0.5`, the blocks (the
/// local ones with the sliding-window mask), the final norm, the head. With `tie_word_embeddings` the book
/// assigns `out_head.weight = tok_emb.weight` when it loads the checkpoint; here there is no `out_head` then.
/// Example: `shaped::nn::gemma_model<shaped::nn::gemma3_270m> model(shaped::nn::skip_init);`
template <GemmaConfig Config>
class gemma_model {
public:
    /// The configuration, `Config`.
    using config = Config;
    /// The logits' last axis.
    using vocab_size = typename Config::vocab_size;
    /// The longest input, and the RoPE tables' and the caches' length.
    using context_length = typename Config::context_length;
    /// The width of every token's vector.
    using emb_dim = typename Config::emb_dim;
    /// The blocks' types, in order: `gemma_block<Config, true>` where `layer_types` says `sliding_attention`.
    using blocks_type = typename detail::gemma_blocks_t<Config, std::make_index_sequence<Config::n_layers>>::type;
    /// The RoPE tables' type.
    using rope_type = rope<context_length, typename Config::head_dim>;

private:
    static_assert(valid_weight_type<Config>, "shaped::nn::gemma_model<Config>: Config::weight_type is float or "
                                             "shaped::bfloat16 (the element type the model keeps its weights in)");
    static constexpr bool config_ok = shaped::detail::prefix_of<typename Config::num_tokens, context_length>();
    static_assert(diag::expect<config_ok, shaped::detail::described<diag::tensor_axes, typename Config::num_tokens>,
                               shaped::detail::described<diag::expected_axes, context_length>>,
                  "shaped::nn::gemma_model<Config>: Config::num_tokens is not declared within Config::context_length "
                  "(a config derived from another with context_length replaced keeps the other's num_tokens); "
                  "redeclare it in the config: struct num_tokens : shaped::dynamic_axis<\"num_tokens\", "
                  "shaped::at_most<context_length>> {};");
    static constexpr bool window_ok = Config::sliding_window::extent <= context_length::extent;
    static_assert(diag::expect<window_ok, diag::sized<typename Config::sliding_window, Config::sliding_window::extent>,
                               diag::sized<context_length, context_length::extent>>,
                  "shaped::nn::gemma_model<Config>: Config::sliding_window is longer than Config::context_length (a "
                  "local layer would see every position, as a global one does); shorten the window or redeclare "
                  "context_length");

public:
    /// The token embeddings, `(vocab_size, emb_dim)`; with `tie_word_embeddings`, the output head too.
    embedding<vocab_size, emb_dim, weight_type_of<Config>> tok_emb;
    /// The `n_layers` blocks, in order (a `std::tuple`: local and global blocks are two types).
    blocks_type blocks;
    /// The norm after the last block.
    rms_norm<emb_dim, rms_form::one_plus_scale> final_norm{Config::rms_norm_eps};
    /// The output head, `linear<emb_dim, vocab_size>` without bias; absent with `tie_word_embeddings`.
    std::optional<linear<emb_dim, vocab_size, float, weight_type_of<Config>>> out_head;
    /// The local layers' RoPE table, of `rope_local_base_freq`: not a parameter.
    rope_type rope_local{Config::rope_local_base_freq};
    /// The global layers' RoPE table, of `rope_theta`: not a parameter.
    rope_type rope_global{Config::rope_theta};

    /// Draws every parameter from `gen` in the book's order.
    explicit gemma_model(torch::generator& gen = torch::default_generator())
        : tok_emb(gen), blocks(make_blocks(gen, std::make_index_sequence<Config::n_layers>{})) {
        if constexpr (!Config::tie_word_embeddings) out_head.emplace(gen, false);
    }
    /// Allocates the weights without drawing them, for a model whose weights will be loaded.
    explicit gemma_model(skip_init_t)
        : tok_emb(skip_init), blocks(make_blocks(skip_init, std::make_index_sequence<Config::n_layers>{})) {
        if constexpr (!Config::tie_word_embeddings) out_head.emplace(skip_init, false);
    }

    /// The number of unique parameters; `gemma_parameter_counts<Config>()` gives the book's count too.
    std::size_t parameter_count() const { return nn::parameter_count(*this); }

    /// The forward pass, the book's `forward(input_ids)`: ids `(batch, num_tokens)` to logits `(batch,
    /// num_tokens, vocab_size)`. Shapes and errors: see the class. The generator is not drawn from.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<std::int64_t, Layout, X...>& in_idx,
                    [[maybe_unused]] torch::generator& gen = torch::default_generator()) const {
        constexpr bool ok = ids_ok<X...>();
        return diag::checked<ok>([&]<class B, class T>(const basic_tensor<std::int64_t, Layout, B, T>& ids) {
            auto x = tok_emb(ids) * embed_scale();
            std::apply([&](const auto&... block) { ((x = block(x, rope_of(block))), ...); }, blocks);
            return head(final_norm(x));
        }, in_idx);
    }

    /// The forward pass with the caches (the book's `forward(input_ids, cache)`): the ids are the next tokens
    /// of the sequence the caches hold. Shapes: as the other call. Thrown: `shape_error` from the caches.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<std::int64_t, Layout, X...>& in_idx, use_cache_t,
                    [[maybe_unused]] torch::generator& gen = torch::default_generator()) {
        return cached_forward<false>(in_idx);
    }
    /// The same, the logits of the last position only, `(batch, vocab_size)`: what a prompt's pass needs
    /// before the first new token, without the output head's work on the other positions (for a 512-token
    /// prompt of Gemma 3 270M, whose vocabulary is 262,144 ids, 172 of its 294 GFLOP). Shapes, errors and what is thrown: as the call above.
    /// Source: Hugging Face's `logits_to_keep=1`.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<std::int64_t, Layout, X...>& in_idx, use_cache_t, last_position_t,
                    [[maybe_unused]] torch::generator& gen = torch::default_generator()) {
        return cached_forward<true>(in_idx);
    }

    /// Empties every block's cache (the book's `reset_kv_cache`).
    void reset_kv_cache() noexcept {
        std::apply([](auto&... block) { (block.att.reset_cache(), ...); }, blocks);
    }
    /// `module.eval()`: the model has no dropout; here so that the generation functions take it.
    void eval() noexcept {}

    /// Under the book's `state_dict()` names: `tok_emb.weight`, each block's (`blocks.0.att.W_query.weight` and
    /// so on), `final_norm.scale`, and `out_head.weight` unless tied (`io::load_gemma_weights` maps them to
    /// Hugging Face's).
    static constexpr auto parameters() {
        return parameter_list(submodule("tok_emb", &gemma_model::tok_emb), submodules("blocks", &gemma_model::blocks),
                              submodule("final_norm", &gemma_model::final_norm),
                              submodule("out_head", &gemma_model::out_head));
    }

private:
    // The cached pass; the logits of every position, or of the last one.
    template <bool LastOnly, class Layout, Axis... X>
    auto cached_forward(const basic_tensor<std::int64_t, Layout, X...>& in_idx) {
        constexpr bool ok = ids_ok<X...>();
        return diag::checked<ok>([&]<class B, class T>(const basic_tensor<std::int64_t, Layout, B, T>& ids) {
            auto x = tok_emb(ids) * embed_scale();
            std::apply([&](auto&... block) { ((x = block(x, rope_of(block), use_cache)), ...); }, blocks);
            if constexpr (LastOnly)
                return head(final_norm(x.template select<T>(-1)));  // the norm is per position
            else
                return head(final_norm(x));
        }, in_idx);
    }

    // `emb_dim ** 0.5` as PyTorch multiplies a float tensor by it: rounded to float.
    static float embed_scale() { return static_cast<float>(std::sqrt(static_cast<double>(emb_dim::extent))); }

    template <class Block>
    const rope_type& rope_of(const Block&) const {
        if constexpr (Block::sliding)
            return rope_local;
        else
            return rope_global;
    }

    template <Axis... X>
    static constexpr bool ids_ok() {
        if constexpr (sizeof...(X) != 2) {
            static_assert(diag::expect<false, shaped::detail::described<diag::tensor_axes, X...>>,
                          "shaped::nn::gemma_model(in_idx): the ids are (batch, num_tokens)");
            return false;
        } else {
            using tokens = shaped::detail::axis_at_t<1, X...>;
            constexpr bool within = shaped::detail::prefix_of<tokens, context_length>();
            static_assert(diag::expect<within, shaped::detail::described<diag::tensor_axes, X...>,
                                       shaped::detail::described<diag::expected_axes, context_length>>,
                          "shaped::nn::gemma_model(in_idx): the token axis must be declared within context_length "
                          "(the config's num_tokens is)");
            return within;
        }
    }

    template <class Hidden>
    auto head(const Hidden& x) const {
        if constexpr (Config::tie_word_embeddings)
            return tied_head(x, tok_emb.weight);  // the embeddings read in place
        else
            return (*out_head)(x);
    }

    template <class Source, std::size_t... I>
    static blocks_type make_blocks(Source& gen, std::index_sequence<I...>) {
        // Braced initialisation runs left to right: block 0 draws its weights first.
        return blocks_type{std::tuple_element_t<I, blocks_type>(gen)...};
    }
};

}  // namespace shaped::nn

#endif
