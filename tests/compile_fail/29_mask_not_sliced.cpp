// The causal mask applied whole (context_length x context_length) to scores of num_tokens: PyTorch
// fails at run time ("The size of tensor a (2) must match the size of tensor b (6)").
// expect-error: shaped::masked_fill(x, mask, value): mask's axes, aligned from the right, must be the same axes
// expect-context: mask_axes<shaped::diag::sized<context_length, 6>, shaped::diag::sized<context_length, 6>
#include <limits>

#include "seed_axes.hpp"

int main() {
    auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>()).to<bool>();
    auto scores = shaped::torch::rand<batch, num_tokens, num_tokens>();
    auto masked = scores.masked_fill(mask.slice<num_tokens, num_tokens>(), -std::numeric_limits<float>::infinity());
    (void)masked;
#ifdef SHAPE_BUG
    auto bad = scores.masked_fill(mask, -std::numeric_limits<float>::infinity());
    (void)bad;
#endif
}
