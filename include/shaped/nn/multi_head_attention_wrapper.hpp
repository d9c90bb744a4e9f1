#ifndef SHAPED_NN_MULTI_HEAD_ATTENTION_WRAPPER_HPP
#define SHAPED_NN_MULTI_HEAD_ATTENTION_WRAPPER_HPP

/// \file
/// `nn::multi_head_attention_wrapper`: `NumHeads` causal heads side by side, as the book's listing 3.4.

#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "causal_attention.hpp"
#include "parameters.hpp"

namespace shaped::nn {

/// `NumHeads` independent `causal_attention<DIn, HeadOut, ContextLength>` heads; their outputs are
/// concatenated on the last axis.
///
/// Shapes: `(batch, num_tokens, DIn)` to `(batch, num_tokens, J)`, where `J` is what `cat` makes of
/// `NumHeads` copies of `HeadOut`: the book's heads of `d_out` each give `concat<d_out, ..., d_out>`
/// (`NumHeads × d_out` wide, an axis of its own, which a `linear<d_out, d_out>` out_proj rejects); heads of
/// `head_dim = quotient<"head_dim", d_out, num_heads>` give `d_out` back, as in `multi_head_attention`.
/// Element type: float.
/// Errors: those of `causal_attention`. Thrown: `std::invalid_argument` for a dropout outside [0, 1].
/// Source: the book's `MultiHeadAttentionWrapper` (listing 3.4): `nn.ModuleList` of heads created in order,
/// `torch.cat([head(x) for head in self.heads], dim=-1)`.
/// Example: `torch::manual_seed(123); shaped::nn::multi_head_attention_wrapper<d_in, d_out, context_length,
/// num_heads> mha(0.0);`
template <Axis DIn, Axis HeadOut, Axis ContextLength, Axis NumHeads>
class multi_head_attention_wrapper {
    static_assert(StaticAxis<DIn> && StaticAxis<HeadOut> && StaticAxis<ContextLength> && StaticAxis<NumHeads>,
                  "shaped::nn::multi_head_attention_wrapper: d_in, the heads' d_out, context_length and num_heads must be static axes (the weights' and "
                  "the mask's shapes are fixed when the module is built); only batch and num_tokens may be known "
                  "at run time");

public:
    /// One head: `causal_attention<DIn, HeadOut, ContextLength>`.
    using head_type = causal_attention<DIn, HeadOut, ContextLength>;
    /// The heads, in order (the book's `nn.ModuleList`).
    std::array<head_type, NumHeads::extent> heads;

    /// Draws each head's parameters from `gen`, head 0 first, with biases under `qkv_bias`; `dropout_p` is
    /// each head's dropout. Throws `std::invalid_argument` for `dropout_p` outside [0, 1].
    explicit multi_head_attention_wrapper(double dropout_p, bool qkv_bias = false,
                                          torch::generator& gen = torch::default_generator())
        : heads(make_heads(dropout_p, qkv_bias, gen, std::make_index_sequence<NumHeads::extent>{})) {}

    /// `module.train(mode)`: sets every head's dropout mode.
    void train(bool mode = true) noexcept {
        for (auto& h : heads) h.train(mode);
    }
    /// `module.eval()`: turns every head's dropout off.
    void eval() noexcept { train(false); }

    /// The forward pass: each head on `x`, in order (so the dropout draws come in PyTorch's order), their
    /// outputs joined on the last axis by `cat<-1>`.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x, torch::generator& gen = torch::default_generator()) const {
        return [&]<std::size_t... H>(std::index_sequence<H...>) {
            // Heads run in order, so that their dropout draws come in PyTorch's order.
            std::array outputs{heads[H](x, gen)...};
            return cat<-1>(outputs);
        }(std::make_index_sequence<NumHeads::extent>{});
    }

private:
    template <std::size_t... H>
    static std::array<head_type, NumHeads::extent> make_heads(double p, bool bias, torch::generator& gen,
                                                              std::index_sequence<H...>) {
        // Braced initialisation runs left to right: head 0 draws its parameters first.
        return {{((void)H, head_type(p, bias, gen))...}};
    }

public:
    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under PyTorch's `state_dict()` names: each head's names after `heads.0`, `heads.1` and on (`nn.ModuleList` numbering).
    static constexpr auto parameters() {
        return parameter_list(submodules("heads", &multi_head_attention_wrapper::heads));
    }
};

}  // namespace shaped::nn

#endif
