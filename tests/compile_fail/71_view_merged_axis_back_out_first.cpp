// Attention output of (batch*num_heads, num_tokens, head_dim) scores merged straight into (batch, num_tokens,
// d_out): num_heads sits inside the merged batch axis, so it has to be viewed back out first, then
// transposed next to head_dim.
// expect-error: shaped::view<To...>(x): view only splits and merges adjacent axes, in order; x has a merged axis whose factors go to different places
// expect-context: from_axes<shaped::diag::sized<shaped::merged<batch, num_heads>, 4>, shaped::diag::sized<num_tokens, 4>, shaped::diag::sized<head_dim, 4>
#include "attention_axes.hpp"

int main() {
    auto out = shaped::torch::rand<shaped::merged<batch, num_heads>, num_tokens, head_dim>();
    auto context_vec = out.view<batch, num_heads, num_tokens, head_dim>()
                           .transpose<1, 2>()
                           .reshape<batch, num_tokens, d_out>();
    (void)context_vec;
#ifdef SHAPE_BUG
    auto bad = out.view<batch, num_tokens, d_out>();
    (void)bad;
#endif
}
