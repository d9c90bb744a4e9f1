// An axis of the left missing on the right: rearrange keeps every axis; reduce removes them.
// expect-error: shaped::rearrange<Pattern>(x): a name on the left is missing on the right
// expect-errors: 1
#include <shaped/ops/rearrange.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> queries;
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> context_vec;
#ifdef SHAPE_BUG
    auto y = shaped::rearrange<"batch num_heads num_tokens head_dim -> batch num_tokens head_dim">(context_vec);
#else
    auto y = shaped::rearrange<"batch num_heads num_tokens head_dim -> batch num_tokens num_heads head_dim">(context_vec);
#endif
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + context_vec.numel() > 0 ? 0 : 1);
}
