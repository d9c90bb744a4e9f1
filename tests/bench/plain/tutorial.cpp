// Compile-time twin of examples/tutorial.cpp on plain xtensor + xtensor-blas, without shaped's types:
// every computation of the tutorial, section by section and in the same order (the book's inputs, a first
// attention, the book's MultiHeadAttention, dropout; the seed's cheat sheet in both forms; axes and shapes;
// the ops), with the same random numbers. Each section checks its values against what the tutorial prints
// (PyTorch's output); the program exits with 1 if any check fails. Where the tutorial only asserts types
// (axis names, layouts), there is nothing to compute here.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xio.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xoperation.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

// What the program checks: each printed tensor against the numbers PyTorch printed (4 decimals), element
// by element in row-major order, and each printed shape.
namespace check {

int failures = 0;

void that(bool ok, std::string_view what) {
    if (!ok) {
        ++failures;
        std::cerr << "check failed: " << what << "\n";
    }
}

template <class E>
void printed(const E& got, std::initializer_list<double> want, std::string_view what, double tol = 1e-4) {
    const auto values = xt::eval(got);
    bool ok = values.size() == want.size();
    std::size_t i = 0;
    for (const double w : want) {
        if (!ok) break;
        const double v = static_cast<double>(values.flat(i++));
        ok = v == w || std::abs(v - w) <= tol;
    }
    that(ok, what);
}

template <class E>
void shape(const E& t, std::initializer_list<std::size_t> want, std::string_view what) {
    that(t.dimension() == want.size() && std::equal(want.begin(), want.end(), t.shape().begin()), what);
}

void section(std::string_view title) { std::cout << "\n== " << title << " ==\n"; }

}  // namespace check

// PyTorch's CPU random stream: torch.manual_seed, torch.rand, nn.Linear's initialisation, nn.Dropout.
std::mt19937 gen(67280421310721ULL & 0xffffffffu);

void manual_seed(std::uint32_t seed) { gen.seed(seed); }

float draw(std::mt19937& g) { return static_cast<float>(g() & ((1u << 24) - 1)) / 16777216.0f; }

double draw_double(std::mt19937& g) {
    const std::uint64_t hi = g(), lo = g();
    return static_cast<double>(((hi << 32) | lo) & ((std::uint64_t{1} << 53) - 1)) / 9007199254740992.0;
}

template <std::size_t N>
xt::xtensor<float, N> rand(const std::array<std::size_t, N>& shape, std::mt19937& g = gen) {
    xt::xtensor<float, N> t(shape);
    for (auto& v : t) v = draw(g);
    return t;
}

// "torch.Size([a, b, ...])"
template <class E>
std::string torch_size(const E& t) {
    std::string s = "torch.Size([";
    for (std::size_t i = 0; i < t.dimension(); ++i) s += (i ? ", " : "") + std::to_string(t.shape()[i]);
    return s + "])";
}

// nn.Linear(in, out, bias): weight (out, in) drawn by kaiming_uniform_(a=sqrt(5)), then the bias, both
// uniform on +-1/sqrt(in); the call maps (batch, num_tokens, in) to (batch, num_tokens, out).
class linear {
public:
    xt::xtensor<float, 2> weight;
    xt::xtensor<float, 1> bias;

    linear(std::size_t in, std::size_t out, bool with_bias = true)
        : weight(std::array<std::size_t, 2>{out, in}), bias(xt::zeros<float>({out})), has_bias_(with_bias) {
        const double fan_in = static_cast<double>(in);
        const float w_bound = static_cast<float>(std::sqrt(3.0) * (std::sqrt(2.0 / 6.0) / std::sqrt(fan_in)));
        for (auto& w : weight) w = std::fma(draw(gen), 2 * w_bound, -w_bound);
        if (has_bias_) {
            const float b_bound = static_cast<float>(1.0 / std::sqrt(fan_in));
            for (auto& b : bias) b = std::fma(draw(gen), 2 * b_bound, -b_bound);
        }
    }

    bool has_bias() const { return has_bias_; }

    xt::xtensor<float, 3> operator()(const xt::xtensor<float, 3>& x) const {
        const std::size_t b = x.shape(0), t = x.shape(1);
        xt::xtensor<float, 2> rows = xt::reshape_view(x, {b * t, x.shape(2)});
        xt::xtensor<float, 2> y = xt::linalg::dot(rows, xt::transpose(weight));
        if (has_bias_) y += bias;
        return xt::reshape_view(y, {b, t, weight.shape(0)});
    }

private:
    bool has_bias_;
};

// nn.Dropout(p): in training mode each element is kept with probability 1 - p and scaled by 1 / (1 - p).
class dropout {
public:
    explicit dropout(double p) : p_(p) {}
    void eval() { training_ = false; }

    template <std::size_t N>
    xt::xtensor<float, N> operator()(xt::xtensor<float, N> x) const {
        if (!training_ || p_ == 0.0) return x;
        const float scale = 1.0f / static_cast<float>(1.0 - p_);
        for (auto& v : x) v = v * (draw_double(gen) < 1.0 - p_ ? scale : 0.0f);
        return x;
    }

private:
    double p_;
    bool training_ = true;
};

