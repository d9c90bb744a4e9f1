// Compile-time twin of examples/seed_corrected.cpp on plain xtensor + xtensor-blas, without shaped's
// types: the seed's two corrected forms of multi-head attention (split, loop over heads, concatenate,
// out_proj; and view, transpose, out_proj), with the same random numbers.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xio.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

constexpr std::size_t batch = 1, num_tokens = 2, d_out = 6, num_heads = 3, head_dim = d_out / num_heads;
static_assert(head_dim * num_heads == d_out, "the heads must divide d_out");

// torch.rand's draw and nn.Linear's (kaiming_uniform_(a=sqrt(5)) for the weight, then the bias).
float draw(std::mt19937& gen) { return static_cast<float>(gen() & ((1u << 24) - 1)) / 16777216.0f; }

struct linear {
    xt::xtensor<float, 2> weight;  // (out_features, in_features)
    xt::xtensor<float, 1> bias;    // (out_features)

    linear(std::mt19937& gen, std::size_t in, std::size_t out) : weight(std::array<std::size_t, 2>{out, in}), bias(std::array<std::size_t, 1>{out}) {
        const double fan_in = static_cast<double>(in);
        const float w_bound = static_cast<float>(std::sqrt(3.0) * (std::sqrt(2.0 / 6.0) / std::sqrt(fan_in)));
        const float b_bound = static_cast<float>(1.0 / std::sqrt(fan_in));
        for (auto& w : weight) w = std::fma(draw(gen), 2 * w_bound, -w_bound);
        for (auto& b : bias) b = std::fma(draw(gen), 2 * b_bound, -b_bound);
    }

    // x (batch, num_tokens, in) -> (batch, num_tokens, out)
    xt::xtensor<float, 3> operator()(const xt::xtensor<float, 3>& x) const {
        const std::size_t b = x.shape(0), t = x.shape(1);
        xt::xtensor<float, 2> rows = xt::reshape_view(x, {b * t, x.shape(2)});
        xt::xtensor<float, 2> y = xt::linalg::dot(rows, xt::transpose(weight)) + bias;
        return xt::reshape_view(y, {b, t, weight.shape(0)});
    }
};

void print_sizes() {
    std::cout << "batch = " << batch << " num_tokens = " << num_tokens << " d_out = " << d_out
              << " num_heads = " << num_heads << " head_dim = " << head_dim << "\n";
}

struct inputs {
    xt::xtensor<float, 3> q, k, v;
};

inputs draw_qkv(std::mt19937& gen) {
    auto rand = [&] {
        xt::xtensor<float, 3> t({batch, num_tokens, d_out});
        for (auto& x : t) x = draw(gen);
        return t;
    };
    inputs in;
    in.q = rand();
    in.k = rand();
    in.v = rand();
    std::cout << "q.shape = (" << batch << ", " << num_tokens << ", " << d_out << ") k.shape = (" << batch << ", "
              << num_tokens << ", " << d_out << ") v.shape = (" << batch << ", " << num_tokens << ", " << d_out << ")\n";
    return in;
}

xt::xtensor<float, 3> simple_corrected() {
    std::mt19937 gen(1223);
    const linear out_proj(gen, d_out, d_out);  // created before q, k, v are drawn, as in PyTorch
    print_sizes();
    const auto [q, k, v] = draw_qkv(gen);

    xt::xtensor<float, 3> context_vec_concat({batch, num_tokens, d_out});
    for (std::size_t h = 0; h < num_heads; ++h) {
        const std::size_t lo = h * head_dim, hi = lo + head_dim;  // q.split(head_dim, dim=-1)[h]
        for (std::size_t b = 0; b < batch; ++b) {
            xt::xtensor<float, 2> q_h = xt::view(q, b, xt::all(), xt::range(lo, hi)),
                                  k_h = xt::view(k, b, xt::all(), xt::range(lo, hi)),
                                  v_h = xt::view(v, b, xt::all(), xt::range(lo, hi));
            xt::xtensor<float, 2> attn_scores1 = xt::linalg::dot(q_h, xt::transpose(k_h));
            xt::view(context_vec_concat, b, xt::all(), xt::range(lo, hi)) = xt::linalg::dot(attn_scores1, v_h);
        }
    }
    xt::xtensor<float, 3> context_vec_Final = out_proj(context_vec_concat);
    std::cout << "context_vec_Final.shape = (" << batch << ", " << num_tokens << ", " << d_out
              << ") context_vec_Final = " << context_vec_Final << "\n";
    return context_vec_Final;
}

