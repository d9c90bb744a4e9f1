// Compile-time twin of examples/seed_alternative.cpp on plain xtensor + xtensor-blas, without shaped's
// types: the same view/transpose computation, with the same random numbers.
#include <cmath>
#include <iostream>
#include <random>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xio.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

int main() {
    constexpr std::size_t batch = 1, num_tokens = 2, d_out = 6, num_heads = 3, head_dim = d_out / num_heads;
    static_assert(head_dim * num_heads == d_out, "the heads must divide d_out");
    std::mt19937 gen(1223);
    auto rand = [&] {
        xt::xtensor<float, 3> t({batch, num_tokens, d_out});
        for (auto& v : t) v = static_cast<float>(gen() & ((1u << 24) - 1)) / 16777216.0f;
        return t;
    };
    auto q = rand(), k = rand(), v = rand();
    std::cout << q << "\n";
    auto heads = [&](const xt::xtensor<float, 3>& t) {
        xt::xtensor<float, 4> r = xt::transpose(xt::reshape_view(t, {batch, num_tokens, num_heads, head_dim}), {0, 2, 1, 3});
        return r;
    };
    auto qh = heads(q), kh = heads(k), vh = heads(v);
    xt::xtensor<float, 4> attn_scores({batch, num_heads, num_tokens, num_tokens});
    xt::xtensor<float, 4> context({batch, num_heads, num_tokens, head_dim});
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t h = 0; h < num_heads; ++h) {
            xt::xtensor<float, 2> qq = xt::view(qh, b, h), kk = xt::view(kh, b, h), vv = xt::view(vh, b, h);
            xt::xtensor<float, 2> s = xt::linalg::dot(qq, xt::transpose(kk));
            xt::view(attn_scores, b, h) = s;
            xt::view(context, b, h) = xt::linalg::dot(s, vv);
        }
    std::cout << attn_scores << "\n";
    xt::xtensor<float, 3> context_vec = xt::reshape_view(xt::eval(xt::transpose(context, {0, 2, 1, 3})), {batch, num_tokens, d_out});
    std::cout << context_vec << "\n";
    // The twin must compute what the shaped example computes: the seed's context_vec (PyTorch's print).
    const float expected[6] = {0.7713f, 1.1682f, 0.6141f, 0.8472f, 0.9745f, 0.6424f};
    for (std::size_t i = 0; i < 6; ++i)
        if (std::abs(context_vec(0, 0, i) - expected[i]) > 5e-5f) return 1;
    return 0;
}
