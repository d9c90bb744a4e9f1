// scaled_dot_product_attention computes q @ k.transpose(-2, -1) itself: keys passed transposed, as matmul
// wants them, put head_dim where the key axis belongs. With num_tokens == head_dim == 4, PyTorch runs it.
// expect-error: shaped::scaled_dot_product_attention(q, k, v): q's last axis and k's last axis must be the same axis (head_dim)
#include <shaped/ops/scaled_dot_product_attention.hpp>

#include "attention_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto k = shaped::torch::rand<batch, num_heads, num_keys, head_dim>();
    auto v = shaped::torch::rand<batch, num_heads, num_keys, head_dim>();
    auto context = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal);
    (void)context;
#ifdef SHAPE_BUG
    auto bad = shaped::scaled_dot_product_attention(q, k.transpose<2, 3>(), v, shaped::is_causal);
    (void)bad;
#endif
}