xt::xtensor<float, 3> alternative_corrected() {
    std::mt19937 gen(1223);
    const linear out_proj(gen, d_out, d_out);
    print_sizes();
    const auto [q, k, v] = draw_qkv(gen);

    auto heads = [](const xt::xtensor<float, 3>& t) {
        xt::xtensor<float, 4> r = xt::transpose(xt::reshape_view(t, {batch, num_tokens, num_heads, head_dim}), {0, 2, 1, 3});
        return r;
    };
    auto qh = heads(q), kh = heads(k), vh = heads(v);
    std::cout << "q.shape = (" << batch << ", " << num_heads << ", " << num_tokens << ", " << head_dim << ") k.shape = ("
              << batch << ", " << num_heads << ", " << num_tokens << ", " << head_dim << ") v.shape = (" << batch
              << ", " << num_heads << ", " << num_tokens << ", " << head_dim << ")\n";

    xt::xtensor<float, 4> context_vec({batch, num_heads, num_tokens, head_dim});
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t h = 0; h < num_heads; ++h) {
            xt::xtensor<float, 2> qq = xt::view(qh, b, h), kk = xt::view(kh, b, h), vv = xt::view(vh, b, h);
            xt::xtensor<float, 2> attn_scores = xt::linalg::dot(qq, xt::transpose(kk));
            xt::view(context_vec, b, h) = xt::linalg::dot(attn_scores, vv);
        }

    xt::xtensor<float, 3> context =
        xt::reshape_view(xt::eval(xt::transpose(context_vec, {0, 2, 1, 3})), {batch, num_tokens, d_out});
    xt::xtensor<float, 3> context_vec_Final = out_proj(context);
    std::cout << "context_vec_Final.shape = (" << batch << ", " << num_tokens << ", " << d_out
              << ") context_vec_Final = " << context_vec_Final << "\n";
    return context_vec_Final;
}

int main() {
    const xt::xtensor<float, 3> simple = simple_corrected();
    const xt::xtensor<float, 3> alternative = alternative_corrected();

    // The twin must compute what the shaped example computes: PyTorch's context_vec_Final for both forms.
    const float expected[num_tokens][d_out] = {{0.72417146f, -0.72648132f, -0.07300022f, -0.02524015f, -0.25655994f, 0.09112759f},
                                               {0.82892096f, -0.69987762f, -0.15521790f, -0.01713906f, -0.34319529f, 0.15546291f}};
    double forms = 0, vs_pytorch = 0;
    for (std::size_t t = 0; t < num_tokens; ++t)
        for (std::size_t i = 0; i < d_out; ++i) {
            forms = std::max(forms, static_cast<double>(std::abs(simple(0, t, i) - alternative(0, t, i))));
            vs_pytorch = std::max(vs_pytorch, static_cast<double>(std::abs(simple(0, t, i) - expected[t][i])));
            vs_pytorch = std::max(vs_pytorch, static_cast<double>(std::abs(alternative(0, t, i) - expected[t][i])));
        }
    std::cerr << "max |simple - alternative| = " << forms << "; max |simple - PyTorch| = " << vs_pytorch << "\n";
    return forms <= 5e-5 && vs_pytorch <= 5e-5 ? EXIT_SUCCESS : EXIT_FAILURE;
}