// torch.softmax(x, dim): exp(x - max) / sum along `axis`.
template <std::size_t N>
xt::xtensor<float, N> softmax(const xt::xtensor<float, N>& x, std::size_t axis) {
    xt::xtensor<float, N> m = xt::amax(x, {axis}, xt::keep_dims);
    xt::xtensor<float, N> e = xt::exp(x - m);
    xt::xtensor<float, N> sum = xt::sum(e, {axis}, xt::keep_dims);
    return e / sum;
}

// a @ b over the last two axes, batched over the leading ones (the same on both sides).
template <std::size_t N>
xt::xtensor<float, N> matmul(const xt::xtensor<float, N>& a, const xt::xtensor<float, N>& b) {
    const std::size_t m = a.shape(N - 2), k = a.shape(N - 1), n = b.shape(N - 1), batches = a.size() / (m * k);
    auto a3 = xt::reshape_view(a, {batches, m, k});
    auto b3 = xt::reshape_view(b, {batches, k, n});
    xt::xtensor<float, 3> c({batches, m, n});
    for (std::size_t i = 0; i < batches; ++i) {
        xt::xtensor<float, 2> ai = xt::view(a3, i), bi = xt::view(b3, i);
        xt::view(c, i) = xt::linalg::dot(ai, bi);
    }
    std::array<std::size_t, N> shape;
    std::copy(a.shape().begin(), a.shape().end(), shape.begin());
    shape[N - 1] = n;
    return xt::reshape_view(c, shape);
}

// a @ b with a matrix b: b is used for every leading index of a.
template <std::size_t N>
    requires(N > 2)
xt::xtensor<float, N> matmul(const xt::xtensor<float, N>& a, const xt::xtensor<float, 2>& b) {
    const std::size_t k = a.shape(N - 1);
    xt::xtensor<float, 2> rows = xt::reshape_view(a, {a.size() / k, k});
    xt::xtensor<float, 2> c = xt::linalg::dot(rows, b);
    std::array<std::size_t, N> shape;
    std::copy(a.shape().begin(), a.shape().end(), shape.begin());
    shape[N - 1] = b.shape(1);
    return xt::reshape_view(c, shape);
}

// (b, n, d) -> (b, n, heads, d / heads) -> (b, heads, n, d / heads)
xt::xtensor<float, 4> split_heads(const xt::xtensor<float, 3>& t, std::size_t heads) {
    const std::size_t b = t.shape(0), n = t.shape(1), hd = t.shape(2) / heads;
    return xt::transpose(xt::reshape_view(t, {b, n, heads, hd}), {0, 2, 1, 3});
}

// (b, heads, n, hd) -> (b, n, heads, hd) -> contiguous -> (b, n, heads * hd)
xt::xtensor<float, 3> merge_heads(const xt::xtensor<float, 4>& t) {
    const std::size_t b = t.shape(0), heads = t.shape(1), n = t.shape(2), hd = t.shape(3);
    return xt::reshape_view(xt::eval(xt::transpose(t, {0, 2, 1, 3})), {b, n, heads * hd});
}

// mask.bool()[:n, :n] of the causal mask torch.triu(torch.ones(c, c), diagonal=1).
xt::xtensor<float, 2> causal_mask(std::size_t context_length) {
    xt::xtensor<float, 2> ones = xt::ones<float>({context_length, context_length});
    return xt::triu(ones, 1);
}
xt::xtensor<bool, 2> mask_bool(const xt::xtensor<float, 2>& mask, std::size_t n) {
    return xt::cast<bool>(xt::view(mask, xt::range(0, n), xt::range(0, n)));
}

// x (last two axes (n, n)) with -inf wherever mask is true; mask broadcasts over the leading axes.
template <std::size_t N>
xt::xtensor<float, N> masked_fill(const xt::xtensor<float, N>& x, const xt::xtensor<bool, 2>& mask, float value) {
    return xt::where(mask, value, x);
}

template <std::size_t N>
xt::xtensor<float, N> transpose_last(const xt::xtensor<float, N>& t) {
    std::array<std::size_t, N> perm;
    for (std::size_t i = 0; i < N; ++i) perm[i] = i;
    std::swap(perm[N - 2], perm[N - 1]);
    return xt::transpose(t, perm);
}

template <class A, class B>
double max_abs_diff(const A& a, const B& b) {
    return static_cast<double>(xt::amax(xt::abs(a - b))());
}

// ---------------------------------------------------------------------------------------------------
// The book's running example (chapter 3): six tokens of three dimensions, and its MultiHeadAttention.
namespace book {

constexpr std::size_t num_tokens = 6, d_in = 3, d_out = 2;
constexpr std::size_t batch = 2, context_length = 6, num_heads = 2, head_dim = d_out / num_heads;
static_assert(head_dim * num_heads == d_out, "d_out must be divisible by num_heads");

// The book's MultiHeadAttention (listing 3.5) without dropout, for inputs (batch, num_tokens, d_in).
class MultiHeadAttention {
public:
    explicit MultiHeadAttention(bool qkv_bias = false)
        : W_query(d_in, d_out, qkv_bias), W_key(d_in, d_out, qkv_bias), W_value(d_in, d_out, qkv_bias) {}

