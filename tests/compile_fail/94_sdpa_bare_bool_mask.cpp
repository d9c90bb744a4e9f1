// A bare bool tensor as scaled_dot_product_attention's attn_mask: true means "may attend" to PyTorch and
// "masked out" to the book's masked_fill, and a bare bool says neither. shaped asks for the meaning.
// expect-error: a bool mask must say what true means
#include <shaped/ops/scaled_dot_product_attention.hpp>

#include "attention_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto k = shaped::torch::rand<batch, num_heads, num_keys, head_dim>();
    auto v = shaped::torch::rand<batch, num_heads, num_keys, head_dim>();
    auto triangle = shaped::triu<1>(shaped::ones<num_tokens, num_keys>()).to<bool>();
    auto context = shaped::scaled_dot_product_attention(q, k, v, !shaped::true_masks(triangle));
    (void)context;
#ifdef SHAPE_BUG
    auto bad = shaped::scaled_dot_product_attention(q, k, v, triangle);
    (void)bad;
#endif
}
