#ifndef SHAPED_DETAIL_VECTOR_MATH_HPP
#define SHAPED_DETAIL_VECTOR_MATH_HPP

/// \file
/// exp and tanh on vectors of floats, and the loops that apply an elementwise function (GELU, SiLU, a
/// softmax row's exponentials) on the widest vectors the CPU has, chosen at run time: AVX-512 (16 lanes),
/// AVX2/FMA (8) or plain vectors (4 lanes, SSE2 on x86-64). xsimd, which the other elementwise functions
/// use, runs at the width of the program's compiler flags: SSE2 for a program built without `-march`, a
/// quarter of what an AVX-512 CPU does per instruction. Written in GCC's and clang's vector extensions, as
/// the decoding kernel (gemm_few_rows.hpp), so that the header stays light: no intrinsics headers.
///
/// Accuracy: exp is Cephes' expf polynomial (as in the fused attention kernel), within 1.2 ulp of the exact
/// value on the normal range (the reduction's error grows with |x|); tanh is xsimd's (Boost.SIMD's) float algorithm, a polynomial below |x| = 0.625
/// and `1 - 2 / (1 + exp(2|x|))` above, within 2 ulp (tests/unit/vector_math.cpp). The AVX2 and AVX-512
/// paths may fuse a multiply and an add where the plain one rounds twice, so the paths can differ in the
/// last bit; a path gives the same bits whatever the number of threads.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "cpu.hpp"

/// Put after a lambda's parameters: its body is always inlined, so that a lambda given to `vmath::apply`
/// runs with the instructions of the target-attributed loop that calls it.
#define SHAPED_INLINE_LAMBDA __attribute__((always_inline))

