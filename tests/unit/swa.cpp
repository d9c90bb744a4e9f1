// Sliding-window attention against the book's ch04/06_swa (tests/golden/modern/reference.py: Qwen3's
// GroupedQueryAttention with the book's window mask and its sliding-window cache, ported to PyTorch 1.13):
// nn::sliding_window_attention whole and through nn::sliding_window_cache in chunks, the cache's ring
// against a plain cache at many windows and chunkings, and the cache's bounds.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "check.hpp"
#include "golden/modern_goldens.hpp"
#include "module_goldens.hpp"
#include "sequences.hpp"

#include <shaped/nn/grouped_query_attention.hpp>

namespace {

namespace torch = shaped::torch;
namespace nn = shaped::nn;
using test::tolerance;

struct batch : shaped::dynamic_axis<"batch", shaped::at_most<shaped::axis<"max_batch", 8>>> {};
// [axes]
struct context_length : shaped::axis<"context_length", 48> {};
struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
struct d_in : shaped::axis<"d_in", 24> {};
struct num_kv_heads : shaped::axis<"num_kv_heads", 2> {};
struct group_size : shaped::axis<"group_size", 2> {};
struct num_heads : shaped::product<"num_heads", num_kv_heads, group_size> {};
struct head_dim : shaped::axis<"head_dim", 8> {};
struct sliding_window : shaped::axis<"sliding_window", 5> {};
// [axes]

}  // namespace

TEST_CASE("sliding_window_attention equals the book's window mask, whole and through its sliding-window cache") {
    torch::manual_seed(97);
    // [module]
    nn::sliding_window_attention<d_in, num_heads, num_kv_heads, head_dim, context_length, sliding_window> swa;
    const auto x = torch::rand<batch, num_tokens, d_in>(2, 40) * 2.f - 1.f;
    const nn::rope<context_length, head_dim> rope;
    const auto y = swa(x, rope);  // query i sees positions i - 4 .. i
    // [module]
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(y)>, shaped::tensor<float, batch, num_tokens, d_in>>);
    static_assert(std::is_same_v<decltype(swa.cache),
                                 nn::sliding_window_cache<num_kv_heads, head_dim, sliding_window, context_length,
                                                          shaped::rotated<head_dim>>>);
    CHECK(test::max_abs_diff(y, golden::swa_97) <= tolerance);
    CHECK(nn::state_dict_keys(swa) ==
          std::vector<std::string>{"W_query.weight", "W_key.weight", "W_value.weight", "out_proj.weight"});

    // The cache in chunks of 1, 3, 7, 12 and 17 (two of them longer than the window): the book's cached
    // outputs and the whole sequence's, at batches 2 and 3; the ring holds the last 5 tokens.
    for (std::size_t b : {2, 3}) {
        swa.reset_cache();
        std::size_t pos = 0;
        for (std::size_t n : {1, 3, 7, 12, 17}) {
            INFO("batch ", b, ", tokens from ", pos, ", ", n, " of them");
            // [cached]
            const auto yc = swa(test::tokens(x, b, pos, n), rope, nn::use_cache);
            // [cached]
            CHECK(test::rows_diff(yc, golden::swa_97_cached, pos, 40, 24, 2) <= tolerance);
            CHECK(test::rows_diff(yc, golden::swa_97, pos, 40, 24, 2) <= tolerance);
            pos += n;
            CHECK(swa.cache.size() == pos);
            CHECK(swa.cache.held() == std::min<std::size_t>(pos, 5));
        }
        // Memory: the window's 5 tokens of 2 key/value heads, keys and values of 8 floats, per sequence.
        static_assert(decltype(swa.cache)::bytes_per_token == 2 * (8 + 8) * 4);
        CHECK(swa.cache.capacity_bytes() == b * 5 * decltype(swa.cache)::bytes_per_token);
    }
}

