// The book's modules on run-time batch and num_tokens against PyTorch's outputs (the goldens of
// modules.cpp): one module type serves every length PyTorch ran.
#include <cstdint>

#include "module_goldens.hpp"

namespace {

struct d_in : shaped::axis<"d_in", 64> {};
struct d_out : shaped::axis<"d_out", 48> {};

// The same with run-time batch and num_tokens, bound to `b` and `t`.
template <class Module, class Batch, class Tokens, class... Args>
auto run_at(std::uint64_t seed, bool training, std::size_t b, std::size_t t, Args... args) {
    shaped::torch::manual_seed(seed);
    Module m(args...);
    m.train(training);
    auto x = shaped::torch::rand<Batch, Tokens, d_in>(b, t);
    return m(x);
}

}  // namespace

TEST_CASE("the modules on run-time batch and num_tokens give PyTorch's numbers: one type for every length") {
    struct batch : shaped::dynamic_axis<"batch"> {};
    struct context_64 : shaped::axis<"context_length", 64> {};
    struct tokens_64 : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_64>> {};
    struct context_32 : shaped::axis<"context_length", 32> {};
    struct tokens_32 : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_32>> {};
    struct four : shaped::axis<"num_heads", 4> {};
    struct six : shaped::axis<"num_heads", 6> {};
    struct head_out : shaped::axis<"head_out", 8> {};
    using mha_64 = shaped::nn::multi_head_attention<d_in, d_out, context_64, four>;
    using mha_64_six = shaped::nn::multi_head_attention<d_in, d_out, context_64, six>;
    using ca_64 = shaped::nn::causal_attention<d_in, d_out, context_64>;
    using w_32 = shaped::nn::multi_head_attention_wrapper<d_in, head_out, context_32, six>;
    auto check = [](const auto& y, const char* golden_file, std::size_t b, std::size_t t) {
        INFO(golden_file);
        const auto golden = test::load<std::remove_cvref_t<decltype(y)>>(golden_file, b, t);
        CHECK(shaped::max_abs_diff(y, golden) <= test::tolerance);
        test::check_printed_equal(y, golden);
    };
    check(run_at<mha_64, batch, tokens_64>(1, false, 2, 64, 0.0, false), "mha_1.f32", 2, 64);
    check(run_at<mha_64_six, batch, tokens_64>(2, false, 3, 17, 0.0, true), "mha_2.f32", 3, 17);
    check(run_at<mha_64, batch, tokens_64>(4, true, 2, 40, 0.1, true), "mha_4.f32", 2, 40);
    check(run_at<ca_64, batch, tokens_64>(5, false, 3, 33, 0.0, true), "causal_5.f32", 3, 33);
    check(run_at<ca_64, batch, tokens_64>(6, true, 2, 64, 0.2, false), "causal_6.f32", 2, 64);
    check(run_at<w_32, batch, tokens_32>(8, false, 3, 20, 0.0, true), "wrapper_8.f32", 3, 20);
}

