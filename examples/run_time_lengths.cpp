// The program of the tutorial's page 7, "Lengths known at run time": every snippet of
// docs/07-run-time-lengths.md is a region of this file. Each section prints what a learner sees and checks
// it against what PyTorch 1.13 printed for the same lines (or, where only shaped speaks, the text the
// chapter shows). The program exits with 1 if anything differs.
// Build: g++ -std=c++20 -O1 -Iinclude examples/run_time_lengths.cpp -ldnnl -lgomp -lopenblas -o run_time_lengths
#include <array>
#include <boost/hana/tuple.hpp>
#include <cstddef>
#include <cstdlib>
#include <iostream>
// [includes]
#include <shaped/shaped.hpp>

#include "tutorial_check.hpp"

namespace hana = boost::hana;
namespace torch = shaped::torch;
// [includes]

// [rt_axes]
struct context_length : shaped::axis<"context_length", 8> {};  // the longest input the causal mask covers
struct batch : shaped::dynamic_axis<"batch"> {};                // any number of sequences
struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};  // 1 to 8
struct d_in : shaped::axis<"d_in", 4> {};
struct d_out : shaped::axis<"d_out", 6> {};
struct num_heads : shaped::axis<"num_heads", 3> {};
// [rt_axes]

// [rt_static_within]
struct six_tokens : shaped::axis<"six_tokens", 6, shaped::at_most<context_length>> {};  // static, within 8
// [rt_static_within]

void binding() {
    check::section("binding a length");
    // [rt_bind]
    torch::manual_seed(123);
    const std::size_t prompt_length = 5;                               // known when the program runs
    auto x = torch::rand<batch, num_tokens, d_in>(2, prompt_length);  // torch.rand(2, prompt_length, 4)
    std::cout << "x.shape = " << x.shape << "\n";
    auto [b, t, d] = x.shape;  // b, num_tokens, d_in = x.shape
    std::cout << "b = " << b << ", num_tokens = " << t << ", d_in = " << d << "\n";
    // [rt_bind]
    check::printed(R"out(
// [rt_bind_out]
x.shape = torch.Size([2, 5, 4])
b = 2, num_tokens = 5, d_in = 4
// [rt_bind_out]
)out");
    check::that(sizeof(x) == sizeof(decltype(x)::storage_type) + 2 * sizeof(std::size_t), "only batch and num_tokens are stored");

    // [rt_entry]
    for (long long n : {0LL, 9LL, -1LL}) {
        try {
            auto bad = torch::rand<batch, num_tokens, d_in>(2, n);
            std::cout << bad.shape << "\n";
        } catch (const shaped::shape_error& e) {
            std::cout << e.what() << "\n";
        }
    }
    // [rt_entry]
    check::printed(R"out(
// [rt_entry_out]
shaped::torch::rand: expected 1 <= num_tokens <= 8 (num_tokens is at most context_length), got num_tokens = 0
shaped::torch::rand: expected 1 <= num_tokens <= 8 (num_tokens is at most context_length), got num_tokens = 9
shaped::torch::rand: expected 1 <= num_tokens <= 8 (num_tokens is at most context_length), got num_tokens = -1
// [rt_entry_out]
)out");
}

void one_module() {
    check::section("one module for every length");
    // [rt_module]
    torch::manual_seed(123);
    shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads> mha(0.0);
    mha.eval();
    for (std::size_t n : {1, 3, 8}) {
        auto x = torch::rand<batch, num_tokens, d_in>(1, n);  // torch.rand(1, n, 4)
        auto context_vecs = mha(x);                           // the same compiled forward pass for every n
        std::cout << "n = " << n << ": context_vecs.shape = " << context_vecs.shape << "\n";
    }
    std::cout << "context_vecs = " << mha(torch::rand<batch, num_tokens, d_in>(1, 2)) << "\n";
    // [rt_module]
    check::printed(R"out(
// [rt_module_out]
n = 1: context_vecs.shape = torch.Size([1, 1, 6])
n = 3: context_vecs.shape = torch.Size([1, 3, 6])
n = 8: context_vecs.shape = torch.Size([1, 8, 6])
context_vecs = tensor([[[-0.2357, -0.1498,  0.1577, -0.4910,  0.0870,  0.3871],
         [-0.2415, -0.1478,  0.1375, -0.5028,  0.1405,  0.3341]]])
// [rt_module_out]
)out");
}

