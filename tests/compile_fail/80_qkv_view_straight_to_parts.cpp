// The combined projection's output, (batch, num_tokens, 3·d_out), viewed straight to (qkv_part, batch, num_heads,
// num_tokens, head_dim), the shape the bonus notebook gets from view(b, num_tokens, 3, num_heads, head_dim)
// followed by permute(2, 0, 3, 1, 4); the view alone would mix tokens, heads and parts.
// expect-error: shaped::view<To...>(x): view only splits and merges adjacent axes, in order; the axes come out in an order more than one swap away from x's
// expect-context: qkv_dim, 24>
// expect-context: transpose_after<shaped::diag::dims<0, 2>, shaped::diag::dims<1, 2>, shaped::diag::dims<2, 3>
#include <shaped/nn/multi_head_attention_sdpa.hpp>

#include "attention_axes.hpp"

using mha = shaped::nn::multi_head_attention_sdpa<d_in, d_out, context_length, num_heads>;

int main() {
    mha m(0.0);
    auto x = shaped::torch::rand<batch, num_tokens, d_in>();
    auto parts = m.qkv(x).view<batch, num_tokens, shaped::nn::qkv_part, num_heads, mha::head_dim>().permute<2, 0, 3, 1, 4>();
    auto same = m.qkv(x)
                    .view<batch, num_tokens, shaped::nn::qkv_part, num_heads, mha::head_dim>()
                    .transpose<0, 2>()
                    .transpose<1, 2>()
                    .transpose<2, 3>();
    static_assert(std::is_same_v<decltype(parts), decltype(same)>);
#ifdef SHAPE_BUG
    auto bad = m.qkv(x).view<shaped::nn::qkv_part, batch, num_heads, num_tokens, mha::head_dim>();
    (void)bad;
#endif
}
