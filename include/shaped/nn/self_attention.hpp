#ifndef SHAPED_NN_SELF_ATTENTION_HPP
#define SHAPED_NN_SELF_ATTENTION_HPP

/// \file
/// The book's self-attention without a mask: `self_attention_v1` (raw weight matrices) and
/// `self_attention_v2` (three `nn::linear`).

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "linear.hpp"
#include "parameters.hpp"

namespace shaped::nn {

namespace detail {
// softmax(scores / sqrt(d), dim=-1): `keys.shape[-1]**0.5` is a Python float, the division is in `Value`.
template <class Scores>
auto scaled_softmax(Scores scores, std::size_t d) {
    using value = typename Scores::value_type;
    return shaped::softmax<-1>(std::move(scores) / static_cast<value>(std::sqrt(static_cast<double>(d))));
}

// For each query row of a mask: the span [lo, hi) of its unmasked keys, and whether no key inside it is masked.
struct key_span {
    std::size_t lo, hi;
    bool dense;
};

// The span of one row of a mask (`masked`, tk keys; nonzero masks a key).
template <class M>
key_span row_span(const M* masked, std::size_t tk) {
    key_span sp{tk, 0, true};
    for (std::size_t j = 0; j < tk; ++j)
        if (masked[j] == 0) {
            sp.lo = std::min(sp.lo, j);
            sp.hi = j + 1;
        }
    sp.lo = std::min(sp.lo, sp.hi);
    for (std::size_t j = sp.lo; j < sp.hi; ++j) sp.dense = sp.dense && masked[j] == 0;
    return sp;
}

/// Query rows per block of the attention modules' scores (shaped::detail::matmul_spans).
inline constexpr std::size_t causal_block = 128;

// The spans of rows offset .. offset + tq - 1 of a mask, over its first tk keys.
template <class Mask>
std::vector<key_span> key_spans(const Mask& mask, std::size_t tq, std::size_t tk, std::size_t offset = 0) {
    const std::size_t context = mask.shape.extent(1);
    std::vector<key_span> spans(tq);
    for (std::size_t i = 0; i < tq; ++i) spans[i] = row_span(mask.data() + (offset + i) * context, tk);
    return spans;
}

// For each block of `causal_block` query rows: the keys some row of the block sees (the union of their spans;
// none where no row sees any). The scores need only those columns: causal_weights masks the rest and never
// reads them. With a causal mask, about half of the product at long contexts: at GPT-2 small's 1024 tokens, in
// turns with the full product, the book's module took 8% less time at batch 1 and the model's forward pass
// 3-4% less. The products keep their bits: each score is the same sum over head_dim.
inline std::vector<shaped::detail::column_span> causal_blocks(const std::vector<key_span>& spans) {
    std::vector<shaped::detail::column_span> blocks;
    for (std::size_t i0 = 0; i0 < spans.size(); i0 += causal_block) {
        shaped::detail::column_span b{std::numeric_limits<std::size_t>::max(), 0};
        for (std::size_t i = i0; i < std::min(spans.size(), i0 + causal_block); ++i)
            if (spans[i].lo < spans[i].hi) {
                b.lo = std::min(b.lo, spans[i].lo);
                b.hi = std::max(b.hi, spans[i].hi);
            }
        blocks.push_back(b.lo < b.hi ? b : shaped::detail::column_span{0, 0});
    }
    return blocks;
}

// The causal steps of listings 3.3 and 3.5, shared by causal_attention and multi_head_attention:
// mask[:num_tokens, :num_tokens] filled with -inf, softmax of the scores over sqrt(d), dropout.
// One pass over each row of the scores does what masked_fill, the division and softmax do one after the
// other, with the same operations on each element, so the weights are bit for bit the same; the
// scores' buffer becomes the weights'.
// With a KV cache the scores end on (num_tokens, cached<num_tokens>) and query row i is the token at
// position `offset + i`: it reads row `offset + i` of the mask. The scores of masked keys are never read
// (matmul_spans leaves them unwritten). `given`: the mask's spans (key_spans), where the caller has them.
template <class Tokens, class Value, class Layout, Axis... S, class Mask, class Dropout>
auto causal_weights(basic_tensor<Value, Layout, S...> scores, const Mask& mask, const Dropout& dropout, std::size_t d,
                    torch::generator& gen = torch::default_generator(), std::size_t offset = 0,
                    const key_span* given = nullptr) {
    constexpr std::size_t n = sizeof...(S);
    using keys = shaped::detail::axis_at_t<n - 1, S...>;
    static_assert(n >= 2 && std::is_same_v<shaped::detail::axis_at_t<n - 2, S...>, Tokens> &&
                      (std::is_same_v<keys, key<Tokens>> || std::is_same_v<keys, cached<Tokens>>) &&
                      shaped::detail::prefix_of<Tokens, typename decltype(+hana::at_c<0>(Mask::axes))::type>(),
                  "shaped::nn: the causal step takes scores that end on (num_tokens, key<num_tokens>) or, with a KV "
                  "cache, (num_tokens, cached<num_tokens>), num_tokens declared within the mask's context_length");
    // Both token extents are at most context_length: the token axis is declared within it.
    const std::size_t tq = scores.shape.extent(n - 2), tk = scores.shape.extent(n - 1), context = mask.shape.extent(1);
    constexpr Value minus_inf = -std::numeric_limits<Value>::infinity();
    const Value scale = static_cast<Value>(std::sqrt(static_cast<double>(d)));
    // The mask is the same for every batch and head: find once, for each query row, the span [lo, hi)
    // of its unmasked keys and whether the span has no masked key inside (true of a causal mask).
    // A short context keeps its spans on the stack: no allocation per call.
    constexpr std::size_t on_stack = 256;
    std::array<key_span, on_stack> near;
    std::vector<key_span> far;
    key_span* found = near.data();
    if (tq > on_stack && !given) {
        far.resize(tq);
        found = far.data();
    }
    const auto* m = mask.data();
    if (!given)
        for (std::size_t i = 0; i < tq; ++i)
            found[i] = row_span(m + (offset + i) * context, tk);  // row i of mask[offset:offset + num_tokens, :keys]
    const key_span* const spans = given ? given : found;
    const auto e = scores.shape;
    tensor<Value, S...> weights(shaped::detail::adopt_tag{}, e, std::move(scores).storage());
    // Rows are independent: on large scores they are shared among shaped's threads, in blocks of rows, with
    // the same bits at any count.
    Value* const first = weights.data();
    const std::size_t rows = tk == 0 ? 0 : weights.numel() / tk;  // (outer, query) pairs
    const std::size_t grain = std::max<std::size_t>(1, std::size_t{32768} / std::max<std::size_t>(tk, 1));
    shaped::detail::parallel_for(rows, grain, [&](std::size_t r0, std::size_t r1) {
        for (std::size_t r = r0; r < r1; ++r) {
            Value* row = first + r * tk;
            const std::size_t i = r % tq;
            const key_span sp = spans[i];
            Value mx = minus_inf;
            if (sp.lo == sp.hi) {  // every key masked: -inf throughout, and softmax gives NaN
                std::fill(row, row + tk, minus_inf);
            } else if (sp.dense) {  // outside [lo, hi) masked: softmax_finish writes those zeros
                if constexpr (std::is_same_v<Value, float>)
                    mx = shaped::detail::vmath::divide_max(row + sp.lo, sp.hi - sp.lo, scale);
                else
                    for (std::size_t j = sp.lo; j < sp.hi; ++j) mx = std::max(mx, row[j] = row[j] / scale);
                if (mx == minus_inf) {  // softmax_finish reads the whole row: the masked keys' scores -inf, not unwritten
                    std::fill(row, row + sp.lo, minus_inf);
                    std::fill(row + sp.hi, row + tk, minus_inf);
                }
            } else {
                const auto* masked = m + (offset + i) * context;
                for (std::size_t j = 0; j < tk; ++j) {
                    if (masked[j] != 0)
                        row[j] = minus_inf;
                    else
                        mx = std::max(mx, row[j] = row[j] / scale);
                }
            }
            shaped::detail::softmax_finish(row, tk, mx, sp.lo, sp.hi);
        }
    });
    return dropout(std::move(weights), gen);
}

// Checks a module's input once, up front, so that a bad input gives one error and not one per step of
// the forward pass: the rank, the last axis (d_in), and the number of tokens against context_length.
template <std::size_t Rank, class DIn, class ContextLength, class... X>
constexpr bool input_ok() {
    constexpr bool rank_ok = sizeof...(X) == Rank;
    static_assert(diag::expect<rank_ok, shaped::detail::described<diag::tensor_axes, X...>, diag::rank<Rank>>,
                  "shaped::nn attention module: the input has the wrong number of axes (the book's modules take "
                  "(num_tokens, d_in) for self_attention_v1/v2 and (batch, num_tokens, d_in) for the causal ones)");
    if constexpr (rank_ok) {
        using last = shaped::detail::axis_at_t<Rank - 1, X...>;
        constexpr bool d_in_ok = same_axis_v<last, DIn>;
        static_assert(diag::expect<d_in_ok, shaped::detail::described<diag::in_features, DIn>,
                                   shaped::detail::described<diag::input_last, last>>,
                      "shaped::nn attention module: the input's last axis must be the module's d_in axis");
        if constexpr (d_in_ok && !std::is_void_v<ContextLength>) {
            // The token axis must be declared within context_length (so that its extent, static or run-time,
            // is at most the mask's): this also catches a sequence-first input fed to a batch-first module.
            using tokens = shaped::detail::axis_at_t<Rank - 2, X...>;
            constexpr bool declared = shaped::detail::prefix_of<tokens, ContextLength>();
            constexpr bool elsewhere = [] {
                return []<std::size_t... J>(std::index_sequence<J...>) {
                    return ((J != Rank - 2 && shaped::detail::prefix_of<shaped::detail::axis_at_t<J, X...>, ContextLength>()) ||
                            ...);
                }(std::make_index_sequence<Rank>{});
            }();
            constexpr bool fits = tokens::bound <= ContextLength::extent;
            static_assert(diag::expect<declared || !elsewhere, shaped::detail::described<diag::tensor_axes, X...>,
                                       shaped::detail::described<diag::expected_axes, ContextLength>>,
                          "shaped::nn attention module: the input's tokens are not where a batch-first module takes "
                          "them, (batch, num_tokens, d_in): an axis declared within context_length stands elsewhere; "
                          "transpose a sequence-first input (num_tokens, batch, d_in) with transpose<0, 1>()");
            static_assert(diag::expect<declared || elsewhere || fits, shaped::detail::described<diag::tensor_axes, X...>,
                                       shaped::detail::described<diag::expected_axes, ContextLength>>,
                          "shaped::nn attention module: more tokens than context_length (or a run-time token axis "
                          "whose bound exceeds it); make context_length at least the number of tokens");
            static_assert(diag::expect<declared || elsewhere || !fits, shaped::detail::described<diag::tensor_axes, X...>,
                                       shaped::detail::described<diag::expected_axes, ContextLength>>,
                          "shaped::nn attention module: the token axis must be declared within context_length: "
                          "struct num_tokens : shaped::dynamic_axis<\"num_tokens\", shaped::at_most<context_length>> {}; "
                          "(or shaped::axis<\"num_tokens\", 6, shaped::at_most<context_length>> for a static length)");
            return declared;
        } else {
            return d_in_ok;
        }
    } else {
        return false;
    }
}
}  // namespace detail

/// Self-attention with the weights as plain matrices drawn with `torch.rand`.
///
/// Shapes: `W_query`, `W_key`, `W_value` are `(DIn, DOut)`; the call maps `(num_tokens, DIn)` to
/// `(num_tokens, DOut)`. Inside, the keys and values take the axis `key<num_tokens>`, so the scores are
/// `(num_tokens, key<num_tokens>)`. Element type: float.
/// Errors: compile time, an input that is not 2-d or whose last axis is not `DIn` (named by `matmul`).
/// Nothing is thrown.
/// Source: the book's `SelfAttention_v1` (listing 3.1): weights `nn.Parameter(torch.rand(d_in, d_out))` in
/// the order W_query, W_key, W_value; `softmax(queries @ keys.T / keys.shape[-1]**0.5, dim=-1) @ values`.
/// Example: `torch::manual_seed(123); shaped::nn::self_attention_v1<d_in, d_out> sa_v1; auto y = sa_v1(inputs);`
template <Axis DIn, Axis DOut>
class self_attention_v1 {
public:
    /// The queries' projection, `(DIn, DOut)`, uniform on [0, 1) (`torch.rand`).
    tensor<float, DIn, DOut> W_query, W_key, W_value;
    /// \var W_key
    /// The keys' projection, as `W_query`.

