// A shortcut added to a tensor of the same axes in another order, (batch, d_out, num_tokens) against
// (batch, num_tokens, d_out): the hint says to transpose, not to unsqueeze or view.
// expect-error: shaped: elementwise op on shapes that do not broadcast; both sides have the same axes in another order
// expect-context: lhs_axes<shaped::diag::sized<batch, 2>, shaped::diag::sized<num_tokens, 4>, shaped::diag::sized<d_out, 8>
// expect-context: rhs_axes<shaped::diag::sized<batch, 2>, shaped::diag::sized<d_out, 8>, shaped::diag::sized<num_tokens, 4>
#include "attention_axes.hpp"

int main() {
    auto x = shaped::torch::rand<batch, num_tokens, d_out>();
    auto y = shaped::torch::rand<batch, d_out, num_tokens>();
    auto sum = x + y.transpose<1, 2>();
    (void)sum;
#ifdef SHAPE_BUG
    auto bad = x + y;
    (void)bad;
#endif
}
