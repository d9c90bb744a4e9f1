// The tensor's exception guarantees under a failing allocator: this program replaces the global operator
// new with one that throws std::bad_alloc for requests of at least `fail_from` bytes, so that a copy can be
// made to fail at its allocation. It has its own main, since the replacement applies to the whole program.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdlib>
#include <new>

#include <shaped/shaped.hpp>

namespace {
std::size_t fail_from = static_cast<std::size_t>(-1);  // requests of this many bytes or more fail
}

void* operator new(std::size_t n) {
    if (n >= fail_from) throw std::bad_alloc();
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
    if (n >= fail_from) throw std::bad_alloc();
    const std::size_t al = static_cast<std::size_t>(a);
    if (void* p = std::aligned_alloc(al, (n + al - 1) / al * al)) return p;
    throw std::bad_alloc();
}
// g++ 12 sees free() inline after a call that it takes for the standard operator new.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {
struct context_length : shaped::axis<"context_length", 4096> {};
struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
struct d_out : shaped::axis<"d_out", 8> {};
using x_t = shaped::tensor<float, num_tokens, d_out>;

x_t filled(std::size_t n, float v) {
    x_t x{x_t::extents_type(n)};
    for (std::size_t i = 0; i < x.numel(); ++i) x.data()[i] = v;
    return x;
}
}  // namespace

TEST_CASE("a copy assignment that throws bad_alloc leaves the tensor's shape and elements as they were") {
    x_t small = filled(2, 1.0f);
    const x_t large = filled(4000, 2.0f);  // 128,000 bytes
    fail_from = 100'000;
    CHECK_THROWS_AS(small = large, std::bad_alloc);
    fail_from = static_cast<std::size_t>(-1);
    // Before, the extents were assigned first: small claimed 4000 rows over its buffer of 2.
    CHECK(small.shape[0] == 2);
    CHECK(small.numel() == 16);
    for (std::size_t i = 0; i < small.numel(); ++i) CHECK(small.at(i / 8, i % 8) == 1.0f);
    // Without the failure the copy is made, and is independent of its source.
    small = large;
    CHECK(small.shape[0] == 4000);
    CHECK(small.at(3999, 7) == 2.0f);
    const x_t& same = small;
    small = same;  // self-assignment keeps everything
    CHECK(small.at(0, 0) == 2.0f);
}
