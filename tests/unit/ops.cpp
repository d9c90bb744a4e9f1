// Every op against PyTorch 1.13's results (tests/golden/make_goldens.py): data movement exactly,
// arithmetic within a stated tolerance.
#include <boost/hana/at.hpp>
#include <boost/hana/length.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "check.hpp"
#include "golden/ops_goldens.hpp"

namespace hana = boost::hana;

namespace {
struct two : shaped::axis<"two", 2> {};
struct three : shaped::axis<"three", 3> {};
struct four : shaped::axis<"four", 4> {};
struct five : shaped::axis<"five", 5> {};
struct six : shaped::axis<"six", 6> {};
struct part : shaped::quotient<"part", six, three> {};  // six = three parts of two

// Float32 products and sums: PyTorch and OpenBLAS may order them differently.
constexpr double arithmetic_tolerance = 1e-6;
}  // namespace

TEST_CASE("view and transpose move elements as PyTorch does") {
    shaped::torch::manual_seed(3);
    auto x = shaped::torch::rand<two, three, six>();
    auto y = x.view<two, three, three, part>().transpose<1, 2>();
    static_assert(std::is_same_v<decltype(y), shaped::strided_tensor<float, two, three, three, part>>);
    test::check_exact(y, golden::view_transpose_3);
    // contiguous() keeps the elements and makes view legal again; viewing back restores x.
    auto back = y.transpose<1, 2>().contiguous().view<two, three, six>();
    CHECK(shaped::max_abs_diff(back, x) == 0.0);
    // Negative dimensions and axis names pick the same dimensions.
    auto by_negative = x.view<two, three, three, part>().transpose<-3, -2>();
    CHECK(shaped::max_abs_diff(by_negative, y) == 0.0);
    auto by_name = x.transpose<two, six>();
    static_assert(std::is_same_v<decltype(by_name), shaped::strided_tensor<float, six, three, two>>);
    CHECK(shaped::max_abs_diff(by_name, x.transpose<0, 2>()) == 0.0);
    CHECK(by_name(5, 1, 0) == x(0, 1, 5));
    // permute and T agree with transpose where they should.
    CHECK(shaped::max_abs_diff(x.permute<2, 1, 0>(), x.T()) == 0.0);
    CHECK(shaped::max_abs_diff(x.permute<0, 2, 1>(), x.transpose<1, 2>()) == 0.0);
}

TEST_CASE("split into quotient chunks and cat back, as PyTorch's split and cat") {
    shaped::torch::manual_seed(3);
    auto x = shaped::torch::rand<two, three, six>();
    auto parts = x.split<part, -1>();
    static_assert(decltype(hana::length(parts))::value == 3);
    test::check_exact(hana::at_c<1>(parts), golden::split_3_part1);

    auto reversed = shaped::cat<-1>(hana::make_tuple(hana::at_c<2>(parts), hana::at_c<0>(parts), hana::at_c<1>(parts)));
    test::check_exact(reversed, golden::cat_3_reversed);

    // Three parts of `part` are `six` again; any other join is an axis of its own.
    auto whole = shaped::cat<-1>(parts);
    static_assert(std::is_same_v<decltype(whole), shaped::tensor<float, two, three, six>>);
    CHECK(shaped::max_abs_diff(whole, x) == 0.0);
    auto twice = shaped::cat<1>(std::array{x, x});
    static_assert(std::is_same_v<decltype(twice), shaped::tensor<float, two, shaped::concat<three, three>, six>>);
    CHECK(twice(1, 4, 5) == x(1, 1, 5));
}

TEST_CASE("matmul, batched and with a broadcast batch axis") {
    shaped::torch::manual_seed(11);
    auto a = shaped::torch::rand<two, three, four, five>();
    auto b = shaped::torch::rand<two, three, five, four>();
    auto c = shaped::torch::rand<three, five, two>();
    auto ab = shaped::matmul(a, b);
    static_assert(std::is_same_v<decltype(ab), shaped::tensor<float, two, three, four, four>>);
    CHECK(test::max_abs_diff(ab, golden::matmul_11) <= arithmetic_tolerance);
    auto ac = shaped::matmul(a, c);
    static_assert(std::is_same_v<decltype(ac), shaped::tensor<float, two, three, four, two>>);
    CHECK(test::max_abs_diff(ac, golden::matmul_11_broadcast) <= arithmetic_tolerance);
}

