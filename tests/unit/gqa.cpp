// Grouped-query attention against the book's class (tests/golden/modern/reference.py, Qwen3's
// GroupedQueryAttention ported to PyTorch 1.13): the module, its KV cache, scaled_dot_product_attention
// on grouped keys and values, the book's steps written out with repeat_interleave; and multi-head latent
// attention (ch04/05_mla) with its latent cache.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "check.hpp"
#include "flash_paths.hpp"
#include "golden/modern_goldens.hpp"
#include "module_goldens.hpp"
#include "sequences.hpp"

#include <shaped/nn/grouped_query_attention.hpp>
#include <shaped/nn/multi_head_latent_attention.hpp>

namespace {

namespace torch = shaped::torch;
namespace nn = shaped::nn;
using test::tolerance;

struct batch : shaped::dynamic_axis<"batch", shaped::at_most<shaped::axis<"max_batch", 8>>> {};
// [axes]
struct context_length : shaped::axis<"context_length", 32> {};
struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
struct d_in : shaped::axis<"d_in", 64> {};
struct num_kv_heads : shaped::axis<"num_kv_heads", 2> {};
struct group_size : shaped::axis<"group_size", 4> {};
struct num_heads : shaped::product<"num_heads", num_kv_heads, group_size> {};  // 8: key/value heads outermost
struct head_dim : shaped::axis<"head_dim", 16> {};
// [axes]

using gqa_81 = nn::grouped_query_attention<d_in, num_heads, num_kv_heads, head_dim, context_length>;

}  // namespace

TEST_CASE("grouped_query_attention equals the book's GroupedQueryAttention: 8 query heads on 2 key/value heads") {
    torch::manual_seed(81);
    // [module]
    nn::grouped_query_attention<d_in, num_heads, num_kv_heads, head_dim, context_length> gqa;  // qk_norm: (true)
    const auto x = torch::rand<batch, num_tokens, d_in>(2, 7);
    const nn::rope<context_length, head_dim> rope;  // one table per model; base 10,000
    const auto y = gqa(x, rope);                     // (batch, num_tokens, d_in)
    // [module]
    static_assert(std::is_same_v<decltype(gqa), gqa_81>);
    static_assert(gqa_81::group_size == 4);
    static_assert(std::is_same_v<decltype(gqa.W_query), nn::linear<d_in, gqa_81::d_out>>);
    static_assert(std::is_same_v<decltype(gqa.W_key), nn::linear<d_in, gqa_81::kv_dim>>);
    static_assert(gqa_81::d_out::extent == 128 && gqa_81::kv_dim::extent == 32);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(y)>, shaped::tensor<float, batch, num_tokens, d_in>>);
    CHECK(test::max_abs_diff(y, golden::gqa_81) <= tolerance);

    // The state_dict: the book's names, the keys' and values' projections a quarter of the queries'.
    CHECK(nn::state_dict_keys(gqa) ==
          std::vector<std::string>{"W_query.weight", "W_key.weight", "W_value.weight", "out_proj.weight"});
    CHECK(nn::parameter_count(gqa) == 64 * 128 + 2 * 64 * 32 + 128 * 64);
}

