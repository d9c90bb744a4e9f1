// A name on the right that the left does not have: rearrange cannot make an axis up.
// expect-error: shaped::rearrange<Pattern>(x): a name on the right is not on the left
// expect-errors: 1
#include <shaped/ops/rearrange.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> queries;
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> context_vec;
#ifdef SHAPE_BUG
    auto y = shaped::rearrange<"batch num_tokens d_out -> batch num_heads num_tokens d_out">(queries);
#else
    auto y = shaped::rearrange<"batch num_tokens d_out -> batch d_out num_tokens">(queries);
#endif
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + context_vec.numel() > 0 ? 0 : 1);
}
