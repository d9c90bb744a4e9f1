#ifndef SHAPED_OPS_SCALED_DOT_PRODUCT_ATTENTION_HPP
#define SHAPED_OPS_SCALED_DOT_PRODUCT_ATTENTION_HPP

/// \file
/// `scaled_dot_product_attention`: PyTorch 2's fused `softmax(q kᵀ / sqrt(head_dim)) v`, with its shapes
/// checked as `matmul` and `softmax` check the book's steps, on a flash-attention kernel.

#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../detail/flash_attention.hpp"
#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor.hpp"
#include "attention_mask.hpp"

namespace shaped {

/// Tag for causal attention, PyTorch's `is_causal=True`: query `i` attends to keys `0..i` (in a KV cache,
/// to every cached key up to its own position).
struct is_causal_t {
    explicit is_causal_t() = default;
};
/// `shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal)`.
inline constexpr is_causal_t is_causal{};

/// Tag for causal attention within a sliding window of `Window::extent` keys: query `i` at position `p`
/// attends to the keys at positions `p - Window::extent + 1` to `p`, its own and the `Window::extent - 1`
/// before it (left-inclusive, as the book's mask, `(diff < 0) or (diff >= W)` in ch04/06_swa, and Hugging Face's
/// `sliding_window` define it: a window of 512 sees 512 keys). The fused kernel never reads the tiles of keys
/// outside the window.
///
/// Shapes: `Window` is a static axis, e.g. `struct sliding_window : shaped::axis<"sliding_window", 512> {};`.
/// Errors: compile time, a run-time `Window`. Source: ch04/06_swa (`sliding_window_size`); Gemma 3's
/// `sliding_window`.
template <Axis Window>
struct sliding_window_t {
    static_assert(StaticAxis<Window>, "shaped::sliding_window<Window>: the window is a static axis");
    /// The window's axis.
    using axis = Window;
};
/// `shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal, shaped::sliding_window<window>)`.
template <Axis Window>
inline constexpr sliding_window_t<Window> sliding_window{};

/// The factor the scores `q kᵀ` are multiplied by, in place of `1 / sqrt(head_dim)`: PyTorch 2.1's `scale=`
/// keyword. Gemma 3 scales by `query_pre_attn_scalar ** -0.5`, which need not be its head width.
/// Example: `shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal, shaped::attention_scale{0.0625})`.
struct attention_scale {
    double value;  ///< the factor; any finite number (0 makes every key weigh the same)
};

namespace detail {

// An operand as the kernel reads it: in place when its last axis is adjacent in memory (contiguous
// tensors, and the (b, num_heads, num_tokens, head_dim) transposes of the book's form), else a copy.
template <std::size_t NB, class X>
struct sdpa_operand {
    typename X::storage_type copy;
    flash::matrix_ref<NB> ref;
    explicit sdpa_operand(const X& x) {
        constexpr std::size_t n = NB + 2;
        auto st = x.stride();
        const float* p = x.data();
        if (st[n - 1] != 1 && x.shape.extent(n - 1) != 1) {
            copy = x.storage();
            p = copy.data();
            st = row_major_strides<n>(x.shape.sizes());
        }
        ref.data = p;
        for (std::size_t a = 0; a < NB; ++a) ref.batch_stride[a] = st[a];
        ref.row_stride = st[n - 2];
    }
};

template <class Value, class Leading, class Last>
struct sdpa_result;
template <class Value, class... Leading, class Last>
struct sdpa_result<Value, axis_pack<Leading...>, Last> {
    using type = tensor<Value, Leading..., Last>;
};

template <class K, class T>
inline constexpr bool windowed_of = false;
template <class T, class W>
inline constexpr bool windowed_of<windowed<T, W>, T> = true;
template <class K, class T>
inline constexpr bool keys_of_queries =
    same_axis_v<K, T> || std::is_same_v<K, key<T>> || std::is_same_v<K, cached<T>> || windowed_of<K, T>;

[[noreturn, gnu::noinline, gnu::cold]] inline void sdpa_causal_extents(const std::string& q_shape,
                                                                       const std::string& k_shape, bool cache) {
    throw shape_error("scaled_dot_product_attention(q, k, v, is_causal)",
                      cache ? "at least as many cached keys as queries (the cache holds the new tokens too)"
                            : "as many keys as queries (key<num_tokens> is the queries' own tokens)",
                      "q " + q_shape + " and k " + k_shape);
}

[[noreturn, gnu::noinline, gnu::cold]] inline void sdpa_dropout(double p) {
    throw std::invalid_argument(
        "shaped::scaled_dot_product_attention: dropout_p = " + std::to_string(p) +
        ": the fused kernel has no dropout on the attention weights; train with nn::multi_head_attention (the book's "
        "form), or pass 0 (evaluation)");
}

// Every rule of the op, in the order its diagnostics fire; `ok` guards the result so errors do not cascade.
template <bool Causal, class Value, class QA, class KA, class VA>
struct sdpa_rules;
template <bool Causal, class Value, class... Q, class... K, class... V>
struct sdpa_rules<Causal, Value, axis_pack<Q...>, axis_pack<K...>, axis_pack<V...>> {
    static constexpr std::size_t n = sizeof...(Q);
    static constexpr bool rank_ok = n >= 2 && sizeof...(K) == n && sizeof...(V) == n;
    static constexpr bool value_ok = std::is_same_v<Value, float>;
    static constexpr bool head_ok = [] {
        if constexpr (rank_ok) return same_axis_v<axis_at_t<n - 1, Q...>, axis_at_t<n - 1, K...>>;
        else return false;
    }();
    static constexpr bool keys_ok = [] {
        if constexpr (rank_ok) return same_axis_v<axis_at_t<n - 2, K...>, axis_at_t<n - 2, V...>>;
        else return false;
    }();
    // Grouped-query attention: the queries' last batch axis (their heads) groups k's and v's (PyTorch 2.5's
    // enable_gqa=True), e.g. num_heads = product<"num_heads", num_kv_heads, group_size> against num_kv_heads.
    static constexpr bool grouped = [] {
        if constexpr (rank_ok && n >= 3)
            return groups_of<axis_at_t<n - 3, Q...>, axis_at_t<n - 3, K...>>();
        else return false;
    }();
    static constexpr bool batch_ok = [] {
        if constexpr (rank_ok)
            return []<std::size_t... I>(std::index_sequence<I...>) {
                return (((same_axis_v<axis_at_t<I, Q...>, axis_at_t<I, K...>> || (grouped && I + 3 == n)) &&
                         same_axis_v<axis_at_t<I, K...>, axis_at_t<I, V...>>) && ...);
            }(std::make_index_sequence<n - 2>{});
        else return false;
    }();
    // The hint for heads that do not line up: the same factors in another order (keys tiled with `repeat`).
    static constexpr bool heads_reordered = [] {
        if constexpr (rank_ok && n >= 3 && !batch_ok)
            return mismatch_of<axis_at_t<n - 3, Q...>, axis_at_t<n - 3, K...>>() == mismatch::factors_reordered;
        else return false;
    }();
    static constexpr bool group_static = [] {
        if constexpr (grouped) return StaticAxis<axis_at_t<n - 3, Q...>> && StaticAxis<axis_at_t<n - 3, K...>>;
        else return true;
    }();
    static constexpr bool causal_ok = [] {
        if constexpr (rank_ok && Causal) return keys_of_queries<axis_at_t<n - 2, K...>, axis_at_t<n - 2, Q...>>;
        else return true;
    }();
};

// No attn_mask.
struct no_mask {};
// A mask tensor's axes, as a pack and as a diagnostic shows them.
template <class T>
struct mask_axes_of;
template <class V, class L, class... A>
struct mask_axes_of<basic_tensor<V, L, A...>> {
    using pack = axis_pack<A...>;
    using shown = described<diag::mask_axes, A...>;
};

// The rules of an attn_mask (MA...) on the scores (Q's batch axes and tokens, then K's key axis): aligned from
// the right, the same axes or `one`; the last axis the key axis itself.
template <class Scores, class MaskAxes>
struct mask_rules;
template <class... S, class... MA>
struct mask_rules<axis_pack<S...>, axis_pack<MA...>> {
    static constexpr std::size_t n = sizeof...(S), nm = sizeof...(MA);
    static constexpr bool broadcasts = nm <= n && nm >= 1 && broadcast_lhs<S...>::template first_mismatch<MA...>() < 0;
    static constexpr bool keys_last = [] {
        if constexpr (nm >= 1) return std::is_same_v<axis_at_t<nm - 1, MA...>, axis_at_t<n - 1, S...>>;
        else return false;
    }();
};
template <class Q, class Key>
struct scores_axes;
template <class... Q, class Key>
struct scores_axes<axis_pack<Q...>, Key> {
    using type = axis_pack<Q..., Key>;
};

[[noreturn, gnu::noinline, gnu::cold]] inline void sdpa_mask_extents(const std::string& scores, const std::string& mask) {
    throw shape_error("scaled_dot_product_attention(q, k, v, attn_mask)",
                      "a mask that broadcasts to the scores " + scores, mask);
}

template <bool Causal, std::size_t Window = 0, class Value, class LQ, class LK, class LV, Axis... Q, Axis... K,
          Axis... V, class Mask = no_mask>
auto sdpa(const basic_tensor<Value, LQ, Q...>& q, const basic_tensor<Value, LK, K...>& k,
          const basic_tensor<Value, LV, V...>& v, double dropout_p, const Mask& attn_mask = {},
          std::optional<attention_scale> scale = std::nullopt) {
    using rules = sdpa_rules<Causal, Value, axis_pack<Q...>, axis_pack<K...>, axis_pack<V...>>;
    static_assert(diag::expect<rules::value_ok, Value>,
                  "shaped::scaled_dot_product_attention(q, k, v): elements must be float");
    static_assert(diag::expect<rules::rank_ok, described<diag::query_axes, Q...>, described<diag::key_axes, K...>,
                               described<diag::value_axes, V...>>,
                  "shaped::scaled_dot_product_attention(q, k, v): q, k and v must have the same rank, at least 2: "
                  "(..., num_tokens, head_dim) each");
    if constexpr (rules::rank_ok && rules::value_ok) {
        constexpr std::size_t n = sizeof...(Q);
        static_assert(diag::expect<rules::head_ok, described<diag::query_axes, Q...>, described<diag::key_axes, K...>>,
                      "shaped::scaled_dot_product_attention(q, k, v): q's last axis and k's last axis must be the "
                      "same axis (head_dim): the kernel computes q @ k.transpose(-2, -1) itself, so pass k as "
                      "(..., key<num_tokens>, head_dim), not transposed");
        static_assert(diag::expect<!rules::head_ok || rules::keys_ok, described<diag::key_axes, K...>,
                                   described<diag::value_axes, V...>>,
                      "shaped::scaled_dot_product_attention(q, k, v): k and v must run along the same key axis (their "
                      "second-to-last): one value per key");
        static_assert(diag::expect<!rules::head_ok || !rules::keys_ok || rules::batch_ok || !rules::heads_reordered,
                                   described<diag::query_axes, Q...>, described<diag::key_axes, K...>,
                                   described<diag::value_axes, V...>>,
                      "shaped::scaled_dot_product_attention(q, k, v): q's heads and k's are the same factors in "
                      "another order: keys expanded with repeat (tiled) where the query heads are grouped by "
                      "key/value head; pass the keys and values unexpanded (num_kv_heads), or expand them with "
                      "repeat_interleave<group_size, 1>");
        static_assert(diag::expect<!rules::head_ok || !rules::keys_ok || rules::batch_ok || rules::heads_reordered,
                                   described<diag::query_axes, Q...>, described<diag::key_axes, K...>,
                                   described<diag::value_axes, V...>>,
                      "shaped::scaled_dot_product_attention(q, k, v): q, k and v must have the same batch axes (all "
                      "but the last two), in the same order, except that q's heads may group k's and v's "
                      "(num_heads = product<\"num_heads\", num_kv_heads, group_size>, key/value heads outermost); "
                      "transpose one of them so that they line up");
        static_assert(rules::group_static,
                      "shaped::scaled_dot_product_attention(q, k, v): grouped heads must be static axes");
        constexpr bool mask_ok = [] {
            if constexpr (std::is_same_v<Mask, no_mask>) {
                return true;
            } else {
                using scores = typename scores_axes<decltype(sublist<0, Q...>(std::make_index_sequence<n - 1>{})),
                                                    axis_at_t<n - 2, K...>>::type;
                using mr = mask_rules<scores, typename mask_axes_of<Mask>::pack>;
                static_assert(diag::expect<mr::broadcasts && mr::keys_last, described<diag::query_axes, Q...>,
                                           described<diag::key_axes, K...>, typename mask_axes_of<Mask>::shown>,
                              "shaped::scaled_dot_product_attention(q, k, v, attn_mask): the mask's axes, aligned "
                              "from the right, must be the scores' (q's batch axes, q's tokens, k's key axis) or "
                              "shaped::one, and it must end on k's key axis: e.g. (num_tokens, key<num_tokens>), or "
                              "(batch, one, one, key<num_tokens>) for padding");
                return mr::broadcasts && mr::keys_last;
            }
        }();
        static_assert(diag::expect<!(rules::head_ok && rules::keys_ok && rules::batch_ok) || rules::causal_ok,
                                   described<diag::query_axes, axis_at_t<n - 2, Q...>>,
                                   described<diag::key_axes, axis_at_t<n - 2, K...>>>,
                      "shaped::scaled_dot_product_attention(q, k, v, is_causal): a causal mask orders the keys by the "
                      "queries' positions, so the keys must lie along key<num_tokens> (or cached<num_tokens>) of the "
                      "queries' num_tokens");
        // Keys from a sliding-window cache hold only what its window sees: attend within that window.
        constexpr bool window_ok = [] {
            if constexpr (requires { typename axis_at_t<n - 2, K...>::window; })
                return Causal && Window == axis_at_t<n - 2, K...>::window::extent;
            else
                return true;
        }();
        static_assert(diag::expect<!(rules::head_ok && rules::keys_ok && rules::batch_ok && rules::causal_ok) || window_ok,
                                   described<diag::key_axes, axis_at_t<n - 2, K...>>, diag::attention_window<Window>>,
                      "shaped::scaled_dot_product_attention(q, k, v): the keys come from a sliding-window cache, which "
                      "keeps only the tokens its window sees: attend with is_causal and sliding_window<W> of the "
                      "cache's own window W (windowed<num_tokens, W>)");
        if constexpr (rules::head_ok && rules::keys_ok && rules::batch_ok && rules::causal_ok && rules::group_static &&
                      mask_ok && window_ok) {
            constexpr std::size_t nb = n - 2;
            using tk = axis_at_t<n - 2, K...>;
            using result_t = typename sdpa_result<Value, decltype(sublist<0, Q...>(std::make_index_sequence<n - 1>{})),
                                                  axis_at_t<n - 1, V...>>::type;
            if (dropout_p != 0.0) sdpa_dropout(dropout_p);
            // Keys along the queries' own token axis (self-attention without a mask) are that axis: one
            // extent, as `a + b` requires of it; key<num_tokens> or cached<num_tokens> may differ.
            constexpr bool same_tokens = !Causal && std::is_same_v<tk, axis_at_t<n - 2, Q...>>;
            // Grouped heads are static (checked above); every other batch axis has one extent on q and k.
            constexpr std::size_t shared_batch = rules::grouped ? nb - 1 : nb;
            constexpr auto qk_pairs = [] {
                axis_pairs<shared_batch + 1 + (same_tokens ? 1 : 0)> p{};
                for (std::size_t i = 0; i < shared_batch; ++i) p[i] = {i, i};
                p[shared_batch] = {n - 1, n - 1};
                if constexpr (same_tokens) p[shared_batch + 1] = {n - 2, n - 2};
                return p;
            }();
            constexpr auto kv_pairs = [] {
                axis_pairs<nb + 1> p{};
                for (std::size_t i = 0; i <= nb; ++i) p[i] = {i, i};
                return p;
            }();
            constexpr std::string_view op = "scaled_dot_product_attention(q, k, v)";
            check_meets<qk_pairs>(op, "q", q.shape, "k", k.shape);
            check_meets<kv_pairs>(op, "k", k.shape, "v", v.shape);
            constexpr auto sources = [] {
                std::array<axis_source, n> s{};
                for (std::size_t i = 0; i < n - 1; ++i) s[i] = {0, i};
                s[n - 1] = {1, n - 1};
                return s;
            }();
            const auto e = take_extents<typename result_t::extents_type, sources>(q.shape, v.shape);
            flash::problem<nb> pb;
            pb.lq = q.shape.extent(n - 2);
            pb.lk = k.shape.extent(n - 2);
            pb.d = q.shape.extent(n - 1);
            pb.dv = v.shape.extent(n - 1);
            for (std::size_t a = 0; a < nb; ++a) pb.batch[a] = q.shape.extent(a);
            if constexpr (rules::grouped) pb.group = axis_at_t<nb - 1, Q...>::extent / axis_at_t<nb - 1, K...>::extent;
            pb.scale = static_cast<float>(scale ? scale->value : 1.0 / std::sqrt(static_cast<double>(pb.d)));
            pb.window = Window;
            if constexpr (Causal) {
                pb.causal = true;
                if constexpr (is_cached<tk>) {
                    if (pb.lk < pb.lq) sdpa_causal_extents(q.shape.text(), k.shape.text(), true);
                } else {
                    if (pb.lk != pb.lq) sdpa_causal_extents(q.shape.text(), k.shape.text(), false);
                }
                pb.offset = pb.lk - pb.lq;
            }
            const sdpa_operand<nb, basic_tensor<Value, LQ, Q...>> oq(q);
            const sdpa_operand<nb, basic_tensor<Value, LK, K...>> ok(k);
            const sdpa_operand<nb, basic_tensor<Value, LV, V...>> ov(v);
            pb.q = oq.ref;
            pb.k = ok.ref;
            pb.v = ov.ref;
            // The additive mask, row-major, in the scores' index space: stride 0 where it broadcasts.
            [[maybe_unused]] std::vector<float> bias;
            if constexpr (!std::is_same_v<Mask, no_mask>) {
                constexpr std::size_t nm = Mask::rank;
                std::array<std::size_t, n> scores_extent{};
                for (std::size_t a = 0; a + 1 < n; ++a) scores_extent[a] = q.shape.extent(a);
                scores_extent[n - 1] = k.shape.extent(n - 2);
                std::array<std::size_t, n> st{};
                std::size_t stride = 1;
                for (std::size_t m = nm; m-- > 0;) {
                    const std::size_t a = n - nm + m, me = attn_mask.shape.extent(m);
                    if (me != 1 || scores_extent[a] == 1) {
                        if (me != scores_extent[a]) {
                            std::string scores = "(";
                            for (std::size_t i = 0; i < n; ++i) scores += (i ? ", " : "") + std::to_string(scores_extent[i]);
                            sdpa_mask_extents(scores + ")", attn_mask.shape.text());
                        }
                        st[a] = stride;
                    }
                    stride *= me;
                }
                const auto& values = attn_mask.storage();  // row-major (a copy for a strided mask)
                bias.assign(values.data(), values.data() + attn_mask.numel());
                pb.bias.data = bias.data();
                for (std::size_t a = 0; a < nb; ++a) pb.bias.batch_stride[a] = st[a];
                pb.bias.row_stride = st[n - 2];
            }
            result_t out(e, uninitialized);
            const auto os = out.stride();
            pb.out.data = out.data();
            for (std::size_t a = 0; a < nb; ++a) pb.out.batch_stride[a] = os[a];
            pb.out.row_stride = os[n - 2];
            flash::run(pb);
            return out;
        } else {
            return diag::failed_shape_check{};
        }
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace detail

namespace detail {

// The causal attention of a combined projection's heads, `qkv` permuted to (qkv_part, b, num_heads,
// num_tokens, head_dim) (the bonus notebook's `queries, keys, values = qkv`): the three slices are read in
// place, and the result is written in (b, num_tokens, num_heads, head_dim) order, where
// `.transpose(1, 2).contiguous()` would put it. For the modules, whose types have been checked.
template <class L, Axis P, Axis B, Axis H, Axis T, Axis D>
tensor<float, B, T, H, D> sdpa_combined_causal(const basic_tensor<float, L, P, B, H, T, D>& qkv) {
    static_assert(StaticAxis<P> && P::extent == 3 && StaticAxis<H> && StaticAxis<D>);
    using result_t = tensor<float, B, T, H, D>;
    const auto e = take_extents<typename result_t::extents_type,
                                std::array<axis_source, 4>{axis_source{0, 1}, axis_source{0, 3}, axis_source{},
                                                           axis_source{}}>(qkv.shape);
    result_t out(e, uninitialized);
    auto st = qkv.stride();
    typename basic_tensor<float, L, P, B, H, T, D>::storage_type copy;
    const float* base = qkv.data();
    if (st[4] != 1 && D::extent != 1) {
        copy = qkv.storage();
        base = copy.data();
        st = row_major_strides<5>(qkv.shape.sizes());
    }
    flash::problem<2> pb;
    pb.batch = {qkv.shape.extent(1), H::extent};
    pb.lq = pb.lk = qkv.shape.extent(3);
    pb.d = pb.dv = D::extent;
    pb.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D::extent)));
    pb.causal = true;
    const flash::matrix_ref<2> slice{base, {st[1], st[2]}, st[3]};
    pb.q = pb.k = pb.v = slice;
    pb.k.data = base + st[0];
    pb.v.data = base + 2 * st[0];
    pb.out = {out.data(), {pb.lq * H::extent * D::extent, D::extent}, H::extent * D::extent};
    flash::run(pb);
    return out;
}

}  // namespace detail

/// Attention in one fused step: `softmax(q @ k.transpose(-2, -1) / sqrt(head_dim)) @ v`, causal with
/// `is_causal`, without ever storing the (num_tokens × num_tokens) scores.
///
/// Shapes: `q (B..., num_tokens, head_dim)`, `k (B..., K, head_dim)`, `v (B..., K, E)` give
/// `(B..., num_tokens, E)`: the same batch axes `B...` on all three (static or run-time; the book's form has
/// `(batch, num_heads)`), `head_dim` the same axis on q and k, one key axis `K` on k and v (e.g.
/// `key<num_tokens>`). With `is_causal`, `K` must be the queries' `num_tokens`, `key<num_tokens>` or
/// `cached<num_tokens>`; query `i` then sees the keys up to its own position, the last `num_tokens` keys
/// being the queries' own tokens (PyTorch's mask for equal lengths; the KV cache's offset mask for cached
/// keys). Grouped-query attention: q's last batch axis (its heads) may group k's and v's, `num_heads`
/// declared as `product<"num_heads", num_kv_heads, group_size>` against k and v on `num_kv_heads` (PyTorch
/// 2.5's `enable_gqa=True`; one key/value head is multi-query attention): query head `h` meets key/value head
/// `h / group_size`, read in place, never expanded. Any layout: transposed operands whose last axis is
/// adjacent in memory are read in place. Element type: float.
/// Errors: compile time, in this order: another element type; ranks that differ or are below 2; q's and k's
/// last axes differ (k passed transposed, as `matmul` wants it); k's and v's key axes differ; batch axes
/// that differ (and do not group: keys tiled with `repeat` for grouped queries have their own message);
/// grouped heads that are run-time axes; with `is_causal`, keys along an axis that is not the queries' tokens. Thrown: `shape_error`
/// where run-time extents of one axis differ between q, k and v (keys along the queries' own `num_tokens`
/// included: that is one axis, so one extent; cross-attention puts them on `key<num_tokens>`), or, with
/// `is_causal`, for fewer keys than queries (more along `key<num_tokens>`); `std::invalid_argument` for
/// `dropout_p != 0` (the kernel has no dropout: the book's `nn::multi_head_attention` trains with it).
/// Threads: `shaped::num_threads()` (`shaped::set_num_threads`, else `OMP_NUM_THREADS`) from the pool the
/// projections' products use (threads.hpp), over (batch, head, tile of 64 queries), one for small problems. Scratch: about
/// 200 KB per thread at head_dim 64, whatever the length. Numbers: those of the book's steps to float
/// rounding (≤ 1e-5 in the tests: the tiles add in another order and exp is Cephes' polynomial).
/// NaN and infinities: PyTorch's math path over the keys each query sees, on every CPU. A NaN among a query's
/// scores (a NaN in q or in a key it sees, or inf · 0 in q kᵀ) makes its output row NaN; so does a `+inf`
/// score (inf - inf in softmax) and a row whose scores are all `-inf` or that sees no key (softmax of all
/// `-inf`); a `-inf` score weighs 0. NaN and inf in v go through the product: a value's NaN makes NaN that
/// column for every query that sees its key, `+inf` gives `+inf` (NaN beside a `-inf`, or under weight 0:
/// 0 · inf). With `is_causal`, the values of keys a query does not see are not read: PyTorch's math path
/// multiplies them by 0, so that their NaN reaches every query; here a later token never changes an earlier
/// output, with or without a KV cache. A weight below the smallest normal float (a score more than 87.3
/// below its row's maximum) counts as 0.
/// Source: PyTorch 2's `torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)`; the
/// kernel follows FlashAttention (Dao et al., 2022); the book's bonus notebook
/// ch03/02_bonus_efficient-multihead-attention (`MHAPyTorchScaledDotProduct`), ch04/04_gqa for the grouped form.
/// Example: `auto context_vec = shaped::scaled_dot_product_attention(queries, keys, values, shaped::is_causal);`
template <class Value, class LQ, class LK, class LV, Axis... Q, Axis... K, Axis... V>
auto scaled_dot_product_attention(const basic_tensor<Value, LQ, Q...>& q, const basic_tensor<Value, LK, K...>& k,
                                  const basic_tensor<Value, LV, V...>& v, double dropout_p = 0.0) {
    return detail::sdpa<false>(q, k, v, dropout_p);
}
/// The causal form (see above): `is_causal=True`.
template <class Value, class LQ, class LK, class LV, Axis... Q, Axis... K, Axis... V>
auto scaled_dot_product_attention(const basic_tensor<Value, LQ, Q...>& q, const basic_tensor<Value, LK, K...>& k,
                                  const basic_tensor<Value, LV, V...>& v, is_causal_t, double dropout_p = 0.0) {
    return detail::sdpa<true>(q, k, v, dropout_p);
}
/// The causal form within a sliding window (see `sliding_window_t`): query `i` at position `p` attends to the
/// keys at `p - Window::extent + 1` to `p`; the kernel skips the key tiles before the window. Shapes, errors and
/// numbers: as the causal form.
/// Source: the book's ch04/06_swa mask; Gemma 3's local layers.
/// Example: `shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal, shaped::sliding_window<window>);`
template <class Value, class LQ, class LK, class LV, Axis... Q, Axis... K, Axis... V, Axis Window>
auto scaled_dot_product_attention(const basic_tensor<Value, LQ, Q...>& q, const basic_tensor<Value, LK, K...>& k,
                                  const basic_tensor<Value, LV, V...>& v, is_causal_t, sliding_window_t<Window>,
                                  double dropout_p = 0.0) {
    return detail::sdpa<true, Window::extent>(q, k, v, dropout_p);
}
/// The causal form with the scores scaled by `scale.value` instead of `1 / sqrt(head_dim)` (PyTorch 2.1's
/// `scale=`). Shapes, errors and numbers: as the causal form.
/// Source: `scaled_dot_product_attention(q, k, v, is_causal=True, scale=s)`; Gemma 3's `query_pre_attn_scalar`.
template <class Value, class LQ, class LK, class LV, Axis... Q, Axis... K, Axis... V>
auto scaled_dot_product_attention(const basic_tensor<Value, LQ, Q...>& q, const basic_tensor<Value, LK, K...>& k,
                                  const basic_tensor<Value, LV, V...>& v, is_causal_t, attention_scale scale) {
    return detail::sdpa<true>(q, k, v, 0.0, detail::no_mask{}, scale);
}
/// The causal form within a sliding window, with the scores scaled by `scale.value` (see the two above).
/// Source: Gemma 3's local layers (`sliding_window`, `query_pre_attn_scalar`).
template <class Value, class LQ, class LK, class LV, Axis... Q, Axis... K, Axis... V, Axis Window>
auto scaled_dot_product_attention(const basic_tensor<Value, LQ, Q...>& q, const basic_tensor<Value, LK, K...>& k,
                                  const basic_tensor<Value, LV, V...>& v, is_causal_t, sliding_window_t<Window>,
                                  attention_scale scale) {
    return detail::sdpa<true, Window::extent>(q, k, v, 0.0, detail::no_mask{}, scale);
}
/// With an additive `attn_mask`, a float tensor added to the scaled scores before the softmax (`-inf` where a
/// query may not attend), broadcast over the scores `(B..., num_tokens, K)`.
///
/// Shapes: the mask's axes, aligned from the right, are the scores' or `shaped::one`, and it ends on k's key
/// axis `K`. Errors: compile time, as the other forms, and a mask of other axes; a bool tensor (say what
/// `true` means: `shaped::true_attends(mask)`, or the book's mask `m = shaped::true_masks(mask)` negated, `!m`). Thrown:
/// `shape_error` where the mask's run-time extents are not the scores'.
/// Source: `scaled_dot_product_attention(q, k, v, attn_mask=mask)` with a float mask.
template <class Value, class LQ, class LK, class LV, Axis... Q, Axis... K, Axis... V, class M, class LM, Axis... MA>
auto scaled_dot_product_attention(const basic_tensor<Value, LQ, Q...>& q, const basic_tensor<Value, LK, K...>& k,
                                  const basic_tensor<Value, LV, V...>& v, const basic_tensor<M, LM, MA...>& attn_mask,
                                  double dropout_p = 0.0) {
    static_assert(!std::is_same_v<M, bool>,
                  "shaped::scaled_dot_product_attention(q, k, v, attn_mask): a bool mask must say what true means: "
                  "shaped::true_attends(mask) where true lets a query attend (SDPA's meaning), "
                  "!shaped::true_masks(mask) where true masks a key out (the book's triu mask)");
    static_assert(std::is_same_v<M, bool> || std::is_same_v<M, float>,
                  "shaped::scaled_dot_product_attention(q, k, v, attn_mask): an additive mask is a float tensor");
    if constexpr (std::is_same_v<M, float>)
        return detail::sdpa<false>(q, k, v, dropout_p, attn_mask);
    else
        return diag::failed_shape_check{};
}
/// With a boolean `attn_mask` that is `true` where a query may attend to a key (PyTorch's meaning):
/// `shaped::true_attends(mask)`, or `!m` of the book's `true_masks` mask `m`.
///
/// Shapes: as the additive form. Errors: as the additive form; at compile time besides, a `true_masks` mask
/// (the book's, true where a key is masked out: passed as is, every masked key would be the only ones seen,
/// the book's issue #1061). A query that may attend to no key gets NaN, as PyTorch's math path gives.
/// Source: `scaled_dot_product_attention(q, k, v, attn_mask=mask)` with a bool mask.
/// Example: `auto m = shaped::true_masks(causal_mask);  auto y = shaped::scaled_dot_product_attention(q, k, v, !m);`
template <class Value, class LQ, class LK, class LV, Axis... Q, Axis... K, Axis... V, mask_meaning Meaning, Axis... MA>
auto scaled_dot_product_attention(const basic_tensor<Value, LQ, Q...>& q, const basic_tensor<Value, LK, K...>& k,
                                  const basic_tensor<Value, LV, V...>& v, const bool_mask<Meaning, MA...>& attn_mask,
                                  double dropout_p = 0.0) {
    static_assert(diag::expect<Meaning == mask_meaning::true_attends, detail::described<diag::mask_axes, MA...>>,
                  "shaped::scaled_dot_product_attention(q, k, v, attn_mask): this mask is true where a key is masked "
                  "out (true_masks, the book's mask for masked_fill), and attn_mask is true where a query may "
                  "attend: pass !mask");
    if constexpr (Meaning == mask_meaning::true_attends) {
        tensor<float, MA...> additive(attn_mask.values.shape, uninitialized);
        const bool* a = attn_mask.values.data();
        float* b = additive.data();
        for (std::size_t i = 0; i < additive.numel(); ++i) b[i] = a[i] ? 0.0f : -std::numeric_limits<float>::infinity();
        return detail::sdpa<false>(q, k, v, dropout_p, additive);
    } else {
        return diag::failed_shape_check{};
    }
}

}  // namespace shaped

#endif
