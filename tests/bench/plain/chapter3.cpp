// Compile-time twin of examples/book/chapter3.cpp on plain xtensor + xtensor-blas, without shaped's
// types: the attention modules of the book's chapter 3 (SelfAttention_v1 and _v2, CausalAttention,
// MultiHeadAttentionWrapper, MultiHeadAttention, and CausalAttention with dropout in training mode) on the
// book's inputs, with the same random numbers.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xio.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

constexpr std::size_t num_tokens = 6, d_in = 3, d_out = 2, batch = 2, context_length = 6, num_heads = 2;

// torch.manual_seed / torch.rand: PyTorch's CPU generator is a 32-bit Mersenne Twister.
std::mt19937 gen;
float draw() { return static_cast<float>(gen() & ((1u << 24) - 1)) / 16777216.0f; }
// One 53-bit uniform double from two draws (bernoulli_ in PyTorch's CPU dropout).
double draw_double() {
    const std::uint64_t hi = gen(), lo = gen();
    return static_cast<double>(((hi << 32) | lo) & ((std::uint64_t{1} << 53) - 1)) / 9007199254740992.0;
}

xt::xtensor<float, 2> rand(std::size_t rows, std::size_t cols) {
    xt::xtensor<float, 2> t(std::array<std::size_t, 2>{rows, cols});
    for (auto& v : t) v = draw();
    return t;
}

// nn.Linear: weight (out, in) by kaiming_uniform_(a=sqrt(5)), then the bias, both uniform on +-1/sqrt(in).
struct linear {
    xt::xtensor<float, 2> weight;
    xt::xtensor<float, 1> bias;
    bool has_bias;

    linear(std::size_t in, std::size_t out, bool with_bias = true)
        : weight(std::array<std::size_t, 2>{out, in}), bias(xt::zeros<float>({out})), has_bias(with_bias) {
        const double fan_in = static_cast<double>(in);
        const float w_bound = static_cast<float>(std::sqrt(3.0) * (std::sqrt(2.0 / 6.0) / std::sqrt(fan_in)));
        for (auto& w : weight) w = std::fma(draw(), 2 * w_bound, -w_bound);
        if (has_bias) {
            const float b_bound = static_cast<float>(1.0 / std::sqrt(fan_in));
            for (auto& b : bias) b = std::fma(draw(), 2 * b_bound, -b_bound);
        }
    }

    // (rows, in) -> (rows, out)
    xt::xtensor<float, 2> operator()(const xt::xtensor<float, 2>& x) const {
        xt::xtensor<float, 2> y = xt::linalg::dot(x, xt::transpose(weight));
        if (has_bias) y += bias;
        return y;
    }
    // (batch, num_tokens, in) -> (batch, num_tokens, out)
    xt::xtensor<float, 3> operator()(const xt::xtensor<float, 3>& x) const {
        const std::size_t b = x.shape(0), t = x.shape(1);
        xt::xtensor<float, 2> y = (*this)(xt::xtensor<float, 2>(xt::reshape_view(x, {b * t, x.shape(2)})));
        return xt::reshape_view(y, {b, t, weight.shape(0)});
    }
};

// softmax over the last axis of a matrix, exp(x - max) / sum.
xt::xtensor<float, 2> softmax_rows(const xt::xtensor<float, 2>& s) {
    xt::xtensor<float, 2> m = xt::amax(s, {1}, xt::keep_dims);
    xt::xtensor<float, 2> e = xt::exp(s - m);
    xt::xtensor<float, 2> sum = xt::sum(e, {1}, xt::keep_dims);
    return e / sum;
}

// nn.Dropout(p) in training mode: keep each element with probability 1 - p, scaled by 1 / (1 - p).
void dropout(xt::xtensor<float, 2>& w, double p) {
    if (p == 0.0) return;
    const float scale = 1.0f / static_cast<float>(1.0 - p);
    for (auto& x : w) x = x * (draw_double() < 1.0 - p ? scale : 0.0f);
}

xt::xtensor<float, 2> scaled_softmax(const xt::xtensor<float, 2>& scores, std::size_t d) {
    return softmax_rows(scores / static_cast<float>(std::sqrt(static_cast<double>(d))));
}

struct SelfAttention_v1 {
    xt::xtensor<float, 2> W_query = rand(d_in, d_out), W_key = rand(d_in, d_out), W_value = rand(d_in, d_out);

