// q @ k without transposing k, in 4-d, where num_tokens == head_dim == 2: PyTorch runs it.
// expect-error: shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis; b ends on a's last axis, so b.transpose<-2, -1>() was forgotten
// expect-context: lhs_last<shaped::diag::sized<head_dim, 2>
// expect-context: rhs_second_to_last<shaped::diag::sized<num_tokens, 2>
#include "seed_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto k = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto attn_scores = shaped::matmul(q, k.transpose<2, 3>());
    (void)attn_scores;
#ifdef SHAPE_BUG
    auto bad = shaped::matmul(q, k);
    (void)bad;
#endif
}
