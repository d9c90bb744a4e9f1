// The product that streams a layer's float weight once (decoding: one to four rows through a layer), on
// each SIMD path the CPU has, against a double-precision sum; the same bits with W's rows read side by side as
// alone, and at 1, 2 and 4 threads; and
// nn::linear taking it for a few rows and sgemm for many, the two within float's rounding of each other.
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include <shaped/detail/gemm_few_rows.hpp>
#include <shaped/nn/linear.hpp>
#include <shaped/threads.hpp>
#include <shaped/torch/generator.hpp>
#include <shaped/torch/normal.hpp>

#include "check.hpp"
#include "products.hpp"

namespace detail = shaped::detail;
using test::random_floats;

TEST_CASE("gemm_few_rows: A · Wᵀ over float weights on every path, within float's rounding of the exact sum") {
    std::mt19937 rng(5);
    // k around the vector steps (16 and 32 floats on AVX-512, 8 and 16 on AVX2) and their tails; m past
    // few_rows (taken in groups); n past one block of gemv_rows.
    for (const std::size_t m : {1, 2, 3, 4, 5, 9})
        for (const std::size_t n : {1, 255, 257, 600})
            for (const std::size_t k : {1, 15, 16, 31, 32, 33, 100, 257}) {
                const auto a = random_floats(m * k, rng);
                const auto w = random_floats(n * k, rng);
                const auto c0 = random_floats(m * n, rng);
                for (const float beta : {0.0f, 1.0f})
                    for (const auto path : test::simd_paths()) {
                        CAPTURE(m);
                        CAPTURE(n);
                        CAPTURE(k);
                        CAPTURE(beta);
                        CAPTURE(static_cast<int>(path));
                        auto c = c0;
                        detail::gemm_few_rows(a.data(), w.data(), c.data(), m, n, k, beta, path);
                        // float's unit roundoff times the terms a sum can chain (the bound of a sum's error).
                        CHECK(test::worst_relative_error(a, w, c0, c, m, n, k, beta) <= 6e-8 * double(k + 2));
                    }
            }
}

TEST_CASE("gemm_few_rows: W's rows read four or two side by side give each element the bits of its row alone") {
    std::mt19937 rng(23);
    // n = 11: for one row of A, rows {0, 2, 4, 6} and {1, 3, 5, 7} read together, then 8, 9 and 10 alone; for two
    // (and for three and four on AVX-512), {0, 5} to {4, 9}, then 10 alone; for three and four on AVX2, each row
    // alone.
    constexpr std::size_t n = 11;
    for (const std::size_t m : {1, 2, 3, 4})
        for (const std::size_t k : {15, 33, 257}) {
            const auto a = random_floats(m * k, rng);
            const auto w = random_floats(n * k, rng);
            for (const auto path : test::simd_paths()) {
                CAPTURE(m);
                CAPTURE(k);
                CAPTURE(static_cast<int>(path));
                std::vector<float> all(m * n);
                detail::gemm_few_rows(a.data(), w.data(), all.data(), m, n, k, 0.0f, path);
                for (std::size_t r = 0; r < n; ++r) {
                    std::vector<float> one(m);
                    detail::gemm_few_rows(a.data(), w.data() + r * k, one.data(), m, 1, k, 0.0f, path);
                    for (std::size_t i = 0; i < m; ++i) CHECK(std::memcmp(&one[i], &all[i * n + r], sizeof(float)) == 0);
                }
            }
        }
}

TEST_CASE("gemm_few_rows gives the same bits at 1, 2 and 4 threads") {
    std::mt19937 rng(17);
    constexpr std::size_t n = 3000, k = 300;  // 12 blocks of gemv_rows, the last one short
    const auto w = random_floats(n * k, rng);
    for (const std::size_t m : {1, 4}) {
        const auto a = random_floats(m * k, rng);
        const auto out = test::at_1_2_4_threads(std::vector<float>(m * n, 0.5f), [&](std::vector<float>& c) {
            detail::gemm_few_rows(a.data(), w.data(), c.data(), m, n, k, 1.0f);
        });
        CAPTURE(m);
        CHECK(std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(float)) == 0);
        CHECK(std::memcmp(out[0].data(), out[2].data(), out[0].size() * sizeof(float)) == 0);
    }
}

namespace {
struct d_in : shaped::axis<"d_in", 300> {};
struct d_out : shaped::axis<"d_out", 700> {};
struct tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<shaped::axis<"context_length", 9>>> {};
}  // namespace

TEST_CASE("nn::linear: the first rows alone (streamed weight) and among nine (sgemm) agree to float's rounding") {
    shaped::torch::manual_seed(3);
    const shaped::nn::linear<d_in, d_out> layer;
    const auto x = shaped::torch::randn<tokens, d_in>(9);
    const auto all = layer(x);
    const std::vector<float> xs(x.data(), x.data() + x.numel()), ys(all.data(), all.data() + all.numel());
    for (const std::size_t t : {1, 2, 3, 4, 5}) {
        CAPTURE(t);
        const auto part = layer(shaped::tensor<float, tokens, d_in>::from_buffer(
            std::span<const float>(xs.data(), t * d_in::extent), t));
        double worst = 0;
        for (std::size_t i = 0; i < t * d_out::extent; ++i) worst = std::max(worst, std::abs(double(part.data()[i]) - ys[i]));
        CHECK(worst <= 2e-5);
        // Up to few_rows, another kernel with another order of the sums: some element differs in its last bits.
        if (t <= shaped::detail::few_rows) CHECK(worst > 0.0);
    }
}
