// matmul whose batch axes are in another order: (batch, num_heads, ...) @ (num_heads, batch, ...).
// expect-error: shaped::matmul(a, b): the batch axes (all but the last two), aligned from the right, must be the same axes
// expect-context: rhs_axes<shaped::diag::sized<num_heads, 3>, shaped::diag::sized<batch, 1>
#include "seed_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto k = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto scores = shaped::matmul(q, k.transpose<2, 3>());
    (void)scores;
#ifdef SHAPE_BUG
    auto bad = shaped::matmul(q, k.transpose<0, 1>().transpose<2, 3>());
    (void)bad;
#endif
}
