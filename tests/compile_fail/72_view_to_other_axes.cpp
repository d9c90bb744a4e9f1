// A view used to rename: (batch, num_tokens, d_out) as (batch, num_tokens, width), both 8 wide, which PyTorch's
// view does without a word; shaped's view names only x's own factors, and the hint points to rename.
// expect-error: shaped::view<To...>(x): view only splits and merges adjacent axes, in order, so the axes must be x's factors; these are other axes
#include "attention_axes.hpp"

struct width : shaped::axis<"width", 8> {};

int main() {
    auto x = shaped::torch::rand<batch, num_tokens, d_out>();
    auto same = x.view<batch, num_tokens, num_heads, head_dim>();
    (void)same;
#ifdef SHAPE_BUG
    auto bad = x.view<batch, num_tokens, width>();
    (void)bad;
#endif
}
