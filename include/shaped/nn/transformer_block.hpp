#ifndef SHAPED_NN_TRANSFORMER_BLOCK_HPP
#define SHAPED_NN_TRANSFORMER_BLOCK_HPP

/// \file
/// `nn::transformer_block<Config>`: the book's pre-norm `TransformerBlock` (chapter 4).

#include <string>
#include <utility>

#include "../diagnostics.hpp"
#include "../tensor.hpp"
#include "../tensor_of.hpp"
#include "../torch/generator.hpp"
#include "dropout.hpp"
#include "feed_forward.hpp"
#include "gpt_config.hpp"
#include "layer_norm.hpp"
#include "multi_head_attention.hpp"
#include "parameters.hpp"

namespace shaped::nn {

/// Multi-head causal attention and a feed-forward network, each after a layer norm and around a shortcut.
///
/// Shapes: the call maps `(batch, num_tokens, emb_dim)` to the same, `num_tokens` declared within the
/// config's `context_length` (static or run-time). Element type: float.
/// Errors: compile time, an input whose last axis is not the config's `emb_dim` (one error, at the call), and
/// the attention's rules on the token axis. Thrown: `std::invalid_argument` for a dropout outside [0, 1].
/// Source: the book's `TransformerBlock` (chapter 4): `att`, `ff`, `norm1`, `norm2`, `drop_shortcut`, created
/// in that order; `x = x + drop_shortcut(att(norm1(x)))`, then `x = x + drop_shortcut(ff(norm2(x)))`. Like an
/// `nn.Module`, a new block is in training mode; the call draws its dropout from `gen`.
/// `Attention` is the attention module's form: the book's `multi_head_attention` (the default),
/// `multi_head_attention_combined_qkv` or `multi_head_attention_sdpa` (the bonus notebook's forms; the
/// fused one needs `eval()` when the config's drop_rate is above 0).
/// Example: `shaped::nn::transformer_block<shaped::nn::gpt2_124m> block;  auto y = block(x);`
template <GptConfig Config, template <class, class, class, class> class Attention = multi_head_attention>
class transformer_block {
    using emb = typename Config::emb_dim;

public:
    /// The attention, `Attention<emb_dim, emb_dim, context_length, n_heads>`, dropout `drop_rate`.
    Attention<emb, emb, typename Config::context_length, typename Config::n_heads> att;
    /// The feed-forward network.
    feed_forward<emb> ff;
    /// The layer norm before the attention.
    layer_norm<emb> norm1;
    /// The layer norm before the feed-forward network.
    layer_norm<emb> norm2;
    /// Dropout on each branch's output before the shortcut adds it back, `drop_rate`.
    nn::dropout drop_shortcut;

    /// Draws `att`'s parameters, then `ff`'s, from `gen` (the norms start as ones and zeros). Throws
    /// `std::invalid_argument` for a `drop_rate` outside [0, 1].
    explicit transformer_block(torch::generator& gen = torch::default_generator())
        : att(Config::drop_rate, Config::qkv_bias, gen), ff(gen), drop_shortcut(Config::drop_rate) {}
    /// Allocates the weights without drawing them, for weights that will be loaded.
    explicit transformer_block(skip_init_t)
        : att(skip_init, Config::drop_rate, Config::qkv_bias), ff(skip_init), drop_shortcut(Config::drop_rate) {}

    /// `module.train(mode)`: sets the attention's and the shortcut's dropout mode.
    void train(bool mode = true) noexcept {
        att.train(mode);
        drop_shortcut.train(mode);
    }
    /// `module.eval()`: turns every dropout off.
    void eval() noexcept { train(false); }

    /// The forward pass, the book's `forward(x)`: `(batch, num_tokens, emb_dim)` to the same, the dropouts
    /// drawn from `gen` in training mode.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x, torch::generator& gen = torch::default_generator()) const {
        constexpr bool ok = tensor_of_v<basic_tensor<float, Layout, X...>, any_axis, any_axis, emb>;
        static_assert(diag::expect<ok, shaped::detail::described<diag::in_features, emb>,
                                   shaped::detail::described<diag::tensor_axes, X...>>,
                      "shaped::nn::transformer_block(x): x must be (batch, num_tokens, emb_dim), its last axis the "
                      "model's emb_dim");
        return diag::checked<ok>([&](const auto& x) {
            auto h = drop_shortcut(att(norm1(x), gen), gen) + x;  // the shortcut around the attention
            return drop_shortcut(ff(norm2(h)), gen) + h;           // and around the feed-forward network
        }, x);
    }

    /// The forward pass with the attention's KV cache (the book's `forward(x, use_cache=True)`).
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x, use_cache_t, torch::generator& gen = torch::default_generator()) {
        constexpr bool ok = tensor_of_v<basic_tensor<float, Layout, X...>, any_axis, any_axis, emb>;
        static_assert(diag::expect<ok, shaped::detail::described<diag::in_features, emb>,
                                   shaped::detail::described<diag::tensor_axes, X...>>,
                      "shaped::nn::transformer_block(x, use_cache): x must be (batch, num_tokens, emb_dim), its last "
                      "axis the model's emb_dim");
        return diag::checked<ok>([&](const auto& x) {
            auto h = drop_shortcut(att(norm1(x), use_cache, gen), gen) + x;
            return drop_shortcut(ff(norm2(h)), gen) + h;
        }, x);
    }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under PyTorch's `state_dict()` names: those of `att`, `ff`, `norm1` and `norm2`, each after its name and a dot (the dropout has none).
    static constexpr auto parameters() {
        return parameter_list(submodule("att", &transformer_block::att),
                              submodule("ff", &transformer_block::ff),
                              submodule("norm1", &transformer_block::norm1),
                              submodule("norm2", &transformer_block::norm2));
    }
};

}  // namespace shaped::nn

#endif
