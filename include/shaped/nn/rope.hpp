#ifndef SHAPED_NN_ROPE_HPP
#define SHAPED_NN_ROPE_HPP

/// \file
/// `nn::rope<ContextLength, HeadDim, Layout>`: rotary position embeddings, a cos/sin table computed once per
/// model and the rotation of queries and keys by it (Llama, Qwen, Gemma), with Llama 3's frequency smoothing.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../diagnostics.hpp"
#include "../tensor.hpp"
#include "linear.hpp"
#include "parameters.hpp"

namespace shaped::nn {

/// Llama 3's smoothing of the RoPE frequencies for long contexts: wavelengths longer than
/// `original_context_length / low_freq_factor` are divided by `factor`, those shorter than
/// `original_context_length / high_freq_factor` kept, those between interpolated.
/// Source: the book's `compute_rope_params(..., freq_config)` (ch05/07_gpt_to_llama); Hugging Face's
/// `rope_scaling` with `rope_type: "llama3"`. Llama 3.2: factor 32, low 1, high 4, original context 8192.
struct llama3_rope_scaling {
    float factor = 32.0f;                      ///< `rope_scaling.factor`
    float low_freq_factor = 1.0f;              ///< `rope_scaling.low_freq_factor`
    float high_freq_factor = 4.0f;             ///< `rope_scaling.high_freq_factor`
    float original_context_length = 8192.0f;   ///< `rope_scaling.original_max_position_embeddings`
};

/// Rotary position embeddings: the cos/sin table of every position up to `ContextLength`, and the rotation of
/// queries or keys by it.
///
/// Shapes: `cos` and `sin` are `(ContextLength, HeadDim)`. The call maps `(..., num_tokens, HeadDim)` to
/// `(..., num_tokens, rotated<HeadDim, Layout>)`, the tokens at positions `offset`, `offset + 1`, ... (the
/// KV cache's count before them). Queries and keys both go through it, and their product then contracts
/// `rotated<HeadDim, Layout>` with itself: rotating only one side, or the two with different layouts, fails
/// to compile (`shaped::rotated`). Element type: float.
/// Errors: compile time, `HeadDim` odd, an input whose last axis is not `HeadDim`, or whose token axis (the
/// second to last) is static and longer than `ContextLength`. Thrown, `shape_error`, when `offset` plus the
/// tokens pass the table's end (a table shorter than the positions: the book's issue #418, or a cache's
/// offset past the context), naming the positions and the table's length.
/// Source: the book's `compute_rope_params(head_dim, theta_base, context_length, freq_config)` and
/// `apply_rope(x, cos, sin, offset)` (ch05/07_gpt_to_llama, ch05/11_qwen3, ch05/12_gemma3), computed in
/// float as they compute it: `inv_freq = 1 / theta^(2i / head_dim)`, the angles `position * inv_freq`, then
/// `x * cos + rotate_half(x) * sin`. `rope_layout::interleaved` pairs `2i` with `2i + 1` (Meta's checkpoints).
/// Gemma 3's local and global layers use two tables of their own bases (10,000 and 1,000,000).
/// Example: `shaped::nn::rope<context_length, head_dim> rope(500000.0, shaped::nn::llama3_rope_scaling{});`
template <Axis ContextLength, Axis HeadDim, rope_layout Layout = rope_layout::split_halves>
class rope {
    static_assert(StaticAxis<ContextLength> && StaticAxis<HeadDim>,
                  "shaped::nn::rope<ContextLength, HeadDim>: the table's axes are static axes");
    static_assert(HeadDim::extent % 2 == 0, "shaped::nn::rope<ContextLength, HeadDim>: head_dim must be even (RoPE rotates pairs)");
    static constexpr std::size_t D = HeadDim::extent, half = D / 2;

public:
    /// The pair layout.
    static constexpr rope_layout layout = Layout;

    /// `cos(position * inv_freq)`: `(ContextLength, HeadDim)`, each frequency twice (halves or pairs).
    tensor<float, ContextLength, HeadDim> cos{uninitialized};
    /// `sin(position * inv_freq)`, as `cos`.
    tensor<float, ContextLength, HeadDim> sin{uninitialized};

