#ifndef SHAPED_NN_LAYER_NORM_HPP
#define SHAPED_NN_LAYER_NORM_HPP

/// \file
/// `nn::layer_norm<Emb>` and `nn::gelu`: the book's `LayerNorm` and `GELU` (chapter 4).

#include <string>
#include <type_traits>

#include "../detail/vector_math.hpp"
#include "../diagnostics.hpp"
#include "../tensor.hpp"
#include "../tensor_of.hpp"
#include "../threads.hpp"
#include "parameters.hpp"

namespace shaped::nn {

/// Normalises the last axis to mean 0 and variance 1, then scales and shifts it.
///
/// Shapes: `scale` and `shift` are `(Emb)`; the call maps `(..., Emb)` to `(..., Emb)`. Inside, the mean and
/// the variance are `(..., reduced<Emb>)` (taken over `Emb` with keepdim), which broadcast back against `Emb`
/// only. Element type: float.
/// Errors: compile time, an input whose last axis is not `Emb`. Nothing is thrown.
/// Source: the book's `LayerNorm` (chapter 4): eps 1e-5, `scale` ones and `shift` zeros,
/// `(x - mean) / sqrt(var + eps)` with `var(unbiased=False)`, then `scale * norm_x + shift`. Mean and variance
/// accumulate in double (PyTorch's float reductions agree to float rounding).
/// Example: `shaped::nn::layer_norm<emb_dim> norm1;  auto y = norm1(x);`
template <Axis Emb>
class layer_norm {
    static_assert(StaticAxis<Emb>, "shaped::nn::layer_norm<Emb>: the normalised axis is a static axis");

public:
    /// The normalised axis (PyTorch's `normalized_shape`).
    using normalized_shape = Emb;
    /// Added to the variance under the square root: the book's `self.eps = 1e-5`.
    static constexpr float eps = 1e-5f;

    /// `scale`: `(Emb)`, ones until trained or loaded.
    tensor<float, Emb> scale = ones<Emb>();
    /// `shift`: `(Emb)`, zeros until trained or loaded.
    tensor<float, Emb> shift;

    /// `scale * (x - mean) / sqrt(var + eps) + shift` over the last axis: `(..., Emb)` to `(..., Emb)`.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x) const {
        constexpr bool ok = last_axis_v<basic_tensor<float, Layout, X...>, Emb>;  // LastAxis<Emb>
        static_assert(diag::expect<ok, shaped::detail::described<diag::in_features, Emb>,
                                   shaped::detail::described<diag::tensor_axes, X...>>,
                      "shaped::nn::layer_norm<Emb>(x): x's last axis must be the axis the layer normalises");
        return diag::checked<ok>([&](const auto& x) {
            auto mean = x.template mean<-1>(keepdim);
            auto var = x.template var<-1>(keepdim, false);
            if constexpr (std::is_same_v<Layout, layout::contiguous>) {
                // The same operations, in one kernel over each row (vector_math.hpp): the same bits without
                // the four broadcast passes over the whole tensor, rows shared among shaped's threads.
                tensor<float, X...> y(x.shape, uninitialized);
                constexpr std::size_t n = Emb::extent;
                const std::size_t rows = x.numel() / n;
                const float* in = x.data();
                float* out = y.data();
                shaped::detail::parallel_for(rows, 64, [&](std::size_t r0, std::size_t r1) {
                    shaped::detail::vmath::layer_norm(in, out, r0, r1, n, mean.data(), var.data(), eps, scale.data(),
                                                      shift.data());
                });
                return y;
            } else {
                auto norm_x = (x - mean) / shaped::sqrt(std::move(var) + eps);
                return scale * norm_x + shift;
            }
        }, x);
    }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under PyTorch's `state_dict()` names: `scale`, `shift`.
    static constexpr auto parameters() {
        return parameter_list(parameter("scale", &layer_norm::scale),
                              parameter("shift", &layer_norm::shift));
    }
};

/// The tanh approximation of GELU as a module: `shaped::gelu` (ops/math.hpp).
///
/// Shapes: unchanged. Element type: float or double. Errors: none. Source: the book's `GELU` (chapter 4).
struct gelu {
    /// `shaped::gelu(x)`: the same shape.
    template <class V, class Layout, Axis... X>
    auto operator()(const basic_tensor<V, Layout, X...>& x) const {
        return shaped::gelu(x);
    }
};

}  // namespace shaped::nn

#endif
