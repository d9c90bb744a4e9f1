// A group in an einsum pattern: einsum names axes one by one (torch.einsum has no groups); rearrange splits
// and merges.
// expect-error: shaped::einsum<Pattern>(a, b): einsum names every axis, without (a b) groups or ...
// expect-errors: 1
#include <shaped/ops/einsum.hpp>

#include "seed_axes.hpp"

using keys = shaped::key<num_tokens>;

int main() {
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> queries;
    shaped::tensor<float, batch, num_heads, keys, head_dim> keys_;
#ifdef SHAPE_BUG
    auto y = shaped::einsum<"batch num_heads num_tokens head_dim, batch num_heads keys head_dim -> batch num_tokens (num_heads keys)", shaped::let<"keys", keys>>(queries, keys_);
#else
    auto y = shaped::einsum<"batch num_heads num_tokens head_dim, batch num_heads keys head_dim -> batch num_heads num_tokens keys", shaped::let<"keys", keys>>(queries, keys_);
#endif
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + keys_.numel() > 0 ? 0 : 1);
}
