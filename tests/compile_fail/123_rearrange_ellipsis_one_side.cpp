// ... on the left only: it stands for the same axes on both sides, so it is written on both or neither.
// expect-error: shaped::rearrange<Pattern>(x): ... stands for the same axes on both sides
// expect-errors: 1
#include <shaped/ops/rearrange.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> queries;
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> context_vec;
#ifdef SHAPE_BUG
    auto y = shaped::rearrange<"... num_tokens d_out -> d_out num_tokens">(queries);
#else
    auto y = shaped::rearrange<"... num_tokens d_out -> ... d_out num_tokens">(queries);
#endif
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + context_vec.numel() > 0 ? 0 : 1);
}
