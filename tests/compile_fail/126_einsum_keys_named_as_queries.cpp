// The keys' token axis named num_tokens, as if it were the queries': the keys' axis is key<num_tokens>, so
// this contraction would be each token with itself, not the scores (a query axis is not a key axis).
// expect-error: shaped::einsum<Pattern>(a, b): b's side must name b's axes in order
// expect-errors: 1
#include <shaped/ops/einsum.hpp>

#include "seed_axes.hpp"

using keys = shaped::key<num_tokens>;

int main() {
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> queries;
    shaped::tensor<float, batch, num_heads, keys, head_dim> keys_;
#ifdef SHAPE_BUG
    auto y = shaped::einsum<"batch num_heads num_tokens head_dim, batch num_heads num_tokens head_dim -> batch num_heads num_tokens">(queries, keys_);
#else
    auto y = shaped::einsum<"batch num_heads num_tokens head_dim, batch num_heads keys head_dim -> batch num_heads num_tokens keys", shaped::let<"keys", keys>>(queries, keys_);
#endif
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + keys_.numel() > 0 ? 0 : 1);
}
