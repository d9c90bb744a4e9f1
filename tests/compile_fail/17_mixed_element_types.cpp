// matmul of a float tensor with a double tensor: PyTorch raises "expected scalar type Float but found Double".
// expect-error: shaped::matmul(a, b): a and b must have the same element type
#include "seed_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_tokens, d_out>();
    auto k = shaped::torch::rand<batch, num_tokens, d_out>();
    auto scores = shaped::matmul(q, k.transpose<1, 2>().to<float>());
    (void)scores;
#ifdef SHAPE_BUG
    auto bad = shaped::matmul(q, k.transpose<1, 2>().to<double>());
    (void)bad;
#endif
}
