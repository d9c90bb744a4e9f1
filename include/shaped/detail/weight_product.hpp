#ifndef SHAPED_DETAIL_WEIGHT_PRODUCT_HPP
#define SHAPED_DETAIL_WEIGHT_PRODUCT_HPP

/// \file
/// A layer applied to rows: C[M×N] = A[M×K] · Wᵀ + beta · C, W a layer's weight (`(out_features,
/// in_features)`, N×K row-major), A and C row-major and contiguous. The one place that picks the kernel for
/// `nn::linear` and `nn::tied_head`:
/// - W bfloat16: `gemm_bf16` (read once for a few rows, converted in panels for sgemm above).
/// - W float, up to `few_rows` rows of A (decoding): `gemm_few_rows`, which streams W once; above it,
///   oneDNN's sgemm.
/// - double: OpenBLAS's dgemv for one row, dgemm above.
/// Types and extents have been checked by the callers.

#include <cstddef>
#include <type_traits>

#include "../bfloat16.hpp"
#include "gemm.hpp"
#include "gemm_bf16.hpp"
#include "gemm_few_rows.hpp"

namespace shaped::detail {

template <class Value, class W>
void weight_product(const Value* a, const W* w, Value* c, std::size_t m, std::size_t n, std::size_t k, Value beta) {
    if constexpr (std::is_same_v<W, bfloat16>)
        gemm_bf16(a, w, c, m, n, k, beta);
    else if constexpr (std::is_same_v<Value, float>)
        m <= few_rows ? gemm_few_rows(a, w, c, m, n, k, beta) : gemm(a, w, c, m, n, k, true, beta);
    else
        m == 1 ? gemv(w, a, c, n, k, beta) : gemm(a, w, c, m, n, k, true, beta);
}

}  // namespace shaped::detail

#endif
