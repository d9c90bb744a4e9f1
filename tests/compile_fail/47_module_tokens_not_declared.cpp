// A module's token axis that fits context_length but is not declared within it: it could be any axis.
// expect-error: shaped::nn attention module: the token axis must be declared within context_length
// expect-context: tensor_axes<shaped::diag::run_time<batch>, shaped::diag::sized<four, 4>
#include "run_time_axes.hpp"

struct four : shaped::axis<"four", 4> {};
struct four_tokens : shaped::axis<"four_tokens", 4, shaped::at_most<context_length>> {};

int main() {
    shaped::nn::causal_attention<d_in, d_out, context_length> ca(0.0);
    auto y = ca(shaped::torch::rand<batch, four_tokens, d_in>(2));
    (void)y;
#ifdef SHAPE_BUG
    auto bad = ca(shaped::torch::rand<batch, four, d_in>(2));
    (void)bad;
#endif
}
