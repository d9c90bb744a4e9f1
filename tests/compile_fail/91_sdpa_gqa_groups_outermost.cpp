// Query heads declared with the group outermost, group_size × num_kv_heads: query head h would read
// key/value head h % num_kv_heads, the tiled order, which Hugging Face's checkpoints do not use. Grouped
// heads must have the key/value heads outermost.
// expect-error: except that q's heads may group k's and v's
// expect-context: num_kv_heads
#include "gqa_axes.hpp"

struct heads_by_group : shaped::product<"num_heads", group_size, num_kv_heads> {};

int main() {
    auto k = shaped::torch::rand<batch, num_kv_heads, num_keys, head_dim>();
    auto v = shaped::torch::rand<batch, num_kv_heads, num_keys, head_dim>();
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto context = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal);
    (void)context;
#ifdef SHAPE_BUG
    auto q_bad = shaped::torch::rand<batch, heads_by_group, num_tokens, head_dim>();
    auto bad = shaped::scaled_dot_product_attention(q_bad, k, v, shaped::is_causal);
    (void)bad;
#endif
}
