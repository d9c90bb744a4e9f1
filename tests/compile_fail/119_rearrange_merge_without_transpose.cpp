// The seed's merge without the transpose, as a pattern: the context vectors are (batch, num_heads,
// num_tokens, head_dim), and the left side spells them as if the tokens came first. PyTorch's view reads the
// elements in the wrong order; here the left side must spell x's axes as they are, and the reordering is the
// right side's job.
// expect-error: shaped::rearrange<Pattern>(x): the left side must spell x's axes in order
// expect-errors: 1
#include <shaped/ops/rearrange.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> queries;
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> context_vec;
#ifdef SHAPE_BUG
    auto y = shaped::rearrange<"batch num_tokens num_heads head_dim -> batch num_tokens (num_heads head_dim)">(context_vec);
#else
    auto y = shaped::rearrange<"batch num_heads num_tokens head_dim -> batch num_tokens (num_heads head_dim)">(context_vec);
#endif
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + context_vec.numel() > 0 ? 0 : 1);
}