TEST_CASE("grouped_query_attention in Qwen3's shape: head_dim apart from the width, one key/value head, QK-norm, interleaved RoPE") {
    struct width : shaped::axis<"emb_dim", 32> {};
    struct kv : shaped::axis<"num_kv_heads", 1> {};
    struct group : shaped::axis<"group_size", 4> {};
    struct heads : shaped::product<"num_heads", kv, group> {};
    struct hd : shaped::axis<"head_dim", 24> {};
    struct ctx : shaped::axis<"context_length", 16> {};
    struct tokens : shaped::axis<"num_tokens", 5, shaped::at_most<ctx>> {};
    struct b3 : shaped::axis<"batch", 3> {};
    using gqa_t = nn::grouped_query_attention<width, heads, kv, hd, ctx, shaped::rope_layout::interleaved>;
    torch::manual_seed(82);
    gqa_t gqa(/*qk_norm=*/true);
    // W_query widens 32 to 96 (4 heads of 24) and out_proj narrows back: Qwen3 0.6B's 1024 -> 2048 -> 1024.
    static_assert(std::is_same_v<decltype(gqa.out_proj), nn::linear<gqa_t::d_out, width>>);
    gqa.q_norm->scale = torch::rand<hd>() + 0.5f;
    gqa.k_norm->scale = torch::rand<hd>() + 0.5f;
    const auto x = torch::rand<b3, tokens, width>() * 2.f - 1.f;
    const gqa_t::rope_type rope(1'000'000.0);
    const auto y = gqa(x, rope);
    CHECK(test::max_abs_diff(y, golden::gqa_82_qk_norm) <= tolerance);
    CHECK(nn::state_dict_keys(gqa) == std::vector<std::string>{"W_query.weight", "W_key.weight", "W_value.weight",
                                                               "out_proj.weight", "q_norm.scale", "k_norm.scale"});
    CHECK(nn::parameter_count(gqa) == 32 * 96 + 2 * 32 * 24 + 96 * 32 + 2 * 24);
    gqa_t plain(nn::skip_init);
    CHECK(nn::state_dict_keys(plain).size() == 4);  // no norms without qk_norm
}

namespace {
struct ctx_256 : shaped::axis<"context_length", 256> {};
struct long_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<ctx_256>> {};
struct width_32 : shaped::axis<"d_in", 32> {};
struct kv_3 : shaped::axis<"num_kv_heads", 3> {};
struct group_2 : shaped::axis<"group_size", 2> {};
struct heads_6 : shaped::product<"num_heads", kv_3, group_2> {};
struct hd_8 : shaped::axis<"head_dim", 8> {};
using gqa_83 = nn::grouped_query_attention<width_32, heads_6, kv_3, hd_8, ctx_256>;

}  // namespace

