// One short name for the query and the key axis, through two lets: the same name on both operands is one
// axis, and these are two.
// expect-error: shaped::einsum<Pattern>(a, b): a name of both operands stands for one axis in a and another in b
// expect-errors: 1
#include <shaped/ops/einsum.hpp>

#include "seed_axes.hpp"

using keys = shaped::key<num_tokens>;

int main() {
    shaped::tensor<float, batch, num_heads, num_tokens, head_dim> queries;
    shaped::tensor<float, batch, num_heads, keys, head_dim> keys_;
#ifdef SHAPE_BUG
    auto y = shaped::einsum<"b h t d, b h t d -> b h t", shaped::let<"b", batch>, shaped::let<"h", num_heads>, shaped::let<"t", num_tokens>, shaped::let<"t", keys>, shaped::let<"d", head_dim>>(queries, keys_);
#else
    auto y = shaped::einsum<"b h t d, b h s d -> b h t s", shaped::let<"b", batch>, shaped::let<"h", num_heads>, shaped::let<"t", num_tokens>, shaped::let<"s", keys>, shaped::let<"d", head_dim>>(queries, keys_);
#endif
    return static_cast<int>(y.numel()) - static_cast<int>(y.numel()) + (queries.numel() + keys_.numel() > 0 ? 0 : 1);
}
