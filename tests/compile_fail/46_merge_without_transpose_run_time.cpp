// Merging (b, num_heads, num_tokens, head_dim) back to (b, num_tokens, d_out) without the transpose, with
// run-time batch and num_tokens.
// expect-error: shaped::view<To...>(x): view only splits and merges adjacent axes, in order
// expect-context: from_axes<shaped::diag::run_time<batch>, shaped::diag::sized<num_heads, 3>, shaped::diag::run_time<num_tokens, 6>, shaped::diag::sized<head_dim, 2>
#include "run_time_axes.hpp"

int main() {
    auto context_vec = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>(1, 2);
    auto merged = context_vec.transpose<1, 2>().contiguous().view<batch, num_tokens, d_out>();
    (void)merged;
#ifdef SHAPE_BUG
    auto bad = context_vec.view<batch, num_tokens, d_out>();
    (void)bad;
#endif
}
