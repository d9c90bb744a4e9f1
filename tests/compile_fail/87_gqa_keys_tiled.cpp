// Grouped-query attention's keys expanded with repeat (tiled: kv heads 0, 1, 0, 1) where the checkpoint
// groups the query heads by key/value head (0, 0, 1, 1: repeat_interleave). Every shape is right and PyTorch
// gives wrong numbers: query head 1 meets key/value head 1 instead of 0. The tiled heads are
// merged<group_size, num_kv_heads>, the query heads num_kv_heads × group_size: the same factors in another
// order, not the same axis.
// expect-error: one side's heads are the other's factors in another order
// expect-context: num_kv_heads
// expect-context: group_size
#include "gqa_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto k = shaped::torch::rand<batch, num_kv_heads, num_keys, head_dim>();
    auto scores = shaped::matmul(q, k.repeat_interleave<group_size, 1>().transpose<2, 3>());
    (void)scores;
#ifdef SHAPE_BUG
    auto bad = shaped::matmul(q, k.repeat<group_size, 1>().transpose<2, 3>());
    (void)bad;
#endif
}
