// A "transpose" that reverses every axis (PyTorch's .T on a 3-d tensor) used as k's transpose.
// expect-error: shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis
// expect-context: b has a's last axis at another dimension (not last)
// expect-context: lhs_last<shaped::diag::sized<d_out, 6>
// expect-context: rhs_second_to_last<shaped::diag::sized<num_tokens, 2>
#include "seed_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_tokens, d_out>();
    auto k = shaped::torch::rand<batch, num_tokens, d_out>();
    auto attn_scores = shaped::matmul(q, k.transpose<1, 2>());
    (void)attn_scores;
#ifdef SHAPE_BUG
    auto bad = shaped::matmul(q, k.T());
    (void)bad;
#endif
}
