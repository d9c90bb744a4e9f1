// Chapter 5's ops and chapter 2's loader against PyTorch 1.13 (tests/golden/make_sampling_goldens.py):
// cross_entropy bit for bit on several shapes (perplexity to an ulp), its ignore_index and its forms, log_softmax, gather, topk,
// comparisons and where, bincount, item; randperm, exponential_ and multinomial from the same stream; the
// data loader's shuffled order and what the default generator gives after it; and what each refuses.
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "check.hpp"
#include "golden/sampling_goldens.hpp"

#include <shaped/shaped.hpp>
#include <shaped/text/data_loader.hpp>
#include <shaped/torch/multinomial.hpp>

namespace {

namespace torch = shaped::torch;
namespace text = shaped::text;
struct rows : shaped::dynamic_axis<"rows"> {};
struct classes : shaped::dynamic_axis<"classes"> {};
struct batch : shaped::dynamic_axis<"batch"> {};
struct context_length : shaped::axis<"context_length", 64> {};
struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
struct vocab : shaped::axis<"vocab", 9> {};
struct two : shaped::axis<"two", 2> {};
struct three : shaped::axis<"three", 3> {};

auto uniform_logits(std::size_t r, std::size_t c) {
    torch::manual_seed(r * 1000 + c);
    auto x = torch::rand<rows, classes>(r, c) * 20.0f - 10.0f;
    shaped::tensor<std::int64_t, rows> t(shaped::extents<rows>::checked("t", r), shaped::uninitialized);
    for (std::size_t i = 0; i < r; ++i) t.data()[i] = static_cast<std::int64_t>((i * 7919) % c);
    return std::pair{x, t};
}

}  // namespace

TEST_CASE("cross_entropy equals PyTorch's float bits, exp(loss) to an ulp") {
    for (const auto& g : golden::sampling::cross_entropy) {
        CAPTURE(g.rows);
        CAPTURE(g.classes);
        auto [x, t] = uniform_logits(static_cast<std::size_t>(g.rows), static_cast<std::size_t>(g.classes));
        const auto loss = shaped::cross_entropy(x, t);
        CHECK(loss.item() == g.loss);
        // exp is the C library's here and SLEEF's in PyTorch, each within an ulp: at most one apart.
        const float perplexity = shaped::exp(loss).item();
        CHECK(perplexity >= std::nextafter(g.perplexity, 0.0f));
        CHECK(perplexity <= std::nextafter(g.perplexity, INFINITY));
    }
}

TEST_CASE("cross_entropy: ignore_index, the unflattened form, log_softmax, bad targets") {
    auto [x, t] = uniform_logits(17, 8);
    const float all = shaped::cross_entropy(x, t).item();
    // The mean of -log_softmax at the targets, in double: within float rounding of the cascaded float sum.
    const auto ls = shaped::log_softmax<classes>(x);
    double ref = 0;
    for (std::size_t i = 0; i < 17; ++i) ref -= ls(i, static_cast<std::size_t>(t(i)));
    CHECK(all == doctest::Approx(ref / 17).epsilon(1e-6));
    // Every third target ignored: the mean over the others.
    auto t2 = t;
    double kept = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < 17; ++i) {
        if (i % 3 == 0) t2.data()[i] = -100;
        else kept -= ls(i, static_cast<std::size_t>(t(i))), ++n;
    }
    CHECK(shaped::cross_entropy(x, t2).item() == doctest::Approx(kept / static_cast<double>(n)).epsilon(1e-6));
    std::fill_n(t2.data(), 17, std::int64_t{7});
    CHECK(std::isnan(shaped::cross_entropy(x, t2, 7).item()));  // nothing kept: 0/0
    // (batch, num_tokens, vocab) against (batch, num_tokens) gives the flattened form's loss, bit for bit.
    torch::manual_seed(5);
    auto logits = torch::rand<two, three, vocab>();
    shaped::tensor<std::int64_t, two, three> targets{{0, 8, 3}, {5, 5, 1}};
    CHECK(shaped::cross_entropy(logits, targets).item() ==
          shaped::cross_entropy(logits.flatten<0, 1>(), targets.flatten()).item());
    targets.data()[4] = 9;
    CHECK_THROWS_WITH_AS(shaped::cross_entropy(logits, targets), doctest::Contains("target 9 is outside 0 to 8"),
                         std::out_of_range);
    targets.data()[4] = -1;
    CHECK_THROWS_AS(shaped::cross_entropy(logits, targets), std::out_of_range);
    // log_softmax: exp of it sums to 1 per row, and it is finite where softmax underflows.
    shaped::tensor<float, vocab> big{1000.f, 0.f, -1000.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f};
    const auto lb = shaped::log_softmax<vocab>(big);
    CHECK(lb(0) == 0.0f);
    CHECK(lb(2) == -2000.0f);
    // Runs of targets with other extents than the logits.
    shaped::tensor<std::int64_t, rows> short_t(shaped::extents<rows>::checked("t", 16));
    CHECK_THROWS_AS(shaped::cross_entropy(x, short_t), shaped::shape_error);
}

