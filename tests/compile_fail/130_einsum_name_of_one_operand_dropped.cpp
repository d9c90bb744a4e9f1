// A name of one operand only, missing on the right: torch.einsum sums it out; here a contraction sums only
// over the names the operands share, and a lone axis that vanished is most often a slip.
// expect-error: shaped::einsum<Pattern>(a, b): a name of one operand only is missing on the right
// expect-errors: 1
#include <shaped/ops/einsum.hpp>

#include "seed_axes.hpp"

using keys = shaped::key<num_tokens>;

int main() {
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> queries;
    shaped::tensor<float, batch, num_heads, keys, head_dim> keys_;
#ifdef SHAPE_BUG
    auto y = shaped::einsum<"batch num_heads num_tokens head_dim, batch num_heads keys head_dim -> batch num_heads keys", shaped::let<"keys", keys>>(queries, keys_);
#else
    auto y = shaped::einsum<"batch num_heads num_tokens head_dim, batch num_heads keys head_dim -> batch num_heads num_tokens keys", shaped::let<"keys", keys>>(queries, keys_);
#endif
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + keys_.numel() > 0 ? 0 : 1);
}
