// The attention of today's models against their PyTorch references (tests/golden/modern/reference.py, the
// book's bonus classes ported to PyTorch 1.13): SiLU, RMSNorm in Llama's and Gemma's forms, QK-norm, the gated
// feed-forward layers.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "check.hpp"
#include "golden/modern_goldens.hpp"
#include "module_goldens.hpp"

namespace {

namespace torch = shaped::torch;
namespace nn = shaped::nn;
using test::max_ulp;
using test::tolerance;

struct batch : shaped::axis<"batch", 2> {};
struct num_tokens : shaped::axis<"num_tokens", 3> {};
struct emb_dim : shaped::axis<"emb_dim", 64> {};
struct hidden_dim : shaped::axis<"hidden_dim", 96> {};

}  // namespace

TEST_CASE("sigmoid, silu and the tanh GELU equal PyTorch's to 4 units in the last place") {
    struct n : shaped::axis<"n", 37> {};
    torch::manual_seed(23);
    const auto x = torch::randn<n>() * 3.f;
    CHECK(max_ulp(shaped::sigmoid(x), golden::math_23_sigmoid) <= 4);
    CHECK(max_ulp(shaped::silu(x), golden::math_23_silu) <= 4);
    // torch.nn.functional.gelu(approximate="tanh"), Gemma's: the book's formula with its constant rounded
    // otherwise. Where x is large and negative, 1 + tanh(...) cancels and one unit of tanh's rounding (ours is
    // xsimd's, PyTorch's Sleef's) is many units of the result: there the bound is 4 units of tanh's rounding,
    // 4 · 0.5|x| · 2^-24, absolute; elsewhere 4 units in the last place.
    const auto gelu_tanh_misses = [&](const auto& y) {
        std::size_t misses = 0;
        for (std::size_t i = 0; i < 37; ++i)
            misses += test::ulp_distance(y.at(i), golden::math_23_gelu_tanh[i]) > 4 &&
                      std::abs(double(y.at(i)) - golden::math_23_gelu_tanh[i]) > 4 * 0.5 * std::abs(x.at(i)) * 0x1p-24;
        return misses;
    };
    CHECK(gelu_tanh_misses(shaped::gelu_tanh(x)) == 0);
    CHECK(max_ulp(shaped::gelu(x), golden::math_23_gelu_tanh) > 4);  // the book's rounding is not PyTorch's kernel's
    // The limits, as PyTorch computes them: silu(-inf) is NaN (-inf / inf), silu(inf) inf, signed zeros kept.
    struct nine : shaped::axis<"nine", 9> {};
    const shaped::tensor<float, nine> edges{{-INFINITY, INFINITY, NAN, 0.f, -0.f, -100.f, 100.f, -20.f, 1e-30f}};
    const auto same = [](const auto& t, const auto& golden) {
        std::size_t differ = 0;
        for (std::size_t i = 0; i < golden.size(); ++i)
            differ += std::isnan(golden[i]) ? !std::isnan(t.at(i))
                                            : (t.at(i) != golden[i] || std::signbit(t.at(i)) != std::signbit(golden[i]) ||
                                               test::ulp_distance(t.at(i), golden[i]) > 4);
        return differ;
    };
    CHECK(same(shaped::sigmoid(edges), golden::edges_sigmoid) == 0);
    CHECK(same(shaped::silu(edges), golden::edges_silu) == 0);
    CHECK(same(shaped::gelu_tanh(edges), golden::edges_gelu_tanh) == 0);
}

