// The book's chapter 4 against PyTorch 1.13 (tests/golden/chapter4_goldens.hpp, made by make_goldens.py
// from tests/golden/book/chapter4.py). Every input is drawn with the seed the script uses.
// Reductions, layer norm and the integer results are compared bit for bit; xsimd's exp, log, tanh and pow to
// 4 units in the last place; what goes through matrix products (the feed-forward network, the block, the
// model's logits) to test::tolerance, 1e-5, since each BLAS kernel rounds products its own way.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "check.hpp"
#include "golden/chapter4_goldens.hpp"
#include "golden/random_goldens.hpp"
#include "module_goldens.hpp"

namespace {

using test::thrown;

namespace torch = shaped::torch;
namespace nn = shaped::nn;
using test::max_ulp;
using test::tolerance;

template <class X, std::size_t N>
void check_ids(const X& x, const std::array<std::int64_t, N>& golden) {
    REQUIRE(x.numel() == N);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < N; ++i) mismatches += x.data()[i] != golden[i];
    CHECK_MESSAGE(mismatches == 0, mismatches, " of ", N, " ids differ from PyTorch's");
}


struct batch : shaped::axis<"batch", 3> {};
struct num_tokens : shaped::axis<"num_tokens", 5> {};
struct emb_dim : shaped::axis<"emb_dim", 40> {};

// The tiny configuration of make_goldens.py: every shape of GPT-2's, in miniature.
// [tiny_config]
struct tiny {
    struct vocab_size : shaped::axis<"vocab_size", 97> {};
    struct context_length : shaped::axis<"context_length", 16> {};
    struct emb_dim : shaped::axis<"emb_dim", 64> {};
    struct n_heads : shaped::axis<"n_heads", 4> {};
    struct batch : shaped::dynamic_axis<"batch"> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
    static constexpr std::size_t n_layers = 2;
    static constexpr double drop_rate = 0.1;
    static constexpr bool qkv_bias = false;
};
// [tiny_config]
struct tiny_with_bias : tiny {
    static constexpr bool qkv_bias = true;
};
static_assert(nn::GptConfig<tiny> && nn::GptConfig<nn::gpt2_124m>);

// The same model on static axes: 2 sequences of 5 tokens.
struct two : shaped::axis<"batch", 2> {};
struct five_tokens : shaped::axis<"num_tokens", 5, shaped::at_most<tiny::context_length>> {};

using ids_t = shaped::tensor<std::int64_t, tiny::batch, tiny::num_tokens>;
ids_t golden_ids() { return ids_t{{5, 17, 96, 0, 42}, {3, 3, 64, 12, 7}}; }

// A sequence that may grow past the model's context: generation crops it.
struct max_seq : shaped::axis<"max_seq", 64> {};
struct seq : shaped::dynamic_axis<"seq", shaped::at_most<max_seq>> {};

}  // namespace

TEST_CASE("sum, mean, var, max and argmax equal PyTorch's bit for bit") {
    torch::manual_seed(21);
    const auto x = torch::randn<batch, num_tokens, emb_dim>();
    test::check_exact(x.sum<emb_dim>(), golden::reduce_21_sum_last);
    test::check_exact(x.sum<1>(), golden::reduce_21_sum_mid);
    test::check_exact(x.sum<batch>(), golden::reduce_21_sum_first);
    const auto mean = x.mean<-1>(shaped::keepdim);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(mean)>,
                                 shaped::tensor<float, batch, num_tokens, shaped::reduced<emb_dim>>>);
    test::check_exact(mean, golden::reduce_21_mean_last);
    test::check_exact(x.mean<num_tokens>(), golden::reduce_21_mean_mid);
    test::check_exact(x.var<emb_dim>(), golden::reduce_21_var_last);
    test::check_exact(x.var<emb_dim>(false), golden::reduce_21_var_last_biased);
    test::check_exact(x.var<num_tokens>(shaped::keepdim), golden::reduce_21_var_mid);
    test::check_exact(x.max<num_tokens>(), golden::reduce_21_max_mid);
    const auto am = x.argmax<emb_dim>();
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(am)>, shaped::tensor<std::int64_t, batch, num_tokens>>);
    check_ids(am, golden::reduce_21_argmax_last);
    check_ids(x.argmax<0>(shaped::keepdim), golden::reduce_21_argmax_first);
}

