// Weights kept in BF16: shaped::bfloat16's rounding (PyTorch's .to(torch.bfloat16)), the products over BF16
// weights on each SIMD path the CPU has against a double-precision reference, the same bits at 1, 2 and 4
// threads, and nn::linear, nn::embedding and nn::tied_head with BF16 weights against their float forms
// holding the same (rounded) values; safetensors files read into BF16 tensors.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <shaped/bfloat16.hpp>
#include <shaped/detail/gemm_bf16.hpp>
#include <shaped/io/safetensors.hpp>
#include <shaped/nn/embedding.hpp>
#include <shaped/nn/linear.hpp>
#include <shaped/threads.hpp>
#include <shaped/torch/generator.hpp>

#include "check.hpp"
#include "products.hpp"

namespace {

using shaped::bfloat16;
namespace detail = shaped::detail;
namespace nn = shaped::nn;

float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

using test::random_floats;

std::vector<bfloat16> rounded(const std::vector<float>& v) {
    std::vector<bfloat16> b(v.size());
    shaped::to_bfloat16(v.data(), b.data(), v.size());
    return b;
}

// The largest |a - b| over two tensors of the same shape.
template <class A, class B>
double largest_difference(const A& a, const B& b) {
    REQUIRE(a.numel() == b.numel());
    double worst = 0;
    for (std::size_t i = 0; i < a.numel(); ++i) worst = std::max(worst, std::abs(double(a.data()[i]) - double(b.data()[i])));
    return worst;
}

}  // namespace

TEST_CASE("bfloat16 rounds a float to the nearest, ties to even, as PyTorch's .to(torch.bfloat16)") {
    // (float bits, bfloat16 bits) as PyTorch 1.13 gives them.
    const std::vector<std::pair<std::uint32_t, std::uint16_t>> cases{
        {0x3dcccccd, 0x3dcd},  // 0.1: rounded up
        {0x3f808000, 0x3f80},  // 1 + 2^-8, a tie: to the even 1.0
        {0x3f818000, 0x3f82},  // a tie whose lower neighbour is odd: up
        {0x3f80ffff, 0x3f81},  // just under a tie above: up
        {0x7f7fffff, 0x7f80},  // the largest float: to infinity
        {0xff800000, 0xff80},  // -inf
        {0x80000001, 0x8000},  // the smallest negative subnormal: -0
    };
    for (const auto& [f, b] : cases) {
        const std::uint32_t float_bits = f;  // clang 14: a structured binding cannot be captured
        CAPTURE(float_bits);
        CHECK(bfloat16(from_bits(f)).bits == b);
        // Every bfloat16 is a float: back and forth is the identity.
        CHECK(bfloat16(static_cast<float>(bfloat16::from_bits(b))).bits == b);
    }
    CHECK(std::isnan(static_cast<float>(bfloat16(from_bits(0x7fc00001)))));
    CHECK(std::isnan(static_cast<float>(bfloat16(from_bits(0x7f800001)))));  // a signalling NaN stays a NaN
    CHECK(std::signbit(static_cast<float>(bfloat16(from_bits(0xffa00000)))));
    CHECK(static_cast<float>(bfloat16(0.1f)) == 0.10009765625f);
    static_assert(std::is_trivially_default_constructible_v<bfloat16>);  // `uninitialized` tensors stay unwritten
    CHECK(bfloat16{}.bits == 0);
}

