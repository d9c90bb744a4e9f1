// reduce<"pattern", "op">(x): each pattern against the sum/mean/max, view, permute and contiguous steps it
// stands for, same type and same elements, bit for bit, on static and run-time axes, strided inputs, splits,
// keepdim's reduced<...> and a reduction to a scalar.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>

#include <shaped/ops/rearrange.hpp>
#include <shaped/ops/reduce_pattern.hpp>
#include <shaped/shaped.hpp>

namespace {

struct context_length : shaped::axis<"context_length", 8> {};
struct batch : shaped::axis<"batch", 2> {};
struct num_tokens : shaped::axis<"num_tokens", 5> {};
struct d_out : shaped::axis<"d_out", 6> {};
struct num_heads : shaped::axis<"num_heads", 3> {};
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};
using keys = shaped::key<num_tokens>;

struct run_batch : shaped::dynamic_axis<"batch"> {};
struct run_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};

// Random values (sums of them round differently in another order, so that a wrong order shows).
template <class T>
T random_tensor(unsigned seed, auto... n) {
    T t = [&] {
        if constexpr (sizeof...(n) == 0)
            return T{};
        else
            return T(T::extents_type::checked("random_tensor", n...));
    }();
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist;
    for (std::size_t i = 0; i < t.numel(); ++i) t.data()[i] = dist(gen);
    return t;
}

template <class A, class B>
void check_same(const A& a, const B& b) {
    static_assert(std::is_same_v<A, B>);
    REQUIRE(a.shape.sizes() == b.shape.sizes());
    const auto ca = a.contiguous();
    const auto cb = b.contiguous();
    CHECK(std::memcmp(ca.data(), cb.data(), ca.numel() * sizeof(typename A::value_type)) == 0);
}

}  // namespace

TEST_CASE("reduce: LayerNorm's mean over the last axis with keepdim is mean<emb_dim>(keepdim)") {
    const auto x = random_tensor<shaped::tensor<float, batch, num_tokens, d_out>>(1);
    const auto by_pattern = shaped::reduce<"batch num_tokens d_out -> batch num_tokens ()", "mean">(x);
    check_same(by_pattern, x.mean<d_out>(shaped::keepdim));
    static_assert(std::is_same_v<decltype(by_pattern),
                                 const shaped::tensor<float, batch, num_tokens, shaped::reduced<d_out>>>);
    check_same(shaped::reduce<"... d_out -> ... ()", "mean">(x), x.mean<d_out>(shaped::keepdim));
    check_same(shaped::reduce<"... d_out -> ...", "mean">(x), x.mean<d_out>());
}

TEST_CASE("reduce: one axis, then the rest reordered") {
    const auto x = random_tensor<shaped::tensor<float, batch, num_tokens, d_out>>(2);
    check_same(shaped::reduce<"batch num_tokens d_out -> batch d_out", "sum">(x), x.sum<num_tokens>());
    check_same(shaped::reduce<"batch num_tokens d_out -> d_out batch", "sum">(x), x.sum<num_tokens>().transpose<0, 1>());
    check_same(shaped::reduce<"batch num_tokens d_out -> num_tokens d_out", "max">(x), x.max<batch>());
    // Nothing left out: rearrange.
    check_same(shaped::reduce<"batch num_tokens d_out -> num_tokens batch d_out", "sum">(x),
               shaped::rearrange<"batch num_tokens d_out -> num_tokens batch d_out">(x));
}

TEST_CASE("reduce: several axes, the last first, with and without keepdim") {
    const auto x = random_tensor<shaped::tensor<float, batch, num_tokens, d_out>>(3);
    check_same(shaped::reduce<"batch num_tokens d_out -> num_tokens", "sum">(x), x.sum<d_out>().sum<batch>());
    check_same(shaped::reduce<"batch num_tokens d_out -> num_tokens", "mean">(x), x.mean<d_out>().mean<batch>());
    check_same(shaped::reduce<"batch num_tokens d_out -> () num_tokens ()", "sum">(x),
               x.sum<d_out>(shaped::keepdim).sum<batch>(shaped::keepdim));
    // The first () keeps the first reduced axis in x's order, wherever it stands.
    check_same(shaped::reduce<"batch num_tokens d_out -> () () num_tokens", "max">(x),
               x.max<d_out>(shaped::keepdim).max<batch>(shaped::keepdim).permute<0, 2, 1>());
    // Everything: a tensor of rank 0.
    const auto total = shaped::reduce<"batch num_tokens d_out ->", "sum">(x);
    check_same(total, x.sum<d_out>().sum<num_tokens>().sum<batch>());
    static_assert(std::is_same_v<decltype(total), const shaped::tensor<float>>);
}