TEST_CASE("sums on either side of PyTorch's vector width and chunk sizes, along the last axis and another") {
    torch::manual_seed(22);
    const auto check = [](auto t, auto e, const auto& mid, const auto& last) {
        struct rows : shaped::axis<"rows", decltype(t)::value> {};
        struct cols : shaped::axis<"cols", decltype(e)::value> {};
        struct two_ : shaped::axis<"two", 2> {};
        const auto y = torch::randn<two_, rows, cols>();
        INFO("y = randn(2, ", decltype(t)::value, ", ", decltype(e)::value, ")");
        test::check_exact(y.template sum<rows>(), mid);
        test::check_exact(y.template sum<cols>(), last);
    };
    using std::integral_constant;
    check(integral_constant<std::size_t, 7>{}, integral_constant<std::size_t, 9>{}, golden::reduce_22_sum_7_9_mid,
          golden::reduce_22_sum_7_9_last);
    check(integral_constant<std::size_t, 37>{}, integral_constant<std::size_t, 3>{}, golden::reduce_22_sum_37_3_mid,
          golden::reduce_22_sum_37_3_last);
    check(integral_constant<std::size_t, 70>{}, integral_constant<std::size_t, 33>{}, golden::reduce_22_sum_70_33_mid,
          golden::reduce_22_sum_70_33_last);
    check(integral_constant<std::size_t, 5>{}, integral_constant<std::size_t, 1>{}, golden::reduce_22_sum_5_1_mid,
          golden::reduce_22_sum_5_1_last);
    check(integral_constant<std::size_t, 129>{}, integral_constant<std::size_t, 8>{}, golden::reduce_22_sum_129_8_mid,
          golden::reduce_22_sum_129_8_last);
    struct n : shaped::axis<"n", 3000> {};
    test::check_exact(torch::randn<n>().sum<n>(shaped::keepdim), golden::reduce_22_sum_3000);
}

TEST_CASE("reductions on run-time axes equal them on static axes, and keep the run-time extents") {
    struct tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<num_tokens>> {};
    torch::manual_seed(21);
    const auto x = torch::randn<batch, tokens, emb_dim>(5);
    test::check_exact(x.sum<emb_dim>(), golden::reduce_21_sum_last);
    test::check_exact(x.mean<tokens>(), golden::reduce_21_mean_mid);
    const auto m = x.mean<emb_dim>(shaped::keepdim);
    CHECK(m.shape[1] == 5);
    CHECK(m.shape[2] == 1);
    const auto shorter = torch::randn<batch, tokens, emb_dim>(2);
    CHECK(shorter.var<emb_dim>().shape[1] == 2);
}

TEST_CASE("max and argmax: NaN wins, the first of equal maxima, integers") {
    struct n : shaped::axis<"n", 4> {};
    struct r : shaped::axis<"r", 2> {};
    const shaped::tensor<float, r, n> x{{1.f, 3.f, 3.f, 2.f}, {1.f, NAN, 5.f, 2.f}};
    const auto am = x.argmax<n>();
    CHECK(am.at(0) == 1);
    CHECK(am.at(1) == 1);
    CHECK(std::isnan(x.max<n>().at(1)));
    const shaped::tensor<std::int64_t, r, n> ids{{4, 9, 9, 1}, {-3, -7, -2, -2}};
    CHECK(ids.argmax<n>().at(0) == 1);
    CHECK(ids.argmax<n>().at(1) == 2);
    CHECK(ids.max<n>().at(1) == -2);
    const shaped::tensor<float, r, n> one_each{{1.f, 2.f, 3.f, 4.f}, {0.f, 0.f, 0.f, 0.f}};
    CHECK(std::isnan(one_each.var<r>(shaped::keepdim).select<0>(0).at(0)) == false);
    struct single : shaped::axis<"single", 1> {};
    const shaped::tensor<float, single, n> lone{{1.f, 2.f, 3.f, 4.f}};
    CHECK(std::isnan(lone.var<single>().at(0)));          // one element, unbiased: NaN, as in PyTorch
    CHECK(lone.var<single>(false).at(0) == 0.f);          // biased: 0
}

