// The book's attention modules against PyTorch 1.13 at larger sizes (tests/golden/book/modules/, made by
// make_goldens.py from tests/golden/book/chapter3.py): eval and training mode, qkv_bias on and off.
// Tolerance: test::tolerance, 1e-5.
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "module_goldens.hpp"

namespace {

using test::check_printed_equal;
using test::load;
using test::tolerance;

struct d_in : shaped::axis<"d_in", 64> {};
struct d_out : shaped::axis<"d_out", 48> {};

// Seed, create the module, draw x = rand(batch, num_tokens, d_in), run it: as make_goldens.py does.
template <class Module, class Batch, class Tokens, class... Args>
auto run(std::uint64_t seed, bool training, Args... args) {
    shaped::torch::manual_seed(seed);
    Module m(args...);
    m.train(training);
    auto x = shaped::torch::rand<Batch, Tokens, d_in>();
    return m(x);
}

}  // namespace

TEST_CASE("multi_head_attention equals the book's MultiHeadAttention") {
    SUBCASE("batch 2, 64 tokens, 4 heads, no qkv_bias") {
        struct batch : shaped::axis<"batch", 2> {};
        struct context_length : shaped::axis<"context_length", 64> {};
        struct num_tokens : shaped::axis<"num_tokens", 64, shaped::at_most<context_length>> {};
        struct num_heads : shaped::axis<"num_heads", 4> {};
        using mha = shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads>;
        auto y = run<mha, batch, num_tokens>(1, false, 0.0, false);
        const auto golden = load<decltype(y)>("mha_1.f32");
        CHECK(shaped::max_abs_diff(y, golden) <= tolerance);
        check_printed_equal(y, golden);
    }
    SUBCASE("batch 3, 17 tokens, 6 heads, qkv_bias") {
        struct batch : shaped::axis<"batch", 3> {};
        struct context_length : shaped::axis<"context_length", 64> {};
        struct num_tokens : shaped::axis<"num_tokens", 17, shaped::at_most<context_length>> {};
        struct num_heads : shaped::axis<"num_heads", 6> {};
        using mha = shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads>;
        auto y = run<mha, batch, num_tokens>(2, false, 0.0, true);
        const auto golden = load<decltype(y)>("mha_2.f32");
        CHECK(shaped::max_abs_diff(y, golden) <= tolerance);
        check_printed_equal(y, golden);
    }
    SUBCASE("batch 4, 8 tokens of a 32-token context, 6 heads") {
        struct batch : shaped::axis<"batch", 4> {};
        struct context_length : shaped::axis<"context_length", 32> {};
        struct num_tokens : shaped::axis<"num_tokens", 8, shaped::at_most<context_length>> {};
        struct num_heads : shaped::axis<"num_heads", 6> {};
        using mha = shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads>;
        auto y = run<mha, batch, num_tokens>(3, false, 0.0, false);
        const auto golden = load<decltype(y)>("mha_3.f32");
        CHECK(shaped::max_abs_diff(y, golden) <= tolerance);
        check_printed_equal(y, golden);
    }
    SUBCASE("training mode, dropout 0.1: PyTorch's dropout mask") {
        struct batch : shaped::axis<"batch", 2> {};
        struct context_length : shaped::axis<"context_length", 64> {};
        struct num_tokens : shaped::axis<"num_tokens", 40, shaped::at_most<context_length>> {};
        struct num_heads : shaped::axis<"num_heads", 4> {};
        using mha = shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads>;
        auto y = run<mha, batch, num_tokens>(4, true, 0.1, true);
        const auto golden = load<decltype(y)>("mha_4.f32");
        CHECK(shaped::max_abs_diff(y, golden) <= tolerance);
        check_printed_equal(y, golden);
        // In evaluation mode the same module gives other numbers: dropout was active.
        auto y_eval = run<mha, batch, num_tokens>(4, false, 0.1, true);
        CHECK(shaped::max_abs_diff(y, y_eval) > 1e-3);
    }
}

TEST_CASE("causal_attention equals the book's CausalAttention") {
    SUBCASE("batch 3, 33 tokens, qkv_bias") {
        struct batch : shaped::axis<"batch", 3> {};
        struct context_length : shaped::axis<"context_length", 64> {};
        struct num_tokens : shaped::axis<"num_tokens", 33, shaped::at_most<context_length>> {};
        using ca = shaped::nn::causal_attention<d_in, d_out, context_length>;
        auto y = run<ca, batch, num_tokens>(5, false, 0.0, true);
        const auto golden = load<decltype(y)>("causal_5.f32");
        CHECK(shaped::max_abs_diff(y, golden) <= tolerance);
        check_printed_equal(y, golden);
    }
    SUBCASE("training mode, dropout 0.2") {
        struct batch : shaped::axis<"batch", 2> {};
        struct context_length : shaped::axis<"context_length", 64> {};
        struct num_tokens : shaped::axis<"num_tokens", 64, shaped::at_most<context_length>> {};
        using ca = shaped::nn::causal_attention<d_in, d_out, context_length>;
        auto y = run<ca, batch, num_tokens>(6, true, 0.2, false);
        const auto golden = load<decltype(y)>("causal_6.f32");
        CHECK(shaped::max_abs_diff(y, golden) <= tolerance);
        check_printed_equal(y, golden);
    }
}

