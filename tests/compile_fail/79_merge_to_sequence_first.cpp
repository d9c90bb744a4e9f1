// The heads merged back into a sequence-first (num_tokens, batch, d_out) tensor after contiguous() but without
// the transposes: num_tokens must move in front of batch and num_heads next to head_dim, two swaps.
// expect-error: shaped::view<To...>(x): view only splits and merges adjacent axes, in order; the axes to merge are apart or out of order, more than one swap away
// expect-context: to_axes<shaped::diag::run_time<num_tokens, 6>, shaped::diag::run_time<batch>, shaped::diag::sized<d_out, 6>
// expect-context: transpose_first<shaped::diag::dims<0, 2>, shaped::diag::dims<1, 2>
#include "run_time_axes.hpp"

int main() {
    auto context_vec = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>(2, 2);
    auto seq_first = context_vec.transpose<0, 2>().transpose<1, 2>().contiguous().view<num_tokens, batch, d_out>();
    (void)seq_first;
#ifdef SHAPE_BUG
    auto bad = context_vec.contiguous().view<num_tokens, batch, d_out>();
    (void)bad;
#endif
}