    xt::xtensor<float, 2> operator()(const xt::xtensor<float, 2>& x) const {
        xt::xtensor<float, 2> keys = xt::linalg::dot(x, W_key);
        xt::xtensor<float, 2> queries = xt::linalg::dot(x, W_query);
        xt::xtensor<float, 2> values = xt::linalg::dot(x, W_value);
        xt::xtensor<float, 2> attn_scores = xt::linalg::dot(queries, xt::transpose(keys));
        return xt::linalg::dot(scaled_softmax(attn_scores, d_out), values);
    }
};

struct SelfAttention_v2 {
    linear W_query{d_in, d_out, false}, W_key{d_in, d_out, false}, W_value{d_in, d_out, false};

    xt::xtensor<float, 2> operator()(const xt::xtensor<float, 2>& x) const {
        xt::xtensor<float, 2> keys = W_key(x), queries = W_query(x), values = W_value(x);
        xt::xtensor<float, 2> attn_scores = xt::linalg::dot(queries, xt::transpose(keys));
        return xt::linalg::dot(scaled_softmax(attn_scores, d_out), values);
    }
};

// The causal mask: torch.triu(torch.ones(context_length, context_length), diagonal=1).
xt::xtensor<float, 2> causal_mask() {
    xt::xtensor<float, 2> ones = xt::ones<float>({context_length, context_length});
    return xt::triu(ones, 1);
}

// mask.bool()[:n, :n] filled with -inf, softmax of the scores over sqrt(d), dropout.
xt::xtensor<float, 2> causal_weights(xt::xtensor<float, 2> scores, const xt::xtensor<float, 2>& mask, double p,
                                     std::size_t d) {
    const std::size_t n = scores.shape(0);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            if (mask(i, j) != 0.0f) scores(i, j) = -std::numeric_limits<float>::infinity();
    xt::xtensor<float, 2> w = scaled_softmax(scores, d);
    dropout(w, p);
    return w;
}

struct CausalAttention {
    std::size_t out;
    linear W_query, W_key, W_value;
    double p;
    xt::xtensor<float, 2> mask = causal_mask();

    CausalAttention(std::size_t d_out_, double dropout_p)
        : out(d_out_), W_query(d_in, out, false), W_key(d_in, out, false), W_value(d_in, out, false), p(dropout_p) {}

    xt::xtensor<float, 3> operator()(const xt::xtensor<float, 3>& x) const {
        xt::xtensor<float, 3> keys = W_key(x), queries = W_query(x), values = W_value(x);
        xt::xtensor<float, 3> context({x.shape(0), x.shape(1), out});
        for (std::size_t b = 0; b < x.shape(0); ++b) {
            xt::xtensor<float, 2> qq = xt::view(queries, b), kk = xt::view(keys, b), vv = xt::view(values, b);
            xt::xtensor<float, 2> attn_scores = xt::linalg::dot(qq, xt::transpose(kk));
            xt::view(context, b) = xt::linalg::dot(causal_weights(attn_scores, mask, p, out), vv);
        }
        return context;
    }
};

struct MultiHeadAttentionWrapper {
    std::vector<CausalAttention> heads;

    MultiHeadAttentionWrapper(std::size_t d_out_, double dropout_p) {
        for (std::size_t h = 0; h < num_heads; ++h) heads.emplace_back(d_out_, dropout_p);
    }

    xt::xtensor<float, 3> operator()(const xt::xtensor<float, 3>& x) const {
        std::vector<xt::xtensor<float, 3>> outs;
        for (const auto& head : heads) outs.push_back(head(x));
        const std::size_t w = outs[0].shape(2);
        xt::xtensor<float, 3> cat({x.shape(0), x.shape(1), w * outs.size()});
        for (std::size_t h = 0; h < outs.size(); ++h) xt::view(cat, xt::all(), xt::all(), xt::range(h * w, (h + 1) * w)) = outs[h];
        return cat;
    }
};

struct MultiHeadAttention {
    static constexpr std::size_t head_dim = d_out / num_heads;
    static_assert(head_dim * num_heads == d_out, "d_out must be divisible by num_heads");
    linear W_query{d_in, d_out, false}, W_key{d_in, d_out, false}, W_value{d_in, d_out, false};
    linear out_proj{d_out, d_out};
    double p;
    xt::xtensor<float, 2> mask = causal_mask();

    explicit MultiHeadAttention(double dropout_p) : p(dropout_p) {}

