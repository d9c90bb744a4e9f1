// view straight from (b, num_tokens, d_out) to (b, num_heads, num_tokens, head_dim): same count, but the
// heads come out of d_out, not from before num_tokens; PyTorch gives wrong numbers without a word.
// expect-error: shaped::view<To...>(x): view only splits and merges adjacent axes, in order
// expect-context: from_axes<shaped::diag::sized<batch, 1>, shaped::diag::sized<num_tokens, 2>, shaped::diag::sized<d_out, 6>
// expect-context: to_axes<shaped::diag::sized<batch, 1>, shaped::diag::sized<num_heads, 3>, shaped::diag::sized<num_tokens, 2>, shaped::diag::sized<head_dim, 2>
// expect-context: split in x's order, then transpose the pair in transpose_after
// expect-context: transpose_after<shaped::diag::dims<1, 2>
#include "seed_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_tokens, d_out>();
    auto q_heads = q.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
    (void)q_heads;
#ifdef SHAPE_BUG
    auto bad = q.view<batch, num_heads, num_tokens, head_dim>();
    (void)bad;
#endif
}
