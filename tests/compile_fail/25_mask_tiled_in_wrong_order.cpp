// A per-head mask for (batch*num_heads, q, k) scores tiled with repeat (heads outer) where
// repeat_interleave (batch outer, as the scores' view made it) was meant.
// expect-error: shaped::masked_fill(x, mask, value): mask's axes, aligned from the right, must be the same axes as x's; a merged axis has the same factors in another order
// expect-context: repeat_interleave<New, Dim>() where repeat<New, Dim>() was used
// expect-context: shaped::diag::sized<shaped::merged<num_heads, batch>, 4>
#include <limits>

#include "attention_axes.hpp"

int main() {
    auto scores = shaped::torch::rand<shaped::merged<batch, num_heads>, num_tokens, num_keys>();
    auto mask = shaped::torch::rand<batch, num_tokens, num_keys>().to<bool>();
    auto masked = scores.masked_fill(mask.repeat_interleave<num_heads, 0>(), -std::numeric_limits<float>::infinity());
    (void)masked;
#ifdef SHAPE_BUG
    auto bad = scores.masked_fill(mask.repeat<num_heads, 0>(), -std::numeric_limits<float>::infinity());
    (void)bad;
#endif
}
