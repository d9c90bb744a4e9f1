#ifndef SHAPED_DETAIL_GEMM_HPP
#define SHAPED_DETAIL_GEMM_HPP

/// \file
/// Where matrix products are computed; the one place that chooses the library for each.
/// - `float` matrix products: oneDNN's `dnnl_sgemm`, which picks its kernels from the CPU at run time
///   (AVX-512 where there is one) and is PyTorch's own CPU backend: twice OpenBLAS's rate on AVX-512
///   machines (docs/performance.md).
/// - `float` products of a layer's weight with one to four rows (decoding): shaped's own kernel, which
///   streams the weight faster than OpenBLAS's `sgemv` or oneDNN's sgemm do (gemm_few_rows.hpp;
///   weight_product.hpp chooses).
/// - `double`: OpenBLAS (oneDNN has no double-precision product).
/// OpenBLAS always runs one thread per call: shaped's threads (threads.hpp) are the only ones.
/// Types and extents have been checked by the callers; this file sees pointers, strides and sizes.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <oneapi/dnnl/dnnl.h>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <xtensor-blas/xblas.hpp>

#include "../threads.hpp"

extern "C" void openblas_set_num_threads(int);

namespace shaped::detail {

/// The largest extent one BLAS call takes (its index type is `int` in xtensor-blas's default build);
/// oneDNN's is 64-bit, and the same bound is kept for both element types.
inline constexpr std::size_t blas_max = static_cast<std::size_t>(std::numeric_limits<xt::blas_index_t>::max());

// How a rows × cols matrix whose elements lie `rs` apart along a row index and `cs` apart along a column
// index is read: as it is (row-major, leading dimension rs) when cs is 1, or as the transpose of a
// row-major cols × rows matrix (leading dimension cs) when rs is 1. Neither: `ok` is false.
struct blas_matrix {
    bool ok = false;
    bool trans = false;
    std::size_t ld = 0;
};
constexpr blas_matrix blas_layout(std::size_t rows, std::size_t cols, std::size_t rs, std::size_t cs) {
    if (cols == 1 || cs == 1) {  // the stride of an extent-1 axis is never followed
        const std::size_t ld = rows == 1 ? std::max<std::size_t>(cols, 1) : rs;
        if (ld >= std::max<std::size_t>(cols, 1) && ld <= blas_max) return {true, false, ld};
    }
    if (rows == 1 || rs == 1) {
        const std::size_t ld = cols == 1 ? std::max<std::size_t>(rows, 1) : cs;
        if (ld >= std::max<std::size_t>(rows, 1) && ld <= blas_max) return {true, true, ld};
    }
    return {};
}

/// OpenBLAS set to one thread per call, once per program (its own pool would compete with shaped's).
inline void openblas_single_threaded() {
    static std::once_flag once;
    std::call_once(once, [] { openblas_set_num_threads(1); });
}

[[noreturn, gnu::noinline, gnu::cold]] inline void onednn_failed(int status) {
    throw std::runtime_error("shaped: oneDNN's sgemm failed (dnnl_status_t " + std::to_string(status) +
                             "); the product's extents and strides were checked, so this is a bug in shaped");
}

// C[M×N] (row-major, rows `ldc` apart; contiguous by default) = op(A)[M×K] · op(B)[K×N] + beta · C, A and B
// laid out as `la` and `lb` say; `a_row` is the distance between A's rows. For double, rows beyond BLAS's
// index range go in several calls; N and K are checked by the callers.
template <class Value>
void gemm(const Value* a, const blas_matrix& la, std::size_t a_row, const Value* b, const blas_matrix& lb, Value* c,
          std::size_t m, std::size_t n, std::size_t k, std::size_t ldc = 0, Value beta = 0) {
    if (ldc == 0) ldc = n;
    if (m == 0 || n == 0) return;
    if constexpr (std::is_same_v<Value, float>) {
        if (k == 0) {  // a sum of nothing: oneDNN is not asked
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0 ? 0.0f : beta * c[i * ldc + j];
            return;
        }
        apply_thread_count();
        const auto d = [](std::size_t x) { return static_cast<dnnl_dim_t>(x); };
        const dnnl_status_t status =
            dnnl_sgemm(la.trans ? 'T' : 'N', lb.trans ? 'T' : 'N', d(m), d(n), d(k), 1.0f, a, d(la.ld), b, d(lb.ld),
                       beta, c, d(ldc));
        if (status != dnnl_success) onednn_failed(static_cast<int>(status));
    } else {
        openblas_single_threaded();
        using index = xt::blas_index_t;
        auto op = [](const blas_matrix& l) { return l.trans ? cxxblas::Transpose::Trans : cxxblas::Transpose::NoTrans; };
        for (std::size_t row = 0; row < m; row += blas_max) {
            const std::size_t rows = std::min(blas_max, m - row);
            cxxblas::gemm<index>(cxxblas::StorageOrder::RowMajor, op(la), op(lb), static_cast<index>(rows),
                                 static_cast<index>(n), static_cast<index>(k), Value(1), a + row * a_row,
                                 static_cast<index>(la.ld), b, static_cast<index>(lb.ld), beta, c + row * ldc,
                                 static_cast<index>(ldc));
        }
    }
}

// C[M×N] = A[M×K] · B[K×N] + beta · C (row-major, contiguous), or A · Bᵀ with B stored N×K when
// `b_transposed`.
template <class Value>
void gemm(const Value* a, const Value* b, Value* c, std::size_t m, std::size_t n, std::size_t k,
          bool b_transposed = false, Value beta = 0) {
    gemm(a, blas_matrix{true, false, k}, k, b, blas_matrix{true, b_transposed, b_transposed ? k : n}, c, m, n, k, 0,
         beta);
}

/// Rows of the weight one thread takes at a time in `gemv` and `gemm_few_rows`: a multiple of every kernel's row block, so
/// that each row is computed by the same instructions whatever the number of threads.
inline constexpr std::size_t gemv_rows = 256;

// y[M] = A[M×K] · x[K] + beta · y, A row-major: a double-precision layer applied to one row. OpenBLAS's
// gemv streams the matrix once; blocks of `gemv_rows` rows are handed out to shaped's threads.
template <class Value>
void gemv(const Value* a, const Value* x, Value* y, std::size_t m, std::size_t k, Value beta = 0) {
    openblas_single_threaded();
    using index = xt::blas_index_t;
    auto rows = [&](std::size_t first, std::size_t count) {
        cxxblas::gemv<index>(cxxblas::StorageOrder::RowMajor, cxxblas::Transpose::NoTrans, static_cast<index>(count),
                             static_cast<index>(k), Value(1), a + first * k, static_cast<index>(k), x, index(1), beta,
                             y + first, index(1));
    };
    const std::size_t blocks = (m + gemv_rows - 1) / gemv_rows;
    // Below about a megaflop, starting the pool costs more than it saves.
    const std::size_t threads = 2.0 * static_cast<double>(m) * static_cast<double>(k) < 1e6
                                    ? 1
                                    : std::min<std::size_t>(static_cast<std::size_t>(num_threads()), blocks);
    if (threads <= 1) {
        if (m > 0) rows(0, m);
        return;
    }
    std::atomic<std::size_t> next{0};
    parallel(threads, [&](std::size_t) {
        for (std::size_t j; (j = next.fetch_add(1, std::memory_order_relaxed)) < blocks;)
            rows(j * gemv_rows, std::min(gemv_rows, m - j * gemv_rows));
    });
}

}  // namespace shaped::detail

#endif
