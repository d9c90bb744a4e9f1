// Assigning the 18-wide concatenation of full-width heads to a (batch, num_tokens, d_out) result.
// expect-error: shaped::tensor: cannot convert a tensor to one with other axes
// expect-context: expected_axes<shaped::diag::sized<batch, 1>, shaped::diag::sized<num_tokens, 2>, shaped::diag::sized<d_out, 6>
// expect-context: shaped::diag::sized<shaped::concat<d_out, d_out, d_out>, 18>
#include <array>

#include "seed_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_tokens, d_out>();
    std::array<shaped::tensor<float, batch, num_tokens, d_out>, num_heads::extent> heads{q, q, q};
    auto wide = shaped::cat<-1>(heads);
    (void)wide;
#ifdef SHAPE_BUG
    shaped::tensor<float, batch, num_tokens, d_out> context_vec = wide;
    (void)context_vec;
#endif
}