TEST_CASE("softmax over the last and a middle dimension") {
    shaped::torch::manual_seed(5);
    auto x = shaped::torch::rand<two, three, four>() * 4.0f - 2.0f;
    CHECK(test::max_abs_diff(shaped::softmax<-1>(x), golden::softmax_5_last) <= arithmetic_tolerance);
    CHECK(test::max_abs_diff(shaped::softmax<1>(x), golden::softmax_5_mid) <= arithmetic_tolerance);
    CHECK(shaped::max_abs_diff(x.softmax<three>(), shaped::softmax<1>(x)) == 0.0);
}

TEST_CASE("causal mask: triu, slice to num_tokens, masked_fill with -inf, softmax") {
    struct context_length : shaped::axis<"context_length", 6> {};
    struct num_tokens : shaped::axis<"num_tokens", 4, shaped::at_most<context_length>> {};
    auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>());
    test::check_exact(mask, golden::triu_6_1);

    shaped::torch::manual_seed(9);
    auto scores = shaped::torch::rand<two, two, num_tokens, num_tokens>();
    auto masked =
        scores.masked_fill(mask.slice<num_tokens, num_tokens>().to<bool>(), -std::numeric_limits<float>::infinity());
    CHECK(std::isinf(masked(1, 1, 0, 3)));
    CHECK(masked(1, 1, 3, 0) == scores(1, 1, 3, 0));
    CHECK(test::max_abs_diff(shaped::softmax<-1>(masked), golden::causal_9_weights) <= arithmetic_tolerance);
}

TEST_CASE("nn::linear forward: x W^T + b on the last axis") {
    shaped::torch::manual_seed(7);
    shaped::nn::linear<six, four> lin;
    auto x = shaped::torch::rand<two, three, six>();
    auto y = lin(x);
    static_assert(std::is_same_v<decltype(y), shaped::tensor<float, two, three, four>>);
    CHECK(test::max_abs_diff(y, golden::linear_forward_7) <= arithmetic_tolerance);
}

TEST_CASE("elementwise arithmetic broadcasts missing leading axes") {
    shaped::torch::manual_seed(1);
    auto x = shaped::torch::rand<two, three>();
    auto row = shaped::torch::rand<three>();
    auto y = x + row;
    static_assert(std::is_same_v<decltype(y), shaped::tensor<float, two, three>>);
    CHECK(y(1, 2) == x(1, 2) + row(2));
    CHECK((row - x)(0, 1) == row(1) - x(0, 1));
    CHECK((x * x)(1, 0) == x(1, 0) * x(1, 0));
    CHECK((x / 2.0f)(1, 1) == x(1, 1) / 2.0f);
    CHECK((1.0f - x)(0, 0) == 1.0f - x(0, 0));
    CHECK((-x)(0, 2) == -x(0, 2));
}

TEST_CASE("data from outside is checked once, with both shapes in the message") {
    using t = shaped::tensor<float, two, three>;
    SUBCASE("a buffer of the wrong length") {
        std::vector<float> buffer(5, 1.0f);
        CHECK_THROWS_WITH_AS(t::from_buffer(buffer),
                             "shaped::tensor::from_buffer: expected 6 elements for (two=2, three=3), got 5 elements",
                             shaped::shape_error);
        buffer.resize(6);
        CHECK(t::from_buffer(buffer)(1, 2) == 0.0f);
    }
    SUBCASE("a ragged nested list") {
        CHECK_THROWS_AS((t{{1, 2, 3}, {4, 5}}), shaped::shape_error);
        CHECK_THROWS_AS((t{{1, 2, 3}, {4, 5, 6, 7}}), shaped::shape_error);
        CHECK_THROWS_AS((t{{1, 2, 3}}), shaped::shape_error);
        try {
            t bad{{1, 2, 3}, {4, 5, 6, 7}};
            FAIL("no exception");
        } catch (const shaped::shape_error& e) {
            CHECK(e.expected() == "(two=2, three=3)");
            CHECK(std::string(e.what()).find("a list of 4 at depth 1") != std::string::npos);
        }
        t good{{1, 2, 3}, {4, 5, 6}};
        CHECK(good(1, 0) == 4.0f);
    }
    SUBCASE("an xtensor of another shape") {
        xt::xtensor<float, 2> wrong(std::array<std::size_t, 2>{3, 2});
        CHECK_THROWS_WITH_AS(t{wrong}, "shaped::tensor(xt::xtensor): expected (two=2, three=3), got (3, 2)",
                             shaped::shape_error);
    }
    SUBCASE("at() checks bounds") {
        t x;
        CHECK_THROWS_AS(x.at(2, 0), std::out_of_range);
        CHECK(x.at(1, 2) == 0.0f);
    }
}