TEST_CASE("elementwise math equals PyTorch's to 4 units in the last place, the exact ones exactly") {
    struct n : shaped::axis<"n", 37> {};
    torch::manual_seed(23);
    const auto x = torch::randn<n>() * 3.f;
    const auto pos = torch::rand<n>() * 4.f + 0.01f;
    CHECK(max_ulp(shaped::exp(x), golden::math_23_exp) <= 4);
    CHECK(max_ulp(shaped::tanh(x), golden::math_23_tanh) <= 4);
    CHECK(max_ulp(shaped::log(pos), golden::math_23_log) <= 4);
    CHECK(max_ulp(shaped::pow(pos, 2.5f), golden::math_23_pow_2_5) <= 4);
    CHECK(max_ulp(shaped::gelu(x), golden::math_23_gelu) <= 4);
    test::check_exact(shaped::abs(x), golden::math_23_abs);
    test::check_exact(shaped::relu(x), golden::math_23_relu);
    test::check_exact(shaped::pow(x, 3.f), golden::math_23_pow3);
    test::check_exact(shaped::pow(x, 2.f), golden::math_23_pow2);
    test::check_exact(shaped::sqrt(pos), golden::math_23_sqrt);
    test::check_exact(shaped::rsqrt(pos), golden::math_23_rsqrt);
}

TEST_CASE("gelu is the book's formula; relu keeps NaN") {
    struct n : shaped::axis<"n", 1001> {};
    const auto x = torch::arange<n>().to<float>() * 0.02f - 10.f;
    const auto y = shaped::gelu(x);
    double worst = 0;
    for (std::size_t i = 0; i < n::extent; ++i) {
        const double v = x.data()[i];
        const double f = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
        worst = std::max(worst, std::abs(f - y.data()[i]));
    }
    CHECK(worst < 1e-6);
    struct m : shaped::axis<"m", 3> {};
    const shaped::tensor<float, m> z{NAN, -1.f, 2.f};
    const auto r = shaped::relu(z);
    CHECK(std::isnan(r.at(0)));
    CHECK(r.at(1) == 0.f);
    CHECK(r.at(2) == 2.f);
}

TEST_CASE("layer_norm equals the book's LayerNorm bit for bit; its rows have mean 0 and variance 1") {
    struct tokens : shaped::axis<"num_tokens", 3> {};
    struct two_ : shaped::axis<"batch", 2> {};
    torch::manual_seed(31);
    nn::layer_norm<tiny::emb_dim> ln;
    ln.scale = torch::randn<tiny::emb_dim>();
    ln.shift = torch::randn<tiny::emb_dim>();
    const auto x = torch::rand<two_, tokens, tiny::emb_dim>() * 4.f - 2.f;
    test::check_exact(ln(x), golden::layer_norm_31);

    for (std::uint64_t seed : {1, 2, 3, 4}) {
        struct many : shaped::dynamic_axis<"num_tokens"> {};
        torch::manual_seed(seed);
        const auto y = nn::layer_norm<tiny::emb_dim>{}(torch::randn<many, tiny::emb_dim>(seed * 7) * 5.f + 3.f);
        const auto mean = y.mean<tiny::emb_dim>(), var = y.var<tiny::emb_dim>(false);
        for (std::size_t r = 0; r < y.shape[0]; ++r) {
            CHECK(std::abs(mean.at(r)) < 1e-6);
            CHECK(std::abs(var.at(r) - 1) < 1e-4);  // var / (var + eps)
        }
    }
}