TEST_CASE("reduce: a split axis, reduced over one factor (the heads' sums), then a merge") {
    const auto x = random_tensor<shaped::tensor<float, batch, num_tokens, d_out>>(4);
    const auto heads = x.view<batch, num_tokens, num_heads, head_dim>();
    check_same(shaped::reduce<"batch num_tokens (num_heads head_dim) -> batch num_tokens num_heads", "sum", num_heads,
                              head_dim>(x),
               heads.sum<head_dim>());
    check_same(shaped::reduce<"batch num_tokens (num_heads head_dim) -> (batch num_heads) num_tokens", "max",
                              num_heads, head_dim>(x),
               heads.max<head_dim>().permute<0, 2, 1>().contiguous().view<shaped::merged<batch, num_heads>, num_tokens>());
    check_same(shaped::reduce<"b t (h d) -> b t h ()", "mean", shaped::let<"b", batch>, shaped::let<"t", num_tokens>,
                              shaped::let<"h", num_heads>, shaped::let<"d", head_dim>>(x),
               heads.mean<head_dim>(shaped::keepdim));
}

TEST_CASE("reduce: the scores' max over the keys, a key axis named with let") {
    const auto scores = random_tensor<shaped::tensor<float, batch, num_heads, num_tokens, keys>>(5);
    check_same(shaped::reduce<"batch num_heads num_tokens keys -> batch num_heads num_tokens ()", "max",
                              shaped::let<"keys", keys>>(scores),
               scores.max<keys>(shaped::keepdim));
}

TEST_CASE("reduce: a strided input reads as its elements are, not as they are stored") {
    const auto x = random_tensor<shaped::tensor<float, batch, num_tokens, d_out>>(6);
    const auto t = x.transpose<0, 1>();  // (num_tokens, batch, d_out), strided
    check_same(shaped::reduce<"num_tokens batch d_out -> batch", "sum">(t), t.sum<d_out>().sum<num_tokens>());
    check_same(shaped::reduce<"num_tokens batch d_out -> d_out num_tokens", "max">(t), t.max<batch>().transpose<0, 1>());
}

TEST_CASE("reduce: run-time batch and tokens, as by hand") {
    for (std::size_t b : {1u, 3u})
        for (std::size_t t : {1u, 4u, 8u}) {
            CAPTURE(b);
            CAPTURE(t);
            const auto x = random_tensor<shaped::tensor<float, run_batch, run_tokens, d_out>>(7, b, t);
            check_same(shaped::reduce<"batch num_tokens d_out -> batch d_out", "mean">(x), x.mean<run_tokens>());
            check_same(shaped::reduce<"batch num_tokens (num_heads head_dim) -> num_heads batch () ()", "sum", num_heads,
                                      head_dim>(x),
                       x.view<run_batch, run_tokens, num_heads, head_dim>()
                           .sum<head_dim>(shaped::keepdim)
                           .sum<run_tokens>(shaped::keepdim)
                           .permute<2, 0, 1, 3>());
        }
}

TEST_CASE("reduce: max of integers, and NaN wins as in torch.amax") {
    shaped::tensor<std::int64_t, batch, num_tokens> ids;
    for (std::size_t i = 0; i < ids.numel(); ++i) ids.data()[i] = static_cast<std::int64_t>((i * 7) % 10);
    check_same(shaped::reduce<"batch num_tokens -> batch", "max">(ids), ids.max<num_tokens>());
    CHECK(shaped::reduce<"batch num_tokens -> batch", "max">(ids).data()[0] == 8);  // 0 7 4 1 8
    auto x = random_tensor<shaped::tensor<float, batch, num_tokens>>(8);
    x.data()[2] = std::nanf("");
    const auto m = shaped::reduce<"batch num_tokens -> batch", "max">(x);
    CHECK(std::isnan(m.data()[0]));
    CHECK(!std::isnan(m.data()[1]));
}

TEST_CASE("reduce: the lines of the patterns chapter, against their spellings by hand") {
    const auto x = random_tensor<shaped::tensor<float, batch, num_tokens, d_out>>(9);
    const auto scores = random_tensor<shaped::tensor<float, batch, num_heads, num_tokens, keys>>(10);
    // [reduce]
    // x.mean(dim=-1, keepdim=True), as the book's LayerNorm takes it: (batch, num_tokens, reduced<d_out>)
    auto mean = shaped::reduce<"batch num_tokens d_out -> batch num_tokens ()", "mean">(x);
    // Each head's mean over the tokens: (batch, num_heads, head_dim)
    auto pooled = shaped::reduce<"batch num_tokens (num_heads head_dim) -> batch num_heads head_dim", "mean",
                                 num_heads, head_dim>(x);
    // The scores' largest value per query, which a stable softmax subtracts: (..., num_tokens, reduced<keys>)
    auto row_max = shaped::reduce<"batch num_heads num_tokens keys -> batch num_heads num_tokens ()", "max",
                                  shaped::let<"keys", keys>>(scores);
    // [reduce]
    check_same(mean, x.mean<d_out>(shaped::keepdim));
    check_same(pooled, x.view<batch, num_tokens, num_heads, head_dim>().mean<num_tokens>());
    check_same(row_max, scores.max<keys>(shaped::keepdim));
}

TEST_CASE("reduce: a strided tensor split, then reduced") {
    const auto x = random_tensor<shaped::tensor<float, batch, num_tokens, d_out>>(11);
    const auto t = x.transpose<0, 1>();  // (num_tokens, batch, d_out), strided
    check_same(shaped::reduce<"num_tokens batch (num_heads head_dim) -> batch num_heads", "max", num_heads, head_dim>(t),
               t.reshape<num_tokens, batch, num_heads, head_dim>().max<head_dim>().max<num_tokens>());
}
