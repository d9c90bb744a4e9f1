// Comparisons of tensors with golden arrays, shared by the unit tests.
#ifndef SHAPED_TESTS_CHECK_HPP
#define SHAPED_TESTS_CHECK_HPP

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <shaped/shaped.hpp>

namespace test {

/// Every element equal to the golden's, bit for bit.
template <class X, std::size_t N>
void check_exact(const X& x, const std::array<float, N>& golden, std::size_t offset = 0) {
    REQUIRE(offset + x.numel() <= N);
    const auto& elements = x.storage();  // row-major
    const float* p = elements.data();
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < x.numel(); ++i)
        if (std::memcmp(&p[i], &golden[offset + i], sizeof(float)) != 0)
            ++mismatches;
    CHECK_MESSAGE(mismatches == 0, mismatches, " of ", x.numel(), " elements differ from PyTorch's bits");
}

/// The largest |x - golden|, which the caller checks against its stated tolerance.
template <class X, std::size_t N>
double max_abs_diff(const X& x, const std::array<float, N>& golden) {
    REQUIRE(x.numel() == N);
    const auto& elements = x.storage();  // row-major
    const float* p = elements.data();
    double m = 0;
    for (std::size_t i = 0; i < N; ++i) {
        const double d = std::abs(static_cast<double>(p[i]) - static_cast<double>(golden[i]));
        m = std::isnan(d) ? INFINITY : std::max(m, d);
    }
    return m;
}

}  // namespace test

#endif
