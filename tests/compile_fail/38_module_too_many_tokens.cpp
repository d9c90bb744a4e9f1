// A causal attention module fed more tokens than its context_length: one error, at the call.
// expect-error: shaped::nn attention module: more tokens than context_length
// expect-context: expected_axes<shaped::diag::sized<context_length, 6>
#include "seed_axes.hpp"

struct seven_tokens : shaped::axis<"seven_tokens", 7> {};

int main() {
    shaped::nn::causal_attention<d_out, d_out, context_length> ca(0.0);
    auto y = ca(shaped::torch::rand<batch, num_tokens, d_out>());
    (void)y;
#ifdef SHAPE_BUG
    auto bad = ca(shaped::torch::rand<batch, seven_tokens, d_out>());
    (void)bad;
#endif
}
