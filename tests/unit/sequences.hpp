// Slicing sequences for the tests of attention modules with caches: tokens from..from + n of every sequence
// (prompts fed in chunks), and the largest difference between a chunk's outputs and a golden's rows.
#ifndef SHAPED_TESTS_UNIT_SEQUENCES_HPP
#define SHAPED_TESTS_UNIT_SEQUENCES_HPP

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

#include <shaped/tensor.hpp>

namespace test {

/// `x[:, from:from + n]` over `b` sequences, sequence `i` taken from `x`'s sequence `i % batch`: `b` copies of
/// a one-sequence `x`, or `x`'s own sequences when `b` is its batch.
template <class B, class T, class Width>
shaped::tensor<float, B, T, Width> tokens(const shaped::tensor<float, B, T, Width>& x, std::size_t b, std::size_t from,
                                          std::size_t n) {
    using X = shaped::tensor<float, B, T, Width>;
    constexpr std::size_t width = Width::extent;
    X out(X::extents_type::checked("test::tokens", b, n), shaped::uninitialized);
    for (std::size_t i = 0; i < b; ++i)
        for (std::size_t t = 0; t < n; ++t)
            for (std::size_t e = 0; e < width; ++e)
                out.data()[(i * n + t) * width + e] = x.at(i % x.shape.extent(0), from + t, e);
    return out;
}

/// The largest |y - golden| over y's rows, which are rows `from`.. of the golden's sequences (`tokens` rows
/// of `width` floats each, `golden_batch` of them); y's sequence `i` is compared with the golden's
/// `i % golden_batch`.
template <class Y, std::size_t N>
double rows_diff(const Y& y, const std::array<float, N>& golden, std::size_t from, std::size_t tokens,
                 std::size_t width, std::size_t golden_batch) {
    double worst = 0;
    for (std::size_t i = 0; i < y.shape.extent(0); ++i)
        for (std::size_t t = 0; t < y.shape.extent(1); ++t)
            for (std::size_t e = 0; e < width; ++e)
                worst = std::max(worst, std::abs(double(y.at(i, t, e)) -
                                                 golden[((i % golden_batch) * tokens + from + t) * width + e]));
    return worst;
}

}  // namespace test

#endif
