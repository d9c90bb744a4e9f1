// The book's modules' outputs from PyTorch (tests/golden/book/modules/, made by make_goldens.py), and how
// the tests compare with them.
#ifndef SHAPED_TESTS_MODULE_GOLDENS_HPP
#define SHAPED_TESTS_MODULE_GOLDENS_HPP

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "check.hpp"

#ifndef SHAPED_GOLDEN_DIR
#error "SHAPED_GOLDEN_DIR must name tests/golden (set by tests/meson.build)"
#endif

namespace test {

// Float32 sums over 64-wide products, ordered differently by OpenBLAS and PyTorch.
inline constexpr double tolerance = 1e-5;

// PyTorch prints 4 decimals: the printed forms must agree too, not only the numbers within tolerance.
template <class A, class B>
void check_printed_equal(const A& a, const B& b) {
    std::ostringstream sa, sb;
    sa << a;
    sb << b;
    CHECK(sa.str() == sb.str());
}

template <class T, class... N>
T load(const std::string& name, N... run_time_extents) {
    std::ifstream in(std::string(SHAPED_GOLDEN_DIR) + "/book/modules/" + name, std::ios::binary);
    REQUIRE_MESSAGE(in.good(), "cannot open golden ", name);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<float> values(bytes.size() / sizeof(float));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
    return T::from_buffer(values, run_time_extents...);  // throws shaped::shape_error if the file has another size
}

}  // namespace test

#endif
