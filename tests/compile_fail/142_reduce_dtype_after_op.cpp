// The element type passed after the op, as torch.mean(x, dim, dtype=torch.float32) takes one: what
// follows the op are the axes of the pattern's splits, or let names.
// expect-error: shaped::reduce<Pattern, Op>(x): after the op come axis types (the factors of a split) or shaped::let<Name, Axis>
// expect-errors: 1
#include <shaped/ops/reduce_pattern.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> x;
#ifdef SHAPE_BUG
    auto y = shaped::reduce<"batch num_tokens d_out -> batch d_out", "mean", double>(x);
#else
    auto y = shaped::reduce<"batch num_tokens d_out -> batch d_out", "mean">(x);
#endif
    return static_cast<int>(y.numel()) - 6;
}
