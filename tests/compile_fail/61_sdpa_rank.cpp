// Queries split into heads, keys not: q (b, num_heads, num_tokens, head_dim) and k (b, num_keys, d_out).
// expect-error: shaped::scaled_dot_product_attention(q, k, v): q, k and v must have the same rank
#include <shaped/ops/scaled_dot_product_attention.hpp>

#include "attention_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto k = shaped::torch::rand<batch, num_heads, num_keys, head_dim>();
    auto context = shaped::scaled_dot_product_attention(q, k, k, shaped::is_causal);
    (void)context;
#ifdef SHAPE_BUG
    auto k3 = shaped::torch::rand<batch, num_keys, d_out>();
    auto bad = shaped::scaled_dot_product_attention(q, k3, k3, shaped::is_causal);
    (void)bad;
#endif
}
