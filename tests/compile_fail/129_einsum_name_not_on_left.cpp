// A name on the right that neither operand has (head_dim is summed over; the scores have no head_dim).
// expect-error: shaped::einsum<Pattern>(a, b): a name on the right is on neither operand
// expect-errors: 1
#include <shaped/ops/einsum.hpp>

#include "seed_axes.hpp"

using keys = shaped::key<num_tokens>;

int main() {
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> queries;
    shaped::tensor<float, batch, num_heads, keys, head_dim> keys_;
#ifdef SHAPE_BUG
    auto y = shaped::einsum<"batch num_heads num_tokens head_dim, batch num_heads keys head_dim -> batch num_heads num_tokens keys d_out", shaped::let<"keys", keys>>(queries, keys_);
#else
    auto y = shaped::einsum<"batch num_heads num_tokens head_dim, batch num_heads keys head_dim -> batch num_heads num_tokens keys", shaped::let<"keys", keys>>(queries, keys_);
#endif
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + keys_.numel() > 0 ? 0 : 1);
}
