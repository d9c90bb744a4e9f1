#ifndef SHAPED_NN_FEED_FORWARD_HPP
#define SHAPED_NN_FEED_FORWARD_HPP

/// \file
/// `nn::feed_forward<Emb>`: Linear(Emb, 4·Emb), GELU, Linear(4·Emb, Emb), as the book's `FeedForward`.

#include <string>
#include <tuple>

#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "layer_norm.hpp"
#include "linear.hpp"
#include "parameters.hpp"

namespace shaped::nn {

/// The transformer's position-wise feed-forward network.
///
/// Shapes: the call maps `(..., Emb)` to `(..., Emb)`; inside, `(..., hidden)`, where `hidden` is an axis of its
/// own, of extent `4 * Emb::extent`: the first layer is `linear<Emb, hidden>`, the second `linear<hidden, Emb>`,
/// so the two cannot be swapped. Element type: float.
/// Errors: compile time, an input whose last axis is not `Emb` (named by the first layer). Nothing is thrown.
/// Source: the book's `FeedForward` (chapter 4): `layers = nn.Sequential(nn.Linear(emb_dim, 4 * emb_dim),
/// GELU(), nn.Linear(4 * emb_dim, emb_dim))`; `layers` is a `std::tuple`, `std::get<0>(ff.layers)` is
/// PyTorch's `ff.layers[0]`. Created in that order: same seed, same weights.
/// Example: `shaped::nn::feed_forward<emb_dim> ff;  auto y = ff(x);`
template <Axis Emb>
class feed_forward {
    static_assert(StaticAxis<Emb>, "shaped::nn::feed_forward<Emb>: the embedding axis is a static axis");

public:
    /// The hidden axis, four times as wide as `Emb`.
    struct hidden : axis<"hidden", 4 * Emb::extent> {};

    /// `layers[0]`, `layers[1]`, `layers[2]`: `linear<Emb, hidden>`, GELU, `linear<hidden, Emb>`.
    std::tuple<linear<Emb, hidden>, nn::gelu, linear<hidden, Emb>> layers;

    /// Draws the first layer's parameters, then the second's, from `gen`.
    explicit feed_forward(torch::generator& gen = torch::default_generator())
        : layers{linear<Emb, hidden>(gen), nn::gelu{}, linear<hidden, Emb>(gen)} {}  // braces: left to right
    /// Allocates the layers without drawing them, for weights that will be loaded.
    explicit feed_forward(skip_init_t)
        : layers{linear<Emb, hidden>(skip_init), nn::gelu{}, linear<hidden, Emb>(skip_init)} {}

    /// `layers[2](gelu(layers[0](x)))`: `(..., Emb)` to `(..., Emb)`.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x) const {
        return std::get<2>(layers)(std::get<1>(layers)(std::get<0>(layers)(x)));
    }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under PyTorch's `state_dict()` names: `layers.0.weight`, `layers.0.bias`, `layers.2.weight`, `layers.2.bias` (GELU has none).
    static constexpr auto parameters() {
        return parameter_list(submodule("layers.0", [](auto& self) -> auto& { return std::get<0>(self.layers); }),
                              submodule("layers.2", [](auto& self) -> auto& { return std::get<2>(self.layers); }));
    }
};

}  // namespace shaped::nn

#endif