    xt::xtensor<float, 3> forward(const xt::xtensor<float, 3>& x) const {
        auto keys = W_key(x);  // (batch, num_tokens, d_out)
        auto queries = W_query(x);
        auto values = W_value(x);

        // (batch, num_tokens, d_out) -> (batch, num_heads, num_tokens, head_dim)
        auto queries_h = split_heads(queries, num_heads);
        auto keys_h = split_heads(keys, num_heads);
        auto values_h = split_heads(values, num_heads);

        // (batch, num_heads, num_tokens, num_tokens)
        auto attn_scores = matmul(queries_h, transpose_last(keys_h));
        auto masked = masked_fill(attn_scores, mask_bool(mask, x.shape(1)), -std::numeric_limits<float>::infinity());
        xt::xtensor<float, 4> scaled = masked / std::sqrt(static_cast<float>(head_dim));
        auto attn_weights = softmax(scaled, 3);

        auto context_vec = matmul(attn_weights, values_h);
        return out_proj(merge_heads(context_vec));
    }

private:
    // Declared, so constructed and drawn from the random stream, in the book's order.
    linear W_query, W_key, W_value;
    linear out_proj{d_out, d_out};
    xt::xtensor<float, 2> mask = causal_mask(context_length);
};

void run() {
    check::section("01 quick start: the book's inputs, a first attention");
    xt::xtensor<float, 2> inputs = {{0.43f, 0.15f, 0.89f},   // Your     (x^1)
                                    {0.55f, 0.87f, 0.66f},   // journey  (x^2)
                                    {0.57f, 0.85f, 0.64f},   // starts   (x^3)
                                    {0.22f, 0.58f, 0.33f},   // with     (x^4)
                                    {0.77f, 0.25f, 0.10f},   // one      (x^5)
                                    {0.05f, 0.80f, 0.55f}};  // step     (x^6)
    std::cout << "inputs.shape = " << torch_size(inputs) << "\n";
    std::cout << "inputs = " << inputs << "\n";
    check::shape(inputs, {num_tokens, d_in}, "inputs.shape");
    check::printed(inputs, {0.4300, 0.1500, 0.8900, 0.5500, 0.8700, 0.6600, 0.5700, 0.8500, 0.6400,
                            0.2200, 0.5800, 0.3300, 0.7700, 0.2500, 0.1000, 0.0500, 0.8000, 0.5500},
                   "inputs");

    xt::xtensor<float, 2> attn_scores = xt::linalg::dot(inputs, xt::transpose(inputs));  // inputs @ inputs.T
    auto attn_weights = softmax(attn_scores, 1);                                           // dim=-1
    xt::xtensor<float, 2> all_context_vecs = xt::linalg::dot(attn_weights, inputs);       // attn_weights @ inputs
    std::cout << "attn_scores.shape = " << torch_size(attn_scores) << "\n";
    std::cout << "attn_weights = " << attn_weights << "\n";
    std::cout << "all_context_vecs = " << all_context_vecs << "\n";
    check::shape(attn_scores, {num_tokens, num_tokens}, "attn_scores.shape");
    check::printed(attn_weights,
                   {0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452, 0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581,
                    0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565, 0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720,
                    0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295, 0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896},
                   "attn_weights");
    check::printed(all_context_vecs, {0.4421, 0.5931, 0.5790, 0.4419, 0.6515, 0.5683, 0.4431, 0.6496, 0.5671,
                                      0.4304, 0.6298, 0.5510, 0.4671, 0.5910, 0.5266, 0.4177, 0.6503, 0.5645},
                   "all_context_vecs");

    manual_seed(123);                                         // torch.manual_seed(123)
    auto W_query = rand<2>({d_in, d_out});                    // W_query = torch.rand(d_in, d_out)
    auto W_key = rand<2>({d_in, d_out});
    auto W_value = rand<2>({d_in, d_out});
    xt::xtensor<float, 2> queries = xt::linalg::dot(inputs, W_query);  // queries = inputs @ W_query
    xt::xtensor<float, 2> keys = xt::linalg::dot(inputs, W_key);
    xt::xtensor<float, 2> values = xt::linalg::dot(inputs, W_value);
    xt::xtensor<float, 2> scores = xt::linalg::dot(queries, xt::transpose(keys));  // queries @ keys.T
    xt::xtensor<float, 2> scaled = scores / std::sqrt(static_cast<float>(d_out));  // keys.shape[-1]**0.5
    auto weights = softmax(scaled, 1);
    xt::xtensor<float, 2> context_vec = xt::linalg::dot(weights, values);  // weights @ values
    std::cout << "keys.shape = " << torch_size(keys) << "\n";
    std::cout << "context_vec = " << context_vec << "\n";
    check::shape(keys, {num_tokens, d_out}, "keys.shape");
    check::printed(context_vec, {0.2996, 0.8053, 0.3061, 0.8210, 0.3058, 0.8203, 0.2948, 0.7939, 0.2927, 0.7891,
                                 0.2990, 0.8040},
                   "context_vec");

    check::section("05 the book's MultiHeadAttention (listing 3.5)");
    xt::xtensor<float, 3> batch_x = xt::stack(xt::xtuple(inputs, inputs), 0);  // torch.stack((inputs, inputs), dim=0)
    std::cout << "batch.shape = " << torch_size(batch_x) << "\n";
    manual_seed(123);
    MultiHeadAttention mha;  // MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=2)
    auto context_vecs = mha.forward(batch_x);
    std::cout << "context_vecs = " << context_vecs << "\n";
    std::cout << "context_vecs.shape = " << torch_size(context_vecs) << "\n";
    check::shape(batch_x, {batch, num_tokens, d_in}, "batch.shape");
    check::shape(context_vecs, {batch, num_tokens, d_out}, "context_vecs.shape");
    // PyTorch's values in full (torch.set_printoptions(precision=8)), for both copies.
    const std::initializer_list<double> pytorch = {
        0.31901830, 0.48576289, 0.29434600, 0.38967627, 0.28557467, 0.35927770, 0.26926368, 0.38732666,
        0.26387054, 0.39279571, 0.25747356, 0.40278262, 0.31901830, 0.48576289, 0.29434600, 0.38967627,
        0.28557467, 0.35927770, 0.26926368, 0.38732666, 0.26387054, 0.39279571, 0.25747356, 0.40278262};
    check::printed(context_vecs, pytorch, "MultiHeadAttention equals PyTorch's context_vecs to 1e-6", 1e-6);

    manual_seed(123);
    MultiHeadAttention mha_module;  // the same module, constructed again from the same seed
    auto module_vecs = mha_module.forward(batch_x);
    std::cout << "module_vecs.shape = " << torch_size(module_vecs) << "\n";
    std::cout << "max |module_vecs - context_vecs| = " << max_abs_diff(module_vecs, context_vecs) << "\n";
    check::shape(module_vecs, {batch, num_tokens, d_out}, "module_vecs.shape");
    check::that(max_abs_diff(module_vecs, context_vecs) == 0, "max |module_vecs - context_vecs| = 0");

    check::section("04 nn::dropout (section 3.5.2)");
    manual_seed(123);                                        // torch.manual_seed(123)
    dropout drop(0.5);                                       // dropout = torch.nn.Dropout(0.5)
    xt::xtensor<float, 2> example = xt::ones<float>({num_tokens, num_tokens});  // example = torch.ones(6, 6)
    auto dropped = drop(example);
    std::cout << "dropout(example) = " << dropped << "\n";
    drop.eval();                                             // dropout.eval(): the identity
    std::cout << "eval: " << (max_abs_diff(drop(example), example) == 0 ? "unchanged" : "changed") << "\n";
    check::printed(dropped, {2., 2., 0., 2., 2., 0., 0., 0., 0., 2., 0., 2., 2., 2., 2., 2., 0., 2.,
                             0., 2., 2., 0., 0., 2., 0., 2., 0., 2., 0., 2., 0., 2., 2., 2., 2., 0.},
                   "dropout(example)");
    check::that(max_abs_diff(drop(example), example) == 0, "eval: unchanged");
}

}  // namespace book

