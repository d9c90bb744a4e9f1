// (batch, num_heads) merged into one axis, then split back as (num_heads, batch).
// expect-error: shaped::view<To...>(x): view only splits and merges adjacent axes, in order
// expect-context: to_axes<shaped::diag::sized<num_heads, 2>, shaped::diag::sized<batch, 2>
// expect-context: a merged axis is split back in another order than it was merged
// expect-context: transpose_after<shaped::diag::dims<0, 1>
#include "attention_axes.hpp"

int main() {
    auto context = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto flat = context.view<shaped::merged<batch, num_heads>, num_tokens, head_dim>();
    auto back = flat.view<batch, num_heads, num_tokens, head_dim>();
    (void)back;
#ifdef SHAPE_BUG
    auto bad = flat.view<num_heads, batch, num_tokens, head_dim>();
    (void)bad;
#endif
}