TEST_CASE("sliding_window_attention over 300 run-time tokens, window 64: prefixes, batches 1..4 and chunked prefill") {
    struct ctx : shaped::axis<"context_length", 320> {};
    struct long_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<ctx>> {};
    struct width : shaped::axis<"d_in", 32> {};
    struct kv : shaped::axis<"num_kv_heads", 3> {};
    struct group : shaped::axis<"group_size", 2> {};
    struct heads : shaped::product<"num_heads", kv, group> {};
    struct hd : shaped::axis<"head_dim", 8> {};
    struct window : shaped::axis<"sliding_window", 64> {};
    torch::manual_seed(98);
    nn::sliding_window_attention<width, heads, kv, hd, ctx, window> swa;
    const auto x = torch::rand<batch, long_tokens, width>(1, 300) * 2.f - 1.f;
    const nn::rope<ctx, hd> rope;
    CHECK(test::max_abs_diff(swa(x, rope), golden::swa_98_long) <= tolerance);
    for (std::size_t t : {1, 2, 63, 64, 65, 66, 127, 128, 129, 250}) {
        const std::size_t b = 1 + t % 4;
        INFO("num_tokens ", t, ", batch ", b);
        CHECK(test::rows_diff(swa(test::tokens(x, b, 0, t), rope), golden::swa_98_long, 0, 300, 32, 1) <= tolerance);
    }
    for (std::size_t b : {1, 4}) {
        swa.reset_cache();
        std::size_t pos = 0;
        for (std::size_t n : {100, 1, 1, 98, 100}) {
            INFO("batch ", b, ", tokens from ", pos, ", ", n, " of them");
            const auto yc = swa(test::tokens(x, b, pos, n), rope, nn::use_cache);
            CHECK(test::rows_diff(yc, golden::swa_98_cached, pos, 300, 32, 1) <= tolerance);
            CHECK(test::rows_diff(yc, golden::swa_98_long, pos, 300, 32, 1) <= tolerance);
            pos += n;
        }
        CHECK(swa.cache.held() == 64);
        // Past the context (positions 300..320): the RoPE table refuses first; the cache's own bound counts
        // positions, not the 64 tokens it holds, for a caller that appends itself.
        CHECK_NOTHROW((void)swa(test::tokens(x, b, 0, 20), rope, nn::use_cache));  // positions 300 to 319
        CHECK(test::thrown<shaped::shape_error>([&] { (void)swa(test::tokens(x, b, 0, 1), rope, nn::use_cache); }) ==
              "shaped::nn::rope(x, offset): expected positions within the table's (context_length=320), got "
              "positions 320 to 320 (offset 320, num_tokens=1)");
        const auto k1 = shaped::zeros<batch, kv, long_tokens, shaped::rotated<hd>>(b, 1);
        const auto v1 = shaped::zeros<batch, kv, long_tokens, hd>(b, 1);
        CHECK(test::thrown<shaped::shape_error>([&] { (void)swa.cache.append(k1, v1); }) ==
              "shaped::nn::sliding_window_cache::append(keys, values): expected at most 320 positions "
              "(context_length), got 320 taken + 1 new");
        CHECK(swa.cache.size() == 320);
    }
}

TEST_CASE("decoding steps on a static one-token axis meet every cached key, with and without a window") {
    // A prompt on run-time tokens, then steps along `one` (a static axis of 1 declared within the context):
    // the cached keys are bounded by the context, not by `one`'s extent.
    struct one : shaped::axis<"num_tokens", 1, shaped::at_most<context_length>> {};
    torch::manual_seed(97);
    nn::sliding_window_attention<d_in, num_heads, num_kv_heads, head_dim, context_length, sliding_window> swa;
    const auto x = torch::rand<batch, num_tokens, d_in>(2, 40) * 2.f - 1.f;
    const nn::rope<context_length, head_dim> rope;
    nn::grouped_query_attention<d_in, num_heads, num_kv_heads, head_dim, context_length> gqa;
    const auto full = gqa(x, rope);
    (void)swa(test::tokens(x, 2, 0, 10), rope, nn::use_cache);
    (void)gqa(test::tokens(x, 2, 0, 10), rope, nn::use_cache);
    for (std::size_t pos = 10; pos < 20; ++pos) {
        INFO("position ", pos);
        const auto step = test::tokens(x, 2, pos, 1).rename<batch, one, d_in>();
        CHECK(test::rows_diff(swa(step, rope, nn::use_cache), golden::swa_97, pos, 40, 24, 2) <= tolerance);
        const auto y = gqa(step, rope, nn::use_cache);
        double worst = 0;
        for (std::size_t i = 0; i < 2; ++i)
            for (std::size_t e = 0; e < 24; ++e) worst = std::max(worst, double(std::abs(y.at(i, 0, e) - full.at(i, pos, e))));
        CHECK(worst <= tolerance);
    }
    CHECK(swa.cache.size() == 20);
    CHECK(gqa.cache.size() == 20);
}

TEST_CASE("a window longer than the context holds the context, not the window") {
    struct ctx : shaped::axis<"context_length", 16> {};
    struct tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<ctx>> {};
    struct heads : shaped::axis<"num_heads", 2> {};
    struct hd : shaped::axis<"head_dim", 4> {};
    struct window : shaped::axis<"sliding_window", 100> {};
    nn::sliding_window_cache<heads, hd, window, ctx> ring;
    nn::kv_cache<heads, hd, ctx> full;
    const auto k = torch::rand<batch, tokens, heads, hd>(1, 16), v = torch::rand<batch, tokens, heads, hd>(1, 16);
    for (std::size_t pos = 0; pos < 16; pos += 4) {
        const auto kn = shaped::narrow<1, tokens>(k, pos, 4), vn = shaped::narrow<1, tokens>(v, pos, 4);
        auto [rk, rv] = ring.append(kn, vn);
        auto [fk, fv] = full.append(kn, vn);
        REQUIRE(rk.numel() == fk.numel());
        CHECK(std::equal(rk.data(), rk.data() + rk.numel(), fk.data()));
        CHECK(std::equal(rv.data(), rv.data() + rv.numel(), fv.data()));
    }
    CHECK(ring.capacity_bytes() == 16 * decltype(ring)::bytes_per_token);
}

