// Comparisons of tensors with golden arrays, shared by the unit tests.
#ifndef SHAPED_TESTS_CHECK_HPP
#define SHAPED_TESTS_CHECK_HPP

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
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

// The distance in units in the last place between two floats of one sign (0 for equal bits).
inline std::uint32_t ulp_distance(float a, float b) {
    const auto key = [](float f) {
        const auto u = std::bit_cast<std::uint32_t>(f);
        return (u & 0x80000000u) ? 0x80000000u - (u & 0x7fffffffu) : 0x80000000u + u;
    };
    const std::uint32_t x = key(a), y = key(b);
    return x > y ? x - y : y - x;
}

template <class X, std::size_t N>
std::uint32_t max_ulp(const X& x, const std::array<float, N>& golden) {
    REQUIRE(x.numel() == N);
    std::uint32_t m = 0;
    for (std::size_t i = 0; i < N; ++i) m = std::max(m, ulp_distance(x.data()[i], golden[i]));
    return m;
}

/// The exception's message, or "" when `f` does not throw `E`.
template <class E, class F>
std::string thrown(F f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    return "";
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