TEST_CASE("gemm_bf16: A · Wᵀ over BF16 weights on every path, within float's rounding of the exact sum") {
    std::mt19937 rng(7);
    for (const std::size_t m : {1, 2, 3, 4, 5, 17})
        for (const std::size_t n : {1, 255, 257, 600})
            for (const std::size_t k : {1, 15, 16, 33, 100, 257}) {
                const auto a = random_floats(m * k, rng);
                const auto w = rounded(random_floats(n * k, rng));
                const auto c0 = random_floats(m * n, rng);
                for (const float beta : {0.0f, 1.0f})
                    for (const auto path : test::simd_paths()) {
                        CAPTURE(m);
                        CAPTURE(n);
                        CAPTURE(k);
                        CAPTURE(beta);
                        CAPTURE(static_cast<int>(path));
                        auto c = c0;
                        detail::gemm_bf16(a.data(), w.data(), c.data(), m, n, k, beta, path);
                        const double worst = test::worst_relative_error(a, w, c0, c, m, n, k, beta);
                        // float's unit roundoff times the terms a sum can chain (the bound of a sum's error).
                        CHECK(worst <= 6e-8 * double(k + 2));
                    }
            }
}

TEST_CASE("gemm_bf16 gives the same bits at 1, 2 and 4 threads") {
    std::mt19937 rng(11);
    constexpr std::size_t n = 3000, k = 300;
    const auto w = rounded(random_floats(n * k, rng));
    for (const std::size_t m : {1, 3, 9}) {
        const auto a = random_floats(m * k, rng);
        const auto out = test::at_1_2_4_threads(std::vector<float>(m * n), [&](std::vector<float>& c) {
            detail::gemm_bf16(a.data(), w.data(), c.data(), m, n, k);
        });
        CAPTURE(m);
        CHECK(std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(float)) == 0);
        CHECK(std::memcmp(out[0].data(), out[2].data(), out[0].size() * sizeof(float)) == 0);
    }
}

TEST_CASE("gemm_bf16 over a W of several panels (the last one short): the exact sum, the same bits at 1, 2 and 4 threads") {
    std::mt19937 rng(13);
    constexpr std::size_t k = 1024, m = 9;  // m above few_rows: W is converted a panel at a time
    constexpr std::size_t panel_rows = detail::bf16_panel_floats / k;
    constexpr std::size_t n = 2 * panel_rows + 21;
    static_assert(m > detail::few_rows && panel_rows % 16 == 0);
    const auto w = rounded(random_floats(n * k, rng));
    const auto a = random_floats(m * k, rng);
    const std::vector<float> ones(m * n, 1.0f);
    const auto out = test::at_1_2_4_threads(ones, [&](std::vector<float>& c) {
        detail::gemm_bf16(a.data(), w.data(), c.data(), m, n, k, 1.0f);
    });
    CHECK(std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(float)) == 0);
    CHECK(std::memcmp(out[0].data(), out[2].data(), out[0].size() * sizeof(float)) == 0);
    const double worst = test::worst_relative_error(a, w, ones, out[0], m, n, k, 1.0f);
    CHECK(worst <= 6e-8 * double(k + 2));
}

namespace {
struct d_in : shaped::axis<"d_in", 70> {};
struct d_out : shaped::axis<"d_out", 300> {};
struct vocab : shaped::axis<"vocab", 50> {};
struct tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<shaped::axis<"context_length", 16>>> {};
}  // namespace

TEST_CASE("nn::linear with BF16 weights: drawn as the float layer and rounded, and computing as it does") {
    shaped::torch::manual_seed(123);
    const nn::linear<d_in, d_out> f32;
    shaped::torch::manual_seed(123);
    nn::linear<d_in, d_out, float, bfloat16> b16;
    static_assert(std::is_same_v<decltype(b16.weight), shaped::tensor<bfloat16, d_out, d_in>>);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < f32.weight.numel(); ++i) differ += !(b16.weight.data()[i] == bfloat16(f32.weight.data()[i]));
    CHECK(differ == 0);
    REQUIRE(b16.bias);
    CHECK(std::memcmp(b16.bias->data(), f32.bias->data(), 300 * sizeof(float)) == 0);
    // The float layer holding the rounded values is the reference.
    nn::linear<d_in, d_out> same = f32;
    shaped::to_float(b16.weight.data(), same.weight.data(), same.weight.numel());
    for (const std::size_t t : {1, 2, 7, 16}) {
        CAPTURE(t);
        const auto x = shaped::torch::randn<tokens, d_in>(t);
        const auto want = same(x), got = b16(x);
        CHECK(largest_difference(got, want) <= 1e-5);
    }
    nn::linear<d_in, d_out, float, bfloat16> loaded(nn::skip_init, false);
    CHECK_FALSE(loaded.has_bias());
}

