// Merging (b, num_heads, num_tokens, head_dim) back to (b, num_tokens, d_out) without transposing first.
// expect-error: shaped::view<To...>(x): view only splits and merges adjacent axes, in order
// expect-context: from_axes<shaped::diag::sized<batch, 1>, shaped::diag::sized<num_heads, 3>, shaped::diag::sized<num_tokens, 2>, shaped::diag::sized<head_dim, 2>
// expect-context: the axes to merge are apart or out of order
// expect-context: transpose_first<shaped::diag::dims<1, 2>
#include "seed_axes.hpp"

int main() {
    auto context_vec = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto merged = context_vec.transpose<1, 2>().contiguous().view<batch, num_tokens, d_out>();
    (void)merged;
#ifdef SHAPE_BUG
    auto bad = context_vec.view<batch, num_tokens, d_out>();
    (void)bad;
#endif
}
