// The split's factors passed as numbers, as einops takes h=3: the factors are axis types, whose extents
// their types carry.
// expect-error: shaped::reduce<Pattern, Op, ...>(x): after the op come axis types, not numbers
// expect-errors: 1
#include <shaped/ops/reduce_pattern.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> x;
#ifdef SHAPE_BUG
    auto y = shaped::reduce<"batch num_tokens (num_heads head_dim) -> batch num_heads", "sum", 3, 2>(x);
#else
    auto y = shaped::reduce<"batch num_tokens (num_heads head_dim) -> batch num_heads", "sum", num_heads, head_dim>(x);
#endif
    return static_cast<int>(y.numel()) - 3;
}
