#ifndef SHAPED_NN_GATED_FEED_FORWARD_HPP
#define SHAPED_NN_GATED_FEED_FORWARD_HPP

/// \file
/// `nn::gated_feed_forward<Emb, Hidden, Activation>`: `fc3(act(fc1(x)) * fc2(x))`, the feed-forward layer of
/// Llama and Qwen (SwiGLU, `nn::swiglu_feed_forward`) and of Gemma (GELU-tanh, `nn::geglu_feed_forward`);
/// `nn::silu` and `nn::gelu_tanh`, the gates' activations as modules.

#include <string>

#include "../diagnostics.hpp"
#include "../ops/math.hpp"
#include "../tensor.hpp"
#include "../tensor_of.hpp"
#include "../torch/generator.hpp"
#include "linear.hpp"
#include "parameters.hpp"

namespace shaped::nn {

/// SiLU as a module: `shaped::silu` (ops/math.hpp).
///
/// Shapes: unchanged. Element type: float or double. Errors: none. Source: `torch.nn.SiLU`.
struct silu {
    /// `shaped::silu(x)`: the same shape.
    template <class V, class Layout, Axis... X>
    auto operator()(const basic_tensor<V, Layout, X...>& x) const {
        return shaped::silu(x);
    }
};

/// PyTorch's tanh GELU as a module: `shaped::gelu_tanh` (ops/math.hpp), Gemma's gate.
///
/// Shapes: unchanged. Element type: float or double. Errors: none. Source: `torch.nn.GELU(approximate="tanh")`.
struct gelu_tanh {
    /// `shaped::gelu_tanh(x)`: the same shape.
    template <class V, class Layout, Axis... X>
    auto operator()(const basic_tensor<V, Layout, X...>& x) const {
        return shaped::gelu_tanh(x);
    }
};

/// The gated feed-forward layer: a gate and an up projection to `Hidden`, multiplied, and a down projection.
///
/// Shapes: `fc1` (the gate, Hugging Face's `gate_proj`) and `fc2` (the up projection, `up_proj`) are
/// `linear<Emb, Hidden>`, `fc3` (`down_proj`) is `linear<Hidden, Emb>`, none with a bias; the call maps
/// `(..., Emb)` to `(..., Emb)` through `(..., Hidden)`. `Hidden` is the configuration's `hidden_dim` (Llama
/// 3.2 1B: 8192 on a width of 2048; Qwen3 0.6B: 3072 on 1024), an axis of its own, so `fc3` cannot be applied
/// to the input nor `fc1` to the hidden values. Element type: float; the weights `Weight`, float or
/// `bfloat16` (kept in BF16, see `nn::linear`).
/// Errors: compile time, an input whose last axis is not `Emb`. Nothing is thrown.
/// Source: the book's `FeedForward` of Llama 3, Qwen3 (`silu(fc1(x)) * fc2(x)`, then `fc3`) and Gemma 3
/// (`gelu(fc1(x), approximate="tanh") * fc2(x)`), rasbt/LLMs-from-scratch ch05/07_gpt_to_llama,
/// ch05/11_qwen3, ch05/12_gemma3. Created in the order fc1, fc2, fc3: same seed, same weights.
/// Example: `shaped::nn::swiglu_feed_forward<emb_dim, hidden_dim> ff;  auto y = ff(x);`
template <Axis Emb, Axis Hidden, class Activation = nn::silu, class Weight = float>
class gated_feed_forward {
    static_assert(StaticAxis<Emb> && StaticAxis<Hidden>,
                  "shaped::nn::gated_feed_forward<Emb, Hidden>: the embedding and hidden axes are static axes");

public:
    /// The gate projection, `linear<Emb, Hidden>` without a bias.
    linear<Emb, Hidden, float, Weight> fc1;
    /// The up projection, `linear<Emb, Hidden>` without a bias.
    linear<Emb, Hidden, float, Weight> fc2;
    /// The down projection, `linear<Hidden, Emb>` without a bias.
    linear<Hidden, Emb, float, Weight> fc3;

    /// Draws fc1, fc2 and fc3 from `gen`, in that order.
    explicit gated_feed_forward(torch::generator& gen = torch::default_generator())
        : fc1(gen, false), fc2(gen, false), fc3(gen, false) {}
    /// Allocates the layers without drawing them, for weights that will be loaded.
    explicit gated_feed_forward(skip_init_t) : fc1(skip_init, false), fc2(skip_init, false), fc3(skip_init, false) {}

    /// `fc3(act(fc1(x)) * fc2(x))`: `(..., Emb)` to `(..., Emb)`.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x) const {
        constexpr bool ok = last_axis_v<basic_tensor<float, Layout, X...>, Emb>;
        static_assert(diag::expect<ok, shaped::detail::described<diag::in_features, Emb>,
                                   shaped::detail::described<diag::tensor_axes, X...>>,
                      "shaped::nn::gated_feed_forward<Emb, Hidden>(x): x's last axis must be the layer's Emb axis");
        return diag::checked<ok>([&](const auto& x) {
            return fc3(Activation{}(fc1(x)) * fc2(x));
        }, x);
    }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under the book's `state_dict()` names: `fc1.weight`, `fc2.weight`, `fc3.weight`.
    static constexpr auto parameters() {
        return parameter_list(submodule("fc1", &gated_feed_forward::fc1), submodule("fc2", &gated_feed_forward::fc2),
                              submodule("fc3", &gated_feed_forward::fc3));
    }
};

/// SwiGLU: the gated layer with SiLU, as Llama 3 and Qwen3 use it.
template <Axis Emb, Axis Hidden, class Weight = float>
using swiglu_feed_forward = gated_feed_forward<Emb, Hidden, nn::silu, Weight>;

/// The gated layer with the tanh approximation of GELU, as Gemma 3 uses it.
template <Axis Emb, Axis Hidden, class Weight = float>
using geglu_feed_forward = gated_feed_forward<Emb, Hidden, nn::gelu_tanh, Weight>;

}  // namespace shaped::nn

#endif
