// A reduction written as a product, a weighted sum over d_out, with a weight vector declared over another
// axis: no transpose can fix it, and the hint does not suggest one.
// expect-error: shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis; b has no such axis
// expect-context: lhs_last<shaped::diag::sized<d_out, 8>
// expect-context: rhs_second_to_last<shaped::diag::sized<d_in, 3>
#include "attention_axes.hpp"

struct score : shaped::axis<"score", 1> {};

int main() {
    auto x = shaped::torch::rand<batch, num_tokens, d_out>();
    auto w = shaped::torch::rand<d_out, score>();
    auto scores = shaped::matmul(x, w);
    (void)scores;
#ifdef SHAPE_BUG
    auto w_in = shaped::torch::rand<d_in, score>();
    auto bad = shaped::matmul(x, w_in);
    (void)bad;
#endif
}
