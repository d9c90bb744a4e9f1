// Queries split into heads with the heads outermost, (num_heads, batch, num_tokens, head_dim), in one reshape:
// num_heads comes out of d_out, behind batch and num_tokens, so no single transpose after the split puts it
// in front.
// expect-error: shaped::reshape<To...>(x): view only splits and merges adjacent axes, in order; the axes come out in an order more than one swap away from x's
// expect-context: to_axes<shaped::diag::sized<num_heads, 2>, shaped::diag::sized<batch, 2>, shaped::diag::sized<num_tokens, 4>, shaped::diag::sized<head_dim, 4>
// expect-context: transpose_after<shaped::diag::dims<0, 2>, shaped::diag::dims<1, 2>
#include "attention_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_tokens, d_out>();
    auto heads_first = q.view<batch, num_tokens, num_heads, head_dim>().transpose<0, 2>().transpose<1, 2>();
    shaped::strided_tensor<float, num_heads, batch, num_tokens, head_dim> same = heads_first;
    (void)same;
#ifdef SHAPE_BUG
    auto bad = q.reshape<num_heads, batch, num_tokens, head_dim>();
    (void)bad;
#endif
}
