// The thread policy (threads.hpp): one count, one pool; every product gives the same bits at 1, 2 and 4
// threads, and one thread's matrix-vector product is the whole product's, whatever the split.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

#include <shaped/nn/linear.hpp>
#include <shaped/shaped.hpp>
#include <shaped/threads.hpp>

namespace {

// Restores the count the test found, so that tests after this one run as configured.
struct thread_count_guard {
    int saved = shaped::num_threads();
    ~thread_count_guard() { shaped::set_num_threads(saved); }
};

template <class T>
bool same_bits(const T& a, const T& b) {
    return a.numel() == b.numel() && std::memcmp(a.data(), b.data(), a.numel() * sizeof(*a.data())) == 0;
}

// `f()` at 1, 2 and 4 threads: the three results, to be compared bit for bit.
template <class F>
auto at_thread_counts(F f) {
    thread_count_guard guard;
    std::vector<decltype(f())> results;
    for (int n : {1, 2, 4}) {
        shaped::set_num_threads(n);
        results.push_back(f());
    }
    return results;
}

}  // namespace

TEST_CASE("set_num_threads sets one count for every thread of the program; below 1 is taken as 1") {
    thread_count_guard guard;
    shaped::set_num_threads(3);
    CHECK(shaped::num_threads() == 3);
    int seen = 0;
    std::thread([&] { seen = shaped::num_threads(); }).join();
    CHECK(seen == 3);
    shaped::set_num_threads(0);
    CHECK(shaped::num_threads() == 1);
    shaped::set_num_threads(-5);
    CHECK(shaped::num_threads() == 1);
}

TEST_CASE("parallel runs f once on each of n threads, the caller's being 0, and returns when all are done") {
    for (std::size_t n : {1u, 2u, 3u, 4u}) {
        std::vector<int> hits(n, 0);
        std::vector<std::thread::id> ids(n);
        shaped::detail::parallel(n, [&](std::size_t i) {
            ++hits[i];
            ids[i] = std::this_thread::get_id();
        });
        CHECK(std::count(hits.begin(), hits.end(), 1) == static_cast<std::ptrdiff_t>(n));
        CHECK(ids[0] == std::this_thread::get_id());
        std::sort(ids.begin(), ids.end());
        CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());  // n distinct threads
    }
}

TEST_CASE("parallel inside a parallel region gets one thread: work handed out by a counter is all done") {
    std::atomic<int> outer{0}, inner_items{0};
    shaped::detail::parallel(2, [&](std::size_t) {
        ++outer;
        std::atomic<int> next{0};
        shaped::detail::parallel(4, [&](std::size_t) {
            while (next.fetch_add(1) < 10) ++inner_items;
        });
    });
    CHECK(outer == 2);
    CHECK(inner_items == 20);
}

namespace {
struct rows : shaped::axis<"num_tokens", 300> {};
struct d_in : shaped::axis<"d_in", 768> {};
struct d_out : shaped::axis<"d_out", 2304> {};
struct one_row : shaped::axis<"num_tokens", 1> {};
struct batch : shaped::axis<"batch", 3> {};
struct heads : shaped::axis<"num_heads", 4> {};
struct head_dim : shaped::axis<"head_dim", 64> {};
}  // namespace

TEST_CASE("matmul gives the same bits at 1, 2 and 4 threads, with operands read in place through strides") {
    shaped::torch::manual_seed(7);
    const auto a = shaped::torch::randn<batch, heads, rows, head_dim>();
    const auto b = shaped::torch::randn<batch, heads, rows, head_dim>().rename<batch, heads, shaped::key<rows>, head_dim>();
    const auto r = at_thread_counts([&] { return shaped::matmul(a, b.transpose<2, 3>()); });
    CHECK(same_bits(r[0], r[1]));
    CHECK(same_bits(r[0], r[2]));
    const auto x = shaped::torch::randn<rows, d_in>();
    const auto w = shaped::torch::randn<d_out, d_in>();
    const auto p = at_thread_counts([&] { return shaped::matmul(x, w.T()); });
    CHECK(same_bits(p[0], p[1]));
    CHECK(same_bits(p[0], p[2]));
}

