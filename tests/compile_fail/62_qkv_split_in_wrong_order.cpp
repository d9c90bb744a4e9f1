// The combined projection's 3·d_out is (3, num_heads, head_dim), queries outermost. Split with num_heads
// outermost, as view(b, num_tokens, num_heads, 3, head_dim) would in PyTorch, every head mixes the three.
// expect-error: shaped::view<To...>(x): view only splits and merges adjacent axes, in order
// expect-context: qkv_dim, 24>
// expect-context: a merged axis is split back in another order than it was merged
#include <shaped/nn/multi_head_attention_sdpa.hpp>

#include "attention_axes.hpp"

using mha = shaped::nn::multi_head_attention_sdpa<d_in, d_out, context_length, num_heads>;

int main() {
    mha m(0.0);
    auto x = shaped::torch::rand<batch, num_tokens, d_in>();
    auto parts = m.qkv(x).view<batch, num_tokens, shaped::nn::qkv_part, num_heads, mha::head_dim>();
    (void)parts;
#ifdef SHAPE_BUG
    auto bad = m.qkv(x).view<batch, num_tokens, num_heads, shaped::nn::qkv_part, mha::head_dim>();
    (void)bad;
#endif
}