TEST_CASE("layer_norm's kernel gives the bits of the book's tensor expression, on any widths, strided, at any thread count") {
    struct tokens : shaped::axis<"num_tokens", 300> {};
    const auto by_steps = [](const auto& ln, const auto& x) {
        auto mean = x.template mean<-1>(shaped::keepdim);
        auto var = x.template var<-1>(shaped::keepdim, false);
        return ln.scale * ((x - mean) / shaped::sqrt(std::move(var) + ln.eps)) + ln.shift;
    };
    const auto same_bits = [](const auto& a, const auto& b) {
        return a.numel() == b.numel() && std::memcmp(a.storage().data(), b.storage().data(), a.numel() * sizeof(float)) == 0;
    };
    const auto check = [&]<class Emb>(Emb) {
        torch::manual_seed(53);
        nn::layer_norm<Emb> ln;
        ln.scale = torch::randn<Emb>() * 3.f;
        ln.shift = torch::randn<Emb>();
        const auto x = torch::randn<tokens, Emb>() * 7.f + 1.f;
        const auto want = by_steps(ln, x);
        const int saved = shaped::num_threads();
        for (int threads : {1, 2, 4}) {
            CAPTURE(threads);
            shaped::set_num_threads(threads);
            CHECK(same_bits(ln(x), want));
        }
        shaped::set_num_threads(saved);
        // A strided input takes the tensor expression itself: the same bits again.
        const auto xt = torch::randn<Emb, tokens>();
        CHECK(same_bits(ln(xt.template transpose<0, 1>()), by_steps(ln, xt.template transpose<0, 1>().contiguous())));
    };
    struct e1 : shaped::axis<"emb_dim", 1> {};
    struct e37 : shaped::axis<"emb_dim", 37> {};
    struct e768 : shaped::axis<"emb_dim", 768> {};
    check(e1{});
    check(e37{});
    check(e768{});
}

TEST_CASE("feed_forward equals the book's FeedForward; its hidden axis is four times emb_dim") {
    struct tokens : shaped::axis<"num_tokens", 3> {};
    struct two_ : shaped::axis<"batch", 2> {};
    torch::manual_seed(41);
    nn::feed_forward<tiny::emb_dim> ff;
    static_assert(nn::feed_forward<tiny::emb_dim>::hidden::extent == 256);
    static_assert(std::is_same_v<decltype(std::get<0>(ff.layers)),
                                 nn::linear<tiny::emb_dim, nn::feed_forward<tiny::emb_dim>::hidden>&>);
    const auto x = torch::rand<two_, tokens, tiny::emb_dim>();
    CHECK(test::max_abs_diff(ff(x), golden::feed_forward_41) <= tolerance);
}

TEST_CASE("transformer_block equals the book's TransformerBlock, in eval mode and with dropout drawn") {
    struct tokens : shaped::axis<"num_tokens", 5, shaped::at_most<tiny::context_length>> {};
    torch::manual_seed(51);
    nn::transformer_block<tiny> block;
    const auto x = torch::rand<two, tokens, tiny::emb_dim>();
    block.eval();
    CHECK(test::max_abs_diff(block(x), golden::block_51_eval) <= tolerance);
    block.train();
    torch::manual_seed(52);
    CHECK(test::max_abs_diff(block(x), golden::block_51_train) <= tolerance);
    // On run-time axes, the same numbers.
    block.eval();
    const auto xr = x.rename<tiny::batch, tiny::num_tokens, tiny::emb_dim>();
    CHECK(shaped::max_abs_diff(block(xr).rename<two, tokens, tiny::emb_dim>(), block(x)) == 0.0);
}

