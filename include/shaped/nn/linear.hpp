#ifndef SHAPED_NN_LINEAR_HPP
#define SHAPED_NN_LINEAR_HPP

/// \file
/// `nn::linear<In, Out>`: `y = x Wᵀ + b` on the last axis, initialised as `torch.nn.Linear`.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>

#include "../bfloat16.hpp"
#include "../detail/weight_product.hpp"
#include "../diagnostics.hpp"
#include "../ops/matmul.hpp"
#include "../shape.hpp"
#include "../tensor.hpp"
#include "../tensor_of.hpp"
#include "../threads.hpp"
#include "../torch/generator.hpp"
#include "parameters.hpp"

namespace shaped::nn {

/// A fully connected layer from axis `In` (in_features) to axis `Out` (out_features).
///
/// Shapes: `weight` is `(Out, In)`, `bias` is `(Out)` or absent; the call maps `(..., In)` to `(..., Out)`.
/// A layer built without a bias has none: `bias` is empty (`std::nullopt`, PyTorch's `None`) and nothing
/// is added; giving it one (as assigning `layer.bias` in PyTorch) makes the forward pass add it.
/// Element type: `Value`, float by default, for the input, the bias and the output; `Weight`, `Value` by
/// default, for the weight, or `bfloat16` with a float `Value` (weights kept in BF16: half the memory, and
/// half the bytes a decoding step reads; each product and sum in float, as a float layer whose weight holds
/// the same values computes them, up to the order of the sums).
/// Errors: compile time, an input whose last axis is not `In`, by name and extent: the seed's 18-wide
/// concatenation of full-width heads, `(batch, num_tokens, concat<d_out, d_out, d_out>)`, does not go into
/// the attention's `out_proj` of type `linear<d_out, d_out>`; `In` or `Out` a run-time axis. Leading axes
/// may be run-time axes (`(batch, num_tokens, In)` for any batch and length). Nothing is thrown.
/// Source: `torch.nn.Linear(in_features, out_features, bias=True)`. The constructor draws the weight with
/// `kaiming_uniform_(a=√5)` (uniform on ±1/√in_features, the bound computed as PyTorch computes it) and then
/// the bias, uniform on ±1/√in_features, from the same generator: same seed, same parameters.
/// Example: `shaped::nn::linear<d_out, d_out> out_proj;  auto y = out_proj(context_vec);`
template <Axis In, Axis Out, class Value = float, class Weight = Value>
class linear {
    static_assert(std::is_same_v<Weight, Value> || (std::is_same_v<Weight, bfloat16> && std::is_same_v<Value, float>),
                  "shaped::nn::linear<In, Out, Value, Weight>: the weight's element type is the layer's, or bfloat16 "
                  "in a float layer");

public:
    /// The input's last axis, `in_features`.
    using in_features = In;
    /// The output's last axis, `out_features`.
    using out_features = Out;

    /// `weight`: `(out_features, in_features)`.
    tensor<Weight, Out, In> weight;
    /// `bias`: `(out_features)`, or empty for a layer built with `bias=false`.
    std::optional<tensor<Value, Out>> bias;

    /// Draws from the default generator (`torch.manual_seed` decides the values).
    explicit linear(bool has_bias = true) : linear(torch::default_generator(), has_bias) {}

    /// Draws from `gen`: weight first, then bias.
    explicit linear(torch::generator& gen, bool has_bias = true) {
        // torch.nn.init.kaiming_uniform_(weight, a=math.sqrt(5)): gain = sqrt(2 / (1 + a^2)),
        // std = gain / sqrt(fan_in), bound = sqrt(3) * std; same double arithmetic as PyTorch's Python.
        const double fan_in = static_cast<double>(In::extent);
        const double gain = std::sqrt(2.0 / (1.0 + 5.0));
        const double w_bound = std::sqrt(3.0) * (gain / std::sqrt(fan_in));
        if constexpr (std::is_same_v<Weight, Value>) {
            torch::uniform_(weight, -w_bound, w_bound, gen);
        } else {  // drawn as a float layer draws it, then rounded (`.to(torch.bfloat16)`)
            tensor<Value, Out, In> drawn(uninitialized);
            torch::uniform_(drawn, -w_bound, w_bound, gen);
            to_bfloat16(drawn.data(), weight.data(), weight.numel());
        }
        if (has_bias) {
            const double b_bound = 1.0 / std::sqrt(fan_in);
            bias.emplace();
            torch::uniform_(*bias, -b_bound, b_bound, gen);
        }
    }

    /// Allocates the parameters without drawing them, for a layer whose weights will be loaded.
    linear(skip_init_t, bool has_bias = true) : weight(uninitialized) {
        if (has_bias) bias.emplace(uninitialized);
    }

    /// Whether the layer adds a bias (`bias=True` in PyTorch).
    bool has_bias() const noexcept { return bias.has_value(); }

