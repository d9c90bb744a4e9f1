// shaped::torch::repr against PyTorch 1.13's repr(t), goldens from tests/golden/make_print_goldens.py.

#include <doctest/doctest.h>

#include <cstddef>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>

#include "golden/print_goldens.hpp"
#include "shaped/torch/print.hpp"

namespace {

std::string repr_of(const shaped::golden::print::print_case& c) {
    const std::span<const std::size_t> shape(c.shape.data(), c.rank);
    switch (c.type) {
        case shaped::golden::print::dtype::float32:
            return shaped::torch::repr(c.f32, shape);
        case shaped::golden::print::dtype::float64:
            return shaped::torch::repr(c.f64, shape);
        case shaped::golden::print::dtype::boolean:
            return shaped::torch::repr(c.b8, shape);
    }
    return {};
}

}  // namespace

TEST_CASE("shaped::torch::repr matches PyTorch 1.13 repr for every golden") {
    for (const auto& c : shaped::golden::print::print_cases) {
        INFO("case: ", c.name);
        const std::string actual = repr_of(c);
        const std::string expected = c.expected;
        CHECK(actual == expected);
    }
}

TEST_CASE("shaped::torch::repr rejects bad shapes and data") {
    const float one = 1.0f;
    const std::size_t rank9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHECK_THROWS_AS(shaped::torch::repr(&one, std::span<const std::size_t>(rank9)), std::invalid_argument);

    const std::size_t three[1] = {3};
    CHECK_THROWS_AS(shaped::torch::repr(static_cast<const float*>(nullptr), std::span<const std::size_t>(three)),
                    std::invalid_argument);

    const std::size_t huge[2] = {std::numeric_limits<std::size_t>::max(), 2};
    CHECK_THROWS_AS(shaped::torch::repr(&one, std::span<const std::size_t>(huge)), std::invalid_argument);

    const std::size_t empty[2] = {0, 3};
    CHECK(shaped::torch::repr(static_cast<const double*>(nullptr), std::span<const std::size_t>(empty)) ==
          "tensor([], size=(0, 3), dtype=torch.float64)");
}

TEST_CASE("shaped::torch::repr doc comment example") {
    const float values[] = {0.7713f, 1.1682f, 0.3327f, 0.6094f};
    const std::size_t shape[] = {1, 2, 2};
    CHECK(shaped::torch::repr(values, std::span<const std::size_t>(shape)) ==
          "tensor([[[0.7713, 1.1682],\n         [0.3327, 0.6094]]])");
    const double wide[] = {1e-5, 1.0};
    const std::size_t two[] = {2};
    CHECK(shaped::torch::repr(wide, std::span<const std::size_t>(two)) ==
          "tensor([1.0000e-05, 1.0000e+00], dtype=torch.float64)");
}
