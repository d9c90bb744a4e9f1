// A name twice on one side: each axis is spelled once (a grammar error, found before any axis is looked up).
// expect-error: shaped::rearrange<Pattern>(x): the pattern is not 'left -> right'
// expect-errors: 1
#include <shaped/ops/rearrange.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> queries;
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> context_vec;
#ifdef SHAPE_BUG
    auto y = shaped::rearrange<"batch num_tokens num_tokens -> batch num_tokens">(queries);
#else
    auto y = shaped::rearrange<"batch num_tokens d_out -> batch num_tokens d_out">(queries);
#endif
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + context_vec.numel() > 0 ? 0 : 1);
}
