#ifndef SHAPED_NN_GPT_MODEL_HPP
#define SHAPED_NN_GPT_MODEL_HPP

/// \file
/// `nn::gpt_model<Config>` and `nn::generate_text_simple`: the book's `GPTModel` and its greedy decoding
/// (chapter 4).

#include <array>
#include <boost/hana/tuple.hpp>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "../diagnostics.hpp"
#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "dropout.hpp"
#include "embedding.hpp"
#include "gpt_config.hpp"
#include "kv_cache.hpp"
#include "layer_norm.hpp"
#include "linear.hpp"
#include "parameters.hpp"
#include "transformer_block.hpp"

namespace shaped::nn {

/// A GPT model: token and position embeddings, `n_layers` transformer blocks, a final layer norm and an output
/// head without bias.
///
/// Shapes: the call maps token ids `(batch, num_tokens)` (`std::int64_t`) to logits
/// `(batch, num_tokens, vocab_size)`; `num_tokens` must be declared within `context_length` (the config's
/// `num_tokens`, run-time, serves every length). `tok_emb` is `(vocab_size, emb_dim)`, `pos_emb`
/// `(context_length, emb_dim)`, `out_head` `linear<emb_dim, vocab_size>` without bias. Element type: float.
/// Errors: compile time, ids that are not a 2-d integer tensor, a token axis not declared within
/// `context_length`. Thrown: `std::out_of_range` for an id outside the vocabulary.
/// Source: the book's `GPTModel` (chapter 4): `tok_emb`, `pos_emb`, `drop_emb`, `trf_blocks`, `final_norm`,
/// `out_head`, created in that order (`torch.manual_seed(123)` gives the book's weights); forward
/// `tok_emb(in_idx) + pos_emb(arange(seq_len))`, dropout, the blocks, the norm, the head. Like an `nn.Module`,
/// a new model is in training mode; the call draws its dropout from `gen`. `Attention` is the blocks'
/// attention form (see `transformer_block`): `gpt_model<gpt2_124m, multi_head_attention_sdpa>` runs the
/// fused kernel, its state_dict names then `trf_blocks.N.att.qkv.*` and `.proj.*`.
/// Example: `torch::manual_seed(123); shaped::nn::gpt_model<shaped::nn::gpt2_124m> model; auto logits = model(ids);`
template <GptConfig Config, template <class, class, class, class> class Attention = multi_head_attention>
class gpt_model {
public:
    /// The configuration, `Config`.
    using config = Config;
    /// The config's vocabulary axis, the logits' last axis.
    using vocab_size = typename Config::vocab_size;
    /// The config's context_length axis, the longest input.
    using context_length = typename Config::context_length;
    /// The config's embedding axis.
    using emb_dim = typename Config::emb_dim;

private:
    // The config's num_tokens must be declared within its own context_length: a config derived from another
    // with context_length replaced keeps the base's num_tokens, bound to the base's context_length.
    static constexpr bool config_ok = shaped::detail::prefix_of<typename Config::num_tokens, context_length>();
    static_assert(diag::expect<config_ok, shaped::detail::described<diag::tensor_axes, typename Config::num_tokens>,
                               shaped::detail::described<diag::expected_axes, context_length>>,
                  "shaped::nn::gpt_model<Config>: Config::num_tokens is not declared within Config::context_length "
                  "(a config derived from another with context_length replaced keeps the other's num_tokens); "
                  "redeclare it in the config: struct num_tokens : shaped::dynamic_axis<\"num_tokens\", "
                  "shaped::at_most<context_length>> {};");

public:

    /// The token embeddings, `(vocab_size, emb_dim)`.
    embedding<vocab_size, emb_dim> tok_emb;
    /// The position embeddings, `(context_length, emb_dim)`.
    embedding<context_length, emb_dim> pos_emb;
    /// Dropout on the summed embeddings, `drop_rate`.
    nn::dropout drop_emb;
    /// The `n_layers` transformer blocks, in order.
    std::array<transformer_block<Config, Attention>, Config::n_layers> trf_blocks;
    /// The layer norm after the last block.
    layer_norm<emb_dim> final_norm;
    /// The output head, `linear<emb_dim, vocab_size>` without bias: embeddings to logits.
    linear<emb_dim, vocab_size> out_head;