TEST_CASE("stack adds an axis, as torch.stack((inputs, inputs), dim=0)") {
    struct batch : shaped::axis<"batch", 2> {};
    shaped::torch::manual_seed(2);
    auto x = shaped::torch::rand<three, six>();
    auto y = shaped::torch::rand<three, six>();
    auto front = shaped::stack<0, batch>(std::array{x, y});
    static_assert(std::is_same_v<decltype(front), shaped::tensor<float, batch, three, six>>);
    CHECK(front(0, 2, 5) == x(2, 5));
    CHECK(front(1, 2, 5) == y(2, 5));
    auto middle = shaped::stack<1, batch>(std::array{x, y});
    static_assert(std::is_same_v<decltype(middle), shaped::tensor<float, three, batch, six>>);
    CHECK(middle(2, 1, 4) == y(2, 4));
    auto last = shaped::stack<-1, batch>(std::array{x, y});
    static_assert(std::is_same_v<decltype(last), shaped::tensor<float, three, six, batch>>);
    CHECK(last(1, 3, 0) == x(1, 3));
    CHECK(last(1, 3, 1) == y(1, 3));
}

TEST_CASE("view adds and drops axes of extent 1; cat of one tensor is that tensor") {
    struct one : shaped::axis<"one", 1> {};
    shaped::torch::manual_seed(4);
    auto x = shaped::torch::rand<three, six>();
    auto batched = x.view<one, three, six>();
    CHECK(batched(0, 2, 1) == x(2, 1));
    CHECK(shaped::max_abs_diff(batched.view<three, six>(), x) == 0.0);
    auto same = shaped::cat<-1>(std::array{x});
    static_assert(std::is_same_v<decltype(same), shaped::tensor<float, three, six>>);
}

TEST_CASE("max_abs_diff is NaN when a difference is, as PyTorch's (a - b).abs().max()") {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    shaped::tensor<float, two, three> a{{0.f, 1.f, 2.f}, {3.f, 4.f, 5.f}};
    auto b = a;
    b(1, 2) = 5.5f;
    CHECK(shaped::max_abs_diff(a, b) == 0.5);
    b(0, 0) = nan;  // before the largest difference, and after it in the other order
    CHECK(std::isnan(shaped::max_abs_diff(a, b)));
    CHECK(std::isnan(shaped::max_abs_diff(b, a)));
    a(0, 0) = b(0, 0) = inf;  // inf - inf
    CHECK(std::isnan(shaped::max_abs_diff(a, b)));
    b(0, 0) = -inf;
    CHECK(std::isinf(shaped::max_abs_diff(a, b)));
}

TEST_CASE("tensors of different element types: comparisons convert, arithmetic asks for .to<>()") {
    shaped::torch::manual_seed(6);
    auto x = shaped::torch::rand<two, three>();
    auto xd = x.to<double>();
    static_assert(std::is_same_v<decltype(xd), shaped::tensor<double, two, three>>);
    CHECK(shaped::max_abs_diff(x, xd) == 0.0);
    CHECK(shaped::allclose(xd, x));
    auto sum = xd + x.to<double>();
    CHECK(sum(1, 2) == 2.0 * static_cast<double>(x(1, 2)));
}

TEST_CASE("repeat_interleave and repeat tile as PyTorch does, and name the order") {
    shaped::torch::manual_seed(13);
    auto x = shaped::torch::rand<two, three, four>();
    auto interleaved = x.repeat_interleave<two, 0>();
    static_assert(std::is_same_v<decltype(interleaved), shaped::tensor<float, shaped::merged<two, two>, three, four>>);
    test::check_exact(interleaved, golden::repeat_interleave_13);
    test::check_exact(x.repeat<two, 0>(), golden::repeat_13);
    auto mid = x.repeat_interleave<three, 1>();
    static_assert(std::is_same_v<decltype(mid), shaped::tensor<float, two, shaped::merged<three, three>, four>>);
    test::check_exact(mid, golden::repeat_interleave_13_mid);
}