TEST_CASE("nn::linear gives the same bits at 1, 2 and 4 threads, for one row (split over threads) and for many") {
    shaped::torch::manual_seed(11);
    const shaped::nn::linear<d_in, d_out> layer;
    const auto many = shaped::torch::randn<rows, d_in>();
    const auto one = shaped::torch::randn<one_row, d_in>();
    const auto r = at_thread_counts([&] { return layer(many); });
    CHECK(same_bits(r[0], r[1]));
    CHECK(same_bits(r[0], r[2]));
    const auto s = at_thread_counts([&] { return layer(one); });
    CHECK(same_bits(s[0], s[1]));
    CHECK(same_bits(s[0], s[2]));
    // The split product is the layer's: x Wᵀ + b in double precision, to float rounding.
    for (std::size_t c = 0; c < d_out::extent; ++c) {
        double y = layer.bias->at(c);
        for (std::size_t k = 0; k < d_in::extent; ++k) y += double(layer.weight.at(c, k)) * double(one.at(0, k));
        CHECK(s[0].at(0, c) == doctest::Approx(y).epsilon(1e-4));
    }
    // So are the many rows, whose bias the threads write in blocks of 7 rows before the product: every row,
    // at 4 threads, in columns spread over the width.
    for (std::size_t i = 0; i < rows::extent; ++i)
        for (std::size_t c = i % 97; c < d_out::extent; c += 97) {
            double y = layer.bias->at(c);
            for (std::size_t k = 0; k < d_in::extent; ++k) y += double(layer.weight.at(c, k)) * double(many.at(i, k));
            CHECK(r[2].at(i, c) == doctest::Approx(y).epsilon(1e-4));
        }
}

TEST_CASE("parallel_for covers [0, n) once, in chunks of the grain, at any thread count") {
    thread_count_guard guard;
    for (int threads : {1, 2, 4})
        for (std::size_t n : {0u, 1u, 7u, 64u, 1000u})
            for (std::size_t grain : {1u, 3u, 64u, 5000u}) {
                CAPTURE(threads);
                CAPTURE(n);
                CAPTURE(grain);
                shaped::set_num_threads(threads);
                std::vector<std::atomic<int>> hits(n);
                std::atomic<bool> aligned{true};
                shaped::detail::parallel_for(n, grain, [&](std::size_t b, std::size_t e) {
                    if (b % grain != 0 || e - b > grain) aligned = false;
                    for (std::size_t i = b; i < e; ++i) ++hits[i];
                });
                CHECK(std::all_of(hits.begin(), hits.end(), [](const std::atomic<int>& h) { return h == 1; }));
                CHECK((aligned || threads == 1 || n <= grain));
            }
}

namespace {
struct wide : shaped::axis<"wide", 1027> {};           // rows not a multiple of any vector width
struct many : shaped::axis<"many", 333> {};            // 342,000 elements: several blocks of 65,536
struct context : shaped::axis<"context_length", 256> {};
struct tokens : shaped::axis<"num_tokens", 256, shaped::at_most<context>> {};
struct emb : shaped::axis<"d_in", 96> {};
struct mha_heads : shaped::axis<"num_heads", 6> {};
}  // namespace

TEST_CASE("softmax, gelu, silu and causal attention weights give the same bits at 1, 2 and 4 threads") {
    shaped::torch::manual_seed(17);
    const auto x = shaped::torch::randn<many, wide>() * 4.0f;
    const auto s = at_thread_counts([&] { return shaped::softmax<-1>(x); });
    CHECK(same_bits(s[0], s[1]));
    CHECK(same_bits(s[0], s[2]));
    const auto g = at_thread_counts([&] { return shaped::gelu(x); });
    CHECK(same_bits(g[0], g[1]));
    CHECK(same_bits(g[0], g[2]));
    const auto u = at_thread_counts([&] { return shaped::silu(x); });
    CHECK(same_bits(u[0], u[1]));
    CHECK(same_bits(u[0], u[2]));
    // Every row of the softmax sums to 1, every element of gelu is the
    // formula's in double, to float rounding of the terms.
    for (std::size_t r = 0; r < many::extent; r += 37) {
        double sum = 0;
        for (std::size_t c = 0; c < wide::extent; ++c) sum += s[0].at(r, c);
        CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
        for (std::size_t c = 0; c < wide::extent; c += 13) {
            const double v = x.at(r, c);
            const double want = 0.5 * v * (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
            CHECK(std::abs(g[0].at(r, c) - want) <= 2e-7 * (std::abs(v) + 1));  // 1 + tanh cancels below 0
        }
    }
    shaped::nn::multi_head_attention<emb, emb, context, mha_heads> m(0.0);
    const auto in = shaped::torch::randn<batch, tokens, emb>();
    const auto a = at_thread_counts([&] { return m(in); });
    CHECK(same_bits(a[0], a[1]));
    CHECK(same_bits(a[0], a[2]));
}