    /// \var W_value
    /// The values' projection, as `W_query`.

    /// Draws W_query, W_key and W_value from `gen`, in that order.
    explicit self_attention_v1(torch::generator& gen = torch::default_generator())
        : W_query(torch::rand<DIn, DOut>(gen)), W_key(torch::rand<DIn, DOut>(gen)), W_value(torch::rand<DIn, DOut>(gen)) {}

    /// The forward pass, `softmax(queries @ keys.T / sqrt(d_out)) @ values`: `(num_tokens, DIn)` to
    /// `(num_tokens, DOut)`.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x) const {
        constexpr bool ok = detail::input_ok<2, DIn, void, X...>();
        return diag::checked<ok>([&]<class tokens, class E>(const basic_tensor<float, Layout, tokens, E>& x) {
            auto keys = matmul(x, W_key).template rename<key<tokens>, DOut>();
            auto queries = matmul(x, W_query);
            auto values = matmul(x, W_value).template rename<key<tokens>, DOut>();
            auto attn_scores = matmul(queries, std::move(keys).T());  // (num_tokens, key<num_tokens>)
            auto attn_weights = detail::scaled_softmax(attn_scores, DOut::extent);
            return matmul(attn_weights, values);
        }, x);
    }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under PyTorch's `state_dict()` names: `W_query`, `W_key`, `W_value` (`nn.Parameter`s of `(d_in, d_out)`).
    static constexpr auto parameters() {
        return parameter_list(parameter("W_query", &self_attention_v1::W_query),
                              parameter("W_key", &self_attention_v1::W_key),
                              parameter("W_value", &self_attention_v1::W_value));
    }
};

