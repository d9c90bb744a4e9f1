// The heads merged back as (batch, num_tokens, head_dim*num_heads) without the transpose, with run-time batch and
// num_tokens: the merged axis names its factors in another order than x has them, and num_tokens stands between.
// expect-error: shaped::view<To...>(x): view only splits and merges adjacent axes, in order; the axes to merge are apart or out of order, more than one swap away
// expect-context: from_axes<shaped::diag::run_time<batch>, shaped::diag::sized<num_heads, 3>, shaped::diag::run_time<num_tokens, 6>, shaped::diag::sized<head_dim, 2>
// expect-context: transpose_first<shaped::diag::dims<1, 2>, shaped::diag::dims<2, 3>
#include "run_time_axes.hpp"

int main() {
    auto context_vec = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>(1, 2);
    auto merged = context_vec.transpose<1, 2>()
                      .transpose<2, 3>()
                      .reshape<batch, num_tokens, shaped::merged<head_dim, num_heads>>();
    auto book = context_vec.transpose<1, 2>().contiguous().view<batch, num_tokens, d_out>();
    (void)merged;
    (void)book;
#ifdef SHAPE_BUG
    auto bad = context_vec.view<batch, num_tokens, shaped::merged<head_dim, num_heads>>();
    (void)bad;
#endif
}
