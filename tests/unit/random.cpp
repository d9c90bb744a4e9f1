// torch.randn and Tensor.normal_, bit for bit against PyTorch 1.13 (tests/golden/random_goldens.hpp, made
// by make_goldens.py): every size 1..40 from several seeds (below 16 the scalar Box-Muller with its cached
// second value, from 16 the vectorised fill and its redrawn tail), calls in sequence, a mean and a std,
// float64, nn.Embedding's initialisation and a large draw. And the generator's lock, with threads.
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "check.hpp"
#include "golden/random_goldens.hpp"

#ifndef SHAPED_GOLDEN_DIR
#error "SHAPED_GOLDEN_DIR must name tests/golden (set by tests/meson.build)"
#endif

namespace {
struct n : shaped::dynamic_axis<"n"> {};
struct vocab_size : shaped::axis<"vocab_size", 50> {};
struct emb_dim : shaped::axis<"emb_dim", 16> {};

// The first `count` elements of `x` equal `golden[offset...]` bit for bit.
template <class X, class G>
std::size_t bit_mismatches(const X& x, const G& golden, std::size_t offset = 0) {
    using value = typename X::value_type;
    std::size_t m = 0;
    for (std::size_t i = 0; i < x.numel(); ++i) {
        const value g = golden[offset + i];
        m += std::memcmp(&x.data()[i], &g, sizeof(value)) != 0;
    }
    return m;
}
}  // namespace

TEST_CASE("torch::randn equals torch.randn bit for bit, every size 1..40, several seeds, in sequence") {
    const std::array<std::pair<std::uint64_t, const float*>, 3> seqs{
        {{123, golden::randn_seq_123.data()}, {1223, golden::randn_seq_1223.data()}, {0, golden::randn_seq_0.data()}}};
    for (const auto& [seed_value, golden_values] : seqs) {
        const std::uint64_t seed = seed_value;  // clang++ 14 cannot capture a structured binding in INFO's lambda
        const float* golden = golden_values;
        shaped::torch::manual_seed(seed);
        std::size_t offset = 0, mismatches = 0;
        for (std::size_t size = 1; size <= 40; ++size) {  // one after another: the cached value carries over
            const auto x = shaped::torch::randn<n>(size);
            for (std::size_t i = 0; i < size; ++i)
                mismatches += std::memcmp(&x.data()[i], &golden[offset + i], sizeof(float)) != 0;
            offset += size;
        }
        INFO("seed ", seed);
        CHECK(mismatches == 0);
    }
    shaped::torch::manual_seed(123);  // manual_seed drops the cached value: the first draws again
    CHECK(bit_mismatches(shaped::torch::randn<n>(5), golden::randn_123_5) == 0);
    for (std::size_t size : {1, 15, 16, 17, 31, 32, 40}) {
        shaped::torch::manual_seed(1223);
        const auto x = shaped::torch::randn<n>(size);
        INFO("size ", size);
        const float* g = size == 1    ? golden::randn_1223_1.data()
                         : size == 15 ? golden::randn_1223_15.data()
                         : size == 16 ? golden::randn_1223_16.data()
                         : size == 17 ? golden::randn_1223_17.data()
                         : size == 31 ? golden::randn_1223_31.data()
                         : size == 32 ? golden::randn_1223_32.data()
                                      : golden::randn_1223_40.data();
        CHECK(bit_mismatches(x, g) == 0);
    }
}

TEST_CASE("normal_ with a mean and a std, float64, nn.Embedding's weight, a large draw") {
    shaped::torch::manual_seed(7);
    shaped::tensor<float, n> a(shaped::extents<n>(7), shaped::uninitialized), b(shaped::extents<n>(33));
    shaped::torch::normal_(a, 2.0, 0.5);
    shaped::torch::normal_(b, -1.0, 3.0);
    CHECK(bit_mismatches(a, golden::normal_7_a) == 0);
    CHECK(bit_mismatches(b, golden::normal_7_b) == 0);

    shaped::torch::manual_seed(11);
    std::size_t offset = 0, mismatches = 0;
    for (std::size_t size : {5, 16, 21}) {
        auto d = shaped::tensor<double, n>(shaped::extents<n>(size));
        shaped::torch::normal_(d);
        mismatches += bit_mismatches(d, golden::randn_double_11, offset);
        offset += size;
    }
    CHECK(mismatches == 0);

    // nn.Embedding(50, 16) initialises its weight with normal_(0, 1): randn of its shape.
    shaped::torch::manual_seed(123);
    CHECK(bit_mismatches(shaped::torch::randn<vocab_size, emb_dim>(), golden::embedding_123_50_16) == 0);

    std::ifstream in(std::string(SHAPED_GOLDEN_DIR) + "/random/randn_large.f32", std::ios::binary);
    REQUIRE(in.good());
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<float> large(bytes.size() / sizeof(float));
    std::memcpy(large.data(), bytes.data(), large.size() * sizeof(float));
    REQUIRE(large.size() == 100003);
    shaped::torch::manual_seed(5);
    CHECK(bit_mismatches(shaped::torch::randn<n>(large.size()), large) == 0);
    // The comparison can fail: another seed gives other bits.
    shaped::torch::manual_seed(6);
    CHECK(bit_mismatches(shaped::torch::randn<n>(large.size()), large) > 99000);
}

TEST_CASE("a transposed tensor is filled one value at a time in memory order, as PyTorch fills it") {
    shaped::torch::manual_seed(3);
    auto t = shaped::tensor<float, vocab_size, emb_dim>{}.T();  // strided: PyTorch's scalar path
    shaped::torch::normal_(t);
    shaped::torch::generator g(3);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < t.numel(); ++i) {
        const float v = static_cast<float>(g.normal_double());
        mismatches += std::memcmp(&t.buffer().data()[i], &v, sizeof v) != 0;
    }
    CHECK(mismatches == 0);
}

TEST_CASE("the generator's lock: threads drawing from one generator, and each from its own") {
    struct rows : shaped::axis<"rows", 64> {};
    struct cols : shaped::axis<"cols", 64> {};
    // Each thread its own generator: the same draws as one thread alone, whatever the interleaving.
    auto draw = [](std::uint64_t seed) {
        shaped::torch::generator g(seed);
        shaped::nn::dropout dropout(0.1);
        return dropout(shaped::torch::randn<rows, cols>(g), g);
    };
    const auto alone_1 = draw(1), alone_2 = draw(2);
    shaped::tensor<float, rows, cols> from_1, from_2;
    std::thread t1([&] { from_1 = draw(1); });
    std::thread t2([&] { from_2 = draw(2); });
    t1.join();
    t2.join();
    CHECK(shaped::max_abs_diff(from_1, alone_1) == 0.0);
    CHECK(shaped::max_abs_diff(from_2, alone_2) == 0.0);
    // Both on the default generator: no race (the fills lock it), and between them every draw is used once.
    shaped::torch::manual_seed(9);
    shaped::tensor<float, rows, cols> a, b;
    std::thread t3([&] { a = shaped::torch::rand<rows, cols>(); });
    std::thread t4([&] { b = shaped::torch::rand<rows, cols>(); });
    t3.join();
    t4.join();
    shaped::torch::manual_seed(9);
    const auto first = shaped::torch::rand<rows, cols>();
    const auto second = shaped::torch::rand<rows, cols>();
    const bool in_order = shaped::max_abs_diff(a, first) == 0.0 && shaped::max_abs_diff(b, second) == 0.0;
    const bool other_order = shaped::max_abs_diff(b, first) == 0.0 && shaped::max_abs_diff(a, second) == 0.0;
    CHECK((in_order || other_order));
}
