#ifndef SHAPED_DETAIL_FLASH_ATTENTION_HPP
#define SHAPED_DETAIL_FLASH_ATTENTION_HPP

/// \file
/// The kernel behind `scaled_dot_product_attention`: softmax(q kᵀ · scale, causal) v without the
/// (num_tokens × num_tokens) scores. Flash attention's scheme (Dao et al., 2022): a tile of queries meets
/// the keys a tile at a time, keeping per row a running maximum and sum (the online softmax), so the scores
/// of one tile pair are all that is ever stored; tiles wholly above the causal diagonal are never computed.
/// The tile products and the softmax run on AVX-512 where the CPU has it, else on AVX2/FMA, else on plain
/// loops: the CPU is asked at run time and each SIMD function carries its own target attribute, so the
/// program's own flags do not matter. Types and extents have been checked by the caller; this file sees
/// pointers, strides and sizes.

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "../threads.hpp"
#include "cpu.hpp"

#ifdef SHAPED_X86_SIMD
#include <immintrin.h>
#define SHAPED_FLASH_AVX2 1
#define SHAPED_FLASH_AVX512 1
#define SHAPED_FLASH_AVX512_TARGET SHAPED_AVX512_TARGET
#endif

namespace shaped::detail::flash {

/// Queries per tile, keys per tile, and the width of the micro-kernel's column panel (the values' columns
/// are padded to a multiple of it; the AVX-512 micro-kernel takes up to four panels at once).
inline constexpr std::size_t block_q = 64, block_k = 128, panel = 16;

/// The kernel's code paths (detail/cpu.hpp): plain loops, AVX2/FMA, AVX-512, the widest the CPU has.
using detail::isa;
using detail::has_avx2;
using detail::has_avx512;
using detail::resolve;

/// One operand: where batch `j`'s matrix starts (strides of the batch axes) and the distance between its
/// rows (tokens); elements along a row (head_dim) are adjacent.
template <std::size_t NB, class T = const float>
struct matrix_ref {
    T* data = nullptr;
    std::array<std::size_t, NB> batch_stride{};
    std::size_t row_stride = 0;

