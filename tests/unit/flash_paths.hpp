// The fused attention kernel called as scaled_dot_product_attention calls it, with its code path forced, so
// that tests compare the plain loops, AVX2 and AVX-512 on the same problem.
#ifndef SHAPED_TESTS_FLASH_PATHS_HPP
#define SHAPED_TESTS_FLASH_PATHS_HPP

#include <cmath>
#include <cstddef>

#include <doctest/doctest.h>
#include <shaped/detail/flash_attention.hpp>

namespace test {

/// What the op sets besides the operands: the causal mask, a sliding window, query heads per key/value head.
struct kernel_options {
    bool causal = false;
    std::size_t window = 0;
    std::size_t group = 1;
};

/// The kernel on q (B..., T, D), k (B..., K, D) and v (B..., K, E), each read in place (its last axis adjacent
/// in memory), into out (B..., T, E), on `path` instead of the CPU's widest.
template <class Out, class Q, class K, class V>
void run_on_path(Out& out, const Q& q, const K& k, const V& v, kernel_options options,
                 shaped::detail::flash::isa path) {
    constexpr std::size_t n = Q::rank, nb = n - 2;
    auto refer = [](auto& x, auto& ref) {
        const auto st = x.stride();
        REQUIRE(st[n - 1] == 1);
        ref.data = x.data();
        for (std::size_t a = 0; a < nb; ++a) ref.batch_stride[a] = st[a];
        ref.row_stride = st[n - 2];
    };
    shaped::detail::flash::problem<nb> pb;
    for (std::size_t a = 0; a < nb; ++a) pb.batch[a] = q.shape.extent(a);
    pb.group = options.group;
    pb.lq = q.shape.extent(n - 2);
    pb.lk = k.shape.extent(n - 2);
    pb.d = q.shape.extent(n - 1);
    pb.dv = v.shape.extent(n - 1);
    pb.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(pb.d)));
    pb.causal = options.causal;
    pb.offset = options.causal ? pb.lk - pb.lq : 0;
    pb.window = options.window;
    pb.path = path;
    refer(q, pb.q);
    refer(k, pb.k);
    refer(v, pb.v);
    refer(out, pb.out);
    shaped::detail::flash::run(pb);
}

/// The same, causal or not, without a window or groups.
template <class Out, class Q, class K, class V>
void run_on_path(Out& out, const Q& q, const K& k, const V& v, bool causal, shaped::detail::flash::isa path) {
    run_on_path(out, q, k, v, kernel_options{.causal = causal}, path);
}

}  // namespace test

#endif
