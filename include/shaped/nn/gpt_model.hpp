#ifndef SHAPED_NN_GPT_MODEL_HPP
#define SHAPED_NN_GPT_MODEL_HPP

/// \file
/// `nn::gpt_model<Config>` and `nn::generate_text_simple`: the book's `GPTModel` and its greedy decoding
/// (chapter 4).

#include <array>
#include <boost/hana/tuple.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "../diagnostics.hpp"
#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "dropout.hpp"
#include "embedding.hpp"
#include "gpt_config.hpp"
#include "layer_norm.hpp"
#include "linear.hpp"
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
/// a new model is in training mode; the call draws its dropout from `gen`.
/// Example: `torch::manual_seed(123); shaped::nn::gpt_model<shaped::nn::gpt2_124m> model; auto logits = model(ids);`
template <GptConfig Config>
class gpt_model {
public:
    using config = Config;
    using vocab_size = typename Config::vocab_size;
    using context_length = typename Config::context_length;
    using emb_dim = typename Config::emb_dim;

    embedding<vocab_size, emb_dim> tok_emb;
    embedding<context_length, emb_dim> pos_emb;
    nn::dropout drop_emb;
    std::array<transformer_block<Config>, Config::n_layers> trf_blocks;
    layer_norm<emb_dim> final_norm;
    linear<emb_dim, vocab_size> out_head;

    explicit gpt_model(torch::generator& gen = torch::default_generator())
        : tok_emb(gen),
          pos_emb(gen),
          drop_emb(Config::drop_rate),
          trf_blocks(make_blocks(gen, std::make_index_sequence<Config::n_layers>{})),
          out_head(gen, false) {}

    void train(bool mode = true) noexcept {
        drop_emb.train(mode);
        for (auto& block : trf_blocks) block.train(mode);
    }
    void eval() noexcept { train(false); }

    /// The number of parameters (PyTorch's `sum(p.numel() for p in model.parameters())`).
    std::size_t parameter_count() const noexcept {
        std::size_t n = tok_emb.weight.numel() + pos_emb.weight.numel() + final_norm.scale.numel() +
                        final_norm.shift.numel() + out_head.weight.numel();
        for (const auto& block : trf_blocks) {
            for (const auto* l : {&block.att.W_query, &block.att.W_key, &block.att.W_value})
                n += l->weight.numel() + (l->bias ? l->bias->numel() : 0);
            n += block.att.out_proj.weight.numel() + block.att.out_proj.bias->numel();
            const auto& [first, gelu, second] = block.ff.layers;
            (void)gelu;
            n += first.weight.numel() + first.bias->numel() + second.weight.numel() + second.bias->numel();
            n += 2 * (block.norm1.scale.numel() + block.norm1.shift.numel());
        }
        return n;
    }

    template <class Id, class Layout, Axis... X>
    auto operator()(const basic_tensor<Id, Layout, X...>& in_idx, torch::generator& gen = torch::default_generator()) const {
        constexpr bool rank_ok = sizeof...(X) == 2;
        static_assert(diag::expect<rank_ok, shaped::detail::described<diag::tensor_axes, X...>>,
                      "shaped::nn::gpt_model(in_idx): the ids are (batch, num_tokens)");
        if constexpr (rank_ok) {
            using tokens = shaped::detail::axis_at_t<1, X...>;
            constexpr bool within = shaped::detail::prefix_of<tokens, context_length>();
            static_assert(diag::expect<within, shaped::detail::described<diag::tensor_axes, X...>,
                                       shaped::detail::described<diag::expected_axes, context_length>>,
                          "shaped::nn::gpt_model(in_idx): the token axis must be declared within context_length "
                          "(the config's num_tokens is); crop a longer sequence with last<...>()");
            if constexpr (within) {
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

private:
    template <class Tokens>
    static auto positions(std::size_t seq_len) {
        if constexpr (DynamicAxis<Tokens>)
            return torch::arange<Tokens>(seq_len);
        else
            return torch::arange<Tokens>();
    }

    template <std::size_t... I>
    static std::array<transformer_block<Config>, Config::n_layers> make_blocks(torch::generator& gen,
                                                                               std::index_sequence<I...>) {
        // Braced initialisation runs left to right: block 0 draws its weights first.
        return {{((void)I, transformer_block<Config>(gen))...}};
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

}  // namespace shaped::nn

#endif
