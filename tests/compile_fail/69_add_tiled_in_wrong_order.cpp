// Per-head biases for (batch*num_heads, ...) scores made with repeat where the scores' axis came from a view of
// (batch, num_heads): merged<num_heads, batch> against merged<batch, num_heads>, the same factors in another
// order. PyTorch adds them: the extents agree.
// expect-error: shaped: elementwise op on shapes that do not broadcast; a merged axis has the same factors in another order
// expect-context: lhs_axes<shaped::diag::sized<shaped::merged<batch, num_heads>, 4>
// expect-context: rhs_axes<shaped::diag::sized<shaped::merged<num_heads, batch>, 4>
#include "attention_axes.hpp"

int main() {
    auto scores = shaped::torch::rand<batch, num_heads, num_tokens, num_keys>()
                      .view<shaped::merged<batch, num_heads>, num_tokens, num_keys>();
    auto bias = shaped::torch::rand<batch, num_tokens, num_keys>();
    auto biased = scores + bias.repeat_interleave<num_heads, 0>();
    (void)biased;
#ifdef SHAPE_BUG
    auto bad = scores + bias.repeat<num_heads, 0>();
    (void)bad;
#endif
}
