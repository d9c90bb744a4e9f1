// A (batch, q, k) mask applied to (batch, num_heads, q, k) scores where batch == num_heads: PyTorch
// broadcasts it silently onto the head axis. Axes line up by name: batch is not num_heads.
// expect-error: shaped::masked_fill(x, mask, value): mask's axes, aligned from the right, must be the same axes as x's
// expect-context: mask_axes<shaped::diag::sized<batch, 2>, shaped::diag::sized<num_tokens, 4>, shaped::diag::sized<shaped::key<num_tokens>, 4>
#include <limits>

#include "attention_axes.hpp"

int main() {
    auto scores = shaped::torch::rand<batch, num_heads, num_tokens, num_keys>();
    auto mask = shaped::torch::rand<batch, num_tokens, num_keys>().to<bool>();
    auto masked = scores.masked_fill(mask.unsqueeze<1>(), -std::numeric_limits<float>::infinity());
    (void)masked;
#ifdef SHAPE_BUG
    auto bad = scores.masked_fill(mask, -std::numeric_limits<float>::infinity());
    (void)bad;
#endif
}
