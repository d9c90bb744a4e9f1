// A reduction over an axis the tensor does not have: the mean over the heads of a tensor that has none.
// expect-error: shaped::mean<A>(x): x has no axis A to reduce over
// expect-context: expected_axes<shaped::diag::sized<tiny::n_heads, 2>
#include "gpt_axes.hpp"

int main() {
    auto x = shaped::torch::rand<batch, num_tokens, emb_dim>(2, 3);
    auto mean = x.mean<emb_dim>(shaped::keepdim);
    (void)mean;
#ifdef SHAPE_BUG
    auto bad = x.mean<tiny::n_heads>(shaped::keepdim);
    (void)bad;
#endif
}
