// rename to an axis of another extent.
// expect-error: shaped::rename<To...>(x): rename keeps the rank and every extent
// expect-context: to_axes<shaped::diag::sized<batch, 1>, shaped::diag::sized<num_tokens, 2>, shaped::diag::sized<num_heads, 3>
#include "seed_axes.hpp"

struct width : shaped::axis<"width", 6> {};

int main() {
    auto x = shaped::torch::rand<batch, num_tokens, d_out>();
    auto y = x.rename<batch, num_tokens, width>();
    (void)y;
#ifdef SHAPE_BUG
    auto bad = x.rename<batch, num_tokens, num_heads>();
    (void)bad;
#endif
}