TEST_CASE("grouped_query_attention at run-time lengths 1..200 and batches 1..4, and its KV cache, against the book's") {
    torch::manual_seed(83);
    gqa_83 gqa;
    const auto x = torch::rand<batch, long_tokens, width_32>(1, 200) * 2.f - 1.f;
    const gqa_83::rope_type rope;
    CHECK(test::max_abs_diff(gqa(x, rope), golden::gqa_83_long) <= tolerance);
    // Causal: the first t outputs of the 200 are those of the first t tokens alone, at any batch.
    for (std::size_t t : {1, 2, 3, 17, 63, 64, 65, 128, 199}) {
        const std::size_t b = 1 + t % 4;
        INFO("num_tokens ", t, ", batch ", b);
        CHECK(test::rows_diff(gqa(test::tokens(x, b, 0, t), rope), golden::gqa_83_long, 0, 200, 32, 1) <= tolerance);
    }

    // The KV cache: chunks of 1, 7, 64 and 128 tokens (a prefill in pieces), each at its position, give the
    // book's cached outputs and the uncached ones.
    for (std::size_t b : {1, 3}) {
        gqa.reset_cache();
        std::size_t pos = 0;
        for (std::size_t n : {1, 7, 64, 128}) {
            const auto y = gqa(test::tokens(x, b, pos, n), rope, nn::use_cache);
            INFO("batch ", b, ", tokens ", pos, "..", pos + n);
            CHECK(test::rows_diff(y, golden::gqa_83_cached, pos, 200, 32, 1) <= tolerance);
            CHECK(test::rows_diff(y, golden::gqa_83_long, pos, 200, 32, 1) <= tolerance);
            pos += n;
        }
        CHECK(gqa.cache.size() == 200);
        // The cache holds the 3 key/value heads, not the 6 query heads: keys and values of 8 floats each.
        static_assert(decltype(gqa.cache)::bytes_per_token == 3 * (8 + 8) * 4);
        // Memory grows with the tokens held, to at most the context's.
        CHECK(gqa.cache.capacity_bytes() >= b * 200 * decltype(gqa.cache)::bytes_per_token);
        CHECK(gqa.cache.capacity_bytes() <= b * 256 * decltype(gqa.cache)::bytes_per_token);
        // Past the context: refused before anything is stored, naming the positions (the RoPE table, as long
        // as the cache, is the first to see them).
        CHECK(test::thrown<shaped::shape_error>([&] { (void)gqa(test::tokens(x, b, 0, 57), rope, nn::use_cache); }) ==
              "shaped::nn::rope(x, offset): expected positions within the table's (context_length=256), got "
              "positions 200 to 256 (offset 200, num_tokens=57)");
        CHECK_NOTHROW((void)gqa(test::tokens(x, b, 0, 56), rope, nn::use_cache));  // positions 200 to 255: the last 56
        CHECK(gqa.cache.size() == 256);
        // The cache's own bound, for a caller that appends itself.
        const auto k1 = shaped::zeros<batch, kv_3, long_tokens, shaped::rotated<hd_8>>(b, 1);
        const auto v1 = shaped::zeros<batch, kv_3, long_tokens, hd_8>(b, 1);
        CHECK(test::thrown<shaped::shape_error>([&] { (void)gqa.cache.append(k1, v1); }) ==
              "shaped::nn::kv_cache::append(keys, values): expected at most 256 tokens (context_length) in the cache, got 256 "
              "cached + 1 new");
        CHECK(gqa.cache.size() == 256);
    }
    // A RoPE table shorter than the positions: the cache's offset is checked against it.
    gqa.reset_cache();
    (void)gqa(test::tokens(x, 1, 0, 200), rope, nn::use_cache);
    CHECK(test::thrown<shaped::shape_error>([&] { (void)gqa(test::tokens(x, 2, 0, 1), rope, nn::use_cache); }).find("batch=1") !=
          std::string::npos);
}

namespace {
namespace flash = shaped::detail::flash;
using keys_81 = shaped::key<num_tokens>;

// The book's steps of GroupedQueryAttention.forward on gqa's weights, written out in shaped: the keys and values
// expanded with repeat_interleave, the scores masked and soft-maxed, out_proj. The docs show it.
auto book_steps(const gqa_81& gqa, const shaped::tensor<float, batch, num_tokens, d_in>& x, const gqa_81::rope_type& rope) {
    const std::size_t t = x.shape.extent(1);
    const auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>());
    // [book_steps]
    auto queries = gqa.W_query(x).view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
    auto keys = gqa.W_key(x).view<batch, num_tokens, num_kv_heads, head_dim>().transpose<1, 2>();
    auto values = gqa.W_value(x).view<batch, num_tokens, num_kv_heads, head_dim>().transpose<1, 2>();
    auto q = rope(queries);  // (batch, num_heads, num_tokens, rotated<head_dim>)
    auto k = rope(keys);     // (batch, num_kv_heads, num_tokens, rotated<head_dim>)
    // Each key/value head for its group of query heads: (batch, merged<num_kv_heads, group_size>, ...), which is
    // num_heads. k.repeat<group_size, 1>() would be merged<group_size, num_kv_heads>, and matmul refuses it.
    auto k_heads = k.repeat_interleave<group_size, 1>().rename<batch, num_heads, keys_81, shaped::rotated<head_dim>>();
    auto v_heads = values.repeat_interleave<group_size, 1>().rename<batch, num_heads, keys_81, head_dim>();
    auto attn_scores = shaped::matmul(q, k_heads.transpose<2, 3>());  // (batch, num_heads, num_tokens, key<num_tokens>)
    auto masked = attn_scores.masked_fill(mask.slice<num_tokens, keys_81>(t, t).to<bool>(),
                                          -std::numeric_limits<float>::infinity());
    auto attn_weights = shaped::softmax<-1>(masked / std::sqrt(16.0f));
    auto context = shaped::matmul(attn_weights, v_heads).transpose<1, 2>().contiguous();
    auto y = gqa.out_proj(context.view<batch, num_tokens, gqa_81::d_out>());
    // [book_steps]
    static_assert(std::is_same_v<decltype(k.repeat_interleave<group_size, 1>()),
                                 shaped::tensor<float, batch, shaped::merged<num_kv_heads, group_size>, num_tokens,
                                                shaped::rotated<head_dim>>>);
    static_assert(shaped::same_axis_v<shaped::merged<num_kv_heads, group_size>, num_heads>);
    static_assert(!shaped::same_axis_v<shaped::merged<group_size, num_kv_heads>, num_heads>);
    return y;
}