TEST_CASE("a padding mask on the key axis broadcasts over the queries through unsqueeze") {
    struct num_tokens : shaped::axis<"num_tokens", 4> {};
    using num_keys = shaped::key<num_tokens>;
    shaped::tensor<bool, two, num_keys> pad{{false, false, true, true}, {false, true, true, true}};
    shaped::torch::manual_seed(13);
    (void)shaped::torch::rand<two, three, four>();  // the golden script drew x first
    auto scores = shaped::torch::rand<two, num_tokens, num_keys>();
    auto per_query = pad.unsqueeze<1>();
    static_assert(std::is_same_v<decltype(per_query), shaped::tensor<bool, two, shaped::one, num_keys>>);
    auto weights = shaped::softmax<-1>(scores.masked_fill(per_query, -std::numeric_limits<float>::infinity()));
    CHECK(test::max_abs_diff(weights, golden::padding_13) <= arithmetic_tolerance);
    CHECK(weights(1, 3, 1) == 0.0f);
}

TEST_CASE("transpose and permute keep the buffer and reorder the strides, as PyTorch's stride() shows") {
    shaped::torch::manual_seed(3);
    auto x = shaped::torch::rand<two, three, six>();
    CHECK(x.stride() == std::array<std::size_t, 3>{18, 6, 1});
    // PyTorch 1.13: x.view(2, 3, 3, 2).transpose(1, 2).stride() is (18, 2, 6, 1), x.permute(2, 0, 1).stride()
    // is (1, 18, 6), and a second transpose(2, 3) gives (18, 2, 1, 6).
    auto y = x.view<two, three, three, part>().transpose<1, 2>();
    CHECK(y.stride() == std::array<std::size_t, 4>{18, 2, 6, 1});
    CHECK(x.permute<2, 0, 1>().stride() == std::array<std::size_t, 3>{1, 18, 6});
    CHECK(y.transpose<2, 3>().stride() == std::array<std::size_t, 4>{18, 2, 1, 6});
    // A temporary's buffer is taken, not copied; a variable keeps its own.
    const float* before = x.storage().data();
    auto moved = std::move(x).permute<2, 0, 1>();
    CHECK(moved.buffer().data() == before);
    CHECK(y(1, 2, 0, 1) == y.contiguous()(1, 2, 0, 1));
    CHECK(y.at(1, 2, 0, 1) == y(1, 2, 0, 1));
    CHECK_THROWS_AS((void)y.at(1, 3, 0, 1), std::out_of_range);
}

TEST_CASE("matmul reads strided operands in place and gives what the contiguous copies give") {
    shaped::torch::manual_seed(17);
    auto a = shaped::torch::rand<two, four, three, five>();  // read as (two, three, four, five) and so on
    auto b = shaped::torch::rand<five, two, three, four>();
    auto at = a.transpose<1, 2>();        // last stride 1: BLAS reads it as it is, lda = 5
    auto bt = b.permute<1, 2, 0, 3>();    // (two, three, five, four), last stride 1, rows 24 apart
    auto bs = b.permute<1, 2, 3, 0>();    // (two, three, four, five), column stride 24: BLAS transposes it
    auto c = shaped::torch::rand<four, two, five, three>().permute<1, 3, 0, 2>();  // no unit stride: gathered
    static_assert(std::is_same_v<decltype(c), shaped::strided_tensor<float, two, three, four, five>>);
    const auto reference = shaped::matmul(at.contiguous(), bt.contiguous());
    CHECK(shaped::max_abs_diff(shaped::matmul(at, bt), reference) == 0.0);
    CHECK(shaped::max_abs_diff(shaped::matmul(at.contiguous(), bt), reference) == 0.0);
    const auto products = shaped::matmul(bs, at.transpose<2, 3>());  // both operands transposed views
    CHECK(shaped::max_abs_diff(products, shaped::matmul(bs.contiguous(), at.transpose<2, 3>().contiguous())) == 0.0);
    CHECK(shaped::max_abs_diff(shaped::matmul(c, bt), shaped::matmul(c.contiguous(), bt.contiguous())) == 0.0);
    // A broadcast batch axis over a strided operand. oneDNN's sgemm reads a transposed right-hand side with
    // other kernels than a plain one, which add the three products in another order: the same values to
    // float rounding (sums of three products of [0, 1) numbers: a few units in the last place of 3).
    auto w = shaped::torch::rand<five, three>().T();  // (three, five), strides (1, 3)
    auto x = shaped::torch::rand<two, three, four, three>();
    CHECK(shaped::max_abs_diff(shaped::matmul(x, w), shaped::matmul(x, w.contiguous())) <= 4 * 3 * 0x1p-23);
}

