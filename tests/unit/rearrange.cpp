// rearrange<"pattern">(x): each pattern against the view/permute/contiguous steps it stands for, same type and
// same elements, on static and run-time axes; the MultiHeadAttention split and merge of the book's listing 3.5.
#include <doctest/doctest.h>

#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include <shaped/ops/rearrange.hpp>
#include <shaped/shaped.hpp>

namespace {

struct context_length : shaped::axis<"context_length", 8> {};
struct batch : shaped::axis<"batch", 2> {};
struct num_tokens : shaped::axis<"num_tokens", 5> {};
struct d_out : shaped::axis<"d_out", 6> {};
struct num_heads : shaped::axis<"num_heads", 3> {};
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};

struct run_batch : shaped::dynamic_axis<"batch"> {};
struct run_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};

template <class T>
T iota_tensor(auto... n) {
    T t = [&] {
        if constexpr (sizeof...(n) == 0)
            return T{};
        else
            return T(T::extents_type::checked("iota_tensor", n...));
    }();
    std::iota(t.data(), t.data() + t.numel(), 0.0f);
    return t;
}

// Same type, same extents, same elements in the same order (both made contiguous to compare).
template <class A, class B>
void check_same(const A& a, const B& b) {
    static_assert(std::is_same_v<A, B>);
    REQUIRE(a.shape.sizes() == b.shape.sizes());
    const auto ca = a.contiguous();
    const auto cb = b.contiguous();
    CHECK(std::memcmp(ca.data(), cb.data(), ca.numel() * sizeof(float)) == 0);
}

}  // namespace

TEST_CASE("rearrange: the heads split of listing 3.5 is view then transpose") {
    const auto x = iota_tensor<shaped::tensor<float, batch, num_tokens, d_out>>();
    const auto by_hand = x.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
    const auto by_pattern = shaped::rearrange<"batch num_tokens (num_heads head_dim) -> batch num_heads num_tokens head_dim",
                                              num_heads, head_dim>(x);
    check_same(by_pattern, by_hand);
    static_assert(!decltype(by_pattern)::is_contiguous);  // a view, no copy
}

TEST_CASE("rearrange: the heads merge is transpose, contiguous, view") {
    const auto x = iota_tensor<shaped::tensor<float, batch, num_heads, num_tokens, head_dim>>();
    const auto by_hand =
        x.transpose<1, 2>().contiguous().view<batch, num_tokens, shaped::merged<num_heads, head_dim>>();
    const auto by_pattern =
        shaped::rearrange<"batch num_heads num_tokens head_dim -> batch num_tokens (num_heads head_dim)">(x);
    check_same(by_pattern, by_hand);
    // The merged axis is d_out: a tensor of d_out takes it.
    const shaped::tensor<float, batch, num_tokens, d_out> context_vec = by_pattern;
    CHECK(context_vec(1, 4, 5) == by_hand(1, 4, 5));
}

TEST_CASE("rearrange: ..., let and the identity") {
    const auto x = iota_tensor<shaped::tensor<float, batch, num_heads, num_tokens, head_dim>>();
    const auto swapped = shaped::rearrange<"... t d -> ... d t", shaped::let<"t", num_tokens>,
                                           shaped::let<"d", head_dim>>(x);
    check_same(swapped, x.transpose<2, 3>());
    const auto same = shaped::rearrange<"... -> ...">(x);
    check_same(same, x);
    const auto short_names = shaped::rearrange<"b h t d -> b t h d", shaped::let<"b", batch>, shaped::let<"h", num_heads>,
                                               shaped::let<"t", num_tokens>, shaped::let<"d", head_dim>>(x);
    check_same(short_names, x.transpose<1, 2>());
    // An axis kind without a name of its own, by let.
    const auto k = x.rename<batch, num_heads, shaped::key<num_tokens>, head_dim>();
    const auto kt = shaped::rearrange<"... k head_dim -> ... head_dim k", shaped::let<"k", shaped::key<num_tokens>>>(k);
    check_same(kt, k.transpose<2, 3>());
}

TEST_CASE("rearrange: a split and a merge in one pattern, and a merge of the batch with the heads") {
    const auto x = iota_tensor<shaped::tensor<float, batch, num_tokens, d_out>>();
    const auto by_pattern = shaped::rearrange<"batch num_tokens (num_heads head_dim) -> (batch num_heads) num_tokens head_dim",
                                              num_heads, head_dim>(x);
    const auto by_hand = x.view<batch, num_tokens, num_heads, head_dim>()
                             .permute<0, 2, 1, 3>()
                             .contiguous()
                             .view<shaped::merged<batch, num_heads>, num_tokens, head_dim>();
    check_same(by_pattern, by_hand);
}

TEST_CASE("rearrange: run-time batch and tokens, as by hand") {
    for (std::size_t b : {1u, 3u})
        for (std::size_t t : {1u, 4u, 8u}) {
            const auto x = iota_tensor<shaped::tensor<float, run_batch, run_tokens, d_out>>(b, t);
            const auto split = shaped::rearrange<"batch num_tokens (num_heads head_dim) -> batch num_heads num_tokens head_dim",
                                                 num_heads, head_dim>(x);
            check_same(split, x.view<run_batch, run_tokens, num_heads, head_dim>().transpose<1, 2>());
            const auto back = shaped::rearrange<"batch num_heads num_tokens head_dim -> batch num_tokens (num_heads head_dim)">(split);
            const shaped::tensor<float, run_batch, run_tokens, d_out> y = back;
            check_same(y, x);
        }
}

TEST_CASE("rearrange: a strided tensor is split as reshape splits it") {
    const auto x = iota_tensor<shaped::tensor<float, batch, num_tokens, d_out>>();
    const auto t = x.transpose<0, 1>();  // (num_tokens, batch, d_out), strided
    const auto split = shaped::rearrange<"num_tokens batch (num_heads head_dim) -> batch num_heads num_tokens head_dim",
                                         num_heads, head_dim>(t);
    check_same(split, t.reshape<num_tokens, batch, num_heads, head_dim>().permute<1, 2, 0, 3>());
    check_same(split.contiguous(), x.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>().contiguous());
}
