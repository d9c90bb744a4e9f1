#ifndef SHAPED_NN_LLAMA_MODEL_HPP
#define SHAPED_NN_LLAMA_MODEL_HPP

/// \file
/// `nn::llama_model<Config>`: the book's Llama 3.2 (RMSNorm, grouped-query attention with RoPE, SwiGLU, tied
/// embeddings) and, with QK-norm, its Qwen3 (`nn::qwen3_model`), any size its configuration type declares. Not in the umbrella header `<shaped/shaped.hpp>`.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "../diagnostics.hpp"
#include "../ops/matmul.hpp"
#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "embedding.hpp"
#include "gated_feed_forward.hpp"
#include "grouped_query_attention.hpp"
#include "linear.hpp"
#include "llama_config.hpp"
#include "parameters.hpp"
#include "rms_norm.hpp"
#include "rope.hpp"
#include "weight_type.hpp"

namespace shaped::nn {

/// One Llama 3 transformer block: `x + att(norm1(x))`, then `h + ff(norm2(h))`.
///
/// Shapes: `(batch, num_tokens, emb_dim)` to the same, `num_tokens` declared within the config's
/// `context_length`, `batch` and `num_tokens` static or run-time; the RoPE table is the model's,
/// `rope<context_length, head_dim>`. Element type: float. Errors: compile time, as
/// `grouped_query_attention` (another input width, a token axis not within `context_length`, `num_heads` not
/// declared as `num_kv_heads` times a group). Thrown: `shape_error` from the cache (more than
/// `context_length` positions, another batch).
/// Source: the book's `TransformerBlock` of standalone-llama32 (rasbt/LLMs-from-scratch ch05/07_gpt_to_llama):
/// `att`, `ff`, `norm1`, `norm2` (RMSNorm, `rms_norm_eps`), created in that order.
template <LlamaConfig Config>
class llama_block {
public:
    /// The attention: `grouped_query_attention` without biases, with QK-norm when the config has it (Qwen3).
    using attention_type =
        grouped_query_attention<typename Config::emb_dim, typename Config::num_heads, typename Config::num_kv_heads,
                                typename Config::head_dim, typename Config::context_length, rope_layout::split_halves,
                                void, rms_form::scale, weight_type_of<Config>>;
    /// The RoPE table the call takes.
    using rope_type = typename attention_type::rope_type;

    /// `att`: queries from `emb_dim` to `num_heads × head_dim`, keys and values to `num_kv_heads × head_dim`.
    attention_type att;
    /// `ff`: `fc3(silu(fc1(x)) * fc2(x))`, `emb_dim → hidden_dim → emb_dim`.
    swiglu_feed_forward<typename Config::emb_dim, typename Config::hidden_dim, weight_type_of<Config>> ff;
    /// The RMSNorm before the attention.
    rms_norm<typename Config::emb_dim> norm1{Config::rms_norm_eps};
    /// The RMSNorm before the feed-forward layer.
    rms_norm<typename Config::emb_dim> norm2{Config::rms_norm_eps};

    /// Draws `att` and `ff` from `gen` in the book's order (the norms start at ones).
    explicit llama_block(torch::generator& gen = torch::default_generator())
        : att(qk_norm_of<Config>(), false, gen), ff(gen) {}
    /// Allocates the weights without drawing them, for weights that will be loaded.
    explicit llama_block(skip_init_t) : att(skip_init, qk_norm_of<Config>()), ff(skip_init) {}

    /// The forward pass, the book's `forward(x, mask, cos, sin)` with the causal mask.
    template <class L, Axis... X>
    auto operator()(const basic_tensor<float, L, X...>& x, const rope_type& rope) const {
        auto h = att(norm1(x), rope) + x;
        return ff(norm2(h)) + h;
    }
    /// The forward pass with the attention's KV cache: the new tokens at the positions after those cached.
    template <class L, Axis... X>
    auto operator()(const basic_tensor<float, L, X...>& x, const rope_type& rope, use_cache_t) {
        auto h = att(norm1(x), rope, use_cache) + x;
        return ff(norm2(h)) + h;
    }

