#ifndef SHAPED_NN_GROUPED_QUERY_ATTENTION_HPP
#define SHAPED_NN_GROUPED_QUERY_ATTENTION_HPP

/// \file
/// `nn::grouped_query_attention`: the attention of Llama 3, Qwen3 and Gemma 3, fewer key/value heads than
/// query heads, with RoPE, optional QK-norm and a grouped KV cache.

#include <cmath>
#include <cstddef>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../ops/scaled_dot_product_attention.hpp"
#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "kv_cache.hpp"
#include "linear.hpp"
#include "parameters.hpp"
#include "rms_norm.hpp"
#include "rope.hpp"
#include "self_attention.hpp"

namespace shaped::nn {

namespace detail {
// The window axis of a module with one; a placeholder where `W` is void (never used then).
template <class W>
struct window_or_t {
    using type = W;
};
template <>
struct window_or_t<void> {
    using type = axis<"no_window", 1>;
};
template <class W>
using window_or = typename window_or_t<W>::type;
}  // namespace detail

/// Causal self-attention whose query heads share key/value heads in groups: `group_size = num_heads /
/// num_kv_heads` query heads read one key/value head (one key/value head in all is multi-query attention).
///
/// Shapes: the call maps `(batch, num_tokens, DIn)` to `(batch, num_tokens, DIn)`; `batch` and `num_tokens`
/// may be run-time axes, `num_tokens` declared within `ContextLength`. `NumHeads` must be declared as the
/// key/value heads times the group, key/value heads outermost:
/// `struct num_heads : shaped::product<"num_heads", num_kv_heads, group_size> {};`, so that query head `h`
/// reads key/value head `h / group_size`, the order of Hugging Face's checkpoints and of the book's
/// `keys.repeat_interleave(group_size, dim=1)`; keys tiled with `repeat` instead do not line up with such
/// queries, in `matmul` or in `scaled_dot_product_attention`, and fail to compile. `HeadDim` is its own axis,
/// not `DIn / NumHeads` (Qwen3: 16 heads of 128 on a width of 1024). Inside: `W_query` is `DIn → d_out`
/// (`d_out = NumHeads * HeadDim`), `W_key` and `W_value` `DIn → kv_dim` (`NumKvHeads * HeadDim`), `out_proj`
/// `d_out → DIn`; queries `(batch, NumHeads, num_tokens, rotated<HeadDim, Layout>)`, keys `(batch,
/// NumKvHeads, key<num_tokens>, rotated<HeadDim, Layout>)`, values on `HeadDim`. Element type: float; the
/// four projections' weights `Weight`, float or `bfloat16` (kept in BF16, see `nn::linear`).
/// Errors: compile time, a run-time `DIn`, `NumHeads`, `NumKvHeads`, `HeadDim` or `ContextLength`; `NumHeads`
/// not declared as `NumKvHeads` times a group; an input that is not `(batch, num_tokens, DIn)` with
/// `num_tokens` within `ContextLength`; a RoPE table of another head axis or layout; a `Window` that is not
/// a static axis. Thrown: `shape_error` from the RoPE table (positions past its end) and from the cache (more
/// than `ContextLength` tokens or positions, or another batch than it holds).
/// `Window` (an axis, default `void`: none) makes it sliding-window attention, see `sliding_window_attention`:
/// causal attention within the last `Window::extent` positions and a `sliding_window_cache`.
/// Source: the book's `GroupedQueryAttention` (rasbt/LLMs-from-scratch ch04/04_gqa; with `head_dim` and
/// `qk_norm` as in ch05/11_qwen3 and pkg/llms_from_scratch/qwen3.py): W_query, W_key, W_value, out_proj
/// without biases (`qkv_bias` adds them to the first three), q_norm and k_norm (RMSNorm over `head_dim`,
/// eps 1e-6) under `qk_norm`; forward: the projections split into heads, the norms, RoPE, causal softmax
/// attention over `sqrt(head_dim)` (`scaling`, Gemma 3's `query_pre_attn_scalar ** -0.5` where it is set;
/// `QkNormForm` is the QK-norms' form, `rms_form::one_plus_scale` in Gemma 3). Here the attention runs on the fused kernel of
/// `scaled_dot_product_attention`, which reads each key/value head for its group in place (PyTorch's
/// `enable_gqa=True`) instead of expanding them: the book's numbers to float rounding (≤ 1e-5 in the tests).
/// The layers are drawn in the book's order: W_query, W_key, W_value, out_proj.
/// Example: `shaped::nn::grouped_query_attention<emb_dim, num_heads, num_kv_heads, head_dim, context_length> att(true);`
///          `auto y = att(x, rope);`
template <Axis DIn, Axis NumHeads, Axis NumKvHeads, Axis HeadDim, Axis ContextLength,
          rope_layout Layout = rope_layout::split_halves, class Window = void, rms_form QkNormForm = rms_form::scale,
          class Weight = float>
class grouped_query_attention {
    static_assert(StaticAxis<DIn> && StaticAxis<NumHeads> && StaticAxis<NumKvHeads> && StaticAxis<HeadDim> &&
                      StaticAxis<ContextLength>,
                  "shaped::nn::grouped_query_attention: d_in, num_heads, num_kv_heads, head_dim and context_length "
                  "must be static axes; only batch and num_tokens may be known at run time");
    static constexpr bool grouped =
        std::is_same_v<NumHeads, NumKvHeads> || shaped::detail::groups_of<NumHeads, NumKvHeads>();
    static_assert(diag::expect<grouped, diag::sized<NumHeads, NumHeads::bound>, diag::sized<NumKvHeads, NumKvHeads::bound>>,
                  "shaped::nn::grouped_query_attention: num_heads must be declared as the key/value heads times the "
                  "group, key/value heads outermost: struct num_heads : shaped::product<\"num_heads\", num_kv_heads, "
                  "group_size> {}; (query head h reads key/value head h / group_size, as Hugging Face's checkpoints "
                  "and the book's repeat_interleave order them)");
    static_assert(std::is_void_v<Window> || StaticAxis<Window>,
                  "shaped::nn::grouped_query_attention: the sliding window is a static axis (or void for none)");

public:
    /// The query heads, `NumKvHeads * group_size`.
    using num_heads = NumHeads;
    /// The key/value heads.
    using num_kv_heads = NumKvHeads;
    /// The width of one head.
    using head_dim = HeadDim;
    /// Query heads per key/value head.
    static constexpr std::size_t group_size = NumHeads::extent / NumKvHeads::extent;
    /// The queries' width, `num_heads * head_dim` (the book's `self.d_out`).
    struct d_out : product<"d_out", NumHeads, HeadDim> {};
    /// The keys' and values' width, `num_kv_heads * head_dim`.
    struct kv_dim : product<"kv_dim", NumKvHeads, HeadDim> {};
    /// The RoPE table the call takes: `rope<ContextLength, HeadDim, Layout>`, one per model.
    using rope_type = rope<ContextLength, HeadDim, Layout>;

