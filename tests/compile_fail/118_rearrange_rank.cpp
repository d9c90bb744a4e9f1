// A left side that spells fewer axes than x has (the batch forgotten); ... would stand for it.
// expect-error: shaped::rearrange<Pattern>(x): the left side spells another number of axes than x has
// expect-errors: 1
#include <shaped/ops/rearrange.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> queries;
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> context_vec;
#ifdef SHAPE_BUG
    auto y = shaped::rearrange<"num_tokens (num_heads head_dim) -> num_heads num_tokens head_dim", num_heads, head_dim>(queries);
#else
    auto y = shaped::rearrange<"... num_tokens (num_heads head_dim) -> ... num_heads num_tokens head_dim", num_heads, head_dim>(queries);
#endif
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + context_vec.numel() > 0 ? 0 : 1);
}
