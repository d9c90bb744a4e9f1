// Masks whose meaning is in their type, scaled_dot_product_attention's attn_mask, and sliding windows:
// against PyTorch's math path (tests/golden/modern/reference.py, sdpa_math and the book's ch04/06_swa mask)
// and against the book's steps written out in shaped, at many lengths, windows and cache offsets.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "check.hpp"
#include "flash_paths.hpp"
#include "golden/modern_goldens.hpp"
#include "module_goldens.hpp"

#include <shaped/ops/scaled_dot_product_attention.hpp>

namespace {

namespace torch = shaped::torch;
namespace flash = shaped::detail::flash;
using test::tolerance;

struct context_length : shaped::axis<"context_length", 4096> {};
struct batch : shaped::dynamic_axis<"batch"> {};
struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
using cached_keys = shaped::cached<num_tokens>;
struct num_heads : shaped::axis<"num_heads", 2> {};
struct head_dim : shaped::axis<"head_dim", 8> {};

// The book's steps with a mask that is true where a key is masked out: matmul, masked_fill, softmax of the
// scaled scores, matmul.
template <class Q, class K, class V, class Mask>
auto book_masked(const Q& q, const K& k, const V& v, const Mask& masked) {
    auto scores = shaped::matmul(q, k.template transpose<-2, -1>());
    auto filled = shaped::masked_fill(std::move(scores), masked, -std::numeric_limits<float>::infinity());
    return shaped::matmul(shaped::softmax<-1>(filled / std::sqrt(8.0f)), v);
}

}  // namespace

TEST_CASE("a mask's meaning is in its type: true_masks for masked_fill, true_attends for attn_mask, ! between them") {
    struct q_axis : shaped::axis<"num_tokens", 5, shaped::at_most<context_length>> {};
    struct k_axis : shaped::axis<"num_keys", 9> {};
    struct window : shaped::axis<"sliding_window", 3> {};
    const auto m = shaped::sliding_window_mask<window, q_axis, k_axis>();
    static_assert(std::is_same_v<decltype(m), const shaped::bool_mask<shaped::mask_meaning::true_masks, q_axis, k_axis>>);
    // The book's mask (ch04/06_swa): query i at position 4 + i sees positions 2 + i .. 4 + i.
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t j = 0; j < 9; ++j) CHECK(m.values.at(i, j) == (golden::swa_mask_5_9_w3[i * 9 + j] != 0));
    const auto a = !m;
    static_assert(decltype(a)::meaning == shaped::mask_meaning::true_attends);
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t j = 0; j < 9; ++j) CHECK(a.values.at(i, j) == !m.values.at(i, j));
    CHECK((!a).values.at(4, 8) == m.values.at(4, 8));
    // Run-time extents, and fewer keys than queries refused.
    const auto r = shaped::sliding_window_mask<window, num_tokens, cached_keys>(3, 7);
    CHECK(r.values.at(2, 6) == false);
    CHECK(r.values.at(2, 3) == true);
    CHECK(test::thrown<shaped::shape_error>([] { (void)shaped::sliding_window_mask<window, num_tokens, cached_keys>(4, 3); }) ==
          "shaped::sliding_window_mask<Window, Q, K>: expected at least as many keys as queries, got 4 queries and 3 keys");
}

