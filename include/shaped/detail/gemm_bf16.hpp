#ifndef SHAPED_DETAIL_GEMM_BF16_HPP
#define SHAPED_DETAIL_GEMM_BF16_HPP

/// \file
/// Matrix products whose right operand is a weight kept in BF16 (`nn::linear<In, Out, float, bfloat16>`):
/// C = A · Wᵀ (+ beta · C), A float, W bfloat16, C float, every product and sum in float. A few rows of A
/// (decoding) read W once, converting each element in registers (gemm_few_rows.hpp): the step reads half
/// the bytes a float weight takes. Many rows (a prompt) convert W a panel at a time into float and hand each panel to
/// oneDNN's sgemm, so the product runs at sgemm's rate. Types and extents have been checked by the caller.

#include <algorithm>
#include <atomic>
#include <cstddef>

#include "../bfloat16.hpp"
#include "../threads.hpp"
#include "buffer_cache.hpp"
#include "cpu.hpp"
#include "gemm.hpp"
#include "gemm_few_rows.hpp"

namespace shaped::detail {

/// Floats in one panel of W converted for sgemm when A has more rows than `few_rows` (8 MB).
inline constexpr std::size_t bf16_panel_floats = std::size_t{1} << 21;

/// C[M×N] = A[M×K] · Wᵀ + beta · C: A float, row-major; W bfloat16, N×K row-major (a layer's weight,
/// `(out_features, in_features)`); C float, row-major, contiguous. Up to `few_rows` rows of A, W is read once
/// by `gemm_few_rows` on `path` (the widest the CPU has unless a test asks for a narrower one), each element
/// the same bits at any thread count; above it, W is converted a panel of rows at a time
/// (`bf16_panel_floats`, the conversion shared out among shaped's threads in blocks of 16 rows; it is exact,
/// so the bits do not depend on who converts) and each panel multiplied by oneDNN's sgemm.
inline void gemm_bf16(const float* a, const bfloat16* w, float* c, std::size_t m, std::size_t n, std::size_t k,
                      float beta = 0, isa path = isa::best) {
    if (m == 0 || n == 0) return;
    if (m <= few_rows) return gemm_few_rows(a, w, c, m, n, k, beta, path);
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