    /// The table for base `theta_base` (`rope_theta`: GPT-NeoX and the book's default 10,000; Llama 3
    /// 500,000; Qwen3 1,000,000), with Llama 3's smoothing when `scaling` is given.
    explicit rope(double theta_base = 10000.0, std::optional<llama3_rope_scaling> scaling = std::nullopt) {
        const float theta = static_cast<float>(theta_base);
        std::vector<float> inv_freq(half);
        for (std::size_t i = 0; i < half; ++i) {
            const float exponent = static_cast<float>(2 * i) / static_cast<float>(D);
            inv_freq[i] = 1.0f / std::pow(theta, exponent);
        }
        if (scaling) {
            const auto& s = *scaling;
            const float low_wavelen = s.original_context_length / s.low_freq_factor;
            const float high_wavelen = s.original_context_length / s.high_freq_factor;
            for (float& f : inv_freq) {
                const float wavelen = static_cast<float>(2 * 3.14159265358979323846) / f;
                const float smooth = (s.original_context_length / wavelen - s.low_freq_factor) /
                                     (s.high_freq_factor - s.low_freq_factor);
                const float smoothed = (1.0f - smooth) * (f / s.factor) + smooth * f;
                if (wavelen <= low_wavelen && wavelen >= high_wavelen) f = smoothed;
                else if (wavelen > low_wavelen) f = f / s.factor;
            }
        }
        for (std::size_t p = 0; p < ContextLength::extent; ++p)
            for (std::size_t i = 0; i < half; ++i) {
                const float angle = static_cast<float>(p) * inv_freq[i];
                const float c = std::cos(angle), s = std::sin(angle);
                const std::size_t a = Layout == rope_layout::split_halves ? i : 2 * i;
                const std::size_t b = Layout == rope_layout::split_halves ? i + half : 2 * i + 1;
                cos.data()[p * D + a] = cos.data()[p * D + b] = c;
                sin.data()[p * D + a] = sin.data()[p * D + b] = s;
            }
    }

    /// Rotates `x`, `(..., num_tokens, HeadDim)`, its tokens at positions `offset`, `offset + 1`, ...:
    /// `(..., num_tokens, rotated<HeadDim, Layout>)`.
    template <class Layout_, Axis... X>
    auto operator()(const basic_tensor<float, Layout_, X...>& x, std::size_t offset = 0) const {
        constexpr std::size_t n = sizeof...(X);
        static_assert(diag::expect<(n >= 2), shaped::detail::described<diag::tensor_axes, X...>>,
                      "shaped::nn::rope(x): x needs a token axis and a head axis, (..., num_tokens, head_dim)");
        if constexpr (n >= 2) {
            using last = shaped::detail::axis_at_t<n - 1, X...>;
            using tokens = shaped::detail::axis_at_t<n - 2, X...>;
            constexpr bool head_ok = std::is_same_v<last, HeadDim>;
            static_assert(diag::expect<head_ok, shaped::detail::described<diag::in_features, HeadDim>,
                                       shaped::detail::described<diag::tensor_axes, X...>>,
                          "shaped::nn::rope(x): x's last axis must be the table's head_dim (rotate the queries and "
                          "keys after the heads are split, before they are multiplied)");
            constexpr bool fits = [] {
                if constexpr (DynamicAxis<tokens>) return true;  // checked when the call runs
                else return tokens::extent <= ContextLength::extent;
            }();
            static_assert(diag::expect<fits, shaped::detail::described<diag::tensor_axes, X...>,
                                       shaped::detail::described<diag::in_features, ContextLength>>,
                          "shaped::nn::rope(x): more tokens than the table has positions; build the table for the "
                          "model's context_length");
            if constexpr (head_ok && fits) {
                const std::size_t t = x.shape[n - 2];
                if (offset > ContextLength::extent || t > ContextLength::extent - offset)
                    throw shape_error("nn::rope(x, offset)",
                                      "positions within the table's (" + axis_name<ContextLength>() + "=" +
                                          std::to_string(ContextLength::extent) + ")",
                                      "positions " + std::to_string(offset) + " to " +
                                          std::to_string(offset > SIZE_MAX - t ? SIZE_MAX : offset + t - 1) +
                                          " (offset " + std::to_string(offset) + ", " + axis_name<tokens>() + "=" +
                                          std::to_string(t) + ")");
                auto y = x.contiguous();
                float* p = y.data();
                const std::size_t rows = y.numel() / D;
                float row[D];
                for (std::size_t r = 0; r < rows; ++r, p += D) {
                    const std::size_t pos = offset + r % (t ? t : 1);
                    const float* c = cos.data() + pos * D;
                    const float* s = sin.data() + pos * D;
                    std::copy_n(p, D, row);
                    for (std::size_t i = 0; i < half; ++i) {
                        if constexpr (Layout == rope_layout::split_halves) {
                            // x * cos + cat(-x2, x1) * sin, each product rounded, as the book's apply_rope
                            p[i] = row[i] * c[i] + (-row[i + half]) * s[i];
                            p[i + half] = row[i + half] * c[i + half] + row[i] * s[i + half];
                        } else {
                            p[2 * i] = row[2 * i] * c[2 * i] + (-row[2 * i + 1]) * s[2 * i];
                            p[2 * i + 1] = row[2 * i + 1] * c[2 * i + 1] + row[2 * i] * s[2 * i + 1];
                        }
                    }
                }
                return [&]<std::size_t... I>(std::index_sequence<I...>) {
                    return std::move(y).template rename<shaped::detail::axis_at_t<I, X...>..., rotated<HeadDim, Layout>>();
                }(std::make_index_sequence<n - 1>{});
            } else {
                return diag::failed_shape_check{};
            }
        } else {
            return diag::failed_shape_check{};
        }
    }