    /// Draws every parameter from `gen`, in the book's order: with `torch::manual_seed(123)`, the
    /// book's weights.
    explicit gpt_model(torch::generator& gen = torch::default_generator())
        : tok_emb(gen),
          pos_emb(gen),
          drop_emb(Config::drop_rate),
          trf_blocks(make_blocks(gen, std::make_index_sequence<Config::n_layers>{})),
          out_head(gen, false) {}
    /// Allocates the weights without drawing them (in seconds less for GPT-2 124M), for a model whose
    /// weights will be loaded (`io::load_state_dict`, `io::load_gpt2_weights`).
    explicit gpt_model(skip_init_t)
        : tok_emb(skip_init),
          pos_emb(skip_init),
          drop_emb(Config::drop_rate),
          trf_blocks(make_blocks(skip_init, std::make_index_sequence<Config::n_layers>{})),
          out_head(skip_init, false) {}

    /// `module.train(mode)`: sets every dropout's mode.
    void train(bool mode = true) noexcept {
        drop_emb.train(mode);
        for (auto& block : trf_blocks) block.train(mode);
    }
    /// `module.eval()`: turns every dropout off.
    void eval() noexcept { train(false); }

    /// The number of parameters (PyTorch's `sum(p.numel() for p in model.parameters())`).
    std::size_t parameter_count() const { return nn::parameter_count(*this); }

    /// The forward pass, the book's `forward(in_idx)`: ids `(batch, num_tokens)` to logits
    /// `(batch, num_tokens, vocab_size)`, the dropouts drawn from `gen` in training mode. Shapes and errors:
    /// see the class.
    template <class Id, class Layout, Axis... X>
    auto operator()(const basic_tensor<Id, Layout, X...>& in_idx, torch::generator& gen = torch::default_generator()) const {
        constexpr bool rank_ok = sizeof...(X) == 2;
        static_assert(diag::expect<rank_ok, shaped::detail::described<diag::tensor_axes, X...>>,
                      "shaped::nn::gpt_model(in_idx): the ids are (batch, num_tokens)");
        if constexpr (rank_ok) {
            using tokens = shaped::detail::axis_at_t<1, X...>;
            constexpr bool within = shaped::detail::prefix_of<tokens, context_length>();
            static_assert(diag::expect<within || !config_ok, shaped::detail::described<diag::tensor_axes, X...>,
                                       shaped::detail::described<diag::expected_axes, context_length>>,
                          "shaped::nn::gpt_model(in_idx): the token axis must be declared within context_length "
                          "(the config's num_tokens is); crop a longer sequence with last<...>()");
            if constexpr (within && config_ok) {
                const std::size_t seq_len = in_idx.shape.extent(1);
                auto tok_embeds = tok_emb(in_idx);
                auto pos_embeds = pos_emb(positions<tokens>(seq_len));  // pos_emb(torch.arange(seq_len))
                auto x = drop_emb(std::move(tok_embeds) + pos_embeds, gen);
                for (const auto& block : trf_blocks) x = block(x, gen);
                return out_head(final_norm(x));
            } else {
                return diag::failed_shape_check{};
            }
        } else {
            return diag::failed_shape_check{};
        }
    }

    /// The forward pass with the KV cache (the book's `forward(in_idx, use_cache=True)`): the ids are the
    /// next tokens of the sequence the caches hold, at positions `current_pos()` onwards.
    /// Shapes: as the other call. Thrown: `shape_error` when the cached and the new tokens together would
    /// exceed `context_length` (naming it), or the batch differs from the cached one.
    template <class Id, class Layout, Axis... X>
    auto operator()(const basic_tensor<Id, Layout, X...>& in_idx, use_cache_t,
                    torch::generator& gen = torch::default_generator()) {
        return cached_forward(in_idx, gen, [&]<class Hidden>(const Hidden& x) { return out_head(final_norm(x)); });
    }

    /// The same forward pass with the KV cache, but the logits of the last position only, `(batch,
    /// vocab_size)`: `model(in_idx, use_cache=True)[:, -1, :]` without the output head's work on the other
    /// positions (for a 512-token prompt of GPT-2 124M, 39 of its 127 GFLOP). What a prompt's pass needs
    /// before the first new token. Shapes, errors and what is thrown: as the call with `use_cache`.
    /// Source: Hugging Face's `logits_to_keep=1`; llama.cpp computes a prompt's logits so.
    template <class Id, class Layout, Axis... X>
    auto operator()(const basic_tensor<Id, Layout, X...>& in_idx, use_cache_t, last_position_t,
                    torch::generator& gen = torch::default_generator()) {
        return cached_forward(in_idx, gen, [&]<class Hidden>(const Hidden& x) {
            using tokens = shaped::detail::axis_at_t<1, X...>;
            return out_head(final_norm(x.template select<tokens>(-1)));  // layer norm is per position
        });
    }

