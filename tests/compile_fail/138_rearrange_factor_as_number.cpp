// The number of heads passed as a number, as einops takes h=12: the factors of a split are axis types,
// whose extents their types carry.
// expect-error: shaped::rearrange<Pattern, ...>(x): after the pattern come axis types, not numbers
// expect-errors: 1
#include <shaped/ops/rearrange.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> queries;
#ifdef SHAPE_BUG
    auto y = shaped::rearrange<"batch num_tokens (num_heads head_dim) -> batch num_heads num_tokens head_dim", 3>(queries);
#else
    auto y = shaped::rearrange<"batch num_tokens (num_heads head_dim) -> batch num_heads num_tokens head_dim", num_heads, head_dim>(queries);
#endif
    return static_cast<int>(y.numel()) - 6;
}