struct context_1024 : shaped::axis<"context_length", 1024> {};
struct sdpa_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_1024>> {};

// Grouped keys and values against the same keys expanded with repeat_interleave, for one grouping.
template <class Kv, class Group>
double grouped_against_expanded(std::size_t b, std::size_t t, std::size_t cached_before, std::uint64_t seed) {
    struct heads : shaped::product<"num_heads", Kv, Group> {};
    struct hd : shaped::axis<"head_dim", 20> {};  // not a multiple of the kernel's panels: padded
    using cache_t = shaped::cached<sdpa_tokens>;
    torch::manual_seed(seed);
    const auto q = torch::randn<batch, heads, sdpa_tokens, hd>(b, t);
    const auto k = torch::randn<batch, Kv, cache_t, hd>(b, cached_before + t);
    const auto v = torch::randn<batch, Kv, cache_t, hd>(b, cached_before + t);
    const auto grouped = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal);
    const auto k_heads = k.template repeat_interleave<Group, 1>().template rename<batch, heads, cache_t, hd>();
    const auto v_heads = v.template repeat_interleave<Group, 1>().template rename<batch, heads, cache_t, hd>();
    const auto expanded = shaped::scaled_dot_product_attention(q, k_heads, v_heads, shaped::is_causal);
    double worst = shaped::max_abs_diff(grouped, expanded);
    // Without the mask too, and on each SIMD path forced, against the plain loops on the expanded heads.
    const auto open = shaped::scaled_dot_product_attention(q, k, v);
    worst = std::max(worst, shaped::max_abs_diff(open, shaped::scaled_dot_product_attention(q, k_heads, v_heads)));
    for (const flash::isa path : {flash::isa::portable, flash::isa::avx2, flash::isa::avx512}) {
        auto out = grouped;
        std::fill_n(out.data(), out.numel(), std::numeric_limits<float>::quiet_NaN());
        test::run_on_path(out, q, k, v, {.causal = true, .group = Group::extent}, path);
        worst = std::max(worst, shaped::max_abs_diff(out, expanded));
    }
    return worst;
}
}  // namespace

TEST_CASE("the book's steps with repeat_interleave give the book's numbers; the module's fused kernel agrees") {
    torch::manual_seed(81);
    gqa_81 gqa;
    const auto x = torch::rand<batch, num_tokens, d_in>(2, 7);
    const gqa_81::rope_type rope;
    CHECK(test::max_abs_diff(book_steps(gqa, x, rope), golden::gqa_81) <= tolerance);
    for (std::size_t t : {1, 5, 32}) {
        const auto xt = torch::rand<batch, num_tokens, d_in>(3, t);
        INFO("num_tokens ", t);
        CHECK(shaped::max_abs_diff(book_steps(gqa, xt, rope), gqa(xt, rope)) <= tolerance);
    }
}