TEST_CASE("the modules' causal step equals masked_fill, division and softmax, bit for bit") {
    struct context_length : shaped::axis<"context_length", 7> {};
    struct num_tokens : shaped::axis<"num_tokens", 5, shaped::at_most<context_length>> {};
    using keys = shaped::key<num_tokens>;
    const float minus_inf = -std::numeric_limits<float>::infinity();
    shaped::nn::dropout eval_dropout(0.0);
    eval_dropout.eval();
    // Bitwise equal, or NaN on both sides.
    auto same = [](const auto& p, const auto& q) {
        const auto &ep = p.storage(), &eq = q.storage();
        for (std::size_t i = 0; i < ep.size(); ++i)
            if (!(std::memcmp(&ep.data()[i], &eq.data()[i], sizeof(float)) == 0 ||
                  (std::isnan(ep.data()[i]) && std::isnan(eq.data()[i]))))
                return false;
        return true;
    };
    shaped::torch::manual_seed(21);
    auto causal = shaped::triu<1>(shaped::ones<context_length, context_length>());
    auto holes = shaped::torch::rand<context_length, context_length>();  // masked where >= 0.6: gaps in rows
    for (std::size_t i = 0; i < 7; ++i)
        for (std::size_t j = 0; j < 7; ++j) holes(i, j) = holes(i, j) >= 0.6f ? 1.0f : 0.0f;
    for (std::size_t j = 0; j < 7; ++j) holes(2, j) = 1.0f;  // a row with every key masked
    for (const auto& mask : {causal, holes}) {
        auto scores = shaped::torch::rand<two, three, num_tokens, keys>() * 8.0f - 4.0f;
        scores(1, 2, 3, 1) = std::numeric_limits<float>::quiet_NaN();
        scores(0, 1, 4, 0) = minus_inf;
        const auto reference = shaped::softmax<-1>(
            scores.masked_fill(mask.slice<num_tokens, keys>().to<bool>(), minus_inf) / std::sqrt(6.0f));
        const auto fused = shaped::nn::detail::causal_weights<num_tokens>(scores, mask, eval_dropout, 6);
        CHECK(same(fused, reference));
    }
}

TEST_CASE("a strided tensor's buffer, strides and element type: temporaries and writes") {
    struct rows : shaped::axis<"rows", 3> {};
    struct cols : shaped::axis<"cols", 4> {};
    shaped::torch::manual_seed(123);
    auto x = shaped::torch::rand<rows, cols>();
    // A temporary's buffer and strides come back by value, so a loop over them reads live elements.
    float sum = 0, expected = 0;
    for (float v : x.T().buffer()) sum += v;
    for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 4; ++j) expected += x(i, j);
    CHECK(sum == doctest::Approx(expected));
    std::size_t strides = 0;
    for (std::size_t s : x.T().stride()) strides = strides * 10 + s;
    CHECK(strides == 14);  // PyTorch: torch.rand(3, 4).T.stride() == (1, 4)
    // to<>() keeps the layout and strides, as x.T().double() does in PyTorch.
    auto d = x.T().to<double>();
    static_assert(std::is_same_v<decltype(d), shaped::strided_tensor<double, cols, rows>>);
    CHECK(d.stride() == std::array<std::size_t, 2>{1, 4});
    CHECK(d(3, 2) == static_cast<double>(x(2, 3)));
    // uniform_ fills a transposed tensor through its buffer, in memory order, as PyTorch does.
    auto t = shaped::tensor<float, rows, cols>{}.T();
    shaped::torch::manual_seed(7);
    shaped::torch::uniform_(t, 0.0, 1.0);
    shaped::torch::manual_seed(7);
    const auto same_draws = shaped::torch::rand<rows, cols>();
    CHECK(shaped::max_abs_diff(t, same_draws.T()) == 0.0);
}
