// One value per key: the values must run along the keys' axis. Values left on num_tokens (never renamed to
// the keys' axis) are another axis, though of the same length.
// expect-error: shaped::scaled_dot_product_attention(q, k, v): k and v must run along the same key axis
#include <shaped/ops/scaled_dot_product_attention.hpp>

#include "attention_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto k = shaped::torch::rand<batch, num_heads, num_keys, head_dim>();
    auto v = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto context = shaped::scaled_dot_product_attention(q, k, v.rename<batch, num_heads, num_keys, head_dim>(), shaped::is_causal);
    (void)context;
#ifdef SHAPE_BUG
    auto bad = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal);
    (void)bad;
#endif
}