    /// After a failed shape check, no further errors (see `diag::failed_shape_check`).
    diag::failed_shape_check operator()(diag::failed_shape_check, std::size_t = 0) const { return {}; }

    /// No parameters: the table is recomputed, not loaded (the book registers it with `persistent=False`).
    static constexpr auto parameters() { return parameter_list(); }
};

/// Reorders a query or key projection's output rows from one RoPE pair layout to the other, in place: what
/// loading Meta's original checkpoints (interleaved pairs) into a model with Hugging Face's layout (split
/// halves), or the reverse, takes. Each head's rows `2i, 2i + 1` become rows `i, i + head_dim/2` (to
/// `split_halves`), or back (to `interleaved`); the bias, if any, alike. Attention scores are unchanged:
/// queries and keys converted together and rotated with the new layout give the same scores as before.
///
/// Shapes: `proj` is `linear<In, Out>` with `Out` the same axis as `merged<NumHeads, HeadDim>` (the book's
/// `W_query` of `num_heads * head_dim`, `W_key` of `num_kv_heads * head_dim`). Element type: float.
/// Errors: compile time, `From == To`, an odd `HeadDim`, an `Out` that is not `NumHeads × HeadDim`. Nothing is
/// thrown.
/// Source: Hugging Face's `permute` in convert_llama_weights_to_hf.py, `w.view(n_heads, dim // n_heads // 2,
/// 2, dim).transpose(1, 2).reshape(dim, dim)`, and its inverse.
/// Example: `nn::convert_rope_layout<rope_layout::interleaved, rope_layout::split_halves, num_heads, head_dim>(att.W_query);`
template <rope_layout From, rope_layout To, Axis NumHeads, Axis HeadDim, Axis In, Axis Out>
void convert_rope_layout(linear<In, Out>& proj) {
    using out_axis = Out;
    static_assert(From != To, "shaped::nn::convert_rope_layout<From, To>: the two layouts are the same");
    static_assert(StaticAxis<HeadDim> && HeadDim::extent % 2 == 0,
                  "shaped::nn::convert_rope_layout: head_dim must be static and even (RoPE rotates pairs)");
    static_assert(diag::expect<same_axis_v<out_axis, merged<NumHeads, HeadDim>>,
                               shaped::detail::described<diag::expected_axes, NumHeads, HeadDim>,
                               shaped::detail::described<diag::tensor_axes, out_axis>>,
                  "shaped::nn::convert_rope_layout<From, To, NumHeads, HeadDim>(proj): proj's output axis must be "
                  "NumHeads * HeadDim (a query or key projection, heads outermost)");
    if constexpr (From != To && same_axis_v<out_axis, merged<NumHeads, HeadDim>>) {
        constexpr std::size_t H = NumHeads::extent, D = HeadDim::extent, half = D / 2;
        // Row r of head h moves to row to(r): interleaved 2i + j <-> split halves j * half + i.
        auto to = [](std::size_t r) {
            if constexpr (To == rope_layout::split_halves) return (r % 2) * half + r / 2;
            else return (r % half) * 2 + r / half;
        };
        auto move_rows = [&](float* data, std::size_t row_length) {
            std::vector<float> head(D * row_length);
            for (std::size_t h = 0; h < H; ++h) {
                float* rows = data + h * D * row_length;
                std::copy_n(rows, D * row_length, head.data());
                for (std::size_t r = 0; r < D; ++r)
                    std::copy_n(head.data() + r * row_length, row_length, rows + to(r) * row_length);
            }
        };
        move_rows(proj.weight.data(), proj.weight.numel() / (H * D));
        if (proj.bias) move_rows(proj.bias->data(), 1);
    }
}

}  // namespace shaped::nn

#endif