    /// Empties every block's KV cache and sets the position back to 0 (the book's `reset_kv_cache()`).
    void reset_kv_cache() noexcept {
        for (auto& block : trf_blocks) block.att.reset_cache();
        current_pos_ = 0;
    }
    /// The number of tokens the caches hold: the position of the next token.
    std::size_t current_pos() const noexcept { return current_pos_; }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under PyTorch's `state_dict()` names: `tok_emb.weight`, `pos_emb.weight`, each block's
    /// under `trf_blocks.0`, `trf_blocks.1` and on, `final_norm.scale`, `final_norm.shift`, `out_head.weight`.
    static constexpr auto parameters() {
        return parameter_list(submodule("tok_emb", &gpt_model::tok_emb),
                              submodule("pos_emb", &gpt_model::pos_emb),
                              submodules("trf_blocks", &gpt_model::trf_blocks),
                              submodule("final_norm", &gpt_model::final_norm),
                              submodule("out_head", &gpt_model::out_head));
    }

private:
    std::size_t current_pos_ = 0;

    // The cached pass through the blocks, then `head` on the last block's output (after the checks).
    template <class Id, class Layout, Axis... X, class Head>
    auto cached_forward(const basic_tensor<Id, Layout, X...>& in_idx, torch::generator& gen, const Head& head) {
        constexpr bool rank_ok = sizeof...(X) == 2;
        static_assert(diag::expect<rank_ok, shaped::detail::described<diag::tensor_axes, X...>>,
                      "shaped::nn::gpt_model(in_idx, use_cache): the ids are (batch, num_tokens)");
        if constexpr (rank_ok) {
            using tokens = shaped::detail::axis_at_t<1, X...>;
            constexpr bool within = shaped::detail::prefix_of<tokens, context_length>();
            static_assert(diag::expect<within || !config_ok, shaped::detail::described<diag::tensor_axes, X...>,
                                       shaped::detail::described<diag::expected_axes, context_length>>,
                          "shaped::nn::gpt_model(in_idx, use_cache): the token axis must be declared within "
                          "context_length (the config's num_tokens is)");
            if constexpr (within && config_ok) {
                const std::size_t seq_len = in_idx.shape.extent(1);
                if (current_pos_ + seq_len > context_length::extent)
                    throw shape_error("nn::gpt_model(in_idx, use_cache)",
                                      "at most " + std::to_string(context_length::extent) +
                                          " tokens (context_length) in the cache",
                                      std::to_string(current_pos_) + " cached + " + std::to_string(seq_len) + " new");
                auto pos_ids = positions<tokens>(seq_len);  // torch.arange(current_pos, current_pos + seq_len)
                for (std::size_t i = 0; i < seq_len; ++i) pos_ids.data()[i] += static_cast<std::int64_t>(current_pos_);
                auto x = drop_emb(tok_emb(in_idx) + pos_emb(pos_ids), gen);
                for (auto& block : trf_blocks) x = block(x, use_cache, gen);
                current_pos_ += seq_len;
                return head(x);
            } else {
                return diag::failed_shape_check{};
            }
        } else {
            return diag::failed_shape_check{};
        }
    }


    template <class Tokens>
    static auto positions(std::size_t seq_len) {
        if constexpr (DynamicAxis<Tokens>)
            return torch::arange<Tokens>(seq_len);
        else
            return torch::arange<Tokens>();
    }