    /// Batch matrix `j` of the queries' batch `extent`; with `group > 1` (grouped-query attention: keys and
    /// values) the last batch axis is the queries' heads, and `group` consecutive ones share this operand's
    /// head `h / group`.
    T* at(const std::array<std::size_t, NB>& extent, std::size_t j, std::size_t group = 1) const noexcept {
        std::size_t offset = 0;
        for (std::size_t a = NB; a-- > 0;) {
            const std::size_t i = j % extent[a];
            offset += (a + 1 == NB ? i / group : i) * batch_stride[a];
            j /= extent[a];
        }
        return data + offset;
    }
};

template <std::size_t NB>
struct problem {
    matrix_ref<NB> q, k, v;
    matrix_ref<NB, float> out;
    std::array<std::size_t, NB> batch{};  // extents of the batch axes (the queries')
    std::size_t group = 1;  // query heads per key/value head (grouped-query attention): the last batch axis
    std::size_t lq = 0, lk = 0, d = 0, dv = 0;
    float scale = 1;
    bool causal = false;
    std::size_t offset = 0;  // causal: query i sits at key position offset + i, and sees keys 0..offset + i
    std::size_t window = 0;  // causal only: > 0, query i sees the keys offset + i - window + 1 .. offset + i
    // An additive mask on the scaled scores (attn_mask), or none: row r of batch matrix j is added to query r's
    // scores, key k at column k (adjacent); batch strides of 0 broadcast it.
    matrix_ref<NB> bias{};
    isa path = isa::best;    // at most this path even where the CPU has a wider one (tests compare them)
    std::size_t threads = 0; // 0: as threads_for decides; else this many (tests)
};

constexpr std::size_t round_up(std::size_t n, std::size_t m) noexcept { return (n + m - 1) / m * m; }

/// Below this, expf leaves the normal floats (ln FLT_MIN): both paths take exp as 0 there, so that -inf gives
/// exactly 0 and a weight is 0 or the same number on either path.
inline constexpr float exp_min_arg = -87.3365447504f;

/// One thread's tiles, allocated before any thread starts: the queries transposed (head_dim × block_q),
/// the scores transposed (block_k × block_q), the output accumulator (block_q × head_dim rounded up to 16),
/// a block of values when head_dim is not a multiple of 16, and per query a running maximum and sum:
/// about 100 KB at head_dim 64, whatever the number of tokens.
///
/// Beside those, keys and values copied into adjacent rows (`packed`), when they are strided (read in place
/// from a combined qkv projection, rows 3·d_out apart) and several query tiles read them: strided rows fall
/// on a quarter of the L1 cache's sets and each on a page of its own, and at GPT-2 small (batch 8 × 1024) the
/// scores' product with them ran at 0.82 and the values' at 0.73 of their rate on adjacent rows; one copy per
/// batch matrix and thread, which its query tiles reuse.
struct scratch {
    std::vector<float> qt, st, acc, vp, m, l, alpha;
    std::size_t dp = 0;
    // Keys (rows d apart) and values (rows dp apart, zero-padded) lo .. hi - 1 of the batch matrix whose keys
    // start at `source`, at their own row; allocated by the first query tile that uses them.
    struct packed {
        const float* source = nullptr;
        std::size_t lo = 0, hi = 0;
        std::vector<float> rows;
    } pk, pv;
    scratch(std::size_t d, std::size_t dv)
        : qt(d * block_q), st(block_k * block_q), acc(block_q * round_up(dv, panel)),
          vp(dv % panel ? block_k * round_up(dv, panel) : 0), m(block_q), l(block_q), alpha(block_q),
          dp(round_up(dv, panel)) {}
};

/// Rows kbegin .. kend - 1 of a strided operand (rows ld apart, n values each) in `p`, rows ldp apart and
/// zero-padded past n; rows already there are not copied again. Returns the copy's row 0.
inline const float* pack_rows(scratch::packed& p, const float* src, std::size_t ld, std::size_t n, std::size_t ldp,
                              std::size_t lk, std::size_t kbegin, std::size_t kend) {
    if (p.source != src) {
        p.source = src;
        p.lo = p.hi = kbegin;
        if (p.rows.size() < lk * ldp) p.rows.assign(lk * ldp, 0.0f);  // padding columns stay zero
    }
    auto copy = [&](std::size_t from, std::size_t to) {
        for (std::size_t r = from; r < to; ++r) std::copy_n(src + r * ld, n, p.rows.data() + r * ldp);
    };
    const std::size_t lo = std::min(p.lo, kbegin), hi = std::max(p.hi, kend);
    copy(lo, p.lo);
    copy(p.hi, hi);
    p.lo = lo;
    p.hi = hi;
    return p.rows.data();
}

/// At most this many bytes of keys and values are copied per thread (pack_rows); longer sequences read
/// them in place.
inline constexpr std::size_t max_packed_bytes = std::size_t{16} << 20;

// C[R × panel] (+)= A[R × K] · B[K × panel]: A(r, p) at a[r·ars + p·acs], B's rows ldb apart, C's ldc apart.
template <int R>
inline void tile_portable(const float* a, std::size_t ars, std::size_t acs, const float* b, std::size_t ldb, float* c,
                          std::size_t ldc, std::size_t kdim, bool accumulate) {
    float t[R][panel];
    for (int r = 0; r < R; ++r)
        for (std::size_t j = 0; j < panel; ++j) t[r][j] = accumulate ? c[r * ldc + j] : 0.0f;
    for (std::size_t p = 0; p < kdim; ++p)
        for (int r = 0; r < R; ++r) {
            const float x = a[r * ars + p * acs];
            for (std::size_t j = 0; j < panel; ++j) t[r][j] += x * b[p * ldb + j];
        }
    for (int r = 0; r < R; ++r)
        for (std::size_t j = 0; j < panel; ++j) c[r * ldc + j] = t[r][j];
}

#ifdef SHAPED_FLASH_AVX2
// The same tile in 2·R AVX2 registers: per step of K, two loads of B, R broadcasts of A, 2·R fused
// multiply-adds. R = 6 keeps 12 accumulators, enough to cover the FMA units' latency.
template <int R>
__attribute__((target("avx2,fma"))) inline void tile_avx2(const float* a, std::size_t ars, std::size_t acs,
                                                          const float* b, std::size_t ldb, float* c, std::size_t ldc,
                                                          std::size_t kdim, bool accumulate) {
    __m256 c0[R], c1[R];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
        c0[r] = accumulate ? _mm256_loadu_ps(c + r * ldc) : _mm256_setzero_ps();
        c1[r] = accumulate ? _mm256_loadu_ps(c + r * ldc + 8) : _mm256_setzero_ps();
    }
    for (std::size_t p = 0; p < kdim; ++p) {
        const __m256 b0 = _mm256_loadu_ps(b + p * ldb), b1 = _mm256_loadu_ps(b + p * ldb + 8);
        const float* ap = a + p * acs;
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
            const __m256 x = _mm256_broadcast_ss(ap + r * ars);
            c0[r] = _mm256_fmadd_ps(x, b0, c0[r]);
            c1[r] = _mm256_fmadd_ps(x, b1, c1[r]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
        _mm256_storeu_ps(c + r * ldc, c0[r]);
        _mm256_storeu_ps(c + r * ldc + 8, c1[r]);
    }
}

// expf on 8 lanes: Cephes' polynomial as in xsimd and Pommier's avx_mathfun, about 1 ulp. 0 below exp_min_arg
// (-inf included); NaN stays NaN: minps and maxps return their second operand when either is NaN, so the
// clamps take x second.
__attribute__((target("avx2,fma"))) inline __m256 exp8(__m256 x) {
    const __m256 lo = _mm256_set1_ps(exp_min_arg);
    const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);  // false for NaN
    x = _mm256_min_ps(_mm256_set1_ps(88.3762626647949f), x);
    x = _mm256_max_ps(lo, x);
    __m256 fx = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f));
    fx = _mm256_floor_ps(fx);
    x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
    x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
    __m256 y = _mm256_set1_ps(1.9875691500E-4f);
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507E-3f));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073E-3f));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894E-2f));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459E-1f));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201E-1f));
    y = _mm256_fmadd_ps(y, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
    const __m256i n = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(fx), _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(under, _mm256_mul_ps(y, _mm256_castsi256_ps(n)));
}