TEST_CASE("gpt_model equals the book's GPTModel: logits in training and eval mode, parameter counts") {
    torch::manual_seed(61);
    nn::gpt_model<tiny> model;
    const auto ids = golden_ids();
    torch::manual_seed(62);
    const auto logits = model(ids);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(logits)>,
                                 shaped::tensor<float, tiny::batch, tiny::num_tokens, tiny::vocab_size>>);
    CHECK(test::max_abs_diff(logits, golden::gpt_61_train) <= tolerance);
    model.eval();
    CHECK(test::max_abs_diff(model(ids), golden::gpt_61_eval) <= tolerance);
    CHECK(model.parameter_count() == static_cast<std::size_t>(golden::gpt_parameter_counts[0]));
    torch::manual_seed(63);
    CHECK(nn::gpt_model<tiny_with_bias>{}.parameter_count() == static_cast<std::size_t>(golden::gpt_parameter_counts[1]));

    // Static axes give the same logits bit for bit.
    const auto static_ids = ids.rename<two, five_tokens>();
    CHECK(shaped::max_abs_diff(model(static_ids), model(ids).rename<two, five_tokens, tiny::vocab_size>()) == 0.0);
}

TEST_CASE("generate_text_simple equals the book's greedy generation, with the crop to the context") {
    torch::manual_seed(61);
    nn::gpt_model<tiny> model;
    model.eval();
    const shaped::tensor<std::int64_t, tiny::batch, seq> prompt{{5, 17, 96}};
    const auto out = nn::generate_text_simple(model, prompt, 15, 4);  // 18 ids: more than the context holds
    CHECK(out.shape[1] == 18);
    check_ids(out, golden::gpt_61_generate);

    const shaped::tensor<std::int64_t, tiny::batch, seq> two_prompts{{5, 17}, {3, 3}};
    check_ids(nn::generate_text_simple(model, two_prompts, 3, 16), golden::gpt_61_generate_batch);

    // The sequence's bound is checked where it grows: 64 ids at most.
    struct short_bound : shaped::axis<"short_bound", 4> {};
    struct short_seq : shaped::dynamic_axis<"seq", shaped::at_most<short_bound>> {};
    const shaped::tensor<std::int64_t, tiny::batch, short_seq> p3{{5, 17, 96}};
    CHECK(nn::generate_text_simple(model, p3, 1, 16).shape[1] == 4);
    CHECK(thrown<shaped::shape_error>([&] { (void)nn::generate_text_simple(model, p3, 2, 16); }) ==
          "shaped::cat<Dim>(tensors): expected seq <= 4 (seq is at most short_bound), got seq = 5 (4 + 1)");
    // A context longer than the model's own is refused.
    CHECK(thrown<shaped::shape_error>([&] { (void)nn::generate_text_simple(model, prompt, 1, 17); }) ==
          "shaped::generate_text_simple(model, idx, max_new_tokens, context_size): expected context_size <= 16 (the "
          "bound of the model's num_tokens), got context_size = 17");
}

TEST_CASE("embedding: PyTorch's weights, rows by id, an id outside the vocabulary throws naming it") {
    struct vocab : shaped::axis<"vocab_size", 50> {};
    struct emb : shaped::axis<"emb_dim", 16> {};
    torch::manual_seed(123);
    nn::embedding<vocab, emb> e;
    test::check_exact(e.weight, golden::embedding_123_50_16);
    const shaped::tensor<std::int64_t, tiny::batch, tiny::num_tokens> ids{{3, 0, 49}};
    const auto rows = e(ids);
    CHECK(rows.shape[1] == 3);
    for (std::size_t j = 0; j < emb::extent; ++j) {
        CHECK(rows.at(0, 0, j) == e.weight.at(3, j));
        CHECK(rows.at(0, 2, j) == e.weight.at(49, j));
    }
    const shaped::tensor<std::int64_t, tiny::batch, tiny::num_tokens> bad{{3, 50}};
    CHECK(thrown<std::out_of_range>([&] { (void)e(bad); }) ==
          "shaped::nn::embedding: id 50 is outside the vocabulary of 50 (vocab_size); ids run from 0 to 49");
    const shaped::tensor<std::int64_t, tiny::batch, tiny::num_tokens> negative{{-1}};
    CHECK(thrown<std::out_of_range>([&] { (void)e(negative); }).find("id -1 is outside") != std::string::npos);
}

