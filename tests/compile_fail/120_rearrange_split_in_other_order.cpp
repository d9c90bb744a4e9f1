// d_out split as (head_dim num_heads): d_out is num_heads outermost, so that group is another axis of the
// same extent (PyTorch would split it silently and mix the heads).
// expect-error: shaped::rearrange<Pattern>(x): the left side must spell x's axes in order
// expect-errors: 1
#include <shaped/ops/rearrange.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> queries;
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> context_vec;
#ifdef SHAPE_BUG
    auto y = shaped::rearrange<"batch num_tokens (head_dim num_heads) -> batch num_heads num_tokens head_dim", num_heads, head_dim>(queries);
#else
    auto y = shaped::rearrange<"batch num_tokens (num_heads head_dim) -> batch num_heads num_tokens head_dim", num_heads, head_dim>(queries);
#endif
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + context_vec.numel() > 0 ? 0 : 1);
}
