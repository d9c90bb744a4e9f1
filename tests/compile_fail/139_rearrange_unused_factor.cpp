// The heads passed as a factor to a pattern that splits nothing: the group (num_heads head_dim) was
// forgotten, and the factor is no name's.
// expect-error: shaped::rearrange<Pattern, ...>(x): an axis passed after the pattern is no name's
// expect-errors: 1
#include <shaped/ops/rearrange.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> queries;
#ifdef SHAPE_BUG
    auto y = shaped::rearrange<"batch num_tokens d_out -> batch d_out num_tokens", num_heads>(queries);
#else
    auto y = shaped::rearrange<"batch num_tokens d_out -> batch d_out num_tokens">(queries);
#endif
    return static_cast<int>(y.numel()) - 12;
}
