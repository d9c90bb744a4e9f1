// A run-time token axis whose bound (a 2048-token context) exceeds the module's context_length (6).
// expect-error: shaped::nn attention module: more tokens than context_length
// expect-context: run_time<long_tokens, 2048>
// expect-context: expected_axes<shaped::diag::sized<context_length, 6>
#include "run_time_axes.hpp"

struct long_context : shaped::axis<"long_context", 2048> {};
struct long_tokens : shaped::dynamic_axis<"long_tokens", shaped::at_most<long_context>> {};

int main() {
    shaped::nn::causal_attention<d_in, d_out, context_length> ca(0.0);
    auto y = ca(shaped::torch::rand<batch, num_tokens, d_in>(2, 5));
    (void)y;
#ifdef SHAPE_BUG
    auto bad = ca(shaped::torch::rand<batch, long_tokens, d_in>(2, 5));
    (void)bad;
#endif
}