    /// `linear<DIn, d_out>`, no bias unless `qkv_bias`.
    linear<DIn, d_out, float, Weight> W_query;
    /// `linear<DIn, kv_dim>`, as `W_query`.
    linear<DIn, kv_dim, float, Weight> W_key;
    /// `linear<DIn, kv_dim>`, as `W_query`.
    linear<DIn, kv_dim, float, Weight> W_value;
    /// `linear<d_out, DIn>`, no bias.
    linear<d_out, DIn, float, Weight> out_proj;
    /// QK-norm: RMSNorm over `head_dim` of each query head, before RoPE; present under `qk_norm`. Its form is
    /// `QkNormForm` (Gemma 3's is `rms_form::one_plus_scale`).
    std::optional<rms_norm<HeadDim, QkNormForm>> q_norm;
    /// The same for each key head.
    std::optional<rms_norm<HeadDim, QkNormForm>> k_norm;
    /// The factor of the scores, the book's `self.scaling`: `head_dim ** -0.5`, or Gemma 3's
    /// `query_pre_attn_scalar ** -0.5` (set by `nn::gemma_model`'s blocks).
    double scaling = 1.0 / std::sqrt(static_cast<double>(HeadDim::extent));
    /// The sliding window (an axis of `Window::extent` keys), or `void` for full causal attention.
    using window = Window;
    /// The cache of the `use_cache` call: `kv_cache` of every token, or with a window `sliding_window_cache`
    /// of the last `Window` tokens; `num_kv_heads` of rotated keys and values.
    using cache_type = std::conditional_t<std::is_void_v<Window>,
                                          kv_cache<NumKvHeads, HeadDim, ContextLength, rotated<HeadDim, Layout>>,
                                          sliding_window_cache<NumKvHeads, HeadDim, detail::window_or<Window>,
                                                               ContextLength, rotated<HeadDim, Layout>>>;
    /// The rotated keys and the values of the tokens seen with `use_cache`.
    cache_type cache;

