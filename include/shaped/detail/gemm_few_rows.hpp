#ifndef SHAPED_DETAIL_GEMM_FEW_ROWS_HPP
#define SHAPED_DETAIL_GEMM_FEW_ROWS_HPP

/// \file
/// Products that read a layer's weight once: C[M×N] = A[M×K] · Wᵀ (+ beta · C) for M from 1 to `few_rows`
/// (a decoding step of one or a few sequences), A float, W float or bfloat16 (N×K row-major, a layer's
/// `(out_features, in_features)`), C float, every product and sum in float. Such a product does two flops
/// per element of W and is bound by the rate at which W comes from memory; shaped's own kernel streams it
/// faster than OpenBLAS's sgemv or oneDNN's sgemm do for one row (docs/performance.md), and converts a
/// bfloat16 element to float in registers, so that a BF16 weight costs half the bytes. Types and extents
/// have been checked by the caller.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../bfloat16.hpp"
#include "../threads.hpp"
#include "cpu.hpp"
#include "gemm.hpp"

namespace shaped::detail {

/// Rows of A up to which a product with a layer's weight reads the weight once (`gemm_few_rows`); above it,
/// the product goes to oneDNN's sgemm.
inline constexpr std::size_t few_rows = 4;

namespace few {

// y[i · ldc + r] = beta · y + Σ_k a[i · k + kk] · w[r · k + kk] for i < M, r in [r0, r1): W's rows read once.
// Each element's sum is taken in the same order whatever the rows given, so that any split of the rows
// among threads gives the same bits.
template <std::size_t M, class W>
void rows_portable(const float* a, const W* w, float* c, std::size_t ldc, std::size_t k, std::size_t r0,
                   std::size_t r1, float beta) {
    for (std::size_t r = r0; r < r1; ++r) {
        float acc[M] = {};
        const W* wr = w + r * k;
        for (std::size_t kk = 0; kk < k; ++kk) {
            const float x = static_cast<float>(wr[kk]);
            for (std::size_t i = 0; i < M; ++i) acc[i] += a[i * k + kk] * x;
        }
        for (std::size_t i = 0; i < M; ++i) c[i * ldc + r] = acc[i] + (beta == 0 ? 0.0f : beta * c[i * ldc + r]);
    }
}

// As rows_portable, in vectors of L floats (GCC's and clang's vector extensions, no intrinsics: the header
// stays light for every program that includes nn::linear): 2·L elements of a row per step in two
// accumulators per row of A, the rest of the row (k mod 2·L) in plain loops after. Inlined into the
// functions below, whose target attribute decides the instructions (L = 8: AVX2, L = 16: AVX-512).
template <std::size_t L>
struct lanes {
    typedef float f __attribute__((vector_size(4 * L)));
    typedef std::uint32_t u __attribute__((vector_size(4 * L)));
    typedef std::uint16_t h __attribute__((vector_size(2 * L)));
};

// L elements from `p` as floats into `x`: loaded as they are, or a bfloat16's bits moved to a float's top
// half. (Through a reference: a vector returned by value would be an ABI question outside the target.)
template <class F>
[[gnu::always_inline]] inline void load(F& x, const float* p) {
    std::memcpy(&x, p, sizeof x);
}
template <class F>
[[gnu::always_inline]] inline void load(F& x, const bfloat16* p) {
    constexpr std::size_t L = sizeof(F) / sizeof(float);
    typename lanes<L>::h h;
    std::memcpy(&h, p, sizeof h);
    x = reinterpret_cast<F>(__builtin_convertvector(h, typename lanes<L>::u) << 16);
}

// The sum of a vector's lanes, halves added to halves: four shuffles and four adds for sixteen lanes, where a
// sum lane after lane took fifteen of each and a third of the time of a product with four rows of A whose
// weight is in cache. (Through a reference, as in `load`.)
template <std::size_t L>
[[gnu::always_inline]] inline float lane_sum(const typename lanes<L>::f& v) {
    if constexpr (L == 2) {
        return v[0] + v[1];
    } else {
        typename lanes<L / 2>::f lo, hi;
        std::memcpy(&lo, &v, sizeof lo);
        std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
        return lane_sum<L / 2>(lo + hi);
    }
}

// Rows r, r + s, ..., r + (R - 1)·s of C: R rows of W read side by side, each in its own stream. A core keeps
// more cache lines in flight from several streams than from one (the machine benchmark reads 10% to 25% faster
// with four), and a decoding step is bound by that rate. Each element's sum is the one-row loop's, step for step.
template <std::size_t L, std::size_t M, std::size_t R, class W>
[[gnu::always_inline]] inline void row_group(const float* a, const W* w, float* c, std::size_t ldc, std::size_t k,
                                             std::size_t r, std::size_t s, float beta) {
    using F = typename lanes<L>::f;
    const std::size_t steps = k / (2 * L) * (2 * L);
    // The loops unrolled, so that the accumulators stay in registers (GCC's -O2 keeps such a loop, and the
    // accumulators in memory: a third of the rate at M = 4).
    F lo[R][M], hi[R][M];
#pragma GCC unroll 8
    for (std::size_t q = 0; q < R; ++q)
#pragma GCC unroll 8
        for (std::size_t i = 0; i < M; ++i) lo[q][i] = hi[q][i] = F{};
    for (std::size_t kk = 0; kk < steps; kk += 2 * L) {
        F x0[M], x1[M];
#pragma GCC unroll 8
        for (std::size_t i = 0; i < M; ++i) {
            load(x0[i], a + i * k + kk);
            load(x1[i], a + i * k + kk + L);
#if defined(SHAPED_X86_SIMD) && !defined(__clang__)
            // A's vectors held in registers where they fit beside the accumulators: GCC would otherwise fold
            // a load of A into each of the R products that use it, and at M = 4 the loop did 20 loads for 16
            // products where 12 suffice (15% of the rate with W in cache). (clang checks the operand's size
            // against this function's instruction set, before the AVX-512 one it is inlined into has given
            // it the registers.)
            if constexpr (2 * M * R + 2 * M + 2 <= (L == 16 ? 32 : 16)) __asm__("" : "+v"(x0[i]), "+v"(x1[i]));
#endif
        }
#pragma GCC unroll 8
        for (std::size_t q = 0; q < R; ++q) {
            F w0, w1;
            load(w0, w + (r + q * s) * k + kk);
            load(w1, w + (r + q * s) * k + kk + L);
#pragma GCC unroll 8
            for (std::size_t i = 0; i < M; ++i) {
                lo[q][i] += x0[i] * w0;
                hi[q][i] += x1[i] * w1;
            }
        }
    }
#pragma GCC unroll 8
    for (std::size_t q = 0; q < R; ++q) {
        const W* wr = w + (r + q * s) * k;
#pragma GCC unroll 8
        for (std::size_t i = 0; i < M; ++i) {
            float acc = lane_sum<L>(lo[q][i] + hi[q][i]);
            for (std::size_t kk = steps; kk < k; ++kk) acc += a[i * k + kk] * static_cast<float>(wr[kk]);
            c[i * ldc + r + q * s] = acc + (beta == 0 ? 0.0f : beta * c[i * ldc + r + q * s]);
        }
    }
}

// Rows [r0, r1) of C, four rows of W at a time for one row of A, two for two (2·M·R accumulators: 8 of the
// 16 vector registers AVX2 has), two for three or four with AVX-512's 32 registers (16 accumulators), else one;
// what is left one at a time. The R rows read together are an
// R-th of the range apart, so that each stream runs on through W's memory for an R-th of it: groups of R
// adjacent rows restarted four 3 KB streams every group, and decoded GPT-2 7% slower.
template <std::size_t L, std::size_t M, class W>
[[gnu::always_inline]] inline void rows_vector(const float* a, const W* w, float* c, std::size_t ldc,
                                               std::size_t k, std::size_t r0, std::size_t r1, float beta) {
    constexpr std::size_t R = M == 1 ? 4 : M == 2 ? 2 : L == 16 ? 2 : 1;
    const std::size_t s = (r1 - r0) / R;
    for (std::size_t j = 0; j < s; ++j) row_group<L, M, R>(a, w, c, ldc, k, r0 + j, s, beta);
    for (std::size_t r = r0 + R * s; r < r1; ++r) row_group<L, M, 1>(a, w, c, ldc, k, r, 0, beta);
}

#ifdef SHAPED_X86_SIMD
template <std::size_t M, class W>
SHAPED_AVX2_TARGET void rows_avx2(const float* a, const W* w, float* c, std::size_t ldc, std::size_t k,
                                  std::size_t r0, std::size_t r1, float beta) {
    rows_vector<8, M>(a, w, c, ldc, k, r0, r1, beta);
}

template <std::size_t M, class W>
SHAPED_AVX512_TARGET void rows_avx512(const float* a, const W* w, float* c, std::size_t ldc, std::size_t k,
                                      std::size_t r0, std::size_t r1, float beta) {
    rows_vector<16, M>(a, w, c, ldc, k, r0, r1, beta);
}
#endif

template <std::size_t M, class W>
void rows(isa path, const float* a, const W* w, float* c, std::size_t ldc, std::size_t k, std::size_t r0,
          std::size_t r1, float beta) {
#ifdef SHAPED_X86_SIMD
    if (path == isa::avx512) return rows_avx512<M>(a, w, c, ldc, k, r0, r1, beta);
    if (path == isa::avx2) return rows_avx2<M>(a, w, c, ldc, k, r0, r1, beta);
#endif
    rows_portable<M>(a, w, c, ldc, k, r0, r1, beta);
}

// Rows [r0, r1) of C for `m` rows of A, taken `few_rows` at a time (W is read once per group).
template <class W>
void rows_of(isa path, const float* a, std::size_t m, const W* w, float* c, std::size_t ldc, std::size_t k,
             std::size_t r0, std::size_t r1, float beta) {
    for (std::size_t i = 0; i < m; i += few_rows) {
        const float* ai = a + i * k;
        float* ci = c + i * ldc;
        switch (std::min(few_rows, m - i)) {
            case 1: rows<1>(path, ai, w, ci, ldc, k, r0, r1, beta); break;
            case 2: rows<2>(path, ai, w, ci, ldc, k, r0, r1, beta); break;
            case 3: rows<3>(path, ai, w, ci, ldc, k, r0, r1, beta); break;
            default: rows<4>(path, ai, w, ci, ldc, k, r0, r1, beta); break;
        }
    }
}

}  // namespace few

/// C[M×N] = A[M×K] · Wᵀ + beta · C, meant for M from 1 to `few_rows` (more rows are taken `few_rows` at a
/// time, reading W once per group): A float, row-major; W float or bfloat16, N×K
/// row-major; C float, row-major, contiguous. W is read once on `path` (the widest the CPU has unless a test
/// asks for a narrower one), blocks of at most `gemv_rows` rows of W handed out to shaped's threads, at least
/// eight per thread so that the threads finish together; each element is one sum in a fixed order, the same
/// bits at any thread count and any split.
template <class W>
    requires(std::is_same_v<W, float> || std::is_same_v<W, bfloat16>)
void gemm_few_rows(const float* a, const W* w, float* c, std::size_t m, std::size_t n, std::size_t k,
                   float beta = 0, isa path = isa::best) {
    if (m == 0 || n == 0) return;
    const isa p = resolve(path);
    // Below about a megaflop, starting the pool costs more than it saves.
    const std::size_t threads = 2.0 * static_cast<double>(m * n) * static_cast<double>(k) < 1e6
                                    ? 1
                                    : std::min<std::size_t>(static_cast<std::size_t>(num_threads()), (n + 15) / 16);
    if (threads <= 1) return few::rows_of(p, a, m, w, c, n, k, 0, n, beta);
    // Blocks of 16 to gemv_rows rows, a multiple of 16, eight or more per thread: 768 rows (a projection of
    // GPT-2 small) in three blocks of 256 kept one of two threads busy for twice as long as the other.
    const std::size_t per = (n + 8 * threads - 1) / (8 * threads);
    const std::size_t rows = std::clamp<std::size_t>((per + 15) / 16 * 16, 16, gemv_rows);
    const std::size_t blocks = (n + rows - 1) / rows;
    std::atomic<std::size_t> next{0};
    parallel(threads, [&](std::size_t) {
        for (std::size_t j; (j = next.fetch_add(1, std::memory_order_relaxed)) < blocks;)
            few::rows_of(p, a, m, w, c, n, k, j * rows, std::min(n, (j + 1) * rows), beta);
    });
}

}  // namespace shaped::detail

#endif
