// einsum<"pattern">(a, b): the attention products against matmul by hand (same type, same bits), the other
// contractions against plain loops, on static and run-time axes; run-time extents that differ throw.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>

#include <shaped/ops/einsum.hpp>
#include <shaped/shaped.hpp>

namespace {

struct context_length : shaped::axis<"context_length", 8> {};
struct batch : shaped::axis<"batch", 2> {};
struct num_tokens : shaped::axis<"num_tokens", 5> {};
struct d_out : shaped::axis<"d_out", 6> {};
struct num_heads : shaped::axis<"num_heads", 3> {};
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};
using keys_axis = shaped::key<num_tokens>;

struct run_batch : shaped::dynamic_axis<"batch"> {};
struct run_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};

// Values that make every product distinct: x(i) = sin(seed + 0.37 i), row-major.
template <class T>
T filled(float seed, auto... n) {
    T t = [&] {
        if constexpr (sizeof...(n) == 0)
            return T{};
        else
            return T(T::extents_type::checked("filled", n...));
    }();
    for (std::size_t i = 0; i < t.numel(); ++i) t.data()[i] = std::sin(seed + 0.37f * static_cast<float>(i));
    return t;
}

template <class A, class B>
void check_same(const A& a, const B& b) {
    static_assert(std::is_same_v<A, B>);
    REQUIRE(a.shape.sizes() == b.shape.sizes());
    const auto ca = a.contiguous();
    const auto cb = b.contiguous();
    CHECK(std::memcmp(ca.data(), cb.data(), ca.numel() * sizeof(float)) == 0);
}

constexpr shaped::detail::fixed_string scores_pattern =
    "batch num_heads num_tokens head_dim, batch num_heads keys head_dim -> batch num_heads num_tokens keys";
constexpr shaped::detail::fixed_string context_pattern =
    "batch num_heads num_tokens keys, batch num_heads keys head_dim -> batch num_tokens num_heads head_dim";
using keys_let = shaped::let<"keys", keys_axis>;

}  // namespace

TEST_CASE("einsum: the attention scores are matmul(q, k.transpose<2, 3>()), bit for bit") {
    const auto q = filled<shaped::tensor<float, batch, num_heads, num_tokens, head_dim>>(0.1f);
    const auto k = filled<shaped::tensor<float, batch, num_heads, keys_axis, head_dim>>(0.7f);
    const auto by_pattern = shaped::einsum<scores_pattern, keys_let>(q, k);
    const auto by_hand = shaped::matmul(q, k.transpose<2, 3>());
    check_same(by_pattern, by_hand);
    // The same with the keys moved in: no copy of a temporary, same result.
    auto k2 = k;
    check_same(shaped::einsum<scores_pattern, keys_let>(q, std::move(k2)), by_hand);
}

TEST_CASE("einsum: the context vectors, with the heads moved behind the tokens as the book does next") {
    const auto w = filled<shaped::tensor<float, batch, num_heads, num_tokens, keys_axis>>(0.3f);
    const auto v = filled<shaped::tensor<float, batch, num_heads, keys_axis, head_dim>>(1.1f);
    const auto by_pattern = shaped::einsum<context_pattern, keys_let>(w, v);
    const auto by_hand = shaped::matmul(w, v).transpose<1, 2>().contiguous();  // written in place, no gather
    check_same(by_pattern, by_hand);
}

TEST_CASE("einsum: batch axes in another order on each side are matched by name") {
    const auto a = filled<shaped::tensor<float, num_heads, batch, num_tokens, head_dim>>(0.2f);
    const auto b = filled<shaped::tensor<float, batch, head_dim, num_heads, keys_axis>>(0.9f);
    const auto r = shaped::einsum<"num_heads batch num_tokens head_dim, batch head_dim num_heads keys -> batch keys num_heads num_tokens",
                                  keys_let>(a, b);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(r)>::extents_type,
                                 shaped::extents<batch, keys_axis, num_heads, num_tokens>>);
    for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t j = 0; j < 5; ++j)
            for (std::size_t h = 0; h < 3; ++h)
                for (std::size_t t = 0; t < 5; ++t) {
                    double s = 0;
                    for (std::size_t d = 0; d < 2; ++d) s += double(a(h, i, t, d)) * double(b(i, d, h, j));
                    CHECK(r(i, j, h, t) == doctest::Approx(s).epsilon(1e-6));
                }
}