TEST_CASE("rms_norm equals the book's RMSNorm: Llama's and Qwen's form, Gemma's (1 + scale) form, QK-norm") {
    torch::manual_seed(71);
    nn::rms_norm<emb_dim> norm;
    static_assert(decltype(norm)::form == nn::rms_form::scale);
    CHECK(norm.eps == 1e-6f);
    CHECK(norm.scale.at(0) == 1.f);  // ones until loaded
    norm.scale = torch::randn<emb_dim>();
    const auto x = torch::rand<batch, num_tokens, emb_dim>() * 4.f - 2.f;
    const auto y = norm(x);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(y)>, shaped::tensor<float, batch, num_tokens, emb_dim>>);
    CHECK(test::max_abs_diff(y, golden::rms_norm_71) <= tolerance);

    struct width : shaped::axis<"width", 48> {};
    struct rows : shaped::axis<"rows", 5> {};
    torch::manual_seed(72);
    nn::rms_norm<width, nn::rms_form::one_plus_scale> gemma(1e-5f, true);
    CHECK(gemma.scale.at(0) == 0.f);  // zeros until loaded: 1 + 0 scales by one
    gemma.scale = torch::randn<width>() * 0.5f;
    *gemma.shift = torch::randn<width>();
    const auto g = gemma(torch::randn<rows, width>() * 30.f);
    CHECK(test::max_abs_diff(g, golden::rms_norm_72_one_plus) <= tolerance);

    // QK-norm: the norm over head_dim, applied to each head of each token.
    struct heads : shaped::axis<"num_heads", 4> {};
    struct head_dim : shaped::axis<"head_dim", 16> {};
    torch::manual_seed(75);
    nn::rms_norm<head_dim> q_norm;
    q_norm.scale = torch::rand<head_dim>() + 0.5f;
    const auto q = q_norm(torch::randn<batch, heads, num_tokens, head_dim>());
    CHECK(test::max_abs_diff(q, golden::qk_norm_75) <= tolerance);

    // Run-time token counts give the same numbers; each row's mean square is 1 before the scale.
    struct tokens : shaped::dynamic_axis<"num_tokens"> {};
    nn::rms_norm<emb_dim> plain;
    torch::manual_seed(76);
    const auto r = torch::randn<tokens, emb_dim>(37) * 7.f;
    const auto n = plain(r);
    CHECK(n.shape[0] == 37);
    for (std::size_t t = 0; t < 37; ++t) {
        double ms = 0;
        for (std::size_t e = 0; e < 64; ++e) ms += double(n.at(t, e)) * n.at(t, e);
        CHECK(std::abs(ms / 64 - 1) < 1e-5);
    }
    CHECK(shaped::max_abs_diff(plain(r.rename<shaped::axis<"num_tokens", 37>, emb_dim>()).rename<tokens, emb_dim>(), n) == 0.0);

    // The state_dict: scale, and shift only with a bias.
    CHECK(nn::state_dict_keys(norm) == std::vector<std::string>{"scale"});
    CHECK(nn::state_dict_keys(gemma) == std::vector<std::string>{"scale", "shift"});
    CHECK(nn::parameter_count(gemma) == 96);
}

TEST_CASE("gated_feed_forward equals the book's FeedForward of Llama and Qwen (SwiGLU) and of Gemma (GELU-tanh)") {
    torch::manual_seed(73);
    nn::swiglu_feed_forward<emb_dim, hidden_dim> swiglu;
    static_assert(std::is_same_v<decltype(swiglu.fc1), nn::linear<emb_dim, hidden_dim>>);
    static_assert(std::is_same_v<decltype(swiglu.fc3), nn::linear<hidden_dim, emb_dim>>);
    CHECK(!swiglu.fc1.has_bias());
    const auto x = torch::rand<batch, num_tokens, emb_dim>() * 2.f - 1.f;
    const auto y = swiglu(x);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(y)>, shaped::tensor<float, batch, num_tokens, emb_dim>>);
    CHECK(test::max_abs_diff(y, golden::swiglu_73) <= tolerance);

    torch::manual_seed(74);
    nn::geglu_feed_forward<emb_dim, hidden_dim> geglu;
    CHECK(test::max_abs_diff(geglu(torch::rand<batch, num_tokens, emb_dim>() * 2.f - 1.f), golden::geglu_74) <= tolerance);

    CHECK(nn::state_dict_keys(swiglu) == std::vector<std::string>{"fc1.weight", "fc2.weight", "fc3.weight"});
    CHECK(nn::parameter_count(swiglu) == 3 * 64 * 96);
    // Llama 3.2 1B's layer: 3 × 2048 × 8192 weights, the book's count per block's feed-forward.
    struct llama_emb : shaped::axis<"emb_dim", 2048> {};
    struct llama_hidden : shaped::axis<"hidden_dim", 8192> {};
    CHECK(nn::parameter_count(nn::swiglu_feed_forward<llama_emb, llama_hidden>(nn::skip_init)) == 50'331'648);
}

