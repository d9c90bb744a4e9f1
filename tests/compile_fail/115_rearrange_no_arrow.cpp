// A pattern without its arrow: einops raises when the line runs; here the pattern is parsed as the program
// compiles, and the error names what is wrong (diag::pattern_error) and where (diag::at_byte).
// expect-error: shaped::rearrange<Pattern>(x): the pattern is not 'left -> right'
// expect-errors: 1
#include <shaped/ops/rearrange.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> queries;
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> context_vec;
#ifdef SHAPE_BUG
    auto y = shaped::rearrange<"batch num_tokens (num_heads head_dim) batch num_heads num_tokens head_dim", num_heads, head_dim>(queries);
#else
    auto y = shaped::rearrange<"batch num_tokens (num_heads head_dim) -> batch num_heads num_tokens head_dim", num_heads, head_dim>(queries);
#endif
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + context_vec.numel() > 0 ? 0 : 1);
}