TEST_CASE("einsum: contractions with nothing summed, or no row and no column, run as a loop") {
    const auto x = filled<shaped::tensor<float, batch, num_tokens, d_out>>(0.4f);
    const auto y = filled<shaped::tensor<float, batch, num_tokens, d_out>>(1.3f);
    // A dot product per position: two batch names, one summed name, no row or column.
    const auto dot = shaped::einsum<"batch num_tokens d_out, batch num_tokens d_out -> batch num_tokens">(x, y);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(dot)>, shaped::tensor<float, batch, num_tokens>>);
    for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t t = 0; t < 5; ++t) {
            float s = 0;
            for (std::size_t d = 0; d < 6; ++d) s += x(i, t, d) * y(i, t, d);
            CHECK(dot(i, t) == s);  // the same order of additions
        }
    // An outer product: nothing summed.
    const auto u = filled<shaped::tensor<float, num_tokens>>(0.6f);
    const auto w = filled<shaped::tensor<float, d_out>>(0.8f);
    const auto outer = shaped::einsum<"num_tokens, d_out -> d_out num_tokens">(u, w);
    for (std::size_t t = 0; t < 5; ++t)
        for (std::size_t d = 0; d < 6; ++d) CHECK(outer(d, t) == u(t) * w(d));
    // A strided operand is read as its elements, not its buffer.
    const auto xt = x.transpose<1, 2>();
    const auto dot_t = shaped::einsum<"batch d_out num_tokens, batch num_tokens d_out -> batch num_tokens">(xt, y);
    for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t t = 0; t < 5; ++t) CHECK(dot_t(i, t) == dot(i, t));
}

TEST_CASE("einsum: run-time batch and tokens, on both paths") {
    using run_keys = shaped::key<run_tokens>;
    for (std::size_t b : {1u, 3u})
        for (std::size_t t : {1u, 2u, 8u}) {
            const auto q = filled<shaped::tensor<float, run_batch, num_heads, run_tokens, head_dim>>(0.1f, b, t);
            const auto k = filled<shaped::tensor<float, run_batch, num_heads, run_keys, head_dim>>(0.7f, b, t);
            const auto s = shaped::einsum<scores_pattern, shaped::let<"keys", run_keys>>(q, k);
            check_same(s, shaped::matmul(q, k.transpose<2, 3>()));
            const auto d = shaped::einsum<"batch num_heads num_tokens head_dim, batch num_heads num_tokens head_dim -> batch num_tokens">(q, q);
            REQUIRE(d.shape.sizes() == std::array<std::size_t, 2>{b, t});
            for (std::size_t i = 0; i < b; ++i)
                for (std::size_t j = 0; j < t; ++j) {
                    float sum = 0;
                    for (std::size_t h = 0; h < 3; ++h)
                        for (std::size_t e = 0; e < 2; ++e) sum += q(i, h, j, e) * q(i, h, j, e);
                    CHECK(d(i, j) == sum);
                }
        }
}

TEST_CASE("einsum: run-time extents that a name joins must agree") {
    const auto x = filled<shaped::tensor<float, run_batch, run_tokens, d_out>>(0.1f, 2u, 3u);
    const auto y = filled<shaped::tensor<float, run_batch, run_tokens, d_out>>(0.2f, 2u, 4u);
    CHECK_THROWS_WITH_AS((shaped::einsum<"batch num_tokens d_out, batch num_tokens d_out -> batch num_tokens">(x, y)),
                         doctest::Contains("shaped::einsum<Pattern>(a, b): num_tokens"), shaped::shape_error);
    // On the matmul path too, the message names einsum and the operands as passed (not matmul's permuted ones).
    using run_keys = shaped::key<run_tokens>;
    const auto q = filled<shaped::tensor<float, run_tokens, run_batch, num_heads, head_dim>>(0.1f, 3u, 2u);
    const auto k = filled<shaped::tensor<float, run_batch, num_heads, run_keys, head_dim>>(0.7f, 1u, 3u);
    CHECK_THROWS_WITH_AS(
        (shaped::einsum<"num_tokens batch num_heads head_dim, batch num_heads keys head_dim -> batch num_heads num_tokens keys",
                        shaped::let<"keys", run_keys>>(q, k)),
        doctest::Contains("shaped::einsum<Pattern>(a, b): batch"), shaped::shape_error);
}

