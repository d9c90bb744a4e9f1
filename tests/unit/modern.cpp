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
