// Helpers of the tests of the products with a layer's weight (gemm_few_rows.cpp, bfloat16.cpp): random
// inputs, the SIMD paths this CPU runs, a product's error against the sum in double, and a product run at
// 1, 2 and 4 threads.
#ifndef SHAPED_TESTS_PRODUCTS_HPP
#define SHAPED_TESTS_PRODUCTS_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include <shaped/detail/cpu.hpp>
#include <shaped/threads.hpp>

namespace test {

inline std::vector<float> random_floats(std::size_t n, std::mt19937& rng) {
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

/// The SIMD paths this CPU runs, besides the plain loops.
inline std::vector<shaped::detail::isa> simd_paths() {
    using shaped::detail::isa;
    std::vector<isa> p{isa::portable};
    for (const auto path : {isa::avx2, isa::avx512})
        if (shaped::detail::resolve(path) == path) p.push_back(path);
    return p;
}

/// The largest error of C (M×N) = A (M×K) · Wᵀ (W N×K, float or bfloat16) + beta · C0 against the sum in
/// double, relative to the sum of the terms' magnitudes (the scale of a sum's rounding error, whose bound
/// is float's unit roundoff times the number of terms chained).
template <class W>
double worst_relative_error(const std::vector<float>& a, const std::vector<W>& w, const std::vector<float>& c0,
                            const std::vector<float>& c, std::size_t m, std::size_t n, std::size_t k, float beta) {
    double worst = 0;
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t r = 0; r < n; ++r) {
            double exact = beta * c0[i * n + r], size = std::abs(exact);
            for (std::size_t kk = 0; kk < k; ++kk) {
                const double p = double(a[i * k + kk]) * double(static_cast<float>(w[r * k + kk]));
                exact += p;
                size += std::abs(p);
            }
            worst = std::max(worst, std::abs(c[i * n + r] - exact) / (size + 1e-30));
        }
    return worst;
}

/// `product(c)` run on a copy of `c0` at 1, 2 and 4 threads: the three results, in that order.
template <class Product>
std::vector<std::vector<float>> at_1_2_4_threads(const std::vector<float>& c0, Product product) {
    std::vector<std::vector<float>> out;
    for (const int threads : {1, 2, 4}) {
        shaped::set_num_threads(threads);
        auto c = c0;
        product(c);
        out.push_back(std::move(c));
    }
    shaped::set_num_threads(1);
    return out;
}

}  // namespace test

#endif