// The online softmax of one tile of transposed scores, 8 queries at a time: for keys j < width and queries
// c < cols, st(j, c) becomes exp(st(j, c) - m_new(c)), 0 where query c may not see key j (causal: key j0 + j
// beyond position `first + c`); m and l are updated and alpha(c) = exp(m_old(c) - m_new(c)) returned.
// NaN and infinities, on both paths alike (PyTorch's softmax): the maximum skips NaN (maxps with the running
// maximum second, as std::max(mx, x)), a NaN score carries itself through exp(NaN - m), NaN, into l and acc;
// m = -inf (every score seen so far -inf) subtracts 0 instead, so exp gives 0 where -inf - -inf would give NaN,
// and the row ends with l = 0, acc / l NaN; m = +inf gives exp(inf - inf), NaN.
__attribute__((target("avx2,fma"))) inline void softmax_tile_avx2(float* st, std::size_t ld, std::size_t width,
                                                                  std::size_t cols, bool causal, std::ptrdiff_t first,
                                                                  float* m, float* l, float* alpha) {
    const __m256 neg_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    const __m256 lane = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
    for (std::size_t c = 0; c < cols; c += 8) {
        // Query c + lane sees keys j with j <= first + c + lane.
        const __m256 last = _mm256_add_ps(lane, _mm256_set1_ps(static_cast<float>(first + static_cast<std::ptrdiff_t>(c))));
        const bool masked_tile = causal && first + static_cast<std::ptrdiff_t>(c) < static_cast<std::ptrdiff_t>(width) - 1;
        __m256 mx = neg_inf;
        for (std::size_t j = 0; j < width; ++j) {
            __m256 x = _mm256_loadu_ps(st + j * ld + c);
            if (masked_tile) x = _mm256_blendv_ps(x, neg_inf, _mm256_cmp_ps(_mm256_set1_ps(static_cast<float>(j)), last, _CMP_GT_OQ));
            mx = _mm256_max_ps(x, mx);
        }
        const __m256 m_old = _mm256_loadu_ps(m + c);
        const __m256 m_new = _mm256_max_ps(m_old, mx);
        const __m256 base = _mm256_blendv_ps(m_new, _mm256_setzero_ps(), _mm256_cmp_ps(m_new, neg_inf, _CMP_EQ_OQ));
        const __m256 a = exp8(_mm256_sub_ps(m_old, base));  // m_old = -inf: 0
        __m256 sum = _mm256_setzero_ps();
        for (std::size_t j = 0; j < width; ++j) {
            __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(st + j * ld + c), base));
            if (masked_tile) e = _mm256_andnot_ps(_mm256_cmp_ps(_mm256_set1_ps(static_cast<float>(j)), last, _CMP_GT_OQ), e);
            _mm256_storeu_ps(st + j * ld + c, e);
            sum = _mm256_add_ps(sum, e);
        }
        _mm256_storeu_ps(m + c, m_new);
        _mm256_storeu_ps(l + c, _mm256_fmadd_ps(_mm256_loadu_ps(l + c), a, sum));
        _mm256_storeu_ps(alpha + c, a);
    }
}

__attribute__((target("avx2,fma"))) inline void scale_row_avx2(float* x, std::size_t n, float f) {
    const __m256 fb = _mm256_set1_ps(f);
    for (std::size_t j = 0; j < n; j += 8) _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_loadu_ps(x + j), fb));
}

// C[R × 16·N] (+)= A[R × K] · B[K × 16·N], as tile_portable, in R·N AVX-512 registers: per step of K, N loads
// of B, R broadcasts of A, R·N fused multiply-adds, each element's products added in the order of the AVX2
// and plain tiles. R = 6, N = 4 keeps 24 accumulators: with the 4 rows of B, 28 of the 32 registers.
template <int R, int N>
SHAPED_FLASH_AVX512_TARGET inline void tile_avx512(const float* a, std::size_t ars, std::size_t acs, const float* b,
                                                   std::size_t ldb, float* c, std::size_t ldc, std::size_t kdim,
                                                   bool accumulate) {
    __m512 t[R][N];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int n = 0; n < N; ++n) t[r][n] = accumulate ? _mm512_loadu_ps(c + r * ldc + 16 * n) : _mm512_setzero_ps();
#pragma GCC unroll 2
    for (std::size_t p = 0; p < kdim; ++p) {
        __m512 bp[N];
#pragma GCC unroll 4
        for (int n = 0; n < N; ++n) bp[n] = _mm512_loadu_ps(b + p * ldb + 16 * n);
        const float* ap = a + p * acs;
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const __m512 x = _mm512_set1_ps(ap[r * ars]);
#pragma GCC unroll 4
            for (int n = 0; n < N; ++n) t[r][n] = _mm512_fmadd_ps(x, bp[n], t[r][n]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int n = 0; n < N; ++n) _mm512_storeu_ps(c + r * ldc + 16 * n, t[r][n]);
}

