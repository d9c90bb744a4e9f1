// shaped::TensorOf and shaped::LastAxis, the concepts for modules that users write: what they accept
// (static and run-time axes, strided tensors, any_axis, within<B>), what they refuse (the plain-bool traits
// beside them; the refusals' messages are compile-fail cases 63 and 64), and a module written with them
// computes what its ops compute.
#include <shaped/tensor_of.hpp>

#include "check.hpp"

namespace {

struct context_length : shaped::axis<"context_length", 8> {};
struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
struct six_tokens : shaped::axis<"six_tokens", 6, shaped::at_most<context_length>> {};
struct free_tokens : shaped::dynamic_axis<"free_tokens"> {};
struct batch : shaped::dynamic_axis<"batch"> {};
struct emb_dim : shaped::axis<"emb_dim", 4> {};
struct d_in : shaped::axis<"d_in", 4> {};

using any = shaped::any_axis;
using within = shaped::within<context_length>;

template <class... A>
using t = shaped::tensor<float, A...>;

// Accepted: any axis first, an axis declared within context_length (run-time, static, or context_length
// itself), emb_dim last; contiguous or strided.
static_assert(shaped::tensor_of_v<t<batch, num_tokens, emb_dim>, any, within, emb_dim>);
static_assert(shaped::tensor_of_v<t<d_in, six_tokens, emb_dim>, any, within, emb_dim>);
static_assert(shaped::tensor_of_v<t<batch, context_length, emb_dim>, any, within, emb_dim>);
static_assert(shaped::tensor_of_v<const t<batch, num_tokens, emb_dim>&, any, within, emb_dim>);
static_assert(shaped::tensor_of_v<shaped::strided_tensor<float, batch, num_tokens, emb_dim>, any, within, emb_dim>);
static_assert(shaped::tensor_of_v<t<batch, num_tokens, emb_dim>, batch, num_tokens, emb_dim>);
// Refused: a token axis not declared within context_length, another last axis of the same extent, another
// rank, the axes in another order, a non-tensor.
static_assert(!shaped::tensor_of_v<t<batch, free_tokens, emb_dim>, any, within, emb_dim>);
static_assert(!shaped::tensor_of_v<t<batch, num_tokens, d_in>, any, within, emb_dim>);
static_assert(!shaped::tensor_of_v<t<num_tokens, emb_dim>, any, within, emb_dim>);
static_assert(!shaped::tensor_of_v<t<num_tokens, batch, emb_dim>, any, within, emb_dim>);
static_assert(!shaped::tensor_of_v<float, any, within, emb_dim>);
static_assert(!shaped::tensor_of_v<t<batch, num_tokens, emb_dim>, batch, num_tokens>);

static_assert(shaped::last_axis_v<t<batch, num_tokens, emb_dim>, emb_dim>);
static_assert(shaped::last_axis_v<t<emb_dim>, emb_dim>);
static_assert(!shaped::last_axis_v<t<batch, num_tokens, d_in>, emb_dim>);
static_assert(!shaped::last_axis_v<t<emb_dim, d_in>, emb_dim>);
static_assert(!shaped::last_axis_v<int, emb_dim>);

// The concepts agree with the traits where the traits hold, and a non-tensor does not satisfy them (no
// report: the report is for tensors with the wrong axes).
static_assert(shaped::TensorOf<t<batch, num_tokens, emb_dim>, any, within, emb_dim>);
static_assert(shaped::LastAxis<t<batch, num_tokens, emb_dim>, emb_dim>);
static_assert(!shaped::TensorOf<int, any, within, emb_dim>);
static_assert(!shaped::LastAxis<double, emb_dim>);
// The result of a failed shape check satisfies both, so code after the first error adds none.
static_assert(shaped::TensorOf<shaped::diag::failed_shape_check, any, within, emb_dim>);
static_assert(shaped::LastAxis<shaped::diag::failed_shape_check, emb_dim>);

// The book's chapter-4 shortcut, written as a user's module with the concept in its signature.
struct my_block {
    shaped::nn::layer_norm<emb_dim> norm;
    auto operator()(const shaped::TensorOf<any, within, emb_dim> auto& x) const { return norm(x) + x; }
};

struct my_head {
    shaped::nn::linear<emb_dim, d_in> out_head{false};
    auto operator()(const shaped::LastAxis<emb_dim> auto& x) const { return out_head(x); }
};

}  // namespace

TEST_CASE("a module written with TensorOf and LastAxis computes what its ops compute, at every length") {
    shaped::torch::manual_seed(5);
    my_block block;
    my_head head;
    for (std::size_t n = 1; n <= context_length::extent; ++n) {
        const auto x = shaped::torch::rand<batch, num_tokens, emb_dim>(3, n);
        const auto y = head(block(x));
        const auto expected = head.out_head(block.norm(x) + x);
        static_assert(std::is_same_v<std::remove_cvref_t<decltype(y)>, t<batch, num_tokens, d_in>>);
        CHECK(y.shape.sizes() == std::array<std::size_t, 3>{3, n, 4});
        CHECK(shaped::max_abs_diff(y, expected) == 0.0);
    }
    // A strided input (a transposed view) and static axes go through the same signature.
    const auto s = shaped::torch::rand<six_tokens, d_in, emb_dim>().transpose<0, 1>();
    CHECK(shaped::max_abs_diff(block(s), block.norm(s) + s) == 0.0);
}