namespace shaped::detail::vmath {

/// Vectors of L floats, and of L 32-bit integers for the exponent's bits.
template <std::size_t L>
struct lanes {
    typedef float f __attribute__((vector_size(4 * L)));
    typedef std::int32_t i __attribute__((vector_size(4 * L)));
};

/// Below this, expf leaves the normal floats (ln FLT_MIN): exp is 0 there, as in the fused kernel.
inline constexpr float exp_min_arg = -87.3365447504f;
/// Above this (ln FLT_MAX), exp is +inf.
inline constexpr float exp_max_arg = 88.72283935546875f;

// Every function below works on vectors through references and is always inlined into the target-attributed
// loops at the end, whose attribute decides the instructions (a vector passed by value outside such a
// function would be an ABI question).

/// x = e^x lane by lane: 0 below exp_min_arg (-inf included), +inf above exp_max_arg, NaN stays NaN.
template <class F>
[[gnu::always_inline]] inline void exp(F& x) {
    constexpr std::size_t L = sizeof(F) / sizeof(float);
    using I = typename lanes<L>::i;
    const I under = x < exp_min_arg, over = x > exp_max_arg;  // both false for NaN
    // Clamped to the range where the result is finite and not 0 (NaN fails both tests and stays).
    F r = x > exp_max_arg ? F{} + exp_max_arg : x;
    r = r < exp_min_arg ? F{} + exp_min_arg : r;
    // n = floor(r · log2(e) + 1/2), r -= n · ln 2 in two parts (Cephes).
    const F t = r * 1.44269504088896341f + 0.5f;
    F n = __builtin_convertvector(__builtin_convertvector(t, I), F);  // truncated toward 0
    n = n > t ? n - 1.0f : n;                                          // floor
    r = r - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    F y = F{} + 1.9875691500E-4f;
    y = y * r + 1.3981999507E-3f;
    y = y * r + 8.3334519073E-3f;
    y = y * r + 4.1665795894E-2f;
    y = y * r + 1.6666665459E-1f;
    y = y * r + 5.0000001201E-1f;
    y = y * (r * r) + (r + 1.0f);
    // y · 2^n, n in [-126, 128], as two exact factors 2^(n/2) and 2^(n - n/2), each a normal float.
    const I k = __builtin_convertvector(n, I), half = k >> 1;
    const I bits_a = (half + 127) << 23, bits_b = (k - half + 127) << 23;
    F scale_a, scale_b;
    std::memcpy(&scale_a, &bits_a, sizeof scale_a);
    std::memcpy(&scale_b, &bits_b, sizeof scale_b);
    y = y * scale_a * scale_b;
    y = under ? F{} : y;
    x = over ? F{} + std::numeric_limits<float>::infinity() : y;
}

/// x = tanh(x) lane by lane (xsimd's float algorithm): ±1 at the infinities, NaN stays NaN.
template <class F>
[[gnu::always_inline]] inline void tanh(F& x) {
    constexpr std::size_t L = sizeof(F) / sizeof(float);
    using I = typename lanes<L>::i;
    I bits, sign;
    std::memcpy(&bits, &x, sizeof bits);
    sign = bits & std::numeric_limits<std::int32_t>::min();
    bits = bits & std::numeric_limits<std::int32_t>::max();
    F a;
    std::memcpy(&a, &bits, sizeof a);  // |x|
    const F s = a * a;
    F p = F{} + -5.70498872745E-3f;
    p = p * s + 2.06390887954E-2f;
    p = p * s + -5.37397155531E-2f;
    p = p * s + 1.33314422036E-1f;
    p = p * s + -3.33332819422E-1f;
    const F near = (p * s) * a + a;
    F e = a + a;
    exp(e);
    const F far = 1.0f - 2.0f / (1.0f + e);
    F r = a < 0.625f ? near : far;
    std::memcpy(&bits, &r, sizeof bits);
    bits = bits ^ sign;
    std::memcpy(&x, &bits, sizeof x);
}

/// x = x / s: a division, exact, so the same bits at any width (softmax's last step).
struct divide_by {
    float s;
    template <class F>
    [[gnu::always_inline]] void operator()(F& x) const {
        x = x / s;
    }
};

/// `op(v)` on every element of p[0, n), L at a time; the last n mod L through a padded copy, so that every
/// element goes through the same code.
template <std::size_t L, class Op>
[[gnu::always_inline]] inline void apply_lanes(float* p, std::size_t n, const Op& op) {
    using F = typename lanes<L>::f;
    std::size_t i = 0;
    for (; i + L <= n; i += L) {
        F v;
        std::memcpy(&v, p + i, sizeof v);
        op(v);
        std::memcpy(p + i, &v, sizeof v);
    }
    if (i < n) {
        F v{};
        std::memcpy(&v, p + i, (n - i) * sizeof(float));
        op(v);
        std::memcpy(p + i, &v, (n - i) * sizeof(float));
    }
}

/// e^(x - shift) for every x in p[0, n), written back; returns their sum, taken in L partial sums and then
/// across them (the elements of a softmax row at once: the exponentials and their total).
template <std::size_t L>
[[gnu::always_inline]] inline float exp_shift_sum_lanes(float* p, std::size_t n, float shift) {
    using F = typename lanes<L>::f;
    F sum{};
    std::size_t i = 0;
    for (; i + L <= n; i += L) {
        F v;
        std::memcpy(&v, p + i, sizeof v);
        v = v - shift;
        exp(v);
        std::memcpy(p + i, &v, sizeof v);
        sum += v;
    }
    if (i < n) {
        F v = F{} - std::numeric_limits<float>::infinity();  // exp gives 0 in the padding
        std::memcpy(&v, p + i, (n - i) * sizeof(float));
        v = v - shift;
        exp(v);
        std::memcpy(p + i, &v, (n - i) * sizeof(float));
        sum += v;
    }
    float total = 0;
    for (std::size_t j = 0; j < L; ++j) total += sum[j];
    return total;
}

/// p[i] = p[i] / s for i < n, and the largest of them, -inf if none (a NaN skipped, as `std::max(mx, x)`
/// skips it): attention scores divided by sqrt(head_dim) and their row's maximum, in one pass.
template <std::size_t L>
[[gnu::always_inline]] inline float divide_max_lanes(float* p, std::size_t n, float s) {
    using F = typename lanes<L>::f;
    constexpr float minus_inf = -std::numeric_limits<float>::infinity();
    F mx = F{} + minus_inf;
    std::size_t i = 0;
    for (; i + L <= n; i += L) {
        F v;
        std::memcpy(&v, p + i, sizeof v);
        v = v / s;
        std::memcpy(p + i, &v, sizeof v);
        mx = mx < v ? v : mx;
    }
    if (i < n) {
        F v = F{} + minus_inf;
        std::memcpy(&v, p + i, (n - i) * sizeof(float));
        v = v / s;
        std::memcpy(p + i, &v, (n - i) * sizeof(float));
        mx = mx < v ? v : mx;
    }
    float m = minus_inf;
    for (std::size_t j = 0; j < L; ++j) m = m < mx[j] ? mx[j] : m;
    return m;
}

/// `step(i, count)` for the blocks [i, i + count) of [0, n): count = L but for the last, shorter block.
template <std::size_t L, class Step>
[[gnu::always_inline]] inline void blocks_of(std::size_t n, const Step& step) {
    std::size_t i = 0;
    for (; i + L <= n; i += L) step(i, L);
    if (i < n) step(i, n - i);
}

/// Rows [r0, r1) of a layer norm over rows of n elements: y = scale · ((x - mean) / root) + shift, root being
/// sqrt(var + eps) rounded once per row, with the rounding of each step (the book's four tensor operations):
/// three passes over the row, which stays in L1, so that no multiply and add are ever fused.
template <std::size_t L>
[[gnu::always_inline]] inline void layer_norm_lanes(const float* x, float* y, std::size_t r0, std::size_t r1,
                                                    std::size_t n, const float* mean, const float* var, float eps,
                                                    const float* scale, const float* shift) {
    using F = typename lanes<L>::f;
    for (std::size_t r = r0; r < r1; ++r) {
        const float m = mean[r], root = std::sqrt(var[r] + eps);
        const float* xr = x + r * n;
        float* yr = y + r * n;
        blocks_of<L>(n, [&](std::size_t i, std::size_t c) SHAPED_INLINE_LAMBDA {
            F v{};
            std::memcpy(&v, xr + i, c * sizeof(float));
            v = (v - m) / root;
            std::memcpy(yr + i, &v, c * sizeof(float));
        });
        blocks_of<L>(n, [&](std::size_t i, std::size_t c) SHAPED_INLINE_LAMBDA {
            F v{}, w{};
            std::memcpy(&v, yr + i, c * sizeof(float));
            std::memcpy(&w, scale + i, c * sizeof(float));
            v = w * v;
            std::memcpy(yr + i, &v, c * sizeof(float));
        });
        blocks_of<L>(n, [&](std::size_t i, std::size_t c) SHAPED_INLINE_LAMBDA {
            F v{}, w{};
            std::memcpy(&v, yr + i, c * sizeof(float));
            std::memcpy(&w, shift + i, c * sizeof(float));
            v = v + w;
            std::memcpy(yr + i, &v, c * sizeof(float));
        });
    }
}

#ifdef SHAPED_X86_SIMD
template <class Op>
SHAPED_AVX512_TARGET void apply_avx512(float* p, std::size_t n, const Op& op) {
    apply_lanes<16>(p, n, op);
}
template <class Op>
SHAPED_AVX2_TARGET void apply_avx2(float* p, std::size_t n, const Op& op) {
    apply_lanes<8>(p, n, op);
}
SHAPED_AVX512_TARGET inline float exp_shift_sum_avx512(float* p, std::size_t n, float shift) {
    return exp_shift_sum_lanes<16>(p, n, shift);
}
SHAPED_AVX2_TARGET inline float exp_shift_sum_avx2(float* p, std::size_t n, float shift) {
    return exp_shift_sum_lanes<8>(p, n, shift);
}
SHAPED_AVX512_TARGET inline void layer_norm_avx512(const float* x, float* y, std::size_t r0, std::size_t r1,
                                                   std::size_t n, const float* mean, const float* var, float eps,
                                                   const float* scale, const float* shift) {
    layer_norm_lanes<16>(x, y, r0, r1, n, mean, var, eps, scale, shift);
}
SHAPED_AVX2_TARGET inline void layer_norm_avx2(const float* x, float* y, std::size_t r0, std::size_t r1,
                                               std::size_t n, const float* mean, const float* var, float eps,
                                               const float* scale, const float* shift) {
    layer_norm_lanes<8>(x, y, r0, r1, n, mean, var, eps, scale, shift);
}
SHAPED_AVX512_TARGET inline float divide_max_avx512(float* p, std::size_t n, float s) {
    return divide_max_lanes<16>(p, n, s);
}
SHAPED_AVX2_TARGET inline float divide_max_avx2(float* p, std::size_t n, float s) {
    return divide_max_lanes<8>(p, n, s);
}
#endif

/// `op` (a type whose `operator()(F&) const` is always inlined and works on any lanes<L>::f) on every element
/// of p[0, n), on `path` (the widest the CPU has unless a test asks for a narrower one).
template <class Op>
void apply(float* p, std::size_t n, const Op& op, isa path = isa::best) {
#ifdef SHAPED_X86_SIMD
    switch (resolve(path)) {
        case isa::avx512: return apply_avx512(p, n, op);
        case isa::avx2: return apply_avx2(p, n, op);
        default: break;
    }
#endif
    apply_lanes<4>(p, n, op);
}

/// p[i] = e^(p[i] - shift) for i < n, and their sum, on `path`.
inline float exp_shift_sum(float* p, std::size_t n, float shift, isa path = isa::best) {
#ifdef SHAPED_X86_SIMD
    switch (resolve(path)) {
        case isa::avx512: return exp_shift_sum_avx512(p, n, shift);
        case isa::avx2: return exp_shift_sum_avx2(p, n, shift);
        default: break;
    }
#endif
    return exp_shift_sum_lanes<4>(p, n, shift);
}

/// p[i] = p[i] / s for i < n, and their maximum (NaN skipped; -inf for n = 0), on `path`.
inline float divide_max(float* p, std::size_t n, float s, isa path = isa::best) {
#ifdef SHAPED_X86_SIMD
    switch (resolve(path)) {
        case isa::avx512: return divide_max_avx512(p, n, s);
        case isa::avx2: return divide_max_avx2(p, n, s);
        default: break;
    }
#endif
    return divide_max_lanes<4>(p, n, s);
}

/// Rows [r0, r1) of x (rows of n floats, contiguous) layer-normalised into y, on `path`: y = scale · ((x -
/// mean[r]) / sqrt(var[r] + eps)) + shift, each operation rounded as the book's tensor expression rounds it.
inline void layer_norm(const float* x, float* y, std::size_t r0, std::size_t r1, std::size_t n, const float* mean,
                       const float* var, float eps, const float* scale, const float* shift, isa path = isa::best) {
#ifdef SHAPED_X86_SIMD
    switch (resolve(path)) {
        case isa::avx512: return layer_norm_avx512(x, y, r0, r1, n, mean, var, eps, scale, shift);
        case isa::avx2: return layer_norm_avx2(x, y, r0, r1, n, mean, var, eps, scale, shift);
        default: break;
    }
#endif
    layer_norm_lanes<4>(x, y, r0, r1, n, mean, var, eps, scale, shift);
}

}  // namespace shaped::detail::vmath

#endif