TEST_CASE("gather, topk, comparisons, where, bincount, item") {
    torch::manual_seed(11);
    auto probas = shaped::softmax<vocab>(torch::rand<two, three, vocab>());
    shaped::tensor<std::int64_t, two, three> targets{{0, 8, 3}, {5, 5, 1}};
    const auto picked = shaped::gather<vocab>(probas, targets);  // (two, three)
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t i = 0; i < 3; ++i) CHECK(picked(b, i) == probas(b, i, static_cast<std::size_t>(targets(b, i))));
    targets.data()[2] = 9;
    CHECK_THROWS_WITH_AS(shaped::gather<vocab>(probas, targets), doctest::Contains("index 9 is out of range for axis vocab"),
                         std::out_of_range);

    shaped::tensor<float, vocab> x{1.f, 5.f, 5.f, NAN, -2.f, 7.f, 0.f, 5.f, 3.f};
    auto [values, indices] = shaped::topk<vocab>(x, 4);
    CHECK(std::isnan(values(0)));
    CHECK(indices(0) == 3);
    CHECK((indices(1) == 5 && indices(2) == 1 && indices(3) == 2));  // equal values: lowest position first
    CHECK(values.shape.extent(0) == 4);
    CHECK_THROWS_AS(shaped::topk<vocab>(x, 0), shaped::shape_error);
    CHECK_THROWS_WITH_AS(shaped::topk<vocab>(x, 10), doctest::Contains("1 <= k <= 9"), shaped::shape_error);
    // Over a middle axis: the same as gathering by the indices.
    auto [v2, i2] = shaped::topk<three>(probas, 2);
    CHECK(shaped::max_abs_diff(v2, shaped::gather<three>(probas, i2)) == 0.0);

    const auto less = x < 5.0f;
    CHECK((less(0) && !less(1) && !less(3) && less(4)));
    const auto eq = (x == x);
    CHECK(!eq(3));  // NaN is unequal to itself
    const auto kept = shaped::where(x < 5.0f, -INFINITY, x);
    CHECK((std::isinf(kept(0)) && kept(1) == 5.f && std::isnan(kept(3)) && kept(5) == 7.f));
    const auto mixed = shaped::where(x >= 5.0f, x, x * 2.0f);
    CHECK((mixed(0) == 2.f && mixed(5) == 7.f));

    struct draws : shaped::dynamic_axis<"draws"> {};
    const std::vector<std::int64_t> ids{0, 8, 8, 3};
    const auto counts = shaped::bincount<vocab>(shaped::tensor<std::int64_t, draws>::from_buffer(ids, ids.size()));
    CHECK((counts(0) == 1 && counts(8) == 2 && counts(3) == 1 && counts(1) == 0));
    const std::vector<std::int64_t> bad{0, 9};
    CHECK_THROWS_AS(shaped::bincount<vocab>(shaped::tensor<std::int64_t, draws>::from_buffer(bad, bad.size())),
                    std::out_of_range);

    CHECK(shaped::tensor<float, rows>::from_buffer(std::vector<float>{2.5f}, 1).item() == 2.5f);
    CHECK_THROWS_WITH_AS((shaped::tensor<float, rows>::from_buffer(std::vector<float>{1.f, 2.f}, 2).item()),
                         doctest::Contains("one element"), shaped::shape_error);
}