TEST_CASE("select, last and cat on token ids: the book's indexing, with the errors it names") {
    struct vocab : shaped::axis<"vocab_size", 4> {};
    const shaped::tensor<float, tiny::batch, tiny::num_tokens, vocab> logits{
        {{0.f, 1.f, 2.f, 3.f}, {7.f, 6.f, 5.f, 4.f}, {1.f, 9.f, 1.f, 1.f}}};
    const auto last_row = logits.select<tiny::num_tokens>(-1);  // logits[:, -1, :]
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(last_row)>, shaped::tensor<float, tiny::batch, vocab>>);
    CHECK(last_row.at(0, 1) == 9.f);
    CHECK(logits.select<1>(0).at(0, 3) == 3.f);
    CHECK(thrown<std::out_of_range>([&] { (void)logits.select<tiny::num_tokens>(3); }) ==
          "shaped::select<A>(x, index): index 3 is out of range for axis num_tokens, whose extent is 3 (valid: -3 to 2)");
    CHECK(thrown<std::out_of_range>([&] { (void)logits.select<tiny::num_tokens>(-4); }).find("index -4") !=
          std::string::npos);

    const shaped::tensor<std::int64_t, tiny::batch, seq> idx{{1, 2, 3, 4, 5}};
    const auto crop = shaped::last<seq, tiny::num_tokens>(idx, 2);  // idx[:, -2:]
    CHECK(crop.shape[1] == 2);
    CHECK(crop.at(0, 0) == 4);
    CHECK(shaped::last<seq>(idx, 100).shape[1] == 5);  // fewer than n: all of them
    CHECK(thrown<shaped::shape_error>([&] { (void)shaped::last<seq>(idx, 0); }) ==
          "shaped::last<A>(x, n): expected n >= 1, got n = 0");
    // A negative count, as given or after a conversion to size_t: before, size_t(-1) kept every position.
    CHECK(thrown<shaped::shape_error>([&] { (void)shaped::last<seq>(idx, -1); }) ==
          "shaped::last<A>(x, n): expected n >= 1, got n = -1");
    CHECK(thrown<shaped::shape_error>([&] { (void)shaped::last<seq>(idx, static_cast<std::size_t>(-1)); }) ==
          "shaped::last<A>(x, n): expected n <= 9223372036854775807, got n = 18446744073709551615 (a negative count "
          "converted to an unsigned type?)");

    const auto next = last_row.argmax<vocab>(shaped::keepdim);  // (batch, reduced<vocab_size>)
    const auto longer = shaped::cat<1>(boost::hana::make_tuple(idx, next));
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(longer)>, shaped::tensor<std::int64_t, tiny::batch, seq>>);
    CHECK(longer.shape[1] == 6);
    CHECK(longer.at(0, 5) == 1);
    std::ostringstream printed;
    printed << longer;
    CHECK(printed.str() == "tensor([[1, 2, 3, 4, 5, 1]])");
}

TEST_CASE("two threads run one model in training mode, each with its own generator: each as alone") {
    torch::manual_seed(61);
    nn::gpt_model<tiny> model;  // training mode: every dropout draws
    const auto ids = golden_ids();
    const auto alone = [&](std::uint64_t seed) {
        torch::generator gen(seed);
        return model(ids, gen);
    };
    const auto a_alone = alone(1), b_alone = alone(2);
    shaped::tensor<float, tiny::batch, tiny::num_tokens, tiny::vocab_size> a(a_alone.shape), b(b_alone.shape);
    std::thread ta([&] { a = alone(1); });
    std::thread tb([&] { b = alone(2); });
    ta.join();
    tb.join();
    CHECK(shaped::max_abs_diff(a, a_alone) == 0.0);
    CHECK(shaped::max_abs_diff(b, b_alone) == 0.0);
    CHECK(shaped::max_abs_diff(a, b) > 0.0);  // the two streams drew different dropout masks
}
