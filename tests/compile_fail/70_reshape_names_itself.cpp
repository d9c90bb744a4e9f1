// The book's merge of the heads, written with reshape but without the transpose: the error names reshape,
// the op that was called (not the view it is built on), and says to transpose first.
// expect-error: shaped::reshape<To...>(x): view only splits and merges adjacent axes, in order; the axes to merge are apart or out of order
// expect-context: transpose_first<shaped::diag::dims<1, 2>
#include "attention_axes.hpp"

int main() {
    auto context_vec = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto merged = context_vec.transpose<1, 2>().reshape<batch, num_tokens, d_out>();
    (void)merged;
#ifdef SHAPE_BUG
    auto bad = context_vec.reshape<batch, num_tokens, d_out>();
    (void)bad;
#endif
}
