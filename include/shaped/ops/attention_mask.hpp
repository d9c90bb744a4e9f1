#ifndef SHAPED_OPS_ATTENTION_MASK_HPP
#define SHAPED_OPS_ATTENTION_MASK_HPP

/// \file
/// Boolean attention masks that carry what `true` means: "this key is masked out" (the book's mask, for
/// `masked_fill`) or "this query may attend to this key" (the `attn_mask` of PyTorch's
/// `scaled_dot_product_attention`). Passing one where the other is expected fails to compile; `!m` turns
/// one into the other. Also the book's sliding-window causal mask.

#include <cstddef>
#include <string>
#include <utility>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor_fwd.hpp"
#include "mask.hpp"

namespace shaped {

/// What `true` means in a `bool_mask`.
enum class mask_meaning {
    /// `true` where a key is masked out: the book's `mask.bool()` (`triu(ones, diagonal=1)`), which
    /// `masked_fill(scores, mask, -inf)` fills.
    true_masks,
    /// `true` where a query may attend to a key: the boolean `attn_mask` of PyTorch's
    /// `scaled_dot_product_attention` (and of Hugging Face's attention masks).
    true_attends,
};

/// A boolean mask whose meaning is part of its type.
///
/// Shapes: `(Axes...)`, those of `values`; a mask on attention scores ends on `(num_tokens,
/// key<num_tokens>)` and may broadcast over leading axes. Element type: bool.
/// Errors: compile time, `masked_fill` given a `true_attends` mask, `scaled_dot_product_attention` given a
/// `true_masks` one (the book's issue #1061: `True` meant "attend" to SDPA and "mask" to its author, and
/// every future token was visible). Nothing is thrown.
/// Source: the book's `mask_bool = self.mask.bool()[:num_tokens, :num_tokens]` (listing 3.3) and the
/// `attn_mask` of `torch.nn.functional.scaled_dot_product_attention`.
/// Example: `auto m = shaped::true_masks(mask.slice<num_tokens, key<num_tokens>>(t, t));  auto a = !m;`
template <mask_meaning Meaning, Axis... Axes>
struct bool_mask {
    /// What `true` means.
    static constexpr mask_meaning meaning = Meaning;
    /// The mask's values.
    tensor<bool, Axes...> values;

    /// The same mask in the other meaning: every value negated (`~mask` in PyTorch), so that the same pairs
    /// are blocked.
    bool_mask<Meaning == mask_meaning::true_masks ? mask_meaning::true_attends : mask_meaning::true_masks, Axes...>
    operator!() const {
        tensor<bool, Axes...> flipped(values.shape, uninitialized);
        const bool* from = values.data();
        bool* to = flipped.data();
        for (std::size_t i = 0; i < values.numel(); ++i) to[i] = !from[i];
        return {std::move(flipped)};
    }
};

namespace detail {
template <mask_meaning Meaning, class Value, class Layout, Axis... Axes>
bool_mask<Meaning, Axes...> make_bool_mask(const basic_tensor<Value, Layout, Axes...>& x) {
    if constexpr (std::is_same_v<Value, bool> && std::is_same_v<Layout, layout::contiguous>)
        return {x};
    else
        return {x.template to<bool>()};
}
}  // namespace detail

/// `x` as a mask that is `true` (nonzero) where a key is masked out: the book's causal mask. Shapes:
/// `x`'s. Errors: none of its own. Source: `mask.bool()` (listing 3.3).
template <class Value, class Layout, Axis... Axes>
bool_mask<mask_meaning::true_masks, Axes...> true_masks(const basic_tensor<Value, Layout, Axes...>& x) {
    return detail::make_bool_mask<mask_meaning::true_masks>(x);
}

/// `x` as a mask that is `true` (nonzero) where a query may attend to a key: SDPA's boolean `attn_mask`.
/// Shapes: `x`'s. Errors: none of its own. Source: `attn_mask` of `F.scaled_dot_product_attention`.
template <class Value, class Layout, Axis... Axes>
bool_mask<mask_meaning::true_attends, Axes...> true_attends(const basic_tensor<Value, Layout, Axes...>& x) {
    return detail::make_bool_mask<mask_meaning::true_attends>(x);
}

/// `masked_fill` with a mask that says what `true` means: fills where a `true_masks` mask is true.
///
/// Shapes and errors: those of `masked_fill(x, mask.values, value)`; besides, at compile time, a
/// `true_attends` mask (it would fill exactly the pairs that may attend). Source: `masked_fill(mask_bool,
/// -torch.inf)` (listing 3.3).
template <class Value, class LX, Axis... X, mask_meaning Meaning, Axis... MA>
auto masked_fill(basic_tensor<Value, LX, X...> x, const bool_mask<Meaning, MA...>& mask,
                 std::type_identity_t<Value> value) {
    static_assert(diag::expect<Meaning == mask_meaning::true_masks, detail::described<diag::mask_axes, MA...>>,
                  "shaped::masked_fill(x, mask, value): this mask is true where a query may attend "
                  "(true_attends, SDPA's attn_mask), and masked_fill fills where the mask is true: it would blank "
                  "exactly the keys each query may see; pass !mask, which is true where a key is masked out");
    if constexpr (Meaning == mask_meaning::true_masks)
        return masked_fill(std::move(x), mask.values, value);
    else
        return diag::failed_shape_check{};
}

/// The sliding-window causal mask, `true` where a key is masked out: query `i` of `Q`, at position
/// `lk - lq + i` (the last `lq` of the `lk` keys, as after a KV cache's earlier tokens), sees the keys at
/// positions `p - Window::extent + 1` to `p`, its own and the `Window::extent - 1` before it (left-inclusive:
/// a window of 512 covers 512 keys).
///
/// Shapes: `(Q, K)`, extents `lq` and `lk` for run-time axes (none for static ones). Errors: compile time,
/// a run-time `Window`. Thrown: `shape_error`, `lk < lq`, or an extent outside its axis's bounds.
/// Source: the book's `mask_bool`, `diff < 0` or `diff >= W` with `diff = q_positions - k_positions`
/// (ch04/06_swa, `gpt_with_kv_swa.py`); Hugging Face's `sliding_window` (Gemma 3: 512).
/// Example: `auto m = shaped::sliding_window_mask<window, num_tokens, shaped::key<num_tokens>>(t, t);`
template <Axis Window, Axis Q, Axis K, detail::extent_number... N>
bool_mask<mask_meaning::true_masks, Q, K> sliding_window_mask(N... n) {
    static_assert(StaticAxis<Window>, "shaped::sliding_window_mask<Window, Q, K>: the window is a static axis");
    const auto e = extents<Q, K>::checked("sliding_window_mask", n...);
    const std::size_t lq = e.extent(0), lk = e.extent(1);
    if (lk < lq)
        throw shape_error("sliding_window_mask<Window, Q, K>", "at least as many keys as queries",
                          std::to_string(lq) + " queries and " + std::to_string(lk) + " keys");
    tensor<bool, Q, K> m(e, uninitialized);
    bool* p = m.data();
    for (std::size_t i = 0; i < lq; ++i) {
        const std::size_t pos = lk - lq + i;
        for (std::size_t j = 0; j < lk; ++j) p[i * lk + j] = j > pos || pos - j >= Window::extent;
    }
    return {std::move(m)};
}

}  // namespace shaped

#endif