// Rows 0 .. rows - 1 of C[· × 16·N] (+)= A · B in tiles of R rows, the last tile of fewer: the micro-kernel
// keeps its row count at compile time, so the remainder picks its instance here.
template <int R, int N>
void row_tiles_avx512(const float* a, std::size_t ars, std::size_t acs, const float* b, std::size_t ldb, float* c,
                      std::size_t ldc, std::size_t rows, std::size_t kdim, bool accumulate) {
    std::size_t i = 0;
    for (; i + R <= rows; i += R) tile_avx512<R, N>(a + i * ars, ars, acs, b, ldb, c + i * ldc, ldc, kdim, accumulate);
    if constexpr (R > 1)
        if (i < rows) row_tiles_avx512<R - 1, N>(a + i * ars, ars, acs, b, ldb, c + i * ldc, ldc, rows - i, kdim, accumulate);
}

// GCC 12.2 warns in its own AVX-512 headers once their intrinsics are inlined here (GCC bug 105593, fixed in
// later releases: the self-initialised _mm512_undefined_ps operand of max, min, roundscale, unpack, ...).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

// exp8 on 16 lanes, the same operations in the same order, so the same bits lane for lane: 0 below
// exp_min_arg (-inf included), NaN kept NaN (minps and maxps with x second, as exp8; the mask of lanes kept
// is "not less than", true for NaN).
SHAPED_FLASH_AVX512_TARGET inline __m512 exp16(__m512 x) {
    const __m512 lo = _mm512_set1_ps(exp_min_arg);
    const __mmask16 kept = _mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ);  // true for NaN
    x = _mm512_min_ps(_mm512_set1_ps(88.3762626647949f), x);
    x = _mm512_max_ps(lo, x);
    __m512 fx = _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), _mm512_set1_ps(0.5f));
    fx = _mm512_roundscale_ps(fx, _MM_FROUND_FLOOR);
    x = _mm512_fnmadd_ps(fx, _mm512_set1_ps(0.693359375f), x);
    x = _mm512_fnmadd_ps(fx, _mm512_set1_ps(-2.12194440e-4f), x);
    __m512 y = _mm512_set1_ps(1.9875691500E-4f);
    y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(1.3981999507E-3f));
    y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(8.3334519073E-3f));
    y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(4.1665795894E-2f));
    y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(1.6666665459E-1f));
    y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(5.0000001201E-1f));
    y = _mm512_fmadd_ps(y, _mm512_mul_ps(x, x), _mm512_add_ps(x, _mm512_set1_ps(1.0f)));
    const __m512i n = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(fx), _mm512_set1_epi32(127)), 23);
    return _mm512_maskz_mul_ps(kept, y, _mm512_castsi512_ps(n));
}

// softmax_tile_avx2 on 16 queries at a time, with its NaN and infinities: the maximum skips NaN (maxps with the
// running maximum second), m = -inf subtracts 0, m = +inf gives NaN; the causal mask is the same comparison of
// key and position in floats, as masks of lanes instead of blends.
SHAPED_FLASH_AVX512_TARGET inline void softmax_tile_avx512(float* st, std::size_t ld, std::size_t width,
                                                           std::size_t cols, bool causal, std::ptrdiff_t first,
                                                           float* m, float* l, float* alpha) {
    const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    const __m512 lane = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (std::size_t c = 0; c < cols; c += 16) {
        // Query c + lane sees keys j with j <= first + c + lane.
        const __m512 last = _mm512_add_ps(lane, _mm512_set1_ps(static_cast<float>(first + static_cast<std::ptrdiff_t>(c))));
        const bool masked_tile = causal && first + static_cast<std::ptrdiff_t>(c) < static_cast<std::ptrdiff_t>(width) - 1;
        // Four running maxima, so that the loop is not one chain of maxps' latency (the maximum is the same
        // in any order; NaN is skipped as before, since a maximum starts at -inf and never takes a NaN).
        __m512 mx4[4] = {neg_inf, neg_inf, neg_inf, neg_inf};
        std::size_t j = 0;
        if (!masked_tile)
            for (; j + 4 <= width; j += 4)
#pragma GCC unroll 4
                for (std::size_t u = 0; u < 4; ++u) mx4[u] = _mm512_max_ps(_mm512_loadu_ps(st + (j + u) * ld + c), mx4[u]);
        for (; j < width; ++j) {
            __m512 x = _mm512_loadu_ps(st + j * ld + c);
            if (masked_tile) x = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(_mm512_set1_ps(static_cast<float>(j)), last, _CMP_GT_OQ), x, neg_inf);
            mx4[j % 4] = _mm512_max_ps(x, mx4[j % 4]);
        }
        const __m512 mx = _mm512_max_ps(_mm512_max_ps(mx4[0], mx4[1]), _mm512_max_ps(mx4[2], mx4[3]));
        const __m512 m_old = _mm512_loadu_ps(m + c);
        const __m512 m_new = _mm512_max_ps(m_old, mx);
        const __m512 base = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(m_new, neg_inf, _CMP_EQ_OQ), m_new, _mm512_setzero_ps());
        const __m512 a = exp16(_mm512_sub_ps(m_old, base));  // m_old = -inf: 0
        __m512 sum = _mm512_setzero_ps();
        for (std::size_t j = 0; j < width; ++j) {
            __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(st + j * ld + c), base));
            if (masked_tile) e = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_set1_ps(static_cast<float>(j)), last, _CMP_LE_OQ), e);
            _mm512_storeu_ps(st + j * ld + c, e);
            sum = _mm512_add_ps(sum, e);
        }
        _mm512_storeu_ps(m + c, m_new);
        _mm512_storeu_ps(l + c, _mm512_fmadd_ps(_mm512_loadu_ps(l + c), a, sum));
        _mm512_storeu_ps(alpha + c, a);
    }
}