TEST_CASE("scaled_dot_product_attention with a bool attn_mask (true = may attend) or a float one equals PyTorch's math path") {
    struct b2 : shaped::axis<"batch", 2> {};
    struct h3 : shaped::axis<"num_heads", 3> {};
    struct t5 : shaped::axis<"num_tokens", 5, shaped::at_most<context_length>> {};
    using k5 = shaped::key<t5>;
    torch::manual_seed(91);
    const auto q = torch::randn<b2, h3, t5, head_dim>();
    const auto k = torch::randn<b2, h3, k5, head_dim>();
    const auto v = torch::randn<b2, h3, k5, head_dim>();
    const auto attend_values = shaped::tensor<std::int64_t, t5, k5>::from_buffer(golden::sdpa_91_attend);
    // [meaning]
    const auto attend = shaped::true_attends(attend_values);  // true where a query may attend (SDPA's meaning)
    const auto y = shaped::scaled_dot_product_attention(q, k, v, attend);
    // The book's way: a mask that is true where a key is masked out, through masked_fill. `!` negates the
    // values and flips the meaning: the same pairs stay blocked.
    const auto masked = !attend;  // bool_mask<mask_meaning::true_masks, num_tokens, key<num_tokens>>
    auto scores = shaped::matmul(q, k.transpose<-2, -1>());
    auto weights = shaped::softmax<-1>(shaped::masked_fill(scores, masked, -INFINITY) / std::sqrt(8.0f));
    const auto book = shaped::matmul(weights, v);
    // [meaning]
    CHECK(test::max_abs_diff(y, golden::sdpa_91_bool_mask) <= tolerance);
    CHECK(shaped::max_abs_diff(book, y) <= tolerance);
    CHECK(shaped::max_abs_diff(book_masked(q, k, v, !attend), book) == 0.0);  // the same steps

    // (2, 1, 5, 5) drawn after q, k, v and the mask's rand(5, 5), as the golden script draws it.
    (void)torch::rand<t5, k5>();
    const auto additive = torch::randn<b2, shaped::one, t5, k5>();
    CHECK(test::max_abs_diff(shaped::scaled_dot_product_attention(q, k, v, additive), golden::sdpa_91_float_mask) <=
          tolerance);

    // A padding mask (batch, one, one, key): the second sequence's last two keys are padding.
    auto pad = shaped::ones<b2, shaped::one, shaped::one, k5>();
    pad.storage()(1, 0, 0, 3) = pad.storage()(1, 0, 0, 4) = 0.0f;
    const auto padded = shaped::scaled_dot_product_attention(q, k, v, shaped::true_attends(pad));
    const auto expected = book_masked(q, k, v, !shaped::true_attends(pad));
    CHECK(shaped::max_abs_diff(padded, expected) <= tolerance);
}

TEST_CASE("a run-time attn_mask whose extents are not the scores' is refused, naming both") {
    torch::manual_seed(5);
    const auto q = torch::randn<batch, num_heads, num_tokens, head_dim>(1, 4);
    const auto k = torch::randn<batch, num_heads, cached_keys, head_dim>(1, 6);
    const auto v = torch::randn<batch, num_heads, cached_keys, head_dim>(1, 6);
    const auto bad = shaped::zeros<num_tokens, cached_keys>(4, 5);
    CHECK(test::thrown<shaped::shape_error>([&] { (void)shaped::scaled_dot_product_attention(q, k, v, bad); }) ==
          "shaped::scaled_dot_product_attention(q, k, v, attn_mask): expected a mask that broadcasts to the scores "
          "(1, 2, 4, 6), got (num_tokens=4, cached<num_tokens>=5)");
}

