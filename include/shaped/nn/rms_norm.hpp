#ifndef SHAPED_NN_RMS_NORM_HPP
#define SHAPED_NN_RMS_NORM_HPP

/// \file
/// `nn::rms_norm<Emb, Form>`: root-mean-square normalisation, the norm of Llama, Qwen and Gemma (and,
/// over `head_dim`, their QK-norm).

#include <optional>
#include <string>

#include "../diagnostics.hpp"
#include "../ops/math.hpp"
#include "../tensor.hpp"
#include "../tensor_of.hpp"
#include "parameters.hpp"

namespace shaped::nn {

/// How an `rms_norm` applies its weight: `scale` multiplies by it (Llama 3, Qwen3; the weight starts at
/// ones), `one_plus_scale` by `1 + weight` (Gemma 3, whose checkpoints store the weight centred on zero; it
/// starts at zeros). A Gemma checkpoint loaded into the other form normalises by numbers near zero: the form
/// is part of the type so that the two cannot be confused.
enum class rms_form { scale, one_plus_scale };

/// Divides the last axis by its root mean square, then scales it (and shifts it, with a bias).
///
/// Shapes: `scale` (and `shift`) are `(Emb)`; the call maps `(..., Emb)` to `(..., Emb)`: `(batch, num_tokens,
/// emb_dim)` for the blocks' norms, `(batch, num_heads, num_tokens, head_dim)` for QK-norm with `Emb =
/// head_dim`. Inside, the mean square is `(..., reduced<Emb>)`. Element type: float (as the book computes it,
/// whatever the model's dtype).
/// Errors: compile time, an input whose last axis is not `Emb`. Nothing is thrown.
/// Source: the book's `RMSNorm` (rasbt/LLMs-from-scratch, ch05/11_qwen3 and ch05/12_gemma3):
/// `x * rsqrt(mean(x^2, dim=-1, keepdim=True) + eps)`, times `scale` or `1 + scale`, plus `shift` with
/// `bias=True`; `torch.nn.RMSNorm` in the Llama 3.2 notebook. eps 1e-6 by default (Qwen3, Gemma 3); Llama 3
/// uses 1e-5. The mean square accumulates in double (PyTorch's float reduction agrees to float rounding).
/// Example: `shaped::nn::rms_norm<emb_dim> norm1(1e-5f);  auto y = norm1(x);`
template <Axis Emb, rms_form Form = rms_form::scale>
class rms_norm {
    static_assert(StaticAxis<Emb>, "shaped::nn::rms_norm<Emb>: the normalised axis is a static axis");

public:
    /// The normalised axis (PyTorch's `normalized_shape`).
    using normalized_shape = Emb;
    /// How the weight is applied.
    static constexpr rms_form form = Form;

    /// Added to the mean square under the root.
    float eps;
    /// `scale`: `(Emb)`; ones for `rms_form::scale`, zeros for `rms_form::one_plus_scale`, until loaded.
    tensor<float, Emb> scale = Form == rms_form::scale ? ones<Emb>() : tensor<float, Emb>{};
    /// `shift`: `(Emb)`, zeros, with `bias=true`; absent otherwise (the book's default).
    std::optional<tensor<float, Emb>> shift;

    /// `RMSNorm(emb_dim, eps, bias)`.
    explicit rms_norm(float eps_ = 1e-6f, bool bias = false) : eps(eps_) {
        if (bias) shift.emplace();
    }

    /// `x / sqrt(mean(x^2) + eps) * scale (+ shift)` over the last axis: `(..., Emb)` to `(..., Emb)`.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x) const {
        constexpr bool ok = last_axis_v<basic_tensor<float, Layout, X...>, Emb>;
        static_assert(diag::expect<ok, shaped::detail::described<diag::in_features, Emb>,
                                   shaped::detail::described<diag::tensor_axes, X...>>,
                      "shaped::nn::rms_norm<Emb>(x): x's last axis must be the axis the norm normalises (for "
                      "QK-norm, head_dim: apply it after the heads are split)");
        return diag::checked<ok>([&](const auto& x) {
            auto mean_square = (x * x).template mean<-1>(keepdim);
            auto norm_x = x * shaped::rsqrt(std::move(mean_square) + eps);
            auto y = [&] {
                if constexpr (Form == rms_form::scale) return std::move(norm_x) * scale;
                else return std::move(norm_x) * (scale + 1.0f);
            }();
            if (shift) y = std::move(y) + *shift;
            return y;
        }, x);
    }

    /// After a failed shape check, no further errors (see `diag::failed_shape_check`).
    diag::failed_shape_check operator()(diag::failed_shape_check) const { return {}; }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under the book's `state_dict()` names: `scale`, then `shift` when the norm has one.
    static constexpr auto parameters() {
        return parameter_list(parameter("scale", &rms_norm::scale), parameter("shift", &rms_norm::shift));
    }
};

}  // namespace shaped::nn

#endif