// dst(c, r) = src(r, c) · f for a 16 × 16 block (src's rows lds apart, dst's ldd): the queries' transposition
// in registers, 64 shuffles where element by element it would be 256 strided stores. Products as the
// scalar loop's, so the same bits.
SHAPED_FLASH_AVX512_TARGET inline void transpose16_avx512(const float* src, std::size_t lds, float* dst,
                                                          std::size_t ldd, float f) {
    const __m512 fb = _mm512_set1_ps(f);
    __m512 r[16], t[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) r[i] = _mm512_mul_ps(_mm512_loadu_ps(src + i * lds), fb);
    // Per 128-bit lane L (columns 4L .. 4L + 3): rows 2i and 2i + 1 interleaved, columns 4L, 4L + 1 (lo) and
    // 4L + 2, 4L + 3 (hi).
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // r[4i + k], lane L: column 4L + k of rows 4i .. 4i + 3.
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    // Column 4L + k is lane L of r[k], r[4 + k], r[8 + k], r[12 + k]: a 4 × 4 transposition of lanes.
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
        const __m512 u0 = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x44), u1 = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xEE);
        const __m512 u2 = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x44), u3 = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xEE);
        _mm512_storeu_ps(dst + (0 + k) * ldd, _mm512_shuffle_f32x4(u0, u2, 0x88));
        _mm512_storeu_ps(dst + (4 + k) * ldd, _mm512_shuffle_f32x4(u0, u2, 0xDD));
        _mm512_storeu_ps(dst + (8 + k) * ldd, _mm512_shuffle_f32x4(u1, u3, 0x88));
        _mm512_storeu_ps(dst + (12 + k) * ldd, _mm512_shuffle_f32x4(u1, u3, 0xDD));
    }
}

// all_finite on 16 lanes: one class test (NaN or infinity) per 16 values, the row's last ones masked.
SHAPED_FLASH_AVX512_TARGET inline bool all_finite_avx512(const float* x, std::size_t ld, std::size_t rows,
                                                         std::size_t cols) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (cols % 16)) - 1);
    for (std::size_t r = 0; r < rows; ++r) {
        const float* row = x + r * ld;
        __mmask16 bad = 0;
        std::size_t c = 0;
        for (; c + 16 <= cols; c += 16) bad |= _mm512_fpclass_ps_mask(_mm512_loadu_ps(row + c), 0x99);  // NaN, ±inf
        if (tail) bad |= _mm512_fpclass_ps_mask(_mm512_maskz_loadu_ps(tail, row + c), 0x99);
        if (bad) return false;
    }
    return true;
}

// out(r, c) = acc(r, c) / l(r) for c < dv, as the scalar loop (one reciprocal, then products): the tile's
// rows of output, 16 values a store, the last masked; acc's rows are padded to a multiple of 16.
SHAPED_FLASH_AVX512_TARGET inline void store_rows_avx512(const float* acc, std::size_t dp, const float* l,
                                                         float* out, std::size_t ldo, std::size_t rows,
                                                         std::size_t dv) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (dv % 16)) - 1);
    for (std::size_t r = 0; r < rows; ++r) {
        const __m512 inv = _mm512_set1_ps(1.0f / l[r]);
        std::size_t c = 0;
        for (; c + 16 <= dv; c += 16) _mm512_storeu_ps(out + r * ldo + c, _mm512_mul_ps(_mm512_loadu_ps(acc + r * dp + c), inv));
        if (tail) _mm512_mask_storeu_ps(out + r * ldo + c, tail, _mm512_mul_ps(_mm512_loadu_ps(acc + r * dp + c), inv));
    }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// x[0 .. n) *= f, n a multiple of 16: the output accumulator's rows when the running maximum moves.
SHAPED_FLASH_AVX512_TARGET inline void scale_row_avx512(float* x, std::size_t n, float f) {
    const __m512 fb = _mm512_set1_ps(f);
    for (std::size_t j = 0; j < n; j += 16) _mm512_storeu_ps(x + j, _mm512_mul_ps(_mm512_loadu_ps(x + j), fb));
}

#endif

inline float exp_portable(float x) { return x < exp_min_arg ? 0.0f : std::exp(x); }  // as exp8