    /// Draws W_query, W_key, W_value and out_proj from `gen`, in that order (PyTorch's `nn.Linear` init);
    /// `qk_norm` adds q_norm and k_norm (ones), `qkv_bias` biases on the first three projections.
    explicit grouped_query_attention(bool qk_norm = false, bool qkv_bias = false,
                                     torch::generator& gen = torch::default_generator())
        : W_query(gen, qkv_bias), W_key(gen, qkv_bias), W_value(gen, qkv_bias), out_proj(gen, false) {
        if (qk_norm) {
            q_norm.emplace();
            k_norm.emplace();
        }
    }
    /// Allocates the projections without drawing them, for weights that will be loaded.
    grouped_query_attention(skip_init_t, bool qk_norm = false, bool qkv_bias = false)
        : W_query(skip_init, qkv_bias), W_key(skip_init, qkv_bias), W_value(skip_init, qkv_bias), out_proj(skip_init, false) {
        if (qk_norm) {
            q_norm.emplace();
            k_norm.emplace();
        }
    }

    /// The forward pass, the book's `forward(x, mask, cos, sin)` with the causal mask: `(batch, num_tokens,
    /// DIn)` to `(batch, num_tokens, DIn)`, the tokens at positions 0, 1, ... of `rope`'s table.
    template <class L, Axis... X>
    auto operator()(const basic_tensor<float, L, X...>& x, const rope_type& rope) const {
        constexpr bool ok = grouped && detail::input_ok<3, DIn, ContextLength, X...>();
        return diag::checked<ok>([&]<class B, class T, class E>(const basic_tensor<float, L, B, T, E>& x) {
            auto [queries, keys, values] = heads<key<T>>(x, rope, 0);
            return out_proj(attend<B, T>(queries, keys, values, scaling));
        }, x);
    }

    /// The forward pass with the KV cache (the book's `forward(x, mask, cos, sin, start_pos, cache)`): the new
    /// tokens, at positions `cache.size()`, `cache.size() + 1`, ..., are rotated there, their keys and values
    /// join the cache, and their queries meet every cached key.
    /// Shapes and errors: as the other call. Thrown besides: `shape_error` from the cache.
    template <class L, Axis... X>
    auto operator()(const basic_tensor<float, L, X...>& x, const rope_type& rope, use_cache_t) {
        constexpr bool ok = grouped && detail::input_ok<3, DIn, ContextLength, X...>();
        return diag::checked<ok>([&]<class B, class T, class E>(const basic_tensor<float, L, B, T, E>& x) {
            auto [queries, keys_new, values_new] = heads<T>(x, rope, cache.size());
            auto [keys, values] = cache.append(keys_new, values_new);  // (b, num_kv_heads, cached<num_tokens>, ...)
            return out_proj(attend<B, T>(queries, keys, values, scaling));
        }, x);
    }

