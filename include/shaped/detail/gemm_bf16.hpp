#ifndef SHAPED_DETAIL_GEMM_BF16_HPP
#define SHAPED_DETAIL_GEMM_BF16_HPP

/// \file
/// Matrix products whose right operand is a weight kept in BF16 (`nn::linear<In, Out, float, bfloat16>`):
/// C = A · Wᵀ (+ beta · C), A float, W bfloat16, C float, every product and sum in float. A few rows of A
/// (decoding) read W once, converting each element in registers: the step reads half the bytes a float
/// weight takes. Many rows (a prompt) convert W a panel at a time into float and hand each panel to
/// oneDNN's sgemm, so the product runs at sgemm's rate. Types and extents have been checked by the caller.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../bfloat16.hpp"
#include "../threads.hpp"
#include "buffer_cache.hpp"
#include "cpu.hpp"
#include "gemm.hpp"

namespace shaped::detail {

/// Rows of A up to which `gemm_bf16` reads W once for all of them (a decoding step of a few sequences);
/// above it, W is converted to float a panel at a time for sgemm.
inline constexpr std::size_t bf16_direct_rows = 4;
/// Floats in one panel of W converted for sgemm when A has more rows than `bf16_direct_rows` (8 MB).
inline constexpr std::size_t bf16_panel_floats = std::size_t{1} << 21;

namespace bf16 {

// y[i · ldc + r] = beta · y + Σ_k a[i · k + kk] · w[r · k + kk] for i < M, r in [r0, r1): W's rows read once.
// Each element's sum is taken in the same order whatever the rows given, so that any split of the rows
// among threads gives the same bits.
template <std::size_t M>
void rows_portable(const float* a, const bfloat16* w, float* c, std::size_t ldc, std::size_t k, std::size_t r0,
                   std::size_t r1, float beta) {
    for (std::size_t r = r0; r < r1; ++r) {
        float acc[M] = {};
        const bfloat16* wr = w + r * k;
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

template <std::size_t L, std::size_t M>
[[gnu::always_inline]] inline void rows_vector(const float* a, const bfloat16* w, float* c, std::size_t ldc,
                                               std::size_t k, std::size_t r0, std::size_t r1, float beta) {
    using F = typename lanes<L>::f;
    using U = typename lanes<L>::u;
    using H = typename lanes<L>::h;
    const std::size_t steps = k / (2 * L) * (2 * L);
    for (std::size_t r = r0; r < r1; ++r) {
        F lo[M], hi[M];
        for (std::size_t i = 0; i < M; ++i) lo[i] = hi[i] = F{};
        const bfloat16* wr = w + r * k;
        for (std::size_t kk = 0; kk < steps; kk += 2 * L) {
            H h0, h1;
            std::memcpy(&h0, wr + kk, sizeof h0);
            std::memcpy(&h1, wr + kk + L, sizeof h1);
            const F w0 = reinterpret_cast<F>(__builtin_convertvector(h0, U) << 16);  // a bfloat16's float
            const F w1 = reinterpret_cast<F>(__builtin_convertvector(h1, U) << 16);
            for (std::size_t i = 0; i < M; ++i) {
                F x0, x1;
                std::memcpy(&x0, a + i * k + kk, sizeof x0);
                std::memcpy(&x1, a + i * k + kk + L, sizeof x1);
                lo[i] += x0 * w0;
                hi[i] += x1 * w1;
            }
        }
        for (std::size_t i = 0; i < M; ++i) {
            const F both = lo[i] + hi[i];
            float acc = 0;
            for (std::size_t j = 0; j < L; ++j) acc += both[j];
            for (std::size_t kk = steps; kk < k; ++kk) acc += a[i * k + kk] * static_cast<float>(wr[kk]);
            c[i * ldc + r] = acc + (beta == 0 ? 0.0f : beta * c[i * ldc + r]);
        }
    }
}

#ifdef SHAPED_X86_SIMD
template <std::size_t M>
SHAPED_AVX2_TARGET void rows_avx2(const float* a, const bfloat16* w, float* c, std::size_t ldc, std::size_t k,
                                  std::size_t r0, std::size_t r1, float beta) {
    rows_vector<8, M>(a, w, c, ldc, k, r0, r1, beta);
}

template <std::size_t M>
SHAPED_AVX512_TARGET void rows_avx512(const float* a, const bfloat16* w, float* c, std::size_t ldc, std::size_t k,
                                      std::size_t r0, std::size_t r1, float beta) {
    rows_vector<16, M>(a, w, c, ldc, k, r0, r1, beta);
}
#endif

template <std::size_t M>
void rows(isa path, const float* a, const bfloat16* w, float* c, std::size_t ldc, std::size_t k, std::size_t r0,
          std::size_t r1, float beta) {
#ifdef SHAPED_X86_SIMD
    if (path == isa::avx512) return rows_avx512<M>(a, w, c, ldc, k, r0, r1, beta);
    if (path == isa::avx2) return rows_avx2<M>(a, w, c, ldc, k, r0, r1, beta);
#endif
    rows_portable<M>(a, w, c, ldc, k, r0, r1, beta);
}

// Rows [r0, r1) of C for `m` (1 .. bf16_direct_rows) rows of A.
inline void direct(isa path, const float* a, std::size_t m, const bfloat16* w, float* c, std::size_t ldc,
                   std::size_t k, std::size_t r0, std::size_t r1, float beta) {
    switch (m) {
        case 1: return rows<1>(path, a, w, c, ldc, k, r0, r1, beta);
        case 2: return rows<2>(path, a, w, c, ldc, k, r0, r1, beta);
        case 3: return rows<3>(path, a, w, c, ldc, k, r0, r1, beta);
        default: return rows<4>(path, a, w, c, ldc, k, r0, r1, beta);
    }
}

}  // namespace bf16

/// C[M×N] = A[M×K] · Wᵀ + beta · C: A float, row-major; W bfloat16, N×K row-major (a layer's weight,
/// `(out_features, in_features)`); C float, row-major, contiguous. Up to `bf16_direct_rows` rows of A, W is
/// read once on `path` (the widest the CPU has unless a test asks for a narrower one), blocks of `gemv_rows`
/// rows of W handed out to shaped's threads, each element the same bits at any thread count; above it, W is
/// converted a panel of rows at a time (`bf16_panel_floats`, the conversion shared out among shaped's threads in
/// blocks of 16 rows; it is exact, so the bits do not depend on who converts) and each panel multiplied by
/// oneDNN's sgemm.
inline void gemm_bf16(const float* a, const bfloat16* w, float* c, std::size_t m, std::size_t n, std::size_t k,
                      float beta = 0, isa path = isa::best) {
    if (m == 0 || n == 0) return;
    if (m <= bf16_direct_rows) {
        const isa p = resolve(path);
        const std::size_t blocks = (n + gemv_rows - 1) / gemv_rows;
        const std::size_t threads = 2.0 * static_cast<double>(m * n) * static_cast<double>(k) < 1e6
                                        ? 1
                                        : std::min<std::size_t>(static_cast<std::size_t>(num_threads()), blocks);
        if (threads <= 1) return bf16::direct(p, a, m, w, c, n, k, 0, n, beta);
        std::atomic<std::size_t> next{0};
        parallel(threads, [&](std::size_t) {
            for (std::size_t j; (j = next.fetch_add(1, std::memory_order_relaxed)) < blocks;)
                bf16::direct(p, a, m, w, c, n, k, j * gemv_rows, std::min(n, (j + 1) * gemv_rows), beta);
        });
        return;
    }
    // Panels of about `bf16_panel_floats` floats, a multiple of 16 rows: large enough that each sgemm call has
    // columns for every thread, small enough to stay in the last-level cache between the conversion and the
    // product. The conversion is shared out among shaped's threads, as the product is by oneDNN.
    const std::size_t panel_rows =
        std::min(n, std::max<std::size_t>(16, bf16_panel_floats / std::max<std::size_t>(k, 1) / 16 * 16));
    // From the kept buffers (memory.hpp), uninitialized: a prompt's pass asks for one per layer.
    xt::uvector<float, buffer_allocator<float>> panel(panel_rows * k);
    const std::size_t threads = static_cast<std::size_t>(num_threads());
    for (std::size_t r = 0; r < n; r += panel_rows) {
        const std::size_t rows = std::min(panel_rows, n - r);
        const std::size_t chunks = (rows + 15) / 16;
        std::atomic<std::size_t> next{0};
        parallel(std::min(threads, chunks), [&](std::size_t) {
            for (std::size_t j; (j = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) {
                const std::size_t from = j * 16, count = std::min<std::size_t>(16, rows - from);
                to_float(w + (r + from) * k, panel.data() + from * k, count * k);
            }
        });
        gemm(a, blas_matrix{true, false, k}, k, panel.data(), blas_matrix{true, true, k}, c + r, m, rows, k, n, beta);
    }
}

}  // namespace shaped::detail

#endif