inline void softmax_tile_portable(float* st, std::size_t ld, std::size_t width, std::size_t cols, bool causal,
                                  std::ptrdiff_t first, float* m, float* l, float* alpha) {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    for (std::size_t c = 0; c < cols; ++c) {
        const std::ptrdiff_t last = first + static_cast<std::ptrdiff_t>(c);
        auto sees = [&](std::size_t j) { return !causal || static_cast<std::ptrdiff_t>(j) <= last; };
        float mx = neg_inf;
        for (std::size_t j = 0; j < width; ++j)
            if (sees(j)) mx = std::max(mx, st[j * ld + c]);
        const float m_new = std::max(m[c], mx), base = m_new == neg_inf ? 0.0f : m_new;
        const float a = exp_portable(m[c] - base);
        float sum = 0;
        for (std::size_t j = 0; j < width; ++j) {
            float& x = st[j * ld + c];
            x = sees(j) ? exp_portable(x - base) : 0.0f;
            sum += x;
        }
        m[c] = m_new;
        l[c] = l[c] * a + sum;
        alpha[c] = a;
    }
}

// C[rows × cols] (+)= A[rows × K] · B[K × cols], cols a multiple of `panel`: on AVX-512 in column strips of
// 64, 32 or 16 (the widest that fits) and tiles of up to 6 or 12 rows; else in tiles of 16 columns and at most
// 6 rows.
template <isa I>
void gemm_tiles(const float* a, std::size_t ars, std::size_t acs, const float* b, std::size_t ldb, float* c,
                std::size_t ldc, std::size_t rows, std::size_t cols, std::size_t kdim, bool accumulate) {
#ifdef SHAPED_FLASH_AVX512
    if constexpr (I == isa::avx512) {
        for (std::size_t j = 0; j < cols;) {
            const std::size_t left = cols - j;
            if (left >= 4 * panel) {
                row_tiles_avx512<6, 4>(a, ars, acs, b + j, ldb, c + j, ldc, rows, kdim, accumulate);
                j += 4 * panel;
            } else if (left >= 2 * panel) {
                row_tiles_avx512<12, 2>(a, ars, acs, b + j, ldb, c + j, ldc, rows, kdim, accumulate);
                j += 2 * panel;
            } else {
                row_tiles_avx512<12, 1>(a, ars, acs, b + j, ldb, c + j, ldc, rows, kdim, accumulate);
                j += panel;
            }
        }
        return;
    }
#endif
    for (std::size_t j = 0; j < cols; j += panel)
        for (std::size_t i = 0; i < rows; i += 6) {
            const float* ai = a + i * ars;
            float* ci = c + i * ldc + j;
            const float* bj = b + j;
            auto run = [&]<int R>() {
#ifdef SHAPED_FLASH_AVX2
                if constexpr (I == isa::avx2) {
                    tile_avx2<R>(ai, ars, acs, bj, ldb, ci, ldc, kdim, accumulate);
                    return;
                }
#endif
                tile_portable<R>(ai, ars, acs, bj, ldb, ci, ldc, kdim, accumulate);
            };
            switch (std::min<std::size_t>(6, rows - i)) {
                case 6: run.template operator()<6>(); break;
                case 5: run.template operator()<5>(); break;
                case 4: run.template operator()<4>(); break;
                case 3: run.template operator()<3>(); break;
                case 2: run.template operator()<2>(); break;
                default: run.template operator()<1>(); break;
            }
        }
}

// Whether a block of values (rows ld apart) holds no NaN and no infinity.
inline bool all_finite(const float* x, std::size_t ld, std::size_t rows, std::size_t cols) {
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c)
            if (!std::isfinite(x[r * ld + c])) return false;
    return true;
}

// acc(r, ·) += P(r, ·) · V over the keys query r sees only (from + r <= j <= first + r), P read from the
// transposed scores st: the product of a tile that the causal mask or a sliding window cuts when its values
// are not all finite.
inline void add_seen_values(const float* st, std::size_t ld, const float* v, std::size_t ldv, float* acc,
                            std::size_t lda, std::size_t rows, std::size_t width, std::size_t dv, std::ptrdiff_t first,
                            std::ptrdiff_t from) {
    for (std::size_t r = 0; r < rows; ++r) {
        const std::ptrdiff_t last = first + static_cast<std::ptrdiff_t>(r), lo = from + static_cast<std::ptrdiff_t>(r);
        const std::size_t seen = last < 0 ? 0 : std::min(width, static_cast<std::size_t>(last) + 1);
        for (std::size_t j = lo > 0 ? static_cast<std::size_t>(lo) : 0; j < seen; ++j) {
            const float p = st[j * ld + r];
            for (std::size_t c = 0; c < dv; ++c) acc[r * lda + c] += p * v[j * ldv + c];
        }
    }
}

