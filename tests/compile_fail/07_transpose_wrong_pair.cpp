// k.transpose(1, 2) where transpose(2, 3) was meant, in 4-d.
// expect-error: shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis
// expect-context: b ends on a's last axis, left there by a transpose of another pair
// expect-context: lhs_last<shaped::diag::sized<head_dim, 2>
// expect-context: rhs_second_to_last<shaped::diag::sized<num_heads, 3>
#include "seed_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto k = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto attn_scores = shaped::matmul(q, k.transpose<2, 3>());
    (void)attn_scores;
#ifdef SHAPE_BUG
    auto bad = shaped::matmul(q, k.transpose<1, 2>());
    (void)bad;
#endif
}
