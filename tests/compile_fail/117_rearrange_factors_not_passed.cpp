// A split whose factors are not passed: x carries d_out, not num_heads and head_dim, so the pattern cannot
// know them (einops needs h=12 for the same reason).
// expect-error: shaped::rearrange<Pattern>(x): a name on the left is no axis of x
// expect-errors: 1
#include <shaped/ops/rearrange.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> queries;
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> context_vec;
#ifdef SHAPE_BUG
    auto y = shaped::rearrange<"batch num_tokens (num_heads head_dim) -> batch num_heads num_tokens head_dim">(queries);
#else
    auto y = shaped::rearrange<"batch num_tokens (num_heads head_dim) -> batch num_heads num_tokens head_dim", num_heads, head_dim>(queries);
#endif
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + context_vec.numel() > 0 ? 0 : 1);
}