TEST_CASE("einsum: operands without axes") {
    shaped::tensor<float> a, b;
    a.data()[0] = 2.0f;
    b.data()[0] = 3.0f;
    const auto s = shaped::einsum<", -> ">(a, b);
    CHECK(s.data()[0] == 6.0f);
    const shaped::tensor<float, d_out> u{1, 2, 3, 4, 5, 6};
    const auto scaled = shaped::einsum<"d_out, -> d_out">(u, b);
    CHECK(scaled(5) == 18.0f);
    const auto dot = shaped::einsum<"d_out, d_out -> ">(u, u);
    CHECK(dot.data()[0] == 91.0f);
}

TEST_CASE("einsum: a result ending on the column is written in its own order, contiguous, matmul's bits") {
    using run_keys = shaped::key<run_tokens>;
    constexpr shaped::detail::fixed_string ctx =
        "batch num_heads num_tokens keys, batch num_heads keys head_dim -> batch num_tokens num_heads head_dim";
    for (std::size_t b : {1u, 3u})
        for (std::size_t t : {1u, 2u, 8u}) {
            CAPTURE(b);
            CAPTURE(t);
            const auto w = filled<shaped::tensor<float, run_batch, num_heads, run_tokens, run_keys>>(0.3f, b, t, t);
            const auto v = filled<shaped::tensor<float, run_batch, num_heads, run_keys, head_dim>>(1.1f, b, t);
            const auto c = shaped::einsum<ctx, shaped::let<"keys", run_keys>>(w, v);
            static_assert(std::remove_cvref_t<decltype(c)>::is_contiguous);
            check_same(c, shaped::matmul(w, v).transpose<1, 2>().contiguous());
            // The row first and the batch axes swapped; a strided operand (the values read transposed twice).
            const auto vt = v.transpose<2, 3>().transpose<2, 3>();
            const auto r = shaped::einsum<"batch num_heads num_tokens keys, batch num_heads keys head_dim -> "
                                          "num_tokens num_heads batch head_dim",
                                          shaped::let<"keys", run_keys>>(w, vt);
            static_assert(std::remove_cvref_t<decltype(r)>::is_contiguous);
            check_same(r, shaped::matmul(w, v).permute<2, 1, 0, 3>().contiguous());
        }
    // Double, static axes.
    const auto wd = filled<shaped::tensor<float, batch, num_heads, num_tokens, keys_axis>>(0.4f).to<double>();
    const auto vd = filled<shaped::tensor<float, batch, num_heads, keys_axis, head_dim>>(0.9f).to<double>();
    const auto cd = shaped::einsum<context_pattern, keys_let>(wd, vd);
    const auto hd = shaped::matmul(wd, vd).transpose<1, 2>().contiguous();
    static_assert(std::is_same_v<decltype(cd), decltype(hd)>);
    CHECK(std::memcmp(cd.data(), hd.data(), cd.numel() * sizeof(double)) == 0);
    // Run-time extents a name joins are checked before anything is written.
    const auto w2 = filled<shaped::tensor<float, run_batch, num_heads, run_tokens, run_keys>>(0.3f, 2u, 4u, 4u);
    const auto v2 = filled<shaped::tensor<float, run_batch, num_heads, run_keys, head_dim>>(1.1f, 2u, 3u);
    CHECK_THROWS_WITH_AS((shaped::einsum<ctx, shaped::let<"keys", run_keys>>(w2, v2)),
                         doctest::Contains("shaped::einsum<Pattern>(a, b)"), shaped::shape_error);
}

namespace {

// The contraction by its definition, in double: out[o...] = sum over the summed names of a[...] * b[...],
// with `index_a(o, s)` and `index_b(o, s)` giving the operands' elements for result index o and summed index s.
template <class Out, class Fa, class Fb>
void check_contraction(const Out& out, std::size_t summed, Fa at_a, Fb at_b) {
    for (std::size_t o = 0; o < out.numel(); ++o) {
        double s = 0, size = 0;
        for (std::size_t k = 0; k < summed; ++k) {
            s += double(at_a(o, k)) * double(at_b(o, k));
            size += std::abs(double(at_a(o, k)) * double(at_b(o, k)));
        }
        // float products summed in another order than the definition's: within float's rounding of the terms.
        CHECK(std::abs(double(out.contiguous().data()[o]) - s) <= 1e-6 * size + 1e-30);
    }
}

}  // namespace