/// Self-attention with three `nn::linear` projections.
///
/// Shapes: `W_query`, `W_key`, `W_value` are `linear<DIn, DOut>`; the call maps `(num_tokens, DIn)` to
/// `(num_tokens, DOut)`; scores are `(num_tokens, key<num_tokens>)`. Element type: float.
/// Errors: compile time, an input that is not 2-d or whose last axis is not `DIn`. Nothing is thrown.
/// Source: the book's `SelfAttention_v2` (listing 3.2), `qkv_bias=False` by default; the layers are
/// created in the order W_query, W_key, W_value.
/// Example: `torch::manual_seed(789); shaped::nn::self_attention_v2<d_in, d_out> sa_v2; auto y = sa_v2(inputs);`
template <Axis DIn, Axis DOut>
class self_attention_v2 {
public:
    /// The queries' projection, `linear<DIn, DOut>`, with a bias under `qkv_bias`.
    linear<DIn, DOut> W_query, W_key, W_value;
    /// \var W_key
    /// The keys' projection, as `W_query`.

    /// \var W_value
    /// The values' projection, as `W_query`.

    /// Draws W_query, W_key and W_value from `gen`, in that order, with biases under `qkv_bias`.
    explicit self_attention_v2(bool qkv_bias = false, torch::generator& gen = torch::default_generator())
        : W_query(gen, qkv_bias), W_key(gen, qkv_bias), W_value(gen, qkv_bias) {}

