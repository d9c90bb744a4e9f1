// Comparing the 18-wide result of the buggy form with the 6-wide result of the other form.
// expect-error: shaped::max_abs_diff(a, b): a and b must have the same axes to be compared
// expect-context: shaped::diag::sized<shaped::concat<d_out, d_out, d_out>, 18>
// expect-context: shaped::diag::sized<d_out, 6>
#include <array>

#include "seed_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_tokens, d_out>();
    std::array<shaped::tensor<float, batch, num_tokens, d_out>, num_heads::extent> heads{q, q, q};
    auto wide = shaped::cat<-1>(heads);
    double d = shaped::max_abs_diff(q, q);
#ifdef SHAPE_BUG
    d = shaped::max_abs_diff(wide, q);
#endif
    (void)d;
    (void)wide;
}