    /// Under the book's `state_dict()` names: `att.W_query.weight`, ..., `ff.fc1.weight`, ..., `norm1.scale`,
    /// `norm2.scale`.
    static constexpr auto parameters() {
        return parameter_list(submodule("att", &llama_block::att), submodule("ff", &llama_block::ff),
                              submodule("norm1", &llama_block::norm1), submodule("norm2", &llama_block::norm2));
    }
};

/// The book's Llama 3.2 model: token embeddings, `n_layers` blocks of grouped-query attention with RoPE and
/// a SwiGLU feed-forward layer, a final RMSNorm and the output head, which with `tie_word_embeddings` is the
/// token embeddings' own tensor (one tensor, not a copy).
///
/// Shapes: ids `(batch, num_tokens)` (`std::int64_t`, `num_tokens` declared within `context_length`, static
/// or run-time) to logits `(batch, num_tokens, vocab_size)`, float. A configuration of any size is a type
/// (see `LlamaConfig`, `llama32_1b`). Errors: compile time, ids of another rank or a token axis not within
/// `context_length`; a config that is not a `LlamaConfig`, or whose `num_tokens` is not declared within its
/// `context_length`. Thrown: `shape_error` from the cache (more than
/// `context_length` positions, another batch).
/// Source: the book's `Llama3Model` (rasbt/LLMs-from-scratch ch05/07_gpt_to_llama, standalone-llama32):
/// `tok_emb`, `trf_blocks`, `final_norm`, `out_head` created in that order, so that `torch::manual_seed`
/// gives the book's weights; `cos` and `sin` from `compute_rope_params(head_dim, rope_base, context_length,
/// freq_config)`; `forward(in_idx)`: the blocks, the final norm, the head. With `tie_word_embeddings` the book
/// assigns `out_head.weight = tok_emb.weight` when it loads the checkpoint; here there is no `out_head` then.
/// Example: `shaped::nn::llama_model<my_config> model;  auto logits = model(ids);`
template <LlamaConfig Config>
class llama_model {
public:
    /// The configuration, `Config`.
    using config = Config;
    /// The logits' last axis.
    using vocab_size = typename Config::vocab_size;
    /// The longest input, and the RoPE table's and the caches' length.
    using context_length = typename Config::context_length;
    /// The width of every token's vector.
    using emb_dim = typename Config::emb_dim;
    /// One block.
    using block_type = llama_block<Config>;

private:
    static_assert(valid_weight_type<Config>, "shaped::nn::llama_model<Config>: Config::weight_type is float or "
                                             "shaped::bfloat16 (the element type the model keeps its weights in)");
    // The config's num_tokens must be declared within its own context_length: a config derived from another
    // with context_length replaced (the book runs Llama 3.2 at 8192) keeps the base's num_tokens.
    static constexpr bool config_ok = shaped::detail::prefix_of<typename Config::num_tokens, context_length>();
    static_assert(diag::expect<config_ok, shaped::detail::described<diag::tensor_axes, typename Config::num_tokens>,
                               shaped::detail::described<diag::expected_axes, context_length>>,
                  "shaped::nn::llama_model<Config>: Config::num_tokens is not declared within Config::context_length "
                  "(a config derived from another with context_length replaced keeps the other's num_tokens); "
                  "redeclare it in the config: struct num_tokens : shaped::dynamic_axis<\"num_tokens\", "
                  "shaped::at_most<context_length>> {};");

public:

    /// The token embeddings, `(vocab_size, emb_dim)`; with `tie_word_embeddings`, the output head too.
    embedding<vocab_size, emb_dim, weight_type_of<Config>> tok_emb;
    /// The `n_layers` blocks, in order.
    std::array<block_type, Config::n_layers> trf_blocks;
    /// The RMSNorm after the last block.
    rms_norm<emb_dim> final_norm{Config::rms_norm_eps};
    /// The output head, `linear<emb_dim, vocab_size>` without bias; absent with `tie_word_embeddings`.
    std::optional<linear<emb_dim, vocab_size, float, weight_type_of<Config>>> out_head;
    /// The RoPE table every block reads, `(context_length, head_dim)`: not a parameter.
    typename block_type::rope_type rope_table{Config::rope_theta, Config::rope_scaling};

    /// Draws every parameter from `gen` in the book's order.
    explicit llama_model(torch::generator& gen = torch::default_generator())
        : tok_emb(gen), trf_blocks(make_blocks(gen, std::make_index_sequence<Config::n_layers>{})) {
        if constexpr (!Config::tie_word_embeddings) out_head.emplace(gen, false);
    }
    /// Allocates the weights without drawing them, for a model whose weights will be loaded.
    explicit llama_model(skip_init_t)
        : tok_emb(skip_init), trf_blocks(make_blocks(skip_init, std::make_index_sequence<Config::n_layers>{})) {
        if constexpr (!Config::tie_word_embeddings) out_head.emplace(skip_init, false);
    }

    /// The number of unique parameters (PyTorch's `sum(p.numel() for p in model.parameters())` after the
    /// weights are tied); `llama_parameter_counts<Config>()` gives the book's count too, without a model.
    std::size_t parameter_count() const { return nn::parameter_count(*this); }

    /// The forward pass, the book's `forward(in_idx)`: ids `(batch, num_tokens)` to logits `(batch,
    /// num_tokens, vocab_size)`. Shapes and errors: see the class.
    /// The generator is not drawn from (the model has no dropout); it is there so that the book's generation
    /// functions, which pass one, take the model.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<std::int64_t, Layout, X...>& in_idx,
                    [[maybe_unused]] torch::generator& gen = torch::default_generator()) const {
        constexpr bool ok = ids_ok<X...>();
        return diag::checked<ok>([&]<class B, class T>(const basic_tensor<std::int64_t, Layout, B, T>& ids) {
            auto x = tok_emb(ids);
            for (const auto& block : trf_blocks) x = block(x, rope_table);
            return head(final_norm(x));
        }, in_idx);
    }

