// Grouped queries against keys that were never expanded to the query heads: PyTorch's matmul fails here
// only when the head counts do not broadcast (and runs when num_kv_heads is 1, broadcasting one key head
// to every query head, which is right for multi-query attention but hides a forgotten expansion elsewhere).
// expect-error: one side has the key/value heads, the other the query heads grouped over them
// expect-context: num_kv_heads
#include "gqa_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto k = shaped::torch::rand<batch, num_kv_heads, num_keys, head_dim>();
    auto scores = shaped::matmul(q, k.repeat_interleave<group_size, 1>().transpose<2, 3>());
    (void)scores;
#ifdef SHAPE_BUG
    auto bad = shaped::matmul(q, k.transpose<2, 3>());
    (void)bad;
#endif
}