// ---------------------------------------------------------------------------------------------------
// The seed's sizes, for chapters 2 to 5: batch 1, num_tokens 2, d_out 6, num_heads 3, head_dim 2.
namespace seed {

constexpr std::size_t batch = 1, num_tokens = 2, d_out = 6, num_heads = 3, head_dim = d_out / num_heads;
constexpr std::size_t d_model = num_heads * head_dim, context_length = 4;
static_assert(head_dim == 2 && d_model == 6 && d_model == d_out);

// q.split(head_dim, dim=-1)[h]: (batch, num_tokens, head_dim)
xt::xtensor<float, 3> split_part(const xt::xtensor<float, 3>& t, std::size_t h) {
    return xt::view(t, xt::all(), xt::all(), xt::range(h * head_dim, (h + 1) * head_dim));
}

void axes_and_shapes() {
    check::section("03 axes and shapes");
    manual_seed(1223);
    auto q = rand<3>({batch, num_tokens, d_out});

    xt::xtensor<float, 4> q4 = xt::reshape_view(q, {batch, num_tokens, num_heads, head_dim});  // split d_out
    xt::xtensor<float, 3> q3 = xt::reshape_view(q4, {batch, num_tokens, d_out});               // merge back
    xt::xtensor<float, 3> qm = xt::reshape_view(q4, {batch, num_tokens, num_heads * head_dim});
    xt::xtensor<float, 3> same = qm;
    xt::xtensor<float, 2> rows = xt::reshape_view(q, {batch * num_tokens, d_out});  // merge batch and num_tokens
    std::cout << "q4: " << torch_size(q4) << "\n";
    std::cout << "qm: " << torch_size(qm) << "\n";
    std::cout << "rows: " << torch_size(rows) << "\n";
    check::shape(q4, {batch, num_tokens, num_heads, head_dim}, "q4");
    check::shape(qm, {batch, num_tokens, d_out}, "qm");
    check::shape(rows, {batch * num_tokens, d_out}, "rows");
    check::that(max_abs_diff(q3, q) == 0 && max_abs_diff(same, q) == 0, "view keeps the elements");

    std::array<xt::xtensor<float, 3>, num_heads> heads{split_part(q, 0), split_part(q, 1), split_part(q, 2)};
    xt::xtensor<float, 3> joined = xt::concatenate(xt::xtuple(heads[0], heads[1], heads[2]), 2);  // d_out again
    xt::xtensor<float, 3> wide = xt::concatenate(xt::xtuple(q, q, q), 2);                         // three copies
    xt::xtensor<float, 3> pair = xt::concatenate(xt::xtuple(heads[0], heads[1]), 2);              // two heads
    std::cout << "joined: " << torch_size(joined) << "\n";
    std::cout << "wide: " << torch_size(wide) << "\n";
    std::cout << "pair: " << torch_size(pair) << "\n";
    check::shape(joined, {batch, num_tokens, d_out}, "joined");
    check::shape(wide, {batch, num_tokens, 3 * d_out}, "wide");
    check::shape(pair, {batch, num_tokens, 2 * head_dim}, "pair");

    auto qh = xt::transpose(q4, {0, 2, 1, 3});  // (batch, num_heads, num_tokens, head_dim), strided
    xt::xtensor<float, 3> back = xt::reshape_view(xt::eval(xt::transpose(qh, {0, 2, 1, 3})), {batch, num_tokens, d_out});
    xt::xtensor<float, 3> back_too = xt::reshape_view(xt::eval(xt::transpose(qh, {0, 2, 1, 3})), {batch, num_tokens, d_out});
    const bool qh_contiguous = std::equal(qh.strides().begin(), qh.strides().end(), xt::xtensor<float, 4>(qh).strides().begin());
    std::cout << std::boolalpha << "qh.is_contiguous = " << qh_contiguous << "\n";
    std::cout << "back.is_contiguous = " << true << "\n";
    check::that(!qh_contiguous, "qh.is_contiguous = false");
    check::that(max_abs_diff(back, q) == 0 && max_abs_diff(back_too, q) == 0,
                "transpose, contiguous and view back restore q");

    auto k = rand<3>({batch, num_tokens, d_out});
    auto scores = matmul(q, transpose_last(k));  // (batch, num_tokens, num_tokens)
    auto weights = softmax(scores, 2);           // over the keys
    auto by_name = softmax(scores, 2);
    std::cout << "weights: " << torch_size(weights) << "\n";
    check::shape(weights, {batch, num_tokens, num_tokens}, "weights");
    check::that(max_abs_diff(weights, by_name) == 0, "softmax by name is softmax<-1>");

    xt::xtensor<float, 2> q2 = xt::reshape_view(q, {num_tokens, d_out});  // q.view(num_tokens, d_out)
    xt::xtensor<float, 3> q1 = xt::expand_dims(q2, 0);                    // q2.unsqueeze(0)
    auto row_bias = rand<2>({batch, d_out});
    xt::xtensor<float, 3> shifted = q + xt::expand_dims(row_bias, 1);     // (b, n, d) + (b, 1, d)
    std::cout << "q2: " << torch_size(q2) << "\nq1: " << torch_size(q1) << "\nshifted: " << torch_size(shifted) << "\n";
    check::shape(q2, {num_tokens, d_out}, "q2");
    check::shape(q1, {1, num_tokens, d_out}, "q1");
    check::shape(shifted, {batch, num_tokens, d_out}, "shifted");
}

void ops() {
    check::section("04 the ops");
    manual_seed(1223);                            // torch.manual_seed(1223)
    auto q = rand<3>({batch, num_tokens, d_out});  // q = torch.rand(batch, num_tokens, d_out)
    auto k = rand<3>({batch, num_tokens, d_out});
    auto v = rand<3>({batch, num_tokens, d_out});
    std::cout << "q = " << q << "\n";
    std::mt19937 g(1223);                                   // g = torch.Generator().manual_seed(1223)
    auto q_again = rand<3>({batch, num_tokens, d_out}, g);  // torch.rand(..., generator=g)
    std::cout << "torch.equal(q_again, q) = " << (max_abs_diff(q_again, q) == 0 ? "True" : "False") << "\n";
    check::printed(q, {0.4437, 0.9082, 0.8187, 0.4739, 0.8862, 0.9652, 0.5938, 0.0244, 0.1877, 0.2675, 0.8214, 0.4462},
                   "q");
    check::that(max_abs_diff(q_again, q) == 0, "torch.equal(q_again, q) = True");

    xt::xtensor<float, 4> q4 = xt::reshape_view(q, {batch, num_tokens, num_heads, head_dim});
    std::cout << "q4.shape = " << torch_size(q4) << "\n";
    std::cout << "q4 = " << q4 << "\n";
    check::shape(q4, {batch, num_tokens, num_heads, head_dim}, "q4.shape");
    check::printed(q4, {0.4437, 0.9082, 0.8187, 0.4739, 0.8862, 0.9652, 0.5938, 0.0244, 0.1877, 0.2675, 0.8214, 0.4462},
                   "q4");

    xt::xtensor<float, 4> qh = xt::transpose(q4, {0, 2, 1, 3});  // q4.transpose(1, 2)
    auto kh = split_heads(k, num_heads);                          // .transpose(-3, -2)
    auto vh = split_heads(v, num_heads);                          // .transpose by name
    xt::xtensor<float, 4> qp = xt::transpose(q4, {0, 2, 1, 3});  // q4.permute(0, 2, 1, 3)
    std::cout << "qh.shape = " << torch_size(qh) << "\n";
    std::cout << "qh = " << qh << "\n";
    check::shape(qh, {batch, num_heads, num_tokens, head_dim}, "qh.shape");
    check::printed(qh, {0.4437, 0.9082, 0.5938, 0.0244, 0.8187, 0.4739, 0.1877, 0.2675, 0.8862, 0.9652, 0.8214, 0.4462},
                   "qh");
    check::that(max_abs_diff(qp, qh) == 0, "permute<0, 2, 1, 3> is transpose<1, 2>");

    auto keys2 = rand<2>({num_tokens, d_out});
    auto keys2_T = xt::transpose(keys2);  // keys2.T: (d_out, num_tokens)
    check::shape(keys2_T, {d_out, num_tokens}, "keys2.T");

    auto context = xt::transpose(qh, {0, 2, 1, 3});  // (batch, num_tokens, num_heads, head_dim), strided
    xt::xtensor<float, 3> merged = xt::reshape_view(xt::eval(context), {batch, num_tokens, d_out});
    xt::xtensor<float, 3> merged_too = xt::reshape_view(xt::eval(context), {batch, num_tokens, d_out});
    check::that(max_abs_diff(merged, q) == 0 && max_abs_diff(merged_too, q) == 0, "contiguous().view and reshape give q back");

    auto attn_scores = matmul(qh, transpose_last(kh));  // qh @ kh.transpose(2, 3)
    auto context_vec = matmul(attn_scores, vh);         // attn_scores @ vh
    auto W = rand<2>({head_dim, head_dim});
    auto projected = matmul(qh, W);  // qh @ W: W is used for every batch and head
    std::cout << "attn_scores.shape = " << torch_size(attn_scores) << "\n";
    std::cout << "attn_scores = " << attn_scores << "\n";
    std::cout << "context_vec.shape = " << torch_size(context_vec) << ", projected.shape = " << torch_size(projected) << "\n";
    check::shape(attn_scores, {batch, num_heads, num_tokens, num_tokens}, "attn_scores.shape");
    check::printed(attn_scores,
                   {1.1003, 0.7338, 0.4271, 0.5321, 0.2048, 1.0390, 0.0745, 0.3152, 0.9539, 0.6726, 0.7107, 0.4004},
                   "attn_scores");
    check::shape(context_vec, {batch, num_heads, num_tokens, head_dim}, "context_vec.shape");
    check::shape(projected, {batch, num_heads, num_tokens, head_dim}, "projected.shape");

    std::array<xt::xtensor<float, 3>, num_heads> q_split{split_part(q, 0), split_part(q, 1), split_part(q, 2)};
    auto q_0 = q_split[0];  // q_split[0]: (batch, num_tokens, head_dim)
    std::cout << "q_split[0] = " << q_0 << "\n";
    check::printed(q_0, {0.4437, 0.9082, 0.5938, 0.0244}, "q_split[0]");

    xt::xtensor<float, 3> q_joined = xt::concatenate(xt::xtuple(q_split[0], q_split[1], q_split[2]), 2);
    std::array<xt::xtensor<float, 3>, num_heads> head_list;
    for (auto& h : head_list) h = q_0;  // a list filled in a loop, as with .append()
    xt::xtensor<float, 3> three_q0 = xt::concatenate(xt::xtuple(head_list[0], head_list[1], head_list[2]), 2);
    std::cout << "three_q0 = " << three_q0 << "\n";
    check::printed(three_q0,
                   {0.4437, 0.9082, 0.4437, 0.9082, 0.4437, 0.9082, 0.5938, 0.0244, 0.5938, 0.0244, 0.5938, 0.0244},
                   "three_q0");
    check::that(max_abs_diff(q_joined, q) == 0, "cat of the split is q");

    xt::xtensor<float, 2> keys2_twice = 2.0f * keys2;
    xt::xtensor<float, 3> both = xt::stack(xt::xtuple(keys2, keys2_twice), 0);  // torch.stack((keys2, 2 * keys2))
    xt::xtensor<float, 3> keys2_1 = xt::expand_dims(keys2, 0);                   // keys2.unsqueeze(0)
    std::cout << "both = " << both << "\n";
    std::cout << "keys2_1.shape = " << torch_size(keys2_1) << "\n";
    check::printed(both, {0.5733, 0.4665, 0.0207, 0.2905, 0.1585, 0.4341, 0.9098, 0.6934, 0.7630, 0.7105, 0.1010, 0.8405,
                          1.1467, 0.9331, 0.0415, 0.5811, 0.3169, 0.8681, 1.8195, 1.3869, 1.5261, 1.4210, 0.2019, 1.6809},
                   "both");
    check::shape(keys2_1, {1, num_tokens, d_out}, "keys2_1.shape");

    auto w_last = softmax(attn_scores, 3);  // torch.softmax(attn_scores, dim=-1)
    auto w_named = softmax(q, 2);           // torch.softmax(q, dim=-1)
    std::cout << "w_last = " << w_last << "\n";
    check::printed(w_last, {0.5906, 0.4094, 0.4738, 0.5262, 0.3028, 0.6972, 0.4401, 0.5599, 0.5699, 0.4301, 0.5770, 0.4230},
                   "w_last");
    check::that(max_abs_diff(w_named, softmax(q, 2)) == 0, "softmax<d_out> is softmax<2>");

    auto mask = causal_mask(context_length);  // torch.triu(torch.ones(c, c), 1)
    auto mask_b = mask_bool(mask, num_tokens);  // mask.bool()[:num_tokens, :num_tokens]
    auto masked = masked_fill(attn_scores, mask_b, -std::numeric_limits<float>::infinity());  // -torch.inf
    xt::xtensor<float, 4> masked_scaled = masked / std::sqrt(static_cast<float>(head_dim));
    auto attn_weights = softmax(masked_scaled, 3);
    std::cout << "mask = " << mask << "\n";
    std::cout << "mask_bool = " << mask_b << "\n";
    std::cout << "masked = " << masked << "\n";
    std::cout << "attn_weights = " << attn_weights << "\n";
    const double inf = std::numeric_limits<double>::infinity();
    check::printed(mask, {0., 1., 1., 1., 0., 0., 1., 1., 0., 0., 0., 1., 0., 0., 0., 0.}, "mask");
    check::printed(mask_b, {0., 1., 0., 0.}, "mask_bool");
    check::printed(masked, {1.1003, -inf, 0.4271, 0.5321, 0.2048, -inf, 0.0745, 0.3152, 0.9539, -inf, 0.7107, 0.4004},
                   "masked");
    check::printed(attn_weights,
                   {1.0000, 0.0000, 0.4814, 0.5186, 1.0000, 0.0000, 0.4575, 0.5425, 1.0000, 0.0000, 0.5546, 0.4454},
                   "attn_weights");

    manual_seed(1223);
    linear out_proj(d_out, d_out);         // out_proj = nn.Linear(d_out, d_out)
    linear W_query(d_out, d_out, false);   // W_query = nn.Linear(d_out, d_out, bias=False)
    auto y = out_proj(q);                  // out_proj(q): (batch, num_tokens, d_out)
    std::cout << "out_proj.weight.shape = " << torch_size(out_proj.weight) << "\n";
    std::cout << "out_proj.bias = " << out_proj.bias << "\n";
    std::cout << "y = " << y << "\n";
    check::shape(out_proj.weight, {d_out, d_out}, "out_proj.weight.shape");
    check::printed(out_proj.bias, {0.0599, -0.0273, -0.3913, -0.1710, -0.2789, -0.0538}, "out_proj.bias");
    check::printed(y, {1.1911, -0.4547, -0.3823, -0.0098, -0.6244, 0.3172, 0.5123, 0.1059, -0.3571, -0.1079, -0.3521, -0.0336},
                   "y");
    check::that(!W_query.has_bias(), "bias=False");

    auto bias = rand<1>({d_out});
    xt::xtensor<float, 3> sum = q + k;               // q + k: the same axes
    xt::xtensor<float, 3> shifted = q + bias;        // bias broadcasts over batch, num_tokens
    xt::xtensor<float, 3> scaled = 2.0f * q - 1.0f;  // 2 * q - 1
    xt::xtensor<float, 3> ratio = q / (k + 1.0f);    // q / (k + 1)
    std::cout << "shifted = " << shifted << "\n";
    check::printed(shifted, {0.7548, 1.6805, 0.9595, 0.8220, 0.9403, 1.4865, 0.9049, 0.7967, 0.3285, 0.6156, 0.8755, 0.9675},
                   "shifted");
    check::that(sum(0, 1, 2) == q(0, 1, 2) + k(0, 1, 2) && scaled(0, 0, 0) == 2.0f * q(0, 0, 0) - 1.0f &&
                    ratio(0, 0, 5) == q(0, 0, 5) / (k(0, 0, 5) + 1.0f),
                "elementwise arithmetic");

    xt::xtensor<float, 3> by_view = merge_heads(qh);
    std::cout << "torch.allclose(by_view, q) = " << (xt::allclose(by_view, q) ? "True" : "False") << "\n";
    std::cout << "max |by_view - q| = " << max_abs_diff(by_view, q) << "\n";  // (by_view - q).abs().max()
    check::that(xt::allclose(by_view, q) && max_abs_diff(by_view, q) == 0, "by_view is q");

    xt::xtensor<double, 3> q_double = xt::cast<double>(q);
    std::cout << "q.shape = " << torch_size(q) << "\n";
    std::cout << "q.shape[-1] = " << q.shape(2) << "\n";
    std::cout << "axes: (" << q.shape(0) << ", " << q.shape(1) << ", " << q.shape(2) << ")\n";
    std::cout << "q.double() = " << q_double << "\n";
    check::shape(q, {batch, num_tokens, d_out}, "q.shape");
    check::printed(q_double,
                   {0.4437, 0.9082, 0.8187, 0.4739, 0.8862, 0.9652, 0.5938, 0.0244, 0.1877, 0.2675, 0.8214, 0.4462},
                   "q.double()");

    std::vector<float> buffer(10, 0.5f);
    bool refused = false;
    try {
        const std::array<std::size_t, 3> shape{batch, num_tokens, d_out};
        if (buffer.size() != batch * num_tokens * d_out)
            throw std::invalid_argument("from_buffer: expected " + std::to_string(batch * num_tokens * d_out) +
                                        " elements, got " + std::to_string(buffer.size()) + " elements");
        auto t = xt::adapt(buffer, shape);  // needs 12 elements
        std::cout << t << "\n";
    } catch (const std::invalid_argument& e) {
        refused = true;
        std::cout << e.what() << "\n";
    }
    check::that(refused, "from_buffer refuses 10 elements for 12");
}

void cheat_sheet() {
    check::section("02 cheat sheet: the seed's sizes, causal, both forms");
    const float inf = std::numeric_limits<float>::infinity();
    const float scale = std::sqrt(static_cast<float>(head_dim));  // head_dim**0.5
    manual_seed(1223);                                     // torch.manual_seed(1223)
    linear out_proj(d_out, d_out);                         // out_proj = nn.Linear(d_out, d_out)
    auto q = rand<3>({batch, num_tokens, d_out});          // q = torch.rand(batch, num_tokens, d_out)
    auto k = rand<3>({batch, num_tokens, d_out});
    auto v = rand<3>({batch, num_tokens, d_out});
    auto mask = causal_mask(context_length);               // torch.triu(torch.ones(c, c), 1)
    auto mask_b = mask_bool(mask, num_tokens);             // mask.bool()[:num_tokens, :num_tokens]

    // The view/transpose form (listing 3.5).
    auto qh = split_heads(q, num_heads);  // .view(...).transpose(1, 2)
    auto kh = split_heads(k, num_heads);  // .view(...).permute(0, 2, 1, 3)
    auto vh = split_heads(v, num_heads);
    auto scores = matmul(qh, transpose_last(kh));  // qh @ kh.transpose(2, 3)
    xt::xtensor<float, 4> scaled = masked_fill(scores, mask_b, -inf) / scale;
    auto weights = softmax(scaled, 3);
    auto out = out_proj(merge_heads(matmul(weights, vh)));

    // The loop over heads: zip(q.split(head_dim, -1), k.split(head_dim, -1), v.split(head_dim, -1)).
    std::array<xt::xtensor<float, 3>, num_heads> heads;
    for (std::size_t h = 0; h < num_heads; ++h) {
        auto q_h = split_part(q, h), k_h = split_part(k, h), v_h = split_part(v, h);
        auto s = matmul(q_h, transpose_last(k_h));  // q_h @ k_h.transpose(1, 2)
        xt::xtensor<float, 3> s_scaled = masked_fill(s, mask_b, -inf) / scale;
        heads[h] = matmul(softmax(s_scaled, 2), v_h);
    }
    xt::xtensor<float, 3> cat = xt::concatenate(xt::xtuple(heads[0], heads[1], heads[2]), 2);
    auto out_loop = out_proj(cat);  // out_proj(torch.cat(heads, dim=-1))

    std::cout << "out.shape = " << torch_size(out) << "\n";
    std::cout << "out = " << out << "\n";
    std::cout << "torch.allclose(out, out_loop) = " << (xt::allclose(out, out_loop) ? "True" : "False") << "\n";
    check::shape(out, {batch, num_tokens, d_out}, "out.shape");
    check::printed(out, {0.8787, -0.5265, -0.3441, -0.0963, -0.5221, 0.2862, 0.7969, -0.2077, -0.3204, -0.2118, -0.4681, 0.2206},
                   "out");
    check::that(xt::allclose(out, out_loop), "torch.allclose(out, out_loop) = True");
    // PyTorch's out in full (torch.set_printoptions(precision=8)).
    const std::initializer_list<double> pytorch = {0.87872690, -0.52647382, -0.34405994, -0.09629922,
                                                   -0.52208304, 0.28618619,  0.79685855,  -0.20766167,
                                                   -0.32039946, -0.21179415, -0.46806625, 0.22062492};
    check::printed(out, pytorch, "the view form equals PyTorch's out to 1e-6", 1e-6);
    check::printed(out_loop, pytorch, "the loop form equals PyTorch's out to 1e-6", 1e-6);
}

}  // namespace seed

int main() {
    book::run();
    seed::cheat_sheet();
    seed::axes_and_shapes();
    seed::ops();
    std::cout << "\n" << (check::failures == 0 ? "all checks passed" : "some checks failed") << " ("
              << check::failures << " failures)\n";
    return check::failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