    template <class Source, std::size_t... I>
    static std::array<transformer_block<Config, Attention>, Config::n_layers> make_blocks(Source& gen, std::index_sequence<I...>) {
        // Braced initialisation runs left to right: block 0 draws its weights first.
        return {{((void)I, transformer_block<Config, Attention>(gen))...}};
    }
};

/// Greedy decoding: `max_new_tokens` times, the model's logits for the last position of the last
/// `context_size` tokens, their argmax appended to the sequence.
///
/// Shapes: `idx` is `(batch, seq)` token ids, `seq` a run-time axis (its bound is the longest sequence it may
/// grow to); the result is `idx` with `max_new_tokens` more positions. The model sees the crop on its config's
/// `num_tokens`. One compiled function serves every prompt length and every step.
/// Errors: compile time, a static `seq`. Thrown: `shape_error` when the sequence would grow past `seq`'s bound
/// (naming it), or `context_size` is more than the model's `num_tokens` takes.
/// Source: the book's `generate_text_simple` (chapter 4): `idx[:, -context_size:]`, `logits[:, -1, :]`,
/// `torch.argmax(logits, dim=-1, keepdim=True)`, `torch.cat((idx, idx_next), dim=1)`; call `model.eval()`
/// first for the book's numbers.
/// Example: `auto out = shaped::nn::generate_text_simple(model, ids, 6, gpt2_124m::context_length::extent);`
template <class Model, Axis Batch, Axis Seq>
tensor<std::int64_t, Batch, Seq> generate_text_simple(const Model& model, tensor<std::int64_t, Batch, Seq> idx,
                                                      std::size_t max_new_tokens, std::size_t context_size,
                                                      torch::generator& gen = torch::default_generator()) {
    static_assert(DynamicAxis<Seq>, "shaped::nn::generate_text_simple: the sequence axis grows, so it is a run-time "
                                    "axis (shaped::dynamic_axis)");
    using tokens = typename Model::config::num_tokens;
    if (context_size > tokens::bound)
        throw shape_error("generate_text_simple(model, idx, max_new_tokens, context_size)",
                          "context_size <= " + std::to_string(tokens::bound) + " (the bound of the model's " +
                              axis_name<tokens>() + ")",
                          "context_size = " + std::to_string(context_size));
    for (std::size_t step = 0; step < max_new_tokens; ++step) {
        auto idx_cond = last<Seq, tokens>(idx, context_size);                 // idx[:, -context_size:]
        auto logits = model(idx_cond, gen).template select<tokens>(-1);      // logits[:, -1, :]
        auto idx_next = logits.template argmax<-1>(keepdim);                 // (batch, reduced<vocab_size>)
        idx = cat<1>(hana::make_tuple(std::move(idx), std::move(idx_next)));  // torch.cat((idx, idx_next), dim=1)
    }
    return idx;
}

/// Greedy decoding with the KV cache: the prompt once, then one token at a time, each step computing only the
/// new token's keys, values and queries.
///
/// Shapes: `idx` is `(batch, seq)` token ids, `seq` a run-time axis; the result is `idx` with
/// `max_new_tokens` more positions. The model sees the prompt, then each new token, on its config's
/// `num_tokens`. Gives the ids `generate_text_simple` gives, as long as the sequence fits the context.
/// Errors: compile time, a static `seq`. Thrown: `shape_error` when the prompt and the new tokens together
/// exceed `context_length` (the cache does not crop: the policy is to refuse, before any work), or the
/// sequence would grow past `seq`'s bound.
/// Source: the book's `generate_text_simple_cached` (ch04/03_kv-cache): `model.eval()`,
/// `model.reset_kv_cache()`, `model(idx, use_cache=True)`, then `model(next_idx, use_cache=True)` per token.
/// With `on_token`, called after each step with the new token of each sequence (`batch` ids), so that text can
/// be printed as it is generated: `generate_text_simple_cached(model, ids, 10, [&](auto next) { ... })`.
/// Example: `auto out = shaped::nn::generate_text_simple_cached(model, ids, 10);`
template <class Model, Axis Batch, Axis Seq, std::invocable<std::span<const std::int64_t>> OnToken>
tensor<std::int64_t, Batch, Seq> generate_text_simple_cached(Model& model, tensor<std::int64_t, Batch, Seq> idx,
                                                             std::size_t max_new_tokens, OnToken&& on_token,
                                                             torch::generator& gen = torch::default_generator()) {
    static_assert(DynamicAxis<Seq>, "shaped::nn::generate_text_simple_cached: the sequence axis grows, so it is a "
                                    "run-time axis (shaped::dynamic_axis)");
    using tokens = typename Model::config::num_tokens;
    constexpr std::size_t context = Model::context_length::extent;
    const std::size_t prompt = idx.shape.extent(1);
    if (prompt + max_new_tokens > context + 1)  // the last new token is never fed back
        throw shape_error("generate_text_simple_cached(model, idx, max_new_tokens)",
                          "prompt + max_new_tokens - 1 <= " + std::to_string(context) + " (context_length)",
                          std::to_string(prompt) + " + " + std::to_string(max_new_tokens) + " - 1");
    model.eval();
    model.reset_kv_cache();
    if (max_new_tokens == 0) return idx;
    auto logits = model(last<Seq, tokens>(idx, context), use_cache, gen);
    for (std::size_t step = 0;; ++step) {
        auto next = logits.template select<tokens>(-1).template argmax<-1>(keepdim);  // (batch, reduced<vocab_size>)
        idx = cat<1>(hana::make_tuple(std::move(idx), next));
        on_token(std::span<const std::int64_t>(next.data(), next.numel()));
        if (step + 1 == max_new_tokens) break;
        logits = model(std::move(next).template rename<Batch, tokens>(), use_cache, gen);
    }
    return idx;
}
/// The same without a callback (see above).
template <class Model, Axis Batch, Axis Seq>
tensor<std::int64_t, Batch, Seq> generate_text_simple_cached(Model& model, tensor<std::int64_t, Batch, Seq> idx,
                                                             std::size_t max_new_tokens,
                                                             torch::generator& gen = torch::default_generator()) {
    return generate_text_simple_cached(model, std::move(idx), max_new_tokens, [](std::span<const std::int64_t>) {}, gen);
}

}  // namespace shaped::nn

#endif