TEST_CASE("rope equals the book's compute_rope_params and apply_rope: tables, offsets, both pair layouts") {
    struct positions : shaped::axis<"context_length", 64> {};
    struct head_dim : shaped::axis<"head_dim", 16> {};
    struct heads : shaped::axis<"num_heads", 4> {};
    struct tokens : shaped::axis<"num_tokens", 5, shaped::at_most<positions>> {};
    const nn::rope<positions, head_dim> rope;  // base 10,000
    // The angles are the book's bit for bit; their cos and sin are the C library's, PyTorch's are Sleef's:
    // one unit in the last place apart at most, 2^-23 at 1 (both within half a unit of the exact values).
    constexpr double table_tolerance = 0x1p-23;
    CHECK(test::max_abs_diff(rope.cos, golden::rope_cos_16_64) <= table_tolerance);
    CHECK(test::max_abs_diff(rope.sin, golden::rope_sin_16_64) <= table_tolerance);
    // Rotated values: each a sum of two products of an input (|q| < 4 here) with a table entry.
    constexpr double rotation_tolerance = 2 * 4 * table_tolerance + 1e-6;

    torch::manual_seed(77);
    const auto q = torch::randn<batch, heads, tokens, head_dim>();
    const auto r0 = rope(q);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(r0)>,
                                 shaped::tensor<float, batch, heads, tokens, shaped::rotated<head_dim>>>);
    CHECK(test::max_abs_diff(r0, golden::rope_77_offset_0) <= rotation_tolerance);
    CHECK(test::max_abs_diff(rope(q, 7), golden::rope_77_offset_7) <= rotation_tolerance);  // the KV cache's offset
    // A transposed view is read in place of a copy: the same numbers.
    const auto qt = q.transpose<1, 2>().contiguous().transpose<1, 2>();
    CHECK(shaped::max_abs_diff(rope(qt), r0) == 0.0);

    const nn::rope<positions, head_dim, shaped::rope_layout::interleaved> meta;
    const auto ri = meta(q, 3);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(ri)>,
                                 shaped::tensor<float, batch, heads, tokens, shaped::rotated<head_dim, shaped::rope_layout::interleaved>>>);
    CHECK(test::max_abs_diff(ri, golden::rope_77_interleaved) <= rotation_tolerance);
    // Not the same rotation (the layout matters): compared only after a rename, since the axes differ.
    CHECK(shaped::max_abs_diff(ri.rename<batch, heads, tokens, shaped::rotated<head_dim>>(), r0) > 0.1);

    // Run-time token counts: the same numbers, and positions past the table refused, naming them.
    struct run_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<positions>> {};
    const auto qd = q.rename<batch, heads, run_tokens, head_dim>();
    CHECK(shaped::max_abs_diff(rope(qd, 7).rename<batch, heads, tokens, shaped::rotated<head_dim>>(), rope(q, 7)) == 0.0);
    CHECK(test::thrown<shaped::shape_error>([&] { (void)rope(qd, 60); }) ==
          "shaped::nn::rope(x, offset): expected positions within the table's (context_length=64), got positions 60 "
          "to 64 (offset 60, num_tokens=5)");
    CHECK(test::thrown<shaped::shape_error>([&] { (void)rope(q, std::size_t(-1)); }).find("offset 18446744073709551615") !=
          std::string::npos);
    CHECK_NOTHROW((void)rope(qd, 59));  // positions 59 to 63: the last five

    // Rotation keeps each pair's length: |rope(q)| = |q| per pair, to float rounding.
    for (std::size_t i = 0; i < 8; ++i) {
        const float a = q.at(1, 2, 3, i), b = q.at(1, 2, 3, i + 8);
        const float ra = r0.at(1, 2, 3, i), rb = r0.at(1, 2, 3, i + 8);
        CHECK(std::abs(std::hypot(ra, rb) - std::hypot(a, b)) < 1e-5f * (1 + std::hypot(a, b)));
    }
    CHECK(nn::state_dict_keys(rope).empty());  // recomputed, not loaded (persistent=False)
}