TEST_CASE("randperm, exponential_ and multinomial follow PyTorch's stream") {
    for (const auto& g : golden::sampling::randperm) {
        torch::generator gen(g.seed);
        CHECK(torch::randperm(static_cast<std::size_t>(g.n), gen) == g.perm);
    }
    torch::manual_seed(123);
    shaped::tensor<double, shaped::axis<"five", 5>> q;
    torch::exponential_(q);
    for (std::size_t i = 0; i < 5; ++i) CHECK(q(i) == golden::sampling::exponential_123[i]);
    // multinomial draws exponentials for the whole tensor, then picks each row's largest p / q.
    shaped::tensor<float, two, vocab> p{{0.f, 0.f, 1.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f}, {1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f}};
    torch::manual_seed(9);
    const auto ids = torch::multinomial(p);
    torch::manual_seed(9);
    shaped::tensor<float, two, vocab> q2;
    torch::exponential_(q2);
    CHECK(ids(0, 0) == 2);
    CHECK(ids(1, 0) == (p / q2).select<two>(1).argmax<vocab>().item());
    p.data()[3] = -1.f;
    CHECK_THROWS_AS(torch::multinomial(p), std::invalid_argument);
    shaped::tensor<float, vocab> zeros;
    CHECK_THROWS_WITH_AS(torch::multinomial(zeros), doctest::Contains("sum of probabilities <= 0"), std::invalid_argument);
}

TEST_CASE("data_loader: PyTorch's shuffled order, drop_last, and what it refuses") {
    // Window k of ids 0..23 (max_length 1, stride 1) starts with id k: the loader's order is visible.
    std::vector<std::int64_t> ids(24);
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(i);
    torch::manual_seed(123);
    text::data_loader<batch, num_tokens> loader(text::gpt_dataset<num_tokens>(ids, 1, 1), 5, true, false);
    CHECK(loader.size() == 5);
    std::vector<std::int64_t> order;
    for (int pass = 0; pass < 2; ++pass)
        for (auto [x, y] : loader) {
            for (std::size_t r = 0; r < x.shape.extent(0); ++r) {
                order.push_back(x(r, 0));
                CHECK(y(r, 0) == x(r, 0) + 1);
            }
        }
    CHECK(order == golden::sampling::loader_order);
    CHECK(torch::random_int64() == golden::sampling::after_loader);

    text::data_loader<batch, num_tokens> dropping(text::gpt_dataset<num_tokens>(ids, 1, 1), 5, false, true);
    std::size_t batches = 0;
    for (auto [x, y] : dropping) {
        CHECK(x.shape.extent(0) == 5);
        ++batches;
    }
    CHECK(batches == 4);
    text::gpt_dataset<num_tokens> windows(ids, 4, 3);
    CHECK(windows.size() == 7);  // starts 0, 3, ..., 18: range(0, 24 - 4, 3)
    CHECK(windows.at(6).target_ids(3) == 22);
    CHECK_THROWS_AS(windows.at(7), std::out_of_range);
    CHECK_THROWS_WITH_AS(text::gpt_dataset<num_tokens>(ids, 24, 1), doctest::Contains("max_length+1"), std::invalid_argument);
    CHECK_THROWS_AS(text::gpt_dataset<num_tokens>(ids, 4, 0), std::invalid_argument);
    CHECK_THROWS_WITH_AS(text::gpt_dataset<num_tokens>(std::vector<std::int64_t>(100), 65, 1),
                         doctest::Contains("num_tokens"), shaped::shape_error);
    CHECK_THROWS_AS((text::data_loader<batch, num_tokens>(windows, 0, false, false)), shaped::shape_error);
}