    /// Empties the KV cache.
    void reset_cache() noexcept { cache.reset(); }

    /// The parameter list, from which nn::for_each_parameter, io::load_state_dict and parameter_count follow,
    /// under the book's `state_dict()` names: `W_query.weight`, `W_key.weight`, `W_value.weight` (and their
    /// biases under `qkv_bias`), `out_proj.weight`, then `q_norm.scale` and `k_norm.scale` under `qk_norm`.
    static constexpr auto parameters() {
        return parameter_list(submodule("W_query", &grouped_query_attention::W_query),
                              submodule("W_key", &grouped_query_attention::W_key),
                              submodule("W_value", &grouped_query_attention::W_value),
                              submodule("out_proj", &grouped_query_attention::out_proj),
                              submodule("q_norm", &grouped_query_attention::q_norm),
                              submodule("k_norm", &grouped_query_attention::k_norm));
    }

private:
    // Causal attention (within the window, if any) of the heads, merged back: `(b, num_tokens, d_out)`.
    template <class B, class T, class Q, class K, class V>
    static auto attend(const Q& queries, const K& keys, const V& values, double scale) {
        auto context = [&] {
            if constexpr (std::is_void_v<Window>)
                return scaled_dot_product_attention(queries, keys, values, is_causal, attention_scale{scale});
            else
                return scaled_dot_product_attention(queries, keys, values, is_causal, sliding_window<Window>,
                                                    attention_scale{scale});
        }();
        // context.transpose(1, 2).reshape(b, num_tokens, d_out)
        return std::move(context).template transpose<1, 2>().contiguous().template view<B, T, d_out>();
    }

    // The projections split into heads, `(b, heads, tokens, head_dim)`, normed under qk_norm, queries and keys
    // rotated at `offset`; the keys and values along `KeyTokens`.
    template <class KeyTokens, class L, Axis B, Axis T>
    auto heads(const basic_tensor<float, L, B, T, DIn>& x, const rope_type& rope, std::size_t offset) const {
        auto queries = W_query(x).template view<B, T, NumHeads, HeadDim>().template transpose<1, 2>();
        auto keys = W_key(x).template view<B, T, NumKvHeads, HeadDim>().template transpose<1, 2>();
        auto values = W_value(x).template view<B, T, NumKvHeads, HeadDim>().template transpose<1, 2>();
        auto q = q_norm ? rope((*q_norm)(queries), offset) : rope(queries, offset);
        auto k = k_norm ? rope((*k_norm)(keys), offset) : rope(keys, offset);
        return std::tuple{std::move(q),
                          std::move(k).template rename<B, NumKvHeads, KeyTokens, rotated<HeadDim, Layout>>(),
                          std::move(values).template rename<B, NumKvHeads, KeyTokens, HeadDim>()};
    }
};

/// Grouped-query attention within a sliding window of `Window::extent` keys (Gemma 3's local layers, the
/// book's ch04/06_swa): `grouped_query_attention` with `Window`, query `i` attending to positions `i - W + 1`
/// to `i`, and a `sliding_window_cache` that holds the last `W` tokens however long the sequence.
///
/// Shapes, errors and source: as `grouped_query_attention`; the cache's bound (`ContextLength`) counts
/// positions, not tokens held. Example: `nn::sliding_window_attention<emb_dim, num_heads, num_kv_heads,
/// head_dim, context_length, sliding_window> local;`
template <Axis DIn, Axis NumHeads, Axis NumKvHeads, Axis HeadDim, Axis ContextLength, Axis Window,
          rope_layout Layout = rope_layout::split_halves>
using sliding_window_attention = grouped_query_attention<DIn, NumHeads, NumKvHeads, HeadDim, ContextLength, Layout, Window>;

}  // namespace shaped::nn

#endif
