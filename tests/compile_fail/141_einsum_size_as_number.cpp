// A size passed after an einsum pattern: the operands' types carry every extent.
// expect-error: shaped::einsum<Pattern>(a, b): after the pattern come names, shaped::let<Name, Axis>, not numbers
// expect-errors: 1
#include <shaped/ops/einsum.hpp>

#include "seed_axes.hpp"

using keys = shaped::key<num_tokens>;

int main() {
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> queries;
    shaped::tensor<float, batch, num_heads, keys, head_dim> keys_;
#ifdef SHAPE_BUG
    auto y = shaped::einsum<"batch num_heads num_tokens head_dim, batch num_heads keys head_dim -> batch num_heads num_tokens keys", 2>(queries, keys_);
#else
    auto y = shaped::einsum<"batch num_heads num_tokens head_dim, batch num_heads keys head_dim -> batch num_heads num_tokens keys", shaped::let<"keys", keys>>(queries, keys_);
#endif
    return static_cast<int>(y.numel()) - 12;
}
