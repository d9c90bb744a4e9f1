// nn::multi_head_attention fuses some of the book's steps (the causal step, and each head's
// `attn_weights @ values` written in merged-heads order): its output must equal, bit for bit, the
// book's forward pass (listing 3.5) written step by step with shaped's public ops on the same weights.
// (A file of its own: each size instantiates the module and the steps, and compile time adds up.)
#include <cmath>
#include <cstdint>
#include <limits>

#include "check.hpp"

namespace {

struct d_in : shaped::axis<"d_in", 64> {};

// The book's forward pass (listing 3.5) written step by step with shaped's public ops, on a module's
// own weights, mask and dropout.
template <class Batch, class Tokens, class Heads, class DOut, class Module, class X>
auto book_steps(const Module& m, const X& x) {
    using head_dim = typename Module::head_dim;
    auto queries = m.W_query(x).template view<Batch, Tokens, Heads, head_dim>().template transpose<1, 2>();
    auto keys = m.W_key(x).template view<Batch, Tokens, Heads, head_dim>().template transpose<1, 2>();
    auto values = m.W_value(x).template view<Batch, Tokens, Heads, head_dim>().template transpose<1, 2>();
    auto attn_scores = shaped::matmul(queries, keys.template transpose<2, 3>());
    auto mask_bool = m.mask.template slice<Tokens, Tokens>().template to<bool>();
    auto masked = attn_scores.masked_fill(mask_bool, -std::numeric_limits<float>::infinity());
    auto attn_weights = m.dropout(shaped::softmax<-1>(masked / std::sqrt(static_cast<float>(head_dim::extent))));
    auto context_vec = shaped::matmul(attn_weights, values).template transpose<1, 2>();
    return m.out_proj(context_vec.contiguous().template view<Batch, Tokens, DOut>());
}

template <std::size_t B, std::size_t T, std::size_t D, std::size_t H, std::size_t Context>
void check_book_steps(std::uint64_t seed, bool training) {
    struct batch : shaped::axis<"batch", B> {};
    struct context_length : shaped::axis<"context_length", Context> {};
    struct num_tokens : shaped::axis<"num_tokens", T, shaped::at_most<context_length>> {};
    struct d_out : shaped::axis<"d_out", D> {};
    struct num_heads : shaped::axis<"num_heads", H> {};
    shaped::torch::manual_seed(seed);
    shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads> m(training ? 0.25 : 0.0, training);
    m.train(training);
    const auto x = shaped::torch::rand<batch, num_tokens, d_in>();
    shaped::torch::manual_seed(seed + 1);  // the same dropout draws for both
    const auto y = m(x);
    shaped::torch::manual_seed(seed + 1);
    const auto steps = book_steps<batch, num_tokens, num_heads, d_out>(m, x);
    INFO("batch ", B, ", num_tokens ", T, ", d_out ", D, ", num_heads ", H, ", training ", training);
    CHECK(shaped::max_abs_diff(y, steps) == 0.0);
    // The comparison can fail: another input gives another output.
    CHECK(shaped::max_abs_diff(m(x * 2.0f), steps) > 1e-4);
}

}  // namespace

TEST_CASE("multi_head_attention computes the book's steps with shaped's ops, bit for bit") {
    check_book_steps<1, 2, 6, 3, 2>(1223, false);    // the seed's sizes: num_tokens == head_dim == 2
    check_book_steps<2, 5, 12, 4, 9>(1, false);      // fewer tokens than context_length
    check_book_steps<3, 7, 12, 6, 7>(2, true);       // training: dropout draws in the same order
    check_book_steps<2, 300, 16, 2, 300>(3, false);  // a context longer than 256 keeps its spans on the heap
    check_book_steps<1, 1024, 128, 2, 1024>(4, false);  // eight blocks of 128 queries: keys past each block's not computed
}

TEST_CASE("with another mask in the module's buffer, multi_head_attention still computes the book's steps, bit for bit") {
    // A sliding window of 100 keys: each block of queries sees keys from its first row's window on, and the
    // scores of keys before and after are not computed (the mask says which).
    struct batch : shaped::axis<"batch", 2> {};
    struct context_length : shaped::axis<"context_length", 300> {};
    struct num_tokens : shaped::axis<"num_tokens", 300, shaped::at_most<context_length>> {};
    struct d_out : shaped::axis<"d_out", 32> {};
    struct num_heads : shaped::axis<"num_heads", 2> {};
    shaped::torch::manual_seed(77);
    shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads> m(0.0);
    m.eval();
    float* mask = m.mask.data();
    for (std::size_t i = 0; i < context_length::extent; ++i)
        for (std::size_t j = 0; j < context_length::extent; ++j) mask[i * context_length::extent + j] = j > i || j + 100 <= i;
    const auto x = shaped::torch::rand<batch, num_tokens, d_in>();
    const auto steps = book_steps<batch, num_tokens, num_heads, d_out>(m, x);
    CHECK(shaped::max_abs_diff(m(x), steps) == 0.0);
    // The window matters: the causal mask alone gives other outputs.
    shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads> causal(0.0);
    causal.eval();
    causal.W_query = m.W_query;
    causal.W_key = m.W_key;
    causal.W_value = m.W_value;
    causal.out_proj = m.out_proj;
    CHECK(shaped::max_abs_diff(causal(x), steps) > 1e-4);
}

TEST_CASE("the causal step gives NaN where every score a query sees is -inf, whatever its masked keys' scores hold") {
    // The module leaves the masked keys' scores uncomputed; the book's masked_fill makes them -inf, and softmax
    // of a row of -inf is NaN throughout.
    struct context_length : shaped::axis<"context_length", 4> {};
    struct num_tokens : shaped::axis<"num_tokens", 4, shaped::at_most<context_length>> {};
    using keys = shaped::key<num_tokens>;
    const auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>());
    auto scores = shaped::torch::rand<num_tokens, keys>();
    constexpr float inf = std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j <= 2; ++j) scores.data()[2 * 4 + j] = -inf;  // row 2 sees keys 0..2, all -inf
    scores.data()[2 * 4 + 3] = 5.0f;                                        // and its masked key holds 5
    const auto book = shaped::softmax<-1>(
        scores.masked_fill(mask.template slice<num_tokens, keys>().template to<bool>(), -inf) / 2.0f);
    const shaped::nn::dropout no_dropout(0.0);
    const auto weights = shaped::nn::detail::causal_weights<num_tokens>(scores, mask, no_dropout, 4);
    for (std::size_t e = 0; e < 16; ++e) {
        INFO("element ", e, ": ", weights.data()[e], " against ", book.data()[e]);
        CHECK((std::isnan(book.data()[e]) ? std::isnan(weights.data()[e]) : weights.data()[e] == book.data()[e]));
        CHECK(std::isnan(weights.data()[e]) == (e / 4 == 2));
    }
}
