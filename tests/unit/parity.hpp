// Parity of the book's modules on run-time axes with the same modules on static axes: one module
// instance, called on a run-time (batch, num_tokens) input and on a static one of the same extents, must
// give the same bits, for every prompt length of a range. Each length instantiates the static forward
// passes, so the range is split over translation units generated from parity.cpp.in, which compile in
// parallel, at -O0 (the comparison is within one binary; the -O2 build compares every op in
// run_time_axes.cpp).
#ifndef SHAPED_TESTS_PARITY_HPP
#define SHAPED_TESTS_PARITY_HPP

#include <cstdint>
#include <cstring>
#include <utility>

#include "check.hpp"

namespace parity {

struct context_length : shaped::axis<"context_length", 1024> {};
struct batch : shaped::dynamic_axis<"batch"> {};
struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
struct d_in : shaped::axis<"d_in", 8> {};
struct d_out : shaped::axis<"d_out", 6> {};
struct num_heads : shaped::axis<"num_heads", 3> {};
struct head_out : shaped::axis<"head_out", 2> {};

// The three modules of chapter 3, built once from one seed, in evaluation mode.
struct modules {
    shaped::nn::causal_attention<d_in, d_out, context_length> causal;
    shaped::nn::multi_head_attention_wrapper<d_in, head_out, context_length, num_heads> wrapper;
    shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads> mha;
    static modules make() {
        shaped::torch::manual_seed(123);
        modules m{decltype(causal)(0.0, true), decltype(wrapper)(0.0, false), decltype(mha)(0.0, true)};
        m.causal.eval();
        m.wrapper.eval();
        m.mha.eval();
        return m;
    }
};

template <class A, class B>
bool same_bits(const A& a, const B& b) {
    if (a.shape.sizes() != b.shape.sizes()) return false;
    const auto& ea = a.storage();
    const auto& eb = b.storage();
    return std::memcmp(ea.data(), eb.data(), a.numel() * sizeof(float)) == 0;
}

template <std::size_t B, std::size_t T>
void check_length(const modules& m) {
    struct static_batch : shaped::axis<"batch", B> {};
    struct static_tokens : shaped::axis<"num_tokens", T, shaped::at_most<context_length>> {};
    shaped::torch::generator gen(T);
    const auto xs = shaped::torch::rand<static_batch, static_tokens, d_in>(gen);
    const auto x = xs.template rename<batch, num_tokens, d_in>();
    INFO("batch ", B, ", num_tokens ", T);
    CHECK(same_bits(m.causal(x), m.causal(xs)));
    CHECK(same_bits(m.wrapper(x), m.wrapper(xs)));
    CHECK(same_bits(m.mha(x), m.mha(xs)));
}

// A few lengths up to context_length, batch 2.
inline void check_long_prompts() {
    const auto m = modules::make();
    check_length<2, 511>(m);
    check_length<2, 777>(m);
    check_length<2, 1024>(m);
}

// Every length in [First, Last], with the batch cycling through 1, 2, 3.
template <std::size_t First, std::size_t... I>
void check_lengths(const modules& m, std::index_sequence<I...>) {
    (check_length<1 + (First + I) % 3, First + I>(m), ...);
}
template <std::size_t First, std::size_t Last>
void check_lengths() {
    if constexpr (First == 0) {
        check_long_prompts();
    } else {
        const auto m = modules::make();
        check_lengths<First>(m, std::make_index_sequence<Last - First + 1>{});
    }
}

}  // namespace parity

#endif
