// The book's causal mask, true where a key is masked out, passed as scaled_dot_product_attention's
// attn_mask, which is true where a query may attend: every query would see exactly the future keys and
// nothing else (the book's issue #1061, where every future token was visible).
// expect-error: this mask is true where a key is masked out
// expect-context: mask_axes<shaped::diag::sized<num_tokens, 4>
#include <shaped/ops/scaled_dot_product_attention.hpp>

#include "attention_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto k = shaped::torch::rand<batch, num_heads, num_keys, head_dim>();
    auto v = shaped::torch::rand<batch, num_heads, num_keys, head_dim>();
    auto mask = shaped::true_masks(shaped::triu<1>(shaped::ones<num_tokens, num_keys>()));
    auto context = shaped::scaled_dot_product_attention(q, k, v, !mask);
    (void)context;
#ifdef SHAPE_BUG
    auto bad = shaped::scaled_dot_product_attention(q, k, v, mask);
    (void)bad;
#endif
}
