// The left side written in the order wanted, not the order x has: the reduction reads x's axes as they are,
// and the right side orders what remains.
// expect-error: shaped::reduce<Pattern, Op>(x): the left side must spell x's axes in order, axis for axis
// expect-errors: 1
#include <shaped/ops/reduce_pattern.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> context;
#ifdef SHAPE_BUG
    auto y = shaped::reduce<"batch num_tokens num_heads head_dim -> batch num_tokens head_dim", "sum">(context);
#else
    auto y = shaped::reduce<"batch num_heads num_tokens head_dim -> batch num_tokens head_dim", "sum">(context);
#endif
    return static_cast<int>(y.numel()) - 4;
}
