// Elementwise ops on shapes that do not broadcast: (batch, num_tokens, d_out) + (num_tokens, head_dim).
// expect-error: shaped: elementwise op on shapes that do not broadcast
// expect-context: rhs_axes<shaped::diag::sized<num_tokens, 2>, shaped::diag::sized<head_dim, 2>
#include "seed_axes.hpp"

int main() {
    auto x = shaped::torch::rand<batch, num_tokens, d_out>();
    auto bias = shaped::torch::rand<num_tokens, d_out>();
    auto y = x + bias;
    (void)y;
#ifdef SHAPE_BUG
    auto head_bias = shaped::torch::rand<num_tokens, head_dim>();
    auto bad = x + head_bias;
    (void)bad;
#endif
}
