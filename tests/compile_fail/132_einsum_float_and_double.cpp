// Queries in float, keys in double: torch.einsum refuses the mix when it runs ("expected scalar type Float");
// here it is one error, before the pattern is looked at.
// expect-error: shaped::einsum<Pattern>(a, b): a and b must have the same element type
// expect-errors: 1
#include <shaped/ops/einsum.hpp>

#include "seed_axes.hpp"

using keys = shaped::key<num_tokens>;

int main() {
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> queries;
#ifdef SHAPE_BUG
    shaped::tensor<double, batch, num_heads, keys, head_dim> keys_;
#else
    shaped::tensor<float, batch, num_heads, keys, head_dim> keys_;
#endif
    auto y = shaped::einsum<"batch num_heads num_tokens head_dim, batch num_heads keys head_dim -> batch num_heads num_tokens keys", shaped::let<"keys", keys>>(queries, keys_);
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + keys_.numel() > 0 ? 0 : 1);
}
