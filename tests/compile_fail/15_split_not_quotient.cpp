// split into chunks of an axis that is not declared as a part of the split axis (num_tokens has the
// extent of head_dim, 2, but is not d_out / num_heads).
// expect-error: shaped::split<Chunk, Dim>(x): the chunk axis must be declared as a quotient of the axis it splits
// expect-context: parts<shaped::diag::sized<num_tokens, 2>
#include "seed_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_tokens, d_out>();
    auto heads = q.split<head_dim, -1>();
    (void)heads;
#ifdef SHAPE_BUG
    auto bad = q.split<num_tokens, -1>();
    (void)bad;
#endif
}