    /// The forward pass with the KV cache: the ids are the next tokens of the sequence the caches hold.
    /// Shapes: as the other call. Thrown: `shape_error` from the caches.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<std::int64_t, Layout, X...>& in_idx, use_cache_t,
                    [[maybe_unused]] torch::generator& gen = torch::default_generator()) {
        return cached_forward<false>(in_idx);
    }
    /// The same, the logits of the last position only, `(batch, vocab_size)`: what a prompt's pass needs
    /// before the first new token, without the output head's work on the other positions (for a 512-token
    /// prompt of Qwen3 0.6B, 159 of its 640 GFLOP). Shapes, errors and what is thrown: as the call above.
    /// Source: Hugging Face's `logits_to_keep=1`.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<std::int64_t, Layout, X...>& in_idx, use_cache_t, last_position_t,
                    [[maybe_unused]] torch::generator& gen = torch::default_generator()) {
        return cached_forward<true>(in_idx);
    }

    /// Empties every block's KV cache.
    void reset_kv_cache() noexcept {
        for (auto& block : trf_blocks) block.att.reset_cache();
    }
    /// `module.eval()`: the model has no dropout; here so that the generation functions take it.
    void eval() noexcept {}

    /// Under the book's `state_dict()` names: `tok_emb.weight`, each block's (`trf_blocks.0.att.W_query.weight`
    /// and so on), `final_norm.scale`, and `out_head.weight` unless tied (`io::load_llama_weights` maps them to
    /// Hugging Face's).
    static constexpr auto parameters() {
        return parameter_list(submodule("tok_emb", &llama_model::tok_emb),
                              submodules("trf_blocks", &llama_model::trf_blocks),
                              submodule("final_norm", &llama_model::final_norm),
                              submodule("out_head", &llama_model::out_head));
    }

private:
    // The cached pass; the logits of every position, or of the last one.
    template <bool LastOnly, class Layout, Axis... X>
    auto cached_forward(const basic_tensor<std::int64_t, Layout, X...>& in_idx) {
        constexpr bool ok = ids_ok<X...>();
        return diag::checked<ok>([&]<class B, class T>(const basic_tensor<std::int64_t, Layout, B, T>& ids) {
            auto x = tok_emb(ids);
            for (auto& block : trf_blocks) x = block(x, rope_table, use_cache);
            if constexpr (LastOnly)
                return head(final_norm(x.template select<T>(-1)));  // the norm is per position
            else
                return head(final_norm(x));
        }, in_idx);
    }

    template <Axis... X>
    static constexpr bool ids_ok() {
        if constexpr (sizeof...(X) != 2) {
            static_assert(diag::expect<false, shaped::detail::described<diag::tensor_axes, X...>>,
                          "shaped::nn::llama_model(in_idx): the ids are (batch, num_tokens)");
            return false;
        } else {
            using tokens = shaped::detail::axis_at_t<1, X...>;
            constexpr bool within = shaped::detail::prefix_of<tokens, context_length>();
            static_assert(diag::expect<within, shaped::detail::described<diag::tensor_axes, X...>,
                                       shaped::detail::described<diag::expected_axes, context_length>>,
                          "shaped::nn::llama_model(in_idx): the token axis must be declared within context_length "
                          "(the config's num_tokens is)");
            return within;
        }
    }

    // The logits: the output head, or the token embeddings' tensor itself when tied (x @ tok_emb.weight.T).
    template <class Hidden>
    auto head(const Hidden& x) const {
        if constexpr (Config::tie_word_embeddings)
            return tied_head(x, tok_emb.weight);  // the embeddings read in place
        else
            return (*out_head)(x);
    }

    template <class Source, std::size_t... I>
    static std::array<block_type, Config::n_layers> make_blocks(Source& gen, std::index_sequence<I...>) {
        // Braced initialisation runs left to right: block 0 draws its weights first.
        return {{((void)I, block_type(gen))...}};
    }
};

/// The book's Qwen3 model (rasbt/LLMs-from-scratch ch05/11_qwen3, `Qwen3Model`): the Llama 3 layout with
/// QK-norm, so `llama_model` of a configuration with `qk_norm = true` (`qwen3_0_6b`, or one of another size).
///
/// Shapes, errors and what is thrown: as `llama_model`. Source: the book's `Qwen3Model` and
/// `TransformerBlock` (`q_norm`, `k_norm` RMSNorms over `head_dim`, eps 1e-6).
/// Example: `shaped::nn::qwen3_model<shaped::nn::qwen3_0_6b> model(shaped::nn::skip_init);`
template <LlamaConfig Config>
using qwen3_model = llama_model<Config>;

}  // namespace shaped::nn

#endif