    /// `x Wᵀ + b` over the last axis.
    template <class XValue, class Layout, Axis... X>
    auto operator()(const basic_tensor<XValue, Layout, X...>& x) const {
        static_assert(std::is_same_v<XValue, Value>,
                      "shaped::nn::linear<In, Out>(x): x must have the layer's element type; convert it with "
                      ".to<float>() or .to<double>()");
        static_assert(StaticAxis<In> && StaticAxis<Out>,
                      "shaped::nn::linear<In, Out>: in_features and out_features must be static axes (the weight's "
                      "shape is fixed when the layer is built)");
        static_assert(In::bound <= shaped::detail::blas_max && Out::bound <= shaped::detail::blas_max,
                      "shaped::nn::linear<In, Out>: in_features and out_features must fit one BLAS call");
        constexpr std::size_t n = sizeof...(X);
        static_assert(diag::expect<(n >= 1), shaped::detail::described<diag::tensor_axes, X...>>,
                      "shaped::nn::linear<In, Out>(x): x needs at least one axis");
        if constexpr (n >= 1) {
            using last = shaped::detail::axis_at_t<n - 1, X...>;
            constexpr bool ok = last_axis_v<basic_tensor<XValue, Layout, X...>, In>;  // LastAxis<In>
            static_assert(
                diag::expect<ok, shaped::detail::described<diag::in_features, In>,
                             shaped::detail::described<diag::input_last, last>,
                             shaped::detail::described<diag::tensor_axes, X...>>,
                "shaped::nn::linear<In, Out>(x): x's last axis must be the layer's in_features axis; "
                "check what was concatenated or projected into it");
            if constexpr (ok && std::is_same_v<XValue, Value>) {
                return [&]<std::size_t... I>(std::index_sequence<I...>) {
                    using result_t = tensor<Value, shaped::detail::axis_at_t<I, X...>..., Out>;
                    const std::size_t rows = x.numel() / In::extent;
                    using source = shaped::detail::axis_source;
                    result_t out(shaped::detail::take_extents<typename result_t::extents_type,
                                                              std::array<source, n>{source{0, I}..., source{}}>(x.shape),
                                 uninitialized);
                    Value* y = out.data();
                    const auto& in = x.storage();
                    // The bias is written first and the product added to it (PyTorch's addmm, beta = 1), by
                    // all of shaped's threads in blocks of about 64 KB: at 8192 rows × 3072 it is 100 MB, too
                    // much for one thread to write while the others wait.
                    if (bias)
                        shaped::detail::parallel_for(rows, std::max<std::size_t>(1, 16384 / Out::extent),
                                                     [&](std::size_t r0, std::size_t r1) {
                                                         for (std::size_t r = r0; r < r1; ++r)
                                                             std::copy_n(bias->data(), Out::extent, y + r * Out::extent);
                                                     });
                    const Value beta = bias ? Value(1) : Value(0);
                    shaped::detail::weight_product(in.data(), weight.data(), y, rows, Out::extent, In::extent, beta);
                    return out;
                }
                (std::make_index_sequence<n - 1>{});
            } else {
                return diag::failed_shape_check{};
            }
        } else {
            return diag::failed_shape_check{};
        }
    }

    /// After a failed shape check, no further errors (see `diag::failed_shape_check`).
    diag::failed_shape_check operator()(diag::failed_shape_check) const { return {}; }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under PyTorch's `state_dict()` names: `weight`, then `bias` when the layer has one.
    static constexpr auto parameters() {
        return parameter_list(parameter("weight", &linear::weight),
                              parameter("bias", &linear::bias));
    }
};

/// A model's output head that is its token embeddings (`tie_word_embeddings`): `x @ weight.T`, `(..., Emb)`
/// to `(..., Vocab)`, `weight` `(Vocab, Emb)` read in place as `linear` reads its own. `matmul(x,
/// weight.T())` would give the same numbers after copying the weight (`T()` of a tensor that is not an
/// rvalue copies it): 671 MB for Gemma 3 270M, at every decoding step.
///
/// Shapes: `x` `(..., Emb)`, leading axes static or run-time; `weight` `(Vocab, Emb)`, static axes. Element
/// type: float; the weight float or `bfloat16` (an embedding kept in BF16). Errors: compile time, `x`'s last
/// axis not `Emb`. Nothing is thrown.
/// Source: PyTorch's `F.linear(x, tok_emb.weight)`, what a tied `lm_head` computes (the book's
/// `out_head.weight = tok_emb.weight`).
template <Axis Vocab, Axis Emb, class W, class Layout, Axis... X>
    requires(std::is_same_v<W, float> || std::is_same_v<W, bfloat16>)
auto tied_head(const basic_tensor<float, Layout, X...>& x, const tensor<W, Vocab, Emb>& weight) {
    constexpr std::size_t n = sizeof...(X);
    constexpr bool ok = n >= 1 && last_axis_v<basic_tensor<float, Layout, X...>, Emb>;
    static_assert(diag::expect<ok, shaped::detail::described<diag::in_features, Emb>,
                               shaped::detail::described<diag::tensor_axes, X...>>,
                  "shaped::nn::tied_head(x, weight): x's last axis must be the embeddings' width");
    if constexpr (ok) {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            using result_t = tensor<float, shaped::detail::axis_at_t<I, X...>..., Vocab>;
            using source = shaped::detail::axis_source;
            result_t out(shaped::detail::take_extents<typename result_t::extents_type,
                                                      std::array<source, n>{source{0, I}..., source{}}>(x.shape),
                         uninitialized);
            const std::size_t rows = x.numel() / Emb::extent;
            const auto& in = x.storage();
            shaped::detail::weight_product(in.data(), weight.data(), out.data(), rows, Vocab::extent, Emb::extent, 0.0f);
            return out;
        }(std::make_index_sequence<n - 1>{});
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace shaped::nn

#endif
