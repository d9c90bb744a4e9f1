// Converting a query projection's RoPE pair layout with the key/value heads' count: the rows would be moved
// in blocks of the wrong size. The conversion takes the projection's heads and head_dim and checks them
// against its output axis.
// expect-error: proj's output axis must be NumHeads * HeadDim
// expect-context: num_kv_heads
#include "gqa_axes.hpp"

struct d_out : shaped::product<"d_out", num_heads, head_dim> {};

int main() {
    using shaped::rope_layout;
    shaped::nn::linear<d_in, d_out> W_query(shaped::nn::skip_init, false);
    shaped::nn::convert_rope_layout<rope_layout::interleaved, rope_layout::split_halves, num_heads, head_dim>(W_query);
#ifdef SHAPE_BUG
    shaped::nn::convert_rope_layout<rope_layout::interleaved, rope_layout::split_halves, num_kv_heads, head_dim>(W_query);
#endif
}