TEST_CASE("einsum: several summed names, several rows or columns, as one BLAS product per batch") {
    const auto g = filled<shaped::tensor<float, keys_axis, num_tokens, d_out>>(0.5f);
    const auto y = filled<shaped::tensor<float, batch, num_tokens, d_out>>(1.3f);
    // Two summed names (the tokens and the widths), one row and one column name.
    const auto gram = shaped::einsum<"keys num_tokens d_out, batch num_tokens d_out -> keys batch", keys_let>(g, y);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(gram)>, shaped::tensor<float, keys_axis, batch>>);
    check_contraction(gram, 30, [&](std::size_t o, std::size_t s) { return g(o / 2, s / 6, s % 6); },
                      [&](std::size_t o, std::size_t s) { return y(o % 2, s / 6, s % 6); });
    // The same, the result transposed (its axes put in the right side's order after the product).
    const auto gram_t = shaped::einsum<"keys num_tokens d_out, batch num_tokens d_out -> batch keys", keys_let>(g, y);
    static_assert(std::remove_cvref_t<decltype(gram_t)>::is_contiguous);
    for (std::size_t j = 0; j < 5; ++j)
        for (std::size_t i = 0; i < 2; ++i) CHECK(gram_t(i, j) == gram(j, i));
    // A matrix-vector product per batch: a row name, no column name.
    const auto v = filled<shaped::tensor<float, batch, d_out>>(0.7f);
    const auto mv = shaped::einsum<"batch num_tokens d_out, batch d_out -> num_tokens batch">(y, v);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(mv)>, shaped::tensor<float, num_tokens, batch>>);
    check_contraction(mv, 6, [&](std::size_t o, std::size_t s) { return y(o % 2, o / 2, s); },
                      [&](std::size_t o, std::size_t s) { return v(o % 2, s); });
    // Two rows and two columns, the heads a batch name, summed over head_dim, a strided operand.
    const auto q = filled<shaped::tensor<float, batch, num_heads, num_tokens, head_dim>>(0.2f);
    const auto kt = filled<shaped::tensor<float, num_heads, head_dim, keys_axis, context_length>>(0.9f)
                        .transpose<2, 3>();  // (num_heads, head_dim, context_length, keys), strided
    const auto r = shaped::einsum<"batch num_heads num_tokens head_dim, num_heads head_dim context_length keys -> "
                                  "num_heads keys batch context_length num_tokens",
                                  keys_let>(q, kt);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(r)>,
                                 shaped::tensor<float, num_heads, keys_axis, batch, context_length, num_tokens>>);
    // r's index o: (h, j, b, c, t), row-major over (3, 5, 2, 8, 5).
    const auto idx = [](std::size_t o) {
        return std::array<std::size_t, 5>{o / 400, o / 80 % 5, o / 40 % 2, o / 5 % 8, o % 5};
    };
    check_contraction(r, 2, [&](std::size_t o, std::size_t s) { const auto i = idx(o); return q(i[2], i[0], i[4], s); },
                      [&](std::size_t o, std::size_t s) { const auto i = idx(o); return kt(i[0], s, i[3], i[1]); });
    // Run-time extents, double.
    for (std::size_t b : {1u, 3u})
        for (std::size_t t : {1u, 4u}) {
            const auto x = filled<shaped::tensor<float, run_batch, run_tokens, d_out>>(0.1f, b, t).to<double>();
            const auto w = filled<shaped::tensor<float, num_heads, run_tokens, d_out>>(0.3f, t).to<double>();
            const auto c = shaped::einsum<"batch num_tokens d_out, num_heads num_tokens d_out -> num_heads batch">(x, w);
            REQUIRE(c.shape.sizes() == std::array<std::size_t, 2>{3, b});
            for (std::size_t h = 0; h < 3; ++h)
                for (std::size_t i = 0; i < b; ++i) {
                    double s = 0;
                    for (std::size_t u = 0; u < t; ++u)
                        for (std::size_t d = 0; d < 6; ++d) s += x(i, u, d) * w(h, u, d);
                    CHECK(c(h, i) == doctest::Approx(s).epsilon(1e-12));
                }
        }
}
