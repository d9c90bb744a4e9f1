#ifndef SHAPED_NN_CAUSAL_ATTENTION_HPP
#define SHAPED_NN_CAUSAL_ATTENTION_HPP

/// \file
/// `nn::causal_attention`: one head of causal self-attention with dropout, as the book's listing 3.3.

#include <limits>
#include <string>

#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "dropout.hpp"
#include "linear.hpp"
#include "parameters.hpp"
#include "self_attention.hpp"

namespace shaped::nn {

/// Causal self-attention: each token attends to itself and the tokens before it.
///
/// Shapes: the call maps `(batch, num_tokens, DIn)` to `(batch, num_tokens, DOut)`; `batch` and
/// `num_tokens` may be static or run-time axes (one compiled module serves every length), and `num_tokens`
/// must be declared within `ContextLength` (`at_most<ContextLength>`); the mask buffer is
/// `(ContextLength, ContextLength)`; scores and weights are `(batch, num_tokens, key<num_tokens>)`.
/// Element type: float.
/// Errors: compile time, a run-time `DIn`, `DOut` or `ContextLength`; an input that is not 3-d, whose last
/// axis is not `DIn`, whose token axis may be longer than `ContextLength` or is not declared within it, or
/// that is sequence-first. Thrown: `std::invalid_argument` for a dropout outside [0, 1].
/// Source: the book's `CausalAttention` (listing 3.3): W_query, W_key, W_value (`qkv_bias`), then the
/// dropout, then `mask = triu(ones(context_length, context_length), diagonal=1)`; forward masks with
/// `-inf`, scales by `1/sqrt(keys.shape[-1])`, softmax over the keys, dropout on the weights.
/// Like an `nn.Module`, a new module is in training mode (dropout active when its p > 0): call `eval()`. The
/// call draws its dropout from `gen`, the default generator unless given (one per thread for reproducible draws).
/// Example: `torch::manual_seed(123); shaped::nn::causal_attention<d_in, d_out, context_length> ca(0.0);`
template <Axis DIn, Axis DOut, Axis ContextLength>
class causal_attention {
    static_assert(StaticAxis<DIn> && StaticAxis<DOut> && StaticAxis<ContextLength>,
                  "shaped::nn::causal_attention: d_in, d_out and context_length must be static axes (the weights' and "
                  "the mask's shapes are fixed when the module is built); only batch and num_tokens may be known "
                  "at run time");

public:
    /// The input's last axis, `d_in`.
    using d_in = DIn;
    /// The output's last axis, `d_out`.
    using d_out = DOut;
    /// The longest sequence, the mask's extent.
    using context_length = ContextLength;

    /// The queries' projection, `linear<DIn, DOut>`, with a bias under `qkv_bias`.
    linear<DIn, DOut> W_query, W_key, W_value;
    /// \var W_key
    /// The keys' projection, as `W_query`.

    /// \var W_value
    /// The values' projection, as `W_query`.

    /// Dropout on the attention weights.
    nn::dropout dropout;
    /// The causal mask buffer: 1 above the diagonal, where a query would see a later key (`triu(ones, diagonal=1)`).
    tensor<float, ContextLength, ContextLength> mask;

    /// Draws W_query, W_key and W_value from `gen`, in that order, with biases under `qkv_bias`;
    /// `dropout_p` is the attention weights' dropout. Throws `std::invalid_argument` for `dropout_p` outside [0, 1].
    explicit causal_attention(double dropout_p, bool qkv_bias = false, torch::generator& gen = torch::default_generator())
        : W_query(gen, qkv_bias),
          W_key(gen, qkv_bias),
          W_value(gen, qkv_bias),
          dropout(dropout_p),
          mask(triu<1>(ones<ContextLength, ContextLength>())) {}
    /// Allocates the projections without drawing them, for weights that will be loaded.
    causal_attention(skip_init_t, double dropout_p, bool qkv_bias = false)
        : W_query(skip_init, qkv_bias),
          W_key(skip_init, qkv_bias),
          W_value(skip_init, qkv_bias),
          dropout(dropout_p),
          mask(triu<1>(ones<ContextLength, ContextLength>())) {}

    /// `module.train(mode)`: sets the dropout's mode.
    void train(bool mode = true) noexcept { dropout.train(mode); }
    /// `module.eval()`: turns the dropout off.
    void eval() noexcept { dropout.eval(); }

    /// The forward pass, the book's `forward(x)`: `(batch, num_tokens, DIn)` to `(batch, num_tokens, DOut)`,
    /// the dropout drawn from `gen` in training mode.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x, torch::generator& gen = torch::default_generator()) const {
        constexpr bool ok = detail::input_ok<3, DIn, ContextLength, X...>();
        return diag::checked<ok>(
            [&]<class batch, class num_tokens, class E>(const basic_tensor<float, Layout, batch, num_tokens, E>& x) {
                auto keys = W_key(x).template rename<batch, key<num_tokens>, DOut>();
                auto queries = W_query(x);
                auto values = W_value(x).template rename<batch, key<num_tokens>, DOut>();

                auto attn_scores = matmul(queries, std::move(keys).template transpose<1, 2>());  // (b, num_tokens, key<...>)
                auto attn_weights = detail::causal_weights<num_tokens>(std::move(attn_scores), mask, dropout, DOut::extent, gen);
                return matmul(attn_weights, values);
            },
            x);
    }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under PyTorch's `state_dict()` names: the buffer `mask`, then `W_query`, `W_key`, `W_value` (with their `bias` under `qkv_bias`).
    static constexpr auto parameters() {
        return parameter_list(buffer("mask", &causal_attention::mask),
                              submodule("W_query", &causal_attention::W_query),
                              submodule("W_key", &causal_attention::W_key),
                              submodule("W_value", &causal_attention::W_value));
    }
};

}  // namespace shaped::nn

#endif