TEST_CASE("scaled_dot_product_attention on grouped keys and values equals it on keys and values expanded by repeat_interleave") {
    struct kv1 : shaped::axis<"num_kv_heads", 1> {};
    struct kv2 : shaped::axis<"num_kv_heads", 2> {};
    struct kv4 : shaped::axis<"num_kv_heads", 4> {};
    struct g1 : shaped::axis<"group_size", 1> {};
    struct g3 : shaped::axis<"group_size", 3> {};
    struct g4 : shaped::axis<"group_size", 4> {};
    double worst = 0;
    for (std::size_t t = 1; t <= 300; t += 23) {
        const std::size_t b = 1 + t % 3, before = t % 2 ? 0 : t / 2;
        INFO("batch ", b, ", num_tokens ", t, ", cached before ", before);
        worst = std::max(worst, grouped_against_expanded<kv1, g4>(b, t, before, 500 + t));  // multi-query
        worst = std::max(worst, grouped_against_expanded<kv2, g3>(b, t, before, 600 + t));
        worst = std::max(worst, grouped_against_expanded<kv4, g1>(b, t, before, 700 + t));  // groups of one: MHA
        REQUIRE(worst <= tolerance);
    }
    MESSAGE("max |grouped - expanded| = ", worst, " over lengths 1..300 and every path");
}

namespace {
struct mla_ctx : shaped::axis<"context_length", 32> {};
struct mla_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<mla_ctx>> {};
struct mla_d_in : shaped::axis<"d_in", 24> {};
struct mla_d_out : shaped::axis<"d_out", 32> {};
struct mla_heads : shaped::axis<"num_heads", 4> {};
struct latent_dim : shaped::axis<"latent_dim", 12> {};
using mla_t = nn::multi_head_latent_attention<mla_d_in, mla_d_out, mla_ctx, mla_heads, latent_dim>;

// x[:, from:from + n] of a (batch, num_tokens, d_in) tensor.
}  // namespace

TEST_CASE("multi_head_latent_attention equals the book's MultiHeadLatentAttention, and its latent cache the whole sequence") {
    torch::manual_seed(93);
    mla_t mla;
    const auto x = torch::rand<batch, mla_tokens, mla_d_in>(2, 20);
    const auto y = mla(x);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(y)>, shaped::tensor<float, batch, mla_tokens, mla_d_out>>);
    CHECK(test::max_abs_diff(y, golden::mla_93) <= tolerance);
    CHECK(nn::state_dict_keys(mla) == std::vector<std::string>{"W_query.weight", "W_DKV.weight", "W_UK.weight",
                                                               "W_UV.weight", "out_proj.weight", "out_proj.bias"});
    CHECK(nn::parameter_count(mla) == 24 * 32 + 24 * 12 + 2 * 12 * 32 + 32 * 32 + 32);

    // Chunks of 1, 6 and 13 tokens through the latent cache: the book's cached outputs, and the uncached ones.
    std::vector<float> cached;
    std::size_t pos = 0;
    for (std::size_t n : {1, 6, 13}) {
        const auto part = mla(test::tokens(x, 2, pos, n), nn::use_cache);
        for (std::size_t i = 0; i < 2; ++i)
            for (std::size_t t = 0; t < n; ++t)
                for (std::size_t e = 0; e < 32; ++e) {
                    INFO("token ", pos + t);
                    CHECK(std::abs(part.at(i, t, e) - golden::mla_93_cached[(i * 20 + pos + t) * 32 + e]) <= tolerance);
                    CHECK(std::abs(part.at(i, t, e) - y.at(i, pos + t, e)) <= tolerance);
                }
        pos += n;
    }
    // The cache keeps 12 floats a token where multi-head attention would keep keys and values, 2 × 32.
    static_assert(decltype(mla.cache)::bytes_per_token == 12 * 4);
    CHECK(mla.cache.size() == 20);
    CHECK(test::thrown<shaped::shape_error>([&] { (void)mla(test::tokens(x, 2, 0, 13), nn::use_cache); }) ==
          "shaped::nn::latent_cache::append(latent): expected at most 32 tokens (context_length) in the cache, got 20 "
          "cached + 13 new");
    mla.reset_cache();
    CHECK(mla.cache.size() == 0);
}
