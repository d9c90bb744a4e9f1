// The PyTorch-compatible random stream and nn.Linear's initialisation, bit for bit against PyTorch 1.13.
#include "check.hpp"
#include "golden/ops_goldens.hpp"

namespace {
struct one : shaped::axis<"one", 1> {};
struct two : shaped::axis<"two", 2> {};
struct three : shaped::axis<"three", 3> {};
struct six : shaped::axis<"six", 6> {};
struct eighteen : shaped::axis<"eighteen", 18> {};
struct thousand : shaped::axis<"thousand", 1000> {};
struct d_in : shaped::axis<"d_in", 64> {};
struct d_out : shaped::axis<"d_out", 48> {};
}  // namespace

TEST_CASE("torch::rand after manual_seed equals torch.rand bit for bit") {
    shaped::torch::manual_seed(1223);
    const auto r = shaped::torch::rand<three, one, two, six>();
    test::check_exact(r, golden::rand_1223);

    shaped::torch::manual_seed(123);
    test::check_exact(shaped::torch::rand<thousand>(), golden::rand_123);
}

TEST_CASE("manual_seed restarts the stream; a separate generator does not touch the default one") {
    shaped::torch::manual_seed(1223);
    const auto first = shaped::torch::rand<two, six>();
    shaped::torch::generator other(99);
    (void)shaped::torch::rand<thousand>(other);
    const auto second = shaped::torch::rand<two, six>();
    shaped::torch::manual_seed(1223);
    const auto again = shaped::torch::rand<two, six>();
    CHECK(shaped::max_abs_diff(first, again) == 0.0);
    CHECK(shaped::max_abs_diff(first, second) > 0.0);
    shaped::torch::generator g(1223);
    CHECK(shaped::max_abs_diff(shaped::torch::rand<two, six>(g), first) == 0.0);
}

TEST_CASE("nn::linear draws weight then bias as torch.nn.Linear does") {
    SUBCASE("Linear(6, 6), seed 1223") {
        shaped::torch::manual_seed(1223);
        shaped::nn::linear<six, six> lin;
        test::check_exact(lin.weight, golden::linear_1223_6_6_weight);
        test::check_exact(*lin.bias, golden::linear_1223_6_6_bias);
    }
    SUBCASE("Linear(18, 18), seed 1223: the seed's buggy out_proj") {
        shaped::torch::manual_seed(1223);
        shaped::nn::linear<eighteen, eighteen> lin;
        test::check_exact(lin.weight, golden::linear_1223_18_18_weight);
        test::check_exact(*lin.bias, golden::linear_1223_18_18_bias);
    }
    SUBCASE("Linear(3, 2, bias=False), seed 123") {
        shaped::torch::manual_seed(123);
        shaped::nn::linear<three, two> lin(false);
        CHECK_FALSE(lin.has_bias());
        test::check_exact(lin.weight, golden::linear_123_3_2_weight);
    }
    SUBCASE("Linear(64, 48), seed 789, from an explicit generator") {
        shaped::torch::generator g(789);
        shaped::nn::linear<d_in, d_out> lin(g);
        test::check_exact(lin.weight, golden::linear_789_64_48_weight);
        test::check_exact(*lin.bias, golden::linear_789_64_48_bias);
    }
}