TEST_CASE("sliding_window_cache gives the keys of a plain cache's last window, at windows 1..70 and random chunks") {
    struct ctx : shaped::axis<"context_length", 160> {};
    struct tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<ctx>> {};
    struct heads : shaped::axis<"num_heads", 3> {};
    struct hd : shaped::axis<"head_dim", 4> {};
    struct vd : shaped::axis<"value_dim", 5> {};
    std::mt19937 rng(2026);
    auto check_window = [&]<std::size_t W>(std::integral_constant<std::size_t, W>) {
        struct window : shaped::axis<"sliding_window", W> {};
        nn::sliding_window_cache<heads, vd, window, ctx, hd> ring;
        nn::kv_cache<heads, vd, ctx, hd> full;
        const std::size_t b = 1 + rng() % 3;
        const auto keys = torch::rand<batch, tokens, heads, hd>(b, 160);
        const auto values = torch::rand<batch, tokens, heads, vd>(b, 160);
        std::size_t pos = 0;
        while (pos < 160) {
            const bool step = rng() % 2 == 0;  // steps of 1..3 tokens, or chunks up to twice the window
            const std::size_t n = std::min<std::size_t>(160 - pos, 1 + rng() % (step ? 3 : 2 * W + 2));
            INFO("window ", W, ", batch ", b, ", tokens from ", pos, ", ", n, " of them");
            const auto kn = shaped::narrow<1, tokens>(keys, pos, n);
            const auto vn = shaped::narrow<1, tokens>(values, pos, n);
            auto [k, v] = ring.append(kn, vn);
            auto [fk, fv] = full.append(kn, vn);
            pos += n;
            // The book's attn_keep: the last W - 1 held tokens and the n new ones, in order.
            const std::size_t m = std::min(pos, W - 1 + n);
            REQUIRE(k.shape.extent(2) == m);
            bool same = true;
            for (std::size_t i = 0; i < b; ++i)
                for (std::size_t h = 0; h < 3; ++h)
                    for (std::size_t j = 0; j < m; ++j) {
                        for (std::size_t e = 0; e < 4; ++e) same &= k.at(i, h, j, e) == fk.at(i, h, pos - m + j, e);
                        for (std::size_t e = 0; e < 5; ++e) same &= v.at(i, h, j, e) == fv.at(i, h, pos - m + j, e);
                    }
            CHECK(same);
            CHECK(ring.held() == std::min(pos, W));
        }
    };
    [&]<std::size_t... W>(std::index_sequence<W...>) {
        (check_window(std::integral_constant<std::size_t, W>{}), ...);
    }(std::index_sequence<1, 2, 3, 4, 7, 16, 63, 64, 65, 70>{});
}

TEST_CASE("sliding_window_cache refuses values of other extents and another batch before storing anything") {
    struct ctx : shaped::axis<"context_length", 16> {};
    struct tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<ctx>> {};
    struct heads : shaped::axis<"num_heads", 2> {};
    struct hd : shaped::axis<"head_dim", 4> {};
    struct window : shaped::axis<"sliding_window", 3> {};
    nn::sliding_window_cache<heads, hd, window, ctx> cache;
    const auto k = shaped::zeros<batch, heads, tokens, hd>(2, 4);
    CHECK(test::thrown<shaped::shape_error>(
              [&] { (void)cache.append(k, shaped::zeros<batch, heads, tokens, hd>(2, 3)); }) ==
          "shaped::nn::sliding_window_cache::append(keys, values): expected values of the keys' batch and tokens "
          "(batch=2, num_heads=2, num_tokens=4, head_dim=4), got (batch=2, num_heads=2, num_tokens=3, head_dim=4)");
    CHECK(cache.size() == 0);
    (void)cache.append(k, k);
    CHECK(test::thrown<shaped::shape_error>([&] {
              (void)cache.append(shaped::zeros<batch, heads, tokens, hd>(1, 1), shaped::zeros<batch, heads, tokens, hd>(1, 1));
          }) == "shaped::nn::sliding_window_cache::append(keys, values): expected batch=2 (the batch the cache holds; "
                "reset() it for another), got batch=1");
    CHECK(cache.size() == 4);
    CHECK(cache.held() == 3);
    cache.reset();
    CHECK(cache.size() == 0);
    CHECK(cache.held() == 0);
    CHECK_NOTHROW((void)cache.append(shaped::zeros<batch, heads, tokens, hd>(1, 16), shaped::zeros<batch, heads, tokens, hd>(1, 16)));
}