TEST_CASE("multi_head_attention_wrapper equals the book's MultiHeadAttentionWrapper") {
    SUBCASE("4 heads of 12") {
        struct batch : shaped::axis<"batch", 2> {};
        struct context_length : shaped::axis<"context_length", 64> {};
        struct num_tokens : shaped::axis<"num_tokens", 64, shaped::at_most<context_length>> {};
        struct num_heads : shaped::axis<"num_heads", 4> {};
        struct head_out : shaped::axis<"head_out", 12> {};
        using w = shaped::nn::multi_head_attention_wrapper<d_in, head_out, context_length, num_heads>;
        auto y = run<w, batch, num_tokens>(7, false, 0.0, false);
        static_assert(std::is_same_v<decltype(y), shaped::tensor<float, batch, num_tokens,
                                                                  shaped::concat<head_out, head_out, head_out, head_out>>>);
        const auto golden = load<decltype(y)>("wrapper_7.f32");
        CHECK(shaped::max_abs_diff(y, golden) <= tolerance);
        check_printed_equal(y, golden);
    }
    SUBCASE("6 heads of 8, qkv_bias") {
        struct batch : shaped::axis<"batch", 3> {};
        struct context_length : shaped::axis<"context_length", 32> {};
        struct num_tokens : shaped::axis<"num_tokens", 20, shaped::at_most<context_length>> {};
        struct num_heads : shaped::axis<"num_heads", 6> {};
        struct head_out : shaped::axis<"head_out", 8> {};
        using w = shaped::nn::multi_head_attention_wrapper<d_in, head_out, context_length, num_heads>;
        auto y = run<w, batch, num_tokens>(8, false, 0.0, true);
        const auto golden = load<decltype(y)>("wrapper_8.f32");
        CHECK(shaped::max_abs_diff(y, golden) <= tolerance);
        check_printed_equal(y, golden);
    }
}

TEST_CASE("the wrapper with head_dim-wide heads and out_proj is multi_head_attention, both ways") {
    struct batch : shaped::axis<"batch", 3> {};
    struct context_length : shaped::axis<"context_length", 16> {};
    struct num_tokens : shaped::axis<"num_tokens", 10, shaped::at_most<context_length>> {};
    struct num_heads : shaped::axis<"num_heads", 6> {};
    for (bool qkv_bias : {false, true}) {
        INFO("qkv_bias ", qkv_bias);
        shaped::torch::manual_seed(11);
        shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads> mha(0.0, qkv_bias);
        mha.eval();
        auto x = shaped::torch::rand<batch, num_tokens, d_in>();

        auto heads = shaped::nn::split_heads(mha);
        const auto y = mha(x);
        CHECK(shaped::max_abs_diff(heads(x), y) <= 1e-6);

        // The other way: perturb one head, join, and the weight-split form follows.
        heads.wrapper.heads[2].W_value.weight(1, 3) += 0.5f;
        auto joined = shaped::nn::join_heads(heads);
        const auto y2 = joined(x);
        CHECK(shaped::max_abs_diff(y2, heads(x)) <= 1e-6);
        CHECK(shaped::max_abs_diff(y2, y) > 1e-4);
        CHECK(joined.W_value.weight(2 * 8 + 1, 3) == heads.wrapper.heads[2].W_value.weight(1, 3));
    }
}

TEST_CASE("a module's parameters, declared once: state_dict order, buffers marked, an absent bias left out") {
    namespace nn = shaped::nn;
    struct context_length : shaped::axis<"context_length", 6> {};
    struct num_heads : shaped::axis<"num_heads", 2> {};
    struct d_model : shaped::axis<"d_model", 4> {};
    const nn::multi_head_attention<d_model, d_model, context_length, num_heads> mha(0.0);  // qkv_bias=False
    CHECK(nn::parameter_table(mha) ==
          "mask (context_length=6, context_length=6) (buffer)\n"
          "W_query.weight (d_model=4, d_model=4)\n"
          "W_key.weight (d_model=4, d_model=4)\n"
          "W_value.weight (d_model=4, d_model=4)\n"
          "out_proj.weight (d_model=4, d_model=4)\n"
          "out_proj.bias (d_model=4)\n");
    // Buffers are in the state_dict but not counted: 4 weights of 16 and a bias of 4.
    CHECK(nn::parameter_count(mha) == 68);
    CHECK(nn::state_dict_keys(mha).size() == 6);
    // A bias is an entry while the layer has one.
    nn::linear<d_model, d_model> with_bias, without(nn::skip_init, false);
    CHECK(nn::state_dict_keys(with_bias) == std::vector<std::string>{"weight", "bias"});
    CHECK(nn::state_dict_keys(without) == std::vector<std::string>{"weight"});
    // Modules in a list are numbered as nn.ModuleList numbers them; const modules give const tensors.
    const nn::multi_head_attention_wrapper<d_model, d_model, context_length, num_heads> wrapper(0.0);
    std::vector<std::string> keys;
    nn::for_each_parameter(wrapper, "m.", [&](const std::string& name, auto& t, nn::entry_kind) {
        static_assert(std::is_const_v<std::remove_reference_t<decltype(t)>>);
        keys.push_back(name);
    });
    CHECK(keys == std::vector<std::string>{"m.heads.0.mask", "m.heads.0.W_query.weight", "m.heads.0.W_key.weight",
                                           "m.heads.0.W_value.weight", "m.heads.1.mask", "m.heads.1.W_query.weight",
                                           "m.heads.1.W_key.weight", "m.heads.1.W_value.weight"});
}
