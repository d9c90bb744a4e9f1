// The heads folded into the batch in one view: (batch, num_tokens, d_out) straight to
// (batch*num_heads, num_tokens, head_dim), as q.view(b * num_heads, num_tokens, head_dim) would in PyTorch. Same
// count, but num_heads comes out of d_out, behind num_tokens: every "head" gets rows of other tokens, silently.
// expect-error: shaped::view<To...>(x): view only splits and merges adjacent axes, in order; a merged axis of the target takes its factors from different places of x
// expect-context: from_axes<shaped::diag::sized<batch, 2>, shaped::diag::sized<num_tokens, 4>, shaped::diag::sized<d_out, 8>
// expect-context: to_axes<shaped::diag::sized<shaped::merged<batch, num_heads>, 4>, shaped::diag::sized<num_tokens, 4>, shaped::diag::sized<head_dim, 4>
// expect-context: transpose_after<shaped::diag::dims<1, 2>
#include "attention_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_tokens, d_out>();
    auto q_heads = q.view<batch, num_tokens, num_heads, head_dim>()
                       .transpose<1, 2>()
                       .reshape<shaped::merged<batch, num_heads>, num_tokens, head_dim>();
    (void)q_heads;
#ifdef SHAPE_BUG
    auto bad = q.view<shaped::merged<batch, num_heads>, num_tokens, head_dim>();
    (void)bad;
#endif
}