// One tile of queries (rows i0 .. i0 + rows - 1 of batch matrix j) against every key it may see. The scores
// are computed transposed, keys × queries, so that the keys are read row by row and the softmax runs across
// eight (AVX2) or sixteen (AVX-512) queries at once.
template <isa I, std::size_t NB>
void query_tile(const problem<NB>& pb, scratch& w, std::size_t j, std::size_t i0) {
    constexpr std::size_t bq = block_q;
    const std::size_t rows = std::min(bq, pb.lq - i0), d = pb.d, dv = pb.dv, dp = w.dp;
    const float* q = pb.q.at(pb.batch, j) + i0 * pb.q.row_stride;
    const float* k = pb.k.at(pb.batch, j, pb.group);
    const float* v = pb.v.at(pb.batch, j, pb.group);
    float* out = pb.out.at(pb.batch, j) + i0 * pb.out.row_stride;
    // The queries, scaled once (PyTorch's math path scales the scores: the same to rounding), transposed
    // into (d × block_q), the columns past `rows` zero. AVX-512 transposes whole 16 × 16 blocks in registers,
    // the scalar loop the rest.
    std::size_t r16 = 0, d16 = 0;
#ifdef SHAPED_FLASH_AVX512
    if constexpr (I == isa::avx512) {
        r16 = rows / 16 * 16;
        d16 = d / 16 * 16;
        for (std::size_t r = 0; r < r16; r += 16)
            for (std::size_t p = 0; p < d16; p += 16)
                transpose16_avx512(q + r * pb.q.row_stride + p, pb.q.row_stride, w.qt.data() + p * bq + r, bq, pb.scale);
    }
#endif
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t p = r < r16 ? d16 : 0; p < d; ++p) w.qt[p * bq + r] = q[r * pb.q.row_stride + p] * pb.scale;
    for (std::size_t p = 0; p < d; ++p) std::fill_n(w.qt.data() + p * bq + rows, bq - rows, 0.0f);
    std::fill(w.m.begin(), w.m.end(), -std::numeric_limits<float>::infinity());
    std::fill(w.l.begin(), w.l.end(), 0.0f);
    std::fill(w.acc.begin(), w.acc.end(), 0.0f);
    const std::size_t cols = round_up(rows, panel);
    // Keys kbegin .. kend - 1 are seen by some query of the tile; tiles of keys outside are never touched.
    const std::size_t kend = pb.causal ? std::min(pb.lk, pb.offset + i0 + rows) : pb.lk;
    const std::size_t kbegin = pb.window && pb.offset + i0 + 1 > pb.window ? pb.offset + i0 + 1 - pb.window : 0;
    // Keys and values read by several query tiles and strided: from the thread's copy (scratch::packed).
    const bool shared = pb.lq > block_q || pb.group > 1, fits = pb.lk * (d + dp) * sizeof(float) <= max_packed_bytes;
    std::size_t ldk = pb.k.row_stride, ldv_all = pb.v.row_stride;
    if (shared && fits && ldk != d) {
        k = pack_rows(w.pk, k, ldk, d, d, pb.lk, kbegin, kend);
        ldk = d;
    }
    const bool packed_v = shared && fits && (ldv_all != dv || dv % panel != 0);
    if (packed_v) {
        v = pack_rows(w.pv, v, ldv_all, dv, dp, pb.lk, kbegin, kend);
        ldv_all = dp;
    }
    const bool pack_v = !packed_v && dv % panel != 0;
    const float* bias = pb.bias.data ? pb.bias.at(pb.batch, j) + i0 * pb.bias.row_stride : nullptr;
    for (std::size_t j0 = kbegin; j0 < kend; j0 += block_k) {
        const std::size_t width = std::min(block_k, kend - j0);
        gemm_tiles<I>(k + j0 * ldk, ldk, 1, w.qt.data(), bq, w.st.data(), bq, width, cols, d, false);
        // Query c of the tile sees this tile's keys 0 .. offset + i0 + c - j0 (causal), and with a window from
        // key offset + i0 + c - window + 1 - j0 on.
        const std::ptrdiff_t first = static_cast<std::ptrdiff_t>(pb.offset + i0) - static_cast<std::ptrdiff_t>(j0);
        const std::ptrdiff_t from = first - static_cast<std::ptrdiff_t>(pb.window) + 1;
        const bool window_cut = pb.window && from + static_cast<std::ptrdiff_t>(rows) - 1 > 0;
        if (bias)  // the additive mask, on the scaled scores
            for (std::size_t c = 0; c < rows; ++c)
                for (std::size_t jj = 0; jj < width; ++jj) w.st[jj * bq + c] += bias[c * pb.bias.row_stride + j0 + jj];
        if (window_cut)  // keys before a query's window weigh 0: -inf scores, as the book's masked_fill makes them
            for (std::size_t c = 0; c < rows; ++c) {
                const std::ptrdiff_t lo = from + static_cast<std::ptrdiff_t>(c);
                for (std::size_t jj = 0; static_cast<std::ptrdiff_t>(jj) < lo && jj < width; ++jj)
                    w.st[jj * bq + c] = -std::numeric_limits<float>::infinity();
            }
#ifdef SHAPED_FLASH_AVX2
        if constexpr (I == isa::avx512)
            softmax_tile_avx512(w.st.data(), bq, width, cols, pb.causal, first, w.m.data(), w.l.data(), w.alpha.data());
        else if constexpr (I == isa::avx2)
            softmax_tile_avx2(w.st.data(), bq, width, cols, pb.causal, first, w.m.data(), w.l.data(), w.alpha.data());
        else
#endif
            softmax_tile_portable(w.st.data(), bq, width, cols, pb.causal, first, w.m.data(), w.l.data(),
                                  w.alpha.data());
        if (j0 > kbegin)
            for (std::size_t r = 0; r < rows; ++r) {
                float* a = w.acc.data() + r * dp;
#ifdef SHAPED_FLASH_AVX2
                if constexpr (I == isa::avx512)
                    scale_row_avx512(a, dp, w.alpha[r]);
                else if constexpr (I == isa::avx2)
                    scale_row_avx2(a, dp, w.alpha[r]);
                else
#endif
                    for (std::size_t c = 0; c < dp; ++c) a[c] *= w.alpha[r];
            }
        const float* vb = v + j0 * ldv_all;
        std::size_t ldv = ldv_all;
        if (pack_v) {  // values into (width × dp), zero-padded, when head_dim is not a multiple of 16
            for (std::size_t c = 0; c < width; ++c) {
                std::copy_n(vb + c * ldv_all, dv, w.vp.data() + c * dp);
                std::fill_n(w.vp.data() + c * dp + dv, dp - dv, 0.0f);
            }
            vb = w.vp.data();
            ldv = dp;
        }
        // acc (rows × dp) += P (rows × width) · V (width × dp), P read from the transposed scores. A query reads
        // the values of the keys it sees only: where the causal mask cuts the tile, a NaN or inf among the values
        // would reach the queries before its key through their weight 0 (0 · inf is NaN), so such a tile (one
        // check of its values; rare) adds key by key.
        const bool cut = (pb.causal && first < static_cast<std::ptrdiff_t>(width) - 1) || window_cut;
        bool finite_v = true;
        if (cut) {
#ifdef SHAPED_FLASH_AVX512
            if constexpr (I == isa::avx512)
                finite_v = all_finite_avx512(vb, ldv, width, dv);
            else
#endif
                finite_v = all_finite(vb, ldv, width, dv);
        }
        if (!finite_v)
            add_seen_values(w.st.data(), bq, vb, ldv, w.acc.data(), dp, rows, width, dv,
                            pb.causal ? first : static_cast<std::ptrdiff_t>(width),
                            pb.window ? from : std::numeric_limits<std::ptrdiff_t>::min() / 2);
        else
            gemm_tiles<I>(w.st.data(), 1, bq, vb, ldv, w.acc.data(), dp, rows, dp, width, true);
    }
    // A query that saw no key has l = 0 and gives 0 · inf, NaN, as softmax over a row of -inf does.
