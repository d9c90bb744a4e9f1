// matmul with a 1-d operand, which PyTorch treats as a vector; shaped asks for matrices.
// expect-error: shaped::matmul(a, b): both tensors need at least two axes
#include "seed_axes.hpp"

int main() {
    auto w = shaped::torch::rand<d_out, d_out>();
    auto row = shaped::torch::rand<num_tokens, d_out>();
    auto y = shaped::matmul(row, w);
    (void)y;
#ifdef SHAPE_BUG
    auto v = shaped::torch::rand<d_out>();
    auto bad = shaped::matmul(v, w);
    (void)bad;
#endif
}
