// Compile-time twin of examples/book/gpt2_small.cpp on plain xtensor + xtensor-blas, without shaped's
// types: the book's MultiHeadAttention at GPT-2 small's sizes.
#include <cmath>
#include <iostream>
#include <limits>
#include <random>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xio.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

int main() {
    constexpr std::size_t batch = 2, num_tokens = 1024, d_in = 768, d_out = 768, num_heads = 12, head_dim = 64;
    static_assert(head_dim * num_heads == d_out, "the heads must divide d_out");
    std::mt19937 gen(123);
    auto uniform = [&](std::vector<std::size_t> shape, float bound) {
        xt::xtensor<float, 2> t(std::array<std::size_t, 2>{shape[0], shape[1]});
        for (auto& v : t) v = std::fma(static_cast<float>(gen() & ((1u << 24) - 1)) / 16777216.0f, 2 * bound, -bound);
        return t;
    };
    const float bound = 1.0f / std::sqrt(static_cast<float>(d_in));
    auto W_query = uniform({d_out, d_in}, bound), W_key = uniform({d_out, d_in}, bound),
         W_value = uniform({d_out, d_in}, bound), out_proj = uniform({d_out, d_out}, bound);
    xt::xtensor<float, 1> out_bias = xt::zeros<float>({d_out});
    xt::xtensor<float, 2> x = uniform({batch * num_tokens, d_in}, 0.5f) + 0.5f;

    xt::xtensor<float, 2> queries = xt::linalg::dot(x, xt::transpose(W_query));
    xt::xtensor<float, 2> keys = xt::linalg::dot(x, xt::transpose(W_key));
    xt::xtensor<float, 2> values = xt::linalg::dot(x, xt::transpose(W_value));
    auto heads = [&](const xt::xtensor<float, 2>& t) {
        xt::xtensor<float, 4> r = xt::transpose(xt::reshape_view(t, {batch, num_tokens, num_heads, head_dim}), {0, 2, 1, 3});
        return r;
    };
    auto q = heads(queries), k = heads(keys), v = heads(values);
    xt::xtensor<float, 4> context({batch, num_heads, num_tokens, head_dim});
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t h = 0; h < num_heads; ++h) {
            xt::xtensor<float, 2> qq = xt::view(q, b, h), kk = xt::view(k, b, h), vv = xt::view(v, b, h);
            xt::xtensor<float, 2> s = xt::linalg::dot(qq, xt::transpose(kk)) / std::sqrt(static_cast<float>(head_dim));
            for (std::size_t i = 0; i < num_tokens; ++i)
                for (std::size_t j = i + 1; j < num_tokens; ++j) s(i, j) = -std::numeric_limits<float>::infinity();
            xt::xtensor<float, 2> m = xt::amax(s, {1}, xt::keep_dims);
            xt::xtensor<float, 2> e = xt::exp(s - m);
            xt::xtensor<float, 2> sum = xt::sum(e, {1}, xt::keep_dims);
            xt::xtensor<float, 2> w = e / sum;
            // Attention weights: each row sums to 1, and no token attends to a later one.
            if (std::abs(xt::sum(xt::row(w, num_tokens - 1))() - 1.0f) > 1e-4f || w(0, 1) != 0.0f) return 1;
            xt::view(context, b, h) = xt::linalg::dot(w, vv);
        }
    xt::xtensor<float, 2> merged = xt::reshape_view(xt::eval(xt::transpose(context, {0, 2, 1, 3})), {batch * num_tokens, d_out});
    xt::xtensor<float, 2> y = xt::linalg::dot(merged, xt::transpose(out_proj)) + out_bias;
    std::cout << xt::view(y, xt::range(0, 2), xt::range(0, 4)) << "\n";
}