    xt::xtensor<float, 3> operator()(const xt::xtensor<float, 3>& x) const {
        const std::size_t b = x.shape(0), n = x.shape(1);
        auto heads = [&](const xt::xtensor<float, 3>& t) {
            xt::xtensor<float, 4> r = xt::transpose(xt::reshape_view(t, {b, n, num_heads, head_dim}), {0, 2, 1, 3});
            return r;
        };
        auto keys = heads(W_key(x)), queries = heads(W_query(x)), values = heads(W_value(x));
        xt::xtensor<float, 4> context({b, num_heads, n, head_dim});
        for (std::size_t i = 0; i < b; ++i)
            for (std::size_t h = 0; h < num_heads; ++h) {
                xt::xtensor<float, 2> qq = xt::view(queries, i, h), kk = xt::view(keys, i, h), vv = xt::view(values, i, h);
                xt::xtensor<float, 2> attn_scores = xt::linalg::dot(qq, xt::transpose(kk));
                xt::view(context, i, h) = xt::linalg::dot(causal_weights(attn_scores, mask, p, head_dim), vv);
            }
        xt::xtensor<float, 3> merged = xt::reshape_view(xt::eval(xt::transpose(context, {0, 2, 1, 3})), {b, n, d_out});
        return out_proj(merged);
    }
};

// |got - want| within 5e-5 beyond the 4-decimal rounding of what PyTorch printed.
bool near(float got, float want) { return std::abs(got - want) <= 5e-5f + 5e-5f; }

int main() {
    xt::xtensor<float, 2> inputs = {{0.43f, 0.15f, 0.89f},   // Your     (x^1)
                                    {0.55f, 0.87f, 0.66f},   // journey  (x^2)
                                    {0.57f, 0.85f, 0.64f},   // starts   (x^3)
                                    {0.22f, 0.58f, 0.33f},   // with     (x^4)
                                    {0.77f, 0.25f, 0.10f},   // one      (x^5)
                                    {0.05f, 0.80f, 0.55f}};  // step     (x^6)
    xt::xtensor<float, 3> x = xt::stack(xt::xtuple(inputs, inputs), 0);  // torch.stack((inputs, inputs), dim=0)
    static_assert(batch == 2 && context_length == num_tokens, "the batch is two copies of the six tokens");

    gen.seed(123);
    SelfAttention_v1 sa_v1;
    const xt::xtensor<float, 2> v1 = sa_v1(inputs);
    std::cout << "sa_v1(inputs) = " << v1 << "\n";

    gen.seed(789);
    SelfAttention_v2 sa_v2;
    const xt::xtensor<float, 2> v2 = sa_v2(inputs);
    std::cout << "sa_v2(inputs) = " << v2 << "\n";

    gen.seed(123);
    CausalAttention ca(d_out, 0.0);
    const xt::xtensor<float, 3> context_vecs = ca(x);
    std::cout << "context_vecs.shape = (" << batch << ", " << num_tokens << ", " << d_out
              << ") context_vecs = " << context_vecs << "\n";

    gen.seed(123);
    MultiHeadAttentionWrapper wrapper(d_out, 0.0);
    const xt::xtensor<float, 3> wrapper_vecs = wrapper(x);
    std::cout << "context_vecs.shape = (" << batch << ", " << num_tokens << ", " << num_heads * d_out
              << ") context_vecs = " << wrapper_vecs << "\n";

    gen.seed(123);
    MultiHeadAttention mha(0.0);
    const xt::xtensor<float, 3> mha_vecs = mha(x);
    std::cout << "context_vecs.shape = (" << batch << ", " << num_tokens << ", " << d_out
              << ") context_vecs = " << mha_vecs << "\n";

    gen.seed(123);
    CausalAttention ca_dropout(d_out, 0.5);
    const xt::xtensor<float, 3> dropped = ca_dropout(x);
    std::cout << "training, dropout 0.5: context_vecs = " << dropped << "\n";

    // The twin must compute what the shaped example computes: values of tests/golden/book/chapter3.out.
    const bool ok = near(v1(0, 0), 0.2996f) && near(v1(5, 1), 0.8040f) &&                       //
                    near(v2(0, 0), -0.0739f) && near(v2(3, 1), 0.0685f) &&                      //
                    near(context_vecs(0, 0, 0), -0.4519f) && near(context_vecs(1, 5, 1), -0.1081f) &&
                    near(wrapper_vecs(0, 1, 2), 0.5891f) && near(wrapper_vecs(1, 5, 3), 0.3493f) &&
                    near(mha_vecs(0, 0, 1), 0.4858f) && near(mha_vecs(1, 5, 0), 0.2575f) &&     //
                    near(dropped(0, 0, 0), -0.9038f) && near(dropped(0, 5, 0), -0.1417f) &&     //
                    dropped(1, 0, 0) == 0.0f && near(dropped(1, 1, 0), -1.1749f) && near(dropped(1, 3, 1), -0.2769f);
    if (!ok) std::cerr << "the twin's values differ from the shaped example's\n";
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