TEST_CASE("rope with Llama 3's frequency smoothing equals the book's table at every scale of position") {
    struct positions : shaped::axis<"context_length", 8192> {};
    struct head_dim : shaped::axis<"head_dim", 64> {};
    const nn::rope<positions, head_dim> llama(500000.0, nn::llama3_rope_scaling{});
    const std::size_t rows[] = {0, 1, 2, 17, 511, 4095, 8191};
    // cos and sin of float angles up to 8191 radians: PyTorch's (Sleef's) and the C library's agree to one
    // unit of the result; the angles themselves are bit for bit the book's.
    double worst = 0;
    for (std::size_t k = 0; k < 7; ++k)
        for (std::size_t d = 0; d < 64; ++d) {
            worst = std::max(worst, std::abs(double(llama.cos.at(rows[k], d)) - golden::rope_llama3_cos_rows[k * 64 + d]));
            worst = std::max(worst, std::abs(double(llama.sin.at(rows[k], d)) - golden::rope_llama3_sin_rows[k * 64 + d]));
        }
    CHECK(worst <= 0x1p-23);
}

// The snippets of docs/14-after-gpt2.md, checked here.
namespace chapter13 {
// [axes]
struct batch : shaped::axis<"batch", 2> {};
struct context_length : shaped::axis<"context_length", 16> {};
struct num_tokens : shaped::axis<"num_tokens", 5, shaped::at_most<context_length>> {};
struct emb_dim : shaped::axis<"emb_dim", 64> {};
struct hidden_dim : shaped::axis<"hidden_dim", 96> {};
struct num_heads : shaped::axis<"num_heads", 4> {};
struct head_dim : shaped::axis<"head_dim", 16> {};
struct d_out : shaped::product<"d_out", num_heads, head_dim> {};  // 64: Qwen3's is 2048 on a width of 1024
// [axes]
}  // namespace chapter13

TEST_CASE("docs/14-after-gpt2.md: RMSNorm, the gated feed-forward layer, QK-norm and RoPE in a block's order") {
    using chapter13::batch, chapter13::context_length, chapter13::num_tokens, chapter13::emb_dim, chapter13::hidden_dim,
        chapter13::num_heads, chapter13::head_dim, chapter13::d_out;
    torch::manual_seed(123);
    // [layers]
    nn::rms_norm<emb_dim> norm1(1e-6f);                 // Qwen3's eps; Llama 3 uses 1e-5f
    nn::linear<emb_dim, d_out> W_query(torch::default_generator(), false);
    nn::swiglu_feed_forward<emb_dim, hidden_dim> ff;    // fc1, fc2, fc3: silu(fc1(x)) * fc2(x), then fc3
    nn::rms_norm<head_dim> q_norm, k_norm;              // QK-norm: over head_dim, per head
    nn::rope<context_length, head_dim> rope(1'000'000.0);  // Qwen3's rope_theta
    // [layers]
    const auto x = torch::rand<batch, num_tokens, emb_dim>();
    // [forward]
    auto h = norm1(x);                                                          // (batch, num_tokens, emb_dim)
    auto queries = W_query(h).view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
    auto keys = queries.rename<batch, num_heads, shaped::key<num_tokens>, head_dim>();
    auto q = rope(q_norm(queries));  // (batch, num_heads, num_tokens, rotated<head_dim>)
    auto k = rope(k_norm(keys));     // (batch, num_heads, key<num_tokens>, rotated<head_dim>)
    auto scores = shaped::matmul(q, k.transpose<2, 3>());  // (batch, num_heads, num_tokens, key<num_tokens>)
    auto y = ff(h) + x;                                    // (batch, num_tokens, emb_dim)
    // [forward]
    static_assert(std::is_same_v<decltype(q), shaped::tensor<float, batch, num_heads, num_tokens, shaped::rotated<head_dim>>>);
    static_assert(std::is_same_v<decltype(scores), shaped::tensor<float, batch, num_heads, num_tokens, shaped::key<num_tokens>>>);
    static_assert(std::is_same_v<decltype(y), shaped::tensor<float, batch, num_tokens, emb_dim>>);
    // With equal queries and keys, each diagonal score is the squared length of a rotated, normalised head:
    // rotations keep lengths, and the norm makes the mean square 1, so the diagonal is head_dim.
    for (std::size_t t = 0; t < 5; ++t) CHECK(std::abs(scores.at(1, 2, t, t) - 16.f) < 1e-4f);
    CHECK(nn::parameter_count(ff) == 3 * 64 * 96);
}