void inside_ops() {
    check::section("inside the ops");
    torch::manual_seed(123);
    auto x = torch::rand<batch, num_tokens, d_in>(2, 5);
    // [rt_slice]
    auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>());
    const std::size_t n = x.shape[1];                                          // num_tokens
    auto mask_bool = mask.to<bool>().slice<num_tokens, shaped::key<num_tokens>>(n, n);  // mask.bool()[:n, :n]
    std::cout << mask_bool << "\n";
    // [rt_slice]
    check::printed(R"out(
// [rt_slice_out]
tensor([[False,  True,  True,  True,  True],
        [False, False,  True,  True,  True],
        [False, False, False,  True,  True],
        [False, False, False, False,  True],
        [False, False, False, False, False]])
// [rt_slice_out]
)out");

    // [rt_meet]
    auto q = torch::rand<batch, num_tokens, d_out>(2, 5);
    auto k = torch::rand<batch, num_tokens, d_out>(2, 4);  // bound separately, to another length
    try {
        auto sum = q + k;  // PyTorch: "The size of tensor a (5) must match the size of tensor b (4) ..."
        std::cout << sum.shape << "\n";
    } catch (const shaped::shape_error& e) {
        std::cout << e.what() << "\n";
    }
    // [rt_meet]
    check::printed(R"out(
// [rt_meet_out]
shaped::operator+(a, b): num_tokens is 5 in a but 4 in b
  a: (batch=2, num_tokens=5, d_out=6)
  b: (batch=2, num_tokens=4, d_out=6)
// [rt_meet_out]
)out");
}

void growing() {
    check::section("a sequence that grows");
    torch::manual_seed(123);
    // [rt_grow]
    auto idx = torch::rand<batch, num_tokens>(1, 6);       // six tokens (numbers stand in for token ids)
    const auto next = torch::rand<batch, shaped::one>(1);  // one more: idx_next, (batch, 1)
    for (int step = 0; step < 3; ++step) {
        try {
            idx = shaped::cat<1>(hana::make_tuple(idx, next));  // torch.cat((idx, idx_next), dim=1)
            std::cout << "idx.shape = " << idx.shape << "\n";
        } catch (const shaped::shape_error& e) {
            std::cout << e.what() << "\n";
        }
    }
    // [rt_grow]
    check::printed(R"out(
// [rt_grow_out]
idx.shape = torch.Size([1, 7])
idx.shape = torch.Size([1, 8])
shaped::cat<Dim>(tensors): expected num_tokens <= 8 (num_tokens is at most context_length), got num_tokens = 9 (8 + 1)
// [rt_grow_out]
)out");
}

void converting() {
    check::section("static and run-time axes");
    torch::manual_seed(123);
    // [rt_convert]
    auto fixed = torch::rand<batch, six_tokens, d_in>(1);    // a length fixed at compile time
    auto any = fixed.rename<batch, num_tokens, d_in>();      // to the run-time axis: 6 fits its bound of 8
    auto back = any.rename<batch, six_tokens, d_in>();       // and back: the extent is checked as it runs
    std::cout << "any.shape = " << any.shape << ", back.shape = " << back.shape << "\n";
    auto five = torch::rand<batch, num_tokens, d_in>(1, 5);
    try {
        auto wrong = five.rename<batch, six_tokens, d_in>();
        std::cout << wrong.shape << "\n";
    } catch (const shaped::shape_error& e) {
        std::cout << e.what() << "\n";
    }
    // [rt_convert]
    check::printed(R"out(
// [rt_convert_out]
any.shape = torch.Size([1, 6, 4]), back.shape = torch.Size([1, 6, 4])
shaped::rename<...>(x): expected six_tokens=6 at dimension 1, got num_tokens=5 in (batch=1, num_tokens=5, d_in=4)
// [rt_convert_out]
)out");
    check::that(shaped::max_abs_diff(back, fixed) == 0.0, "a round trip keeps every element");
}

int main() {
    check::real_cout = std::cout.rdbuf(check::captured.rdbuf());
    binding();
    one_module();
    inside_ops();
    growing();
    converting();
    std::cout.rdbuf(check::real_cout);
    std::cout << "\n" << (check::failures == 0 ? "all checks passed" : "some checks failed") << " ("
              << check::failures << " failures)\n";
    return check::failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
