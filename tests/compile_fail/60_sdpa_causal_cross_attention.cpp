// A causal mask orders keys by the queries' positions: keys of another sequence (an encoder's tokens in
// cross-attention) have no position among the queries, so is_causal does not apply to them.
// expect-error: shaped::scaled_dot_product_attention(q, k, v, is_causal): a causal mask orders the keys by the queries' positions
#include <shaped/ops/scaled_dot_product_attention.hpp>

#include "attention_axes.hpp"

struct encoder_tokens : shaped::axis<"encoder_tokens", 4> {};

int main() {
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto k = shaped::torch::rand<batch, num_heads, encoder_tokens, head_dim>();
    auto context = shaped::scaled_dot_product_attention(q, k, k);  // not causal: every key
    (void)context;
#ifdef SHAPE_BUG
    auto bad = shaped::scaled_dot_product_attention(q, k, k, shaped::is_causal);
    (void)bad;
#endif
}