#ifdef SHAPED_FLASH_AVX512
    if constexpr (I == isa::avx512) {
        store_rows_avx512(w.acc.data(), dp, w.l.data(), out, pb.out.row_stride, rows, dv);
        return;
    }
#endif
    for (std::size_t r = 0; r < rows; ++r) {
        const float inv = 1.0f / w.l[r];
        for (std::size_t c = 0; c < dv; ++c) out[r * pb.out.row_stride + c] = w.acc[r * dp + c] * inv;
    }
}

/// How many threads the kernel runs: `shaped::num_threads()`, the count of the projections' oneDNN
/// products too (threads.hpp); one thread for problems too small to pay for starting another.
inline std::size_t threads_for(double flops, std::size_t items) {
    std::size_t n = static_cast<std::size_t>(num_threads());
    if (flops < 4e6) n = 1;
    return std::max<std::size_t>(1, std::min(n, items));
}

/// Runs the problem: work items are (batch matrix, query tile), handed out by an atomic counter to
/// `threads_for(...)` threads of shaped's pool, the caller's among them. Batch matrix after batch matrix, so that
/// one matrix's keys and values stay in the caches while its query tiles read them (taking every matrix's last
/// tile first, then every matrix's next, took 13% longer at GPT-2 small, batch 8 × 1024, keys read as the fused
/// module reads them, and 25% with adjacent keys); within a matrix the costliest (last) tiles first, so that the
/// threads end on cheap ones.
template <std::size_t NB>
void run(const problem<NB>& pb) {
    std::size_t nbatch = 1;
    for (std::size_t e : pb.batch) nbatch *= e;
    const std::size_t tiles = (pb.lq + block_q - 1) / block_q, items = nbatch * tiles;
    double keys = pb.causal ? static_cast<double>(pb.offset) + static_cast<double>(pb.lq + 1) / 2
                            : static_cast<double>(pb.lk);
    if (pb.window) keys = std::min(keys, static_cast<double>(pb.window));
    const double flops = 2.0 * static_cast<double>(nbatch) * static_cast<double>(pb.lq) * keys *
                         static_cast<double>(pb.d + pb.dv);
    const std::size_t n = pb.threads ? std::min(pb.threads, items) : threads_for(flops, items);
    std::vector<scratch> work;
    work.reserve(n);
    for (std::size_t t = 0; t < n; ++t) work.emplace_back(pb.d, pb.dv);
    std::atomic<std::size_t> next{0};
    const isa path = resolve(pb.path);
    auto worker = [&](scratch& w) {
        for (std::size_t item; (item = next.fetch_add(1, std::memory_order_relaxed)) < items;) {
            const std::size_t tile = tiles - 1 - item % tiles, j = item / tiles;
            switch (path) {
                case isa::avx512: query_tile<isa::avx512>(pb, w, j, tile * block_q); break;
                case isa::avx2: query_tile<isa::avx2>(pb, w, j, tile * block_q); break;
                default: query_tile<isa::portable>(pb, w, j, tile * block_q); break;
            }
        }
    };
    parallel(n, [&](std::size_t t) { worker(work[t]); });  // shaped's pool (threads.hpp)
}

}  // namespace shaped::detail::flash

#endif
