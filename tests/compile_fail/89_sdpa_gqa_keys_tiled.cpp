// scaled_dot_product_attention given keys and values tiled with repeat for grouped query heads: the fused
// op takes the key/value heads as they are (PyTorch 2.5's enable_gqa=True), or expanded in the checkpoint's
// order; tiled ones pair query heads with the wrong key/value heads.
// expect-error: q's heads and k's are the same factors in another order
// expect-context: group_size
#include "gqa_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto k = shaped::torch::rand<batch, num_kv_heads, num_keys, head_dim>();
    auto v = shaped::torch::rand<batch, num_kv_heads, num_keys, head_dim>();
    auto context = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal);  // grouped, read in place
    (void)context;
#ifdef SHAPE_BUG
    auto bad = shaped::scaled_dot_product_attention(q, k.repeat<group_size, 1>(), v.repeat<group_size, 1>(),
                                                    shaped::is_causal);
    (void)bad;
#endif
}
