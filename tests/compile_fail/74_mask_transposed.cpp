// A mask built as (keys, queries) for scores of (queries, keys): the right axes in another order. Square,
// so PyTorch applies it, and the causal mask becomes its mirror image.
// expect-error: shaped::masked_fill(x, mask, value): mask's axes, aligned from the right, must be the same axes as x's; they are x's axes in another order
// expect-context: mask_axes<shaped::diag::sized<shaped::key<num_tokens>, 4>, shaped::diag::sized<num_tokens, 4>
#include <limits>

#include "attention_axes.hpp"

int main() {
    auto scores = shaped::torch::rand<num_tokens, num_keys>();
    auto mask = shaped::torch::rand<num_keys, num_tokens>();
    auto masked = scores.masked_fill(mask.transpose<0, 1>(), -std::numeric_limits<float>::infinity());
    (void)masked;
#ifdef SHAPE_BUG
    auto bad = scores.masked_fill(mask, -std::numeric_limits<float>::infinity());
    (void)bad;
#endif
}