TEST_CASE("nn::embedding and nn::tied_head with a BF16 table: rows exact, the head as the float one's") {
    shaped::torch::manual_seed(5);
    const nn::embedding<vocab, d_in> f32;
    shaped::torch::manual_seed(5);
    const nn::embedding<vocab, d_in, bfloat16> b16;
    const auto ids = shaped::tensor<std::int64_t, tokens>{3, 0, 49, 3};
    const auto rows = b16(ids);
    std::size_t wrong = 0;
    for (std::size_t t = 0; t < 4; ++t)
        for (std::size_t j = 0; j < 70; ++j)
            wrong += rows.at(t, j) != static_cast<float>(bfloat16(f32.weight.at(ids.at(t), j)));
    CHECK(wrong == 0);
    CHECK_THROWS_AS(b16(shaped::tensor<std::int64_t, tokens>{50}), std::out_of_range);
    nn::embedding<vocab, d_in> same(nn::skip_init);
    shaped::to_float(b16.weight.data(), same.weight.data(), same.weight.numel());
    for (const std::size_t t : {1, 6}) {
        const auto x = shaped::torch::randn<tokens, d_in>(t);
        CHECK(largest_difference(nn::tied_head(x, b16.weight), nn::tied_head(x, same.weight)) <= 1e-5);
    }
}

TEST_CASE("safetensors into BF16 tensors: BF16 kept bit for bit, F32 and F16 rounded once") {
    struct three : shaped::axis<"three", 3> {};
    // BF16 1.0, -2.5, a NaN's bits; F32 0.1, 1 + 2^-8 (a tie), the largest float; F16 1/3.
    const std::vector<std::uint16_t> b{0x3f80, 0xc020, 0x7fc1};
    const std::vector<std::uint32_t> f{0x3dcccccd, 0x3f808000, 0x7f7fffff};
    const std::vector<std::uint16_t> h{0x3555, 0x3c00, 0x0001};
    const std::string header = R"({"b":{"dtype":"BF16","shape":[3],"data_offsets":[0,6]},)"
                               R"("f":{"dtype":"F32","shape":[3],"data_offsets":[6,18]},)"
                               R"("h":{"dtype":"F16","shape":[3],"data_offsets":[18,24]}})";
    std::vector<char> bytes(8 + header.size() + 24);
    const std::uint64_t len = header.size();
    std::memcpy(bytes.data(), &len, 8);
    std::memcpy(bytes.data() + 8, header.data(), header.size());
    std::memcpy(bytes.data() + 8 + header.size(), b.data(), 6);
    std::memcpy(bytes.data() + 8 + header.size() + 6, f.data(), 12);
    std::memcpy(bytes.data() + 8 + header.size() + 18, h.data(), 6);
    const auto path = (std::filesystem::temp_directory_path() / "shaped_test_bf16.safetensors").string();
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    const shaped::io::safetensors_file file(path);
    shaped::tensor<bfloat16, three> tb, tf, th;
    file.read("b", tb);
    file.read("f", tf);
    file.read("h", th);
    std::filesystem::remove(path);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(tb.data()[i].bits == b[i]);
        CHECK(tf.data()[i] == bfloat16(from_bits(f[i])));
    }
    CHECK(tf.data()[1].bits == 0x3f80);
    CHECK(static_cast<float>(th.data()[0]) == static_cast<float>(bfloat16(1.0f / 3.0f)));
    CHECK(th.data()[1].bits == 0x3f80);
    CHECK(th.data()[2] == bfloat16(0x1p-24f));
}
