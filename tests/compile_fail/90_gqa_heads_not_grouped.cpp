// A grouped-query module given query heads declared as a bare count, 4: the module cannot know which
// key/value head each query head reads. Declared as num_kv_heads × group_size, it can (the twin).
// expect-error: num_heads must be declared as the key/value heads times the group
// expect-context: num_kv_heads
#include "gqa_axes.hpp"

struct flat_heads : shaped::axis<"num_heads", 4> {};

int main() {
    shaped::nn::grouped_query_attention<d_in, num_heads, num_kv_heads, head_dim, context_length> att(
        shaped::nn::skip_init);
    (void)att;
#ifdef SHAPE_BUG
    shaped::nn::grouped_query_attention<d_in, flat_heads, num_kv_heads, head_dim, context_length> bad(
        shaped::nn::skip_init);
    (void)bad;
#endif
}
