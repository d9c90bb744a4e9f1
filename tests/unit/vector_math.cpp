// The run-time-dispatched exp and tanh (include/shaped/detail/vector_math.hpp) on every SIMD path this CPU
// runs, against the exact values in double: within 1.2 ulp (exp) and 2 ulp (tanh) on a dense sweep, the
// special values PyTorch gives, every tail length, and softmax's exponentials with their sum.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <shaped/detail/vector_math.hpp>

#include "products.hpp"

namespace {

namespace vm = shaped::detail::vmath;

struct exp_op {
    template <class F>
    [[gnu::always_inline]] void operator()(F& x) const {
        vm::exp(x);
    }
};
struct tanh_op {
    template <class F>
    [[gnu::always_inline]] void operator()(F& x) const {
        vm::tanh(x);
    }
};

// The distance in units in the last place of `got` from the exact `want` (a double), at the spacing of the
// float nearest `want`; subnormal results count at the smallest normal spacing.
double ulps(float got, double want) {
    const float w = static_cast<float>(want);
    const double spacing = std::max(static_cast<double>(std::nextafter(std::abs(w), std::numeric_limits<float>::infinity())) -
                                        std::abs(static_cast<double>(w)),
                                    static_cast<double>(std::numeric_limits<float>::denorm_min()) * 2.0);
    return std::abs(static_cast<double>(got) - want) / spacing;
}

template <class Op>
std::vector<float> applied(std::vector<float> v, shaped::detail::isa path) {
    vm::apply(v.data(), v.size(), Op{}, path);
    return v;
}

}  // namespace

TEST_CASE("vector exp: within 1.2 ulp of e^x on every path, 0 below ln FLT_MIN, +inf above ln FLT_MAX") {
    std::vector<float> xs;
    for (float x = -87.3f; x < 88.7f; x += 0.0137f) xs.push_back(x);
    std::mt19937 rng(7);
    for (float x : test::random_floats(4000, rng)) xs.push_back(x * 4.0f);
    for (const auto path : test::simd_paths()) {
        CAPTURE(static_cast<int>(path));
        const auto y = applied<exp_op>(xs, path);
        double worst = 0;
        for (std::size_t i = 0; i < xs.size(); ++i) worst = std::max(worst, ulps(y[i], std::exp(static_cast<double>(xs[i]))));
        CHECK(worst <= 1.2);
        constexpr float inf = std::numeric_limits<float>::infinity();
        const auto s = applied<exp_op>({-inf, -1000.0f, -87.5f, 0.0f, 89.0f, 1000.0f, inf,
                                        std::numeric_limits<float>::quiet_NaN()},
                                       path);
        CHECK(s[0] == 0.0f);
        CHECK(s[1] == 0.0f);
        CHECK(s[2] == 0.0f);
        CHECK(s[3] == 1.0f);
        CHECK(s[4] == inf);
        CHECK(s[5] == inf);
        CHECK(s[6] == inf);
        CHECK(std::isnan(s[7]));
    }
}

TEST_CASE("vector tanh: within 2 ulp of tanh on every path, odd, ±1 at the infinities, NaN kept") {
    std::vector<float> xs;
    for (float x = -12.0f; x < 12.0f; x += 0.00173f) xs.push_back(x);
    for (float x = -1e-3f; x < 1e-3f; x += 1.1e-6f) xs.push_back(x);
    for (const auto path : test::simd_paths()) {
        CAPTURE(static_cast<int>(path));
        const auto y = applied<tanh_op>(xs, path);
        double worst = 0;
        for (std::size_t i = 0; i < xs.size(); ++i)
            worst = std::max(worst, ulps(y[i], std::tanh(static_cast<double>(xs[i]))));
        CHECK(worst <= 2.0);
        constexpr float inf = std::numeric_limits<float>::infinity();
        const auto s = applied<tanh_op>({-inf, -30.0f, -0.0f, 0.0f, 30.0f, inf, std::numeric_limits<float>::quiet_NaN()},
                                        path);
        CHECK(s[0] == -1.0f);
        CHECK(s[1] == -1.0f);
        CHECK((s[2] == 0.0f && std::signbit(s[2])));
        CHECK((s[3] == 0.0f && !std::signbit(s[3])));
        CHECK(s[4] == 1.0f);
        CHECK(s[5] == 1.0f);
        CHECK(std::isnan(s[6]));
    }
}

TEST_CASE("vector exp: every length from 0 to 40 (the padded tail), elements past the end untouched") {
    std::mt19937 rng(11);
    const auto base = test::random_floats(48, rng);
    for (const auto path : test::simd_paths())
        for (std::size_t n = 0; n <= 40; ++n) {
            CAPTURE(static_cast<int>(path));
            CAPTURE(n);
            auto v = base;
            vm::apply(v.data(), n, exp_op{}, path);
            double worst = 0;
            for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, ulps(v[i], std::exp(static_cast<double>(base[i]))));
            CHECK(worst <= 1.2);
            for (std::size_t i = n; i < v.size(); ++i) CHECK(v[i] == base[i]);
        }
}

TEST_CASE("exp_shift_sum: softmax's exponentials and their sum, a -inf element giving 0, every length") {
    std::mt19937 rng(13);
    const auto base = test::random_floats(70, rng);
    for (const auto path : test::simd_paths())
        for (std::size_t n = 0; n <= 70; ++n) {
            CAPTURE(static_cast<int>(path));
            CAPTURE(n);
            auto v = base;
            if (n > 3) v[3] = -std::numeric_limits<float>::infinity();
            const float shift = 1.5f;
            const float sum = vm::exp_shift_sum(v.data(), n, shift, path);
            double exact = 0, worst = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const double e = (n > 3 && i == 3) ? 0.0 : std::exp(static_cast<double>(base[i] - shift));  // the float difference
                exact += e;
                worst = std::max(worst, ulps(v[i], e));
            }
            CHECK(worst <= 1.2);
            CHECK(std::abs(sum - exact) <= 1e-6 * (exact + 1));
            if (n > 3) CHECK(v[3] == 0.0f);
            for (std::size_t i = n; i < v.size(); ++i) CHECK(v[i] == base[i]);
        }
}