TEST_CASE("causal attention in a sliding window equals the book's ch04/06_swa mask, at every window, length and cache offset") {
    struct window_4 : shaped::axis<"sliding_window", 4> {};
    torch::manual_seed(92);
    {
        const auto q = torch::randn<batch, num_heads, num_tokens, head_dim>(1, 20);
        const auto k = torch::randn<batch, num_heads, cached_keys, head_dim>(1, 26);
        const auto v = torch::randn<batch, num_heads, cached_keys, head_dim>(1, 26);
        // [window]
        // struct window_4 : shaped::axis<"sliding_window", 4> {};   q: 20 new tokens; k, v: 6 cached + 20
        const auto y = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal, shaped::sliding_window<window_4>);
        // The book's mask for the same pairs: query i, at position 6 + i, sees positions 3 + i .. 6 + i.
        const auto m = shaped::sliding_window_mask<window_4, num_tokens, cached_keys>(20, 26);  // true_masks
        // [window]
        CHECK(test::max_abs_diff(y, golden::sdpa_92_window_4) <= tolerance);
        CHECK(shaped::max_abs_diff(book_masked(q, k, v, m), y) <= tolerance);
    }
    // Windows across the kernel's 128-key tiles, lengths across its 64-query tiles, with and without earlier
    // cached keys: the fused op and each forced path against the book's steps with the book's mask.
    struct w1 : shaped::axis<"sliding_window", 1> {};
    struct w7 : shaped::axis<"sliding_window", 7> {};
    struct w128 : shaped::axis<"sliding_window", 128> {};
    struct w200 : shaped::axis<"sliding_window", 200> {};
    double worst = 0;
    auto check = [&]<class W>(std::size_t t, std::size_t before) {
        const auto q = torch::randn<batch, num_heads, num_tokens, head_dim>(2, t);
        const auto k = torch::randn<batch, num_heads, cached_keys, head_dim>(2, before + t);
        const auto v = torch::randn<batch, num_heads, cached_keys, head_dim>(2, before + t);
        const auto fused = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal, shaped::sliding_window<W>);
        const auto book = book_masked(q, k, v, shaped::sliding_window_mask<W, num_tokens, cached_keys>(t, before + t));
        INFO("window ", W::extent, ", num_tokens ", t, ", cached before ", before);
        double diff = shaped::max_abs_diff(fused, book);
        for (const flash::isa path : {flash::isa::portable, flash::isa::avx2, flash::isa::avx512}) {
            auto out = fused;
            std::fill_n(out.data(), out.numel(), std::numeric_limits<float>::quiet_NaN());
            test::run_on_path(out, q, k, v, {.causal = true, .window = W::extent}, path);
            diff = std::max(diff, shaped::max_abs_diff(out, book));
        }
        REQUIRE(diff <= tolerance);
        worst = std::max(worst, diff);
    };
    for (std::size_t t : {1, 2, 63, 64, 65, 130, 300}) {
        for (std::size_t before : {std::size_t{0}, std::size_t{5}, std::size_t{131}}) {
            check.operator()<w1>(t, before);
            check.operator()<w7>(t, before);
            check.operator()<w128>(t, before);
            check.operator()<w200>(t, before);
        }
    }
    MESSAGE("max |windowed - book| = ", worst, " over windows 1, 7, 128, 200 and every path");

    // A window as long as the keys is plain causal attention.
    struct w4096 : shaped::axis<"sliding_window", 4096> {};
    const auto q = torch::randn<batch, num_heads, num_tokens, head_dim>(1, 150);
    const auto k = torch::randn<batch, num_heads, cached_keys, head_dim>(1, 150);
    const auto v = torch::randn<batch, num_heads, cached_keys, head_dim>(1, 150);
    CHECK(shaped::max_abs_diff(shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal, shaped::sliding_window<w4096>),
                               shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal)) == 0.0);
}

TEST_CASE("a NaN among the values of keys before a query's window does not reach it, as with the causal mask") {
    struct w3 : shaped::axis<"sliding_window", 3> {};
    torch::manual_seed(7);
    const auto q = torch::randn<batch, num_heads, num_tokens, head_dim>(1, 10);
    const auto k = torch::randn<batch, num_heads, cached_keys, head_dim>(1, 10);
    auto v = torch::randn<batch, num_heads, cached_keys, head_dim>(1, 10);
    v.storage()(0, 0, 0, 0) = std::numeric_limits<float>::quiet_NaN();  // key 0: seen by queries 0, 1, 2 only
    for (const flash::isa path : {flash::isa::portable, flash::isa::avx2, flash::isa::avx512}) {
        auto out = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal, shaped::sliding_window<w3>);
        test::run_on_path(out, q, k, v, {.causal = true, .window = 3}, path);
        for (std::size_t i = 0; i < 10; ++i) CHECK(std::isnan(out.at(0, 0, i, 0)) == (i < 3));
        CHECK(!std::isnan(out.at(0, 0, 0, 1)));
    }
}