    /// The forward pass, `softmax(queries @ keys.T / sqrt(d_out)) @ values`: `(num_tokens, DIn)` to
    /// `(num_tokens, DOut)`.
    template <class Layout, Axis... X>
    auto operator()(const basic_tensor<float, Layout, X...>& x) const {
        constexpr bool ok = detail::input_ok<2, DIn, void, X...>();
        return diag::checked<ok>([&]<class tokens, class E>(const basic_tensor<float, Layout, tokens, E>& x) {
            auto keys = W_key(x).template rename<key<tokens>, DOut>();
            auto queries = W_query(x);
            auto values = W_value(x).template rename<key<tokens>, DOut>();
            auto attn_scores = matmul(queries, std::move(keys).T());
            auto attn_weights = detail::scaled_softmax(attn_scores, DOut::extent);
            return matmul(attn_weights, values);
        }, x);
    }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under PyTorch's `state_dict()` names: `W_query`, `W_key`, `W_value`, each a layer's `weight` (and `bias` under `qkv_bias`).
    static constexpr auto parameters() {
        return parameter_list(submodule("W_query", &self_attention_v2::W_query),
                              submodule("W_key", &self_attention_v2::W_key),
                              submodule("W_value", &self_attention_v2::W_value));
    }
};

}  // namespace shaped::nn

#endif
