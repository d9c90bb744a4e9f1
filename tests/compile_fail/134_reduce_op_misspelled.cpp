// The reduction misspelled: reduce takes einops' names for it, checked when the program compiles (einops
// raises when the line runs).
// expect-error: shaped::reduce<Pattern, Op>(x): Op is 'sum', 'mean' or 'max', as einops spells them
// expect-errors: 1
#include <shaped/ops/reduce_pattern.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> x;
#ifdef SHAPE_BUG
    auto y = shaped::reduce<"batch num_tokens d_out -> batch d_out", "average">(x);
#else
    auto y = shaped::reduce<"batch num_tokens d_out -> batch d_out", "mean">(x);
#endif
    return static_cast<int>(y.numel()) - 6;
}