TEST_CASE("convert_rope_layout moves a projection's rows between the pair layouts; the attention scores stay the same") {
    struct batch1 : shaped::axis<"batch", 1> {};
    struct ctx : shaped::axis<"context_length", 16> {};
    struct tokens : shaped::axis<"num_tokens", 7, shaped::at_most<ctx>> {};
    struct heads : shaped::axis<"num_heads", 3> {};
    struct hd : shaped::axis<"head_dim", 8> {};
    struct width : shaped::product<"d_out", heads, hd> {};
    using keys = shaped::key<tokens>;
    torch::manual_seed(31);
    nn::linear<emb_dim, width> W_query, W_key;  // as a Meta checkpoint lays them out: interleaved pairs
    const auto x = torch::rand<batch1, tokens, emb_dim>();
    const nn::rope<ctx, hd, shaped::rope_layout::interleaved> meta_rope(500000.0);
    const nn::rope<ctx, hd> hf_rope(500000.0);
    auto scores = [&](const auto& rope, const auto& wq, const auto& wk) {
        auto q = rope(wq(x).template view<batch1, tokens, heads, hd>().template transpose<1, 2>());
        auto k = rope(wk(x).template view<batch1, tokens, heads, hd>().template transpose<1, 2>().template rename<batch1, heads, keys, hd>());
        return shaped::matmul(q, k.template transpose<2, 3>());
    };
    const auto before = scores(meta_rope, W_query, W_key);
    auto q_hf = W_query, k_hf = W_key;
    // [convert]
    nn::convert_rope_layout<shaped::rope_layout::interleaved, shaped::rope_layout::split_halves, heads, hd>(q_hf);
    nn::convert_rope_layout<shaped::rope_layout::interleaved, shaped::rope_layout::split_halves, heads, hd>(k_hf);
    // [convert]
    const auto after = scores(hf_rope, q_hf, k_hf);
    CHECK(shaped::max_abs_diff(before, after) <= 1e-5);
    // Unconverted weights under the other layout give other scores: the conversion is what makes them agree.
    CHECK(shaped::max_abs_diff(before, scores(hf_rope, W_query, W_key)) > 1e-2);
    // Row 2i + j of each head went to j * 4 + i, and back again exactly.
    CHECK(q_hf.weight.at(8 + 1 * 4 + 2, 5) == W_query.weight.at(8 + 2 * 2 + 1, 5));
    CHECK(q_hf.bias->at(8 + 1 * 4 + 2) == W_query.bias->at(8 + 2 * 2 + 1));
    CHECK(q_hf.bias->at(8 + 1 * 4 + 2) != W_query.bias->at(8 + 1 * 4 + 2));
    nn::convert_rope_layout<shaped::rope_layout::split_halves, shaped::rope_layout::interleaved, heads, hd>(q_hf);
    CHECK(shaped::max_abs_diff(q_hf.weight, W_query.weight) == 0.0);
    CHECK(shaped::max_abs_diff(*q_hf.bias, *W_query.bias) == 0.0);
}
