// Keys and values viewed into heads but not transposed: (b, num_tokens, num_heads, head_dim) where the
// queries are (b, num_heads, num_tokens, head_dim). With batch == num_heads == 2, PyTorch attends over heads.
// expect-error: shaped::scaled_dot_product_attention(q, k, v): q, k and v must have the same batch axes
// expect-context: key_axes<shaped::diag::sized<batch, 2>, shaped::diag::sized<num_tokens, 4>
#include <shaped/ops/scaled_dot_product_attention.hpp>

#include "attention_axes.hpp"

int main() {
    auto x = shaped::torch::rand<batch, num_tokens, d_out>();
    auto q = x.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
    auto k = x.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>().rename<batch, num_heads, num_keys, head_dim>();
    auto context = shaped::scaled_dot_product_attention(q, k, k, shaped::is_causal);
    (void)context;
#ifdef SHAPE_BUG
    auto k_heads = x.view<batch, num_tokens, num_heads, head_dim>();  // .transpose<1, 2>() forgotten
    auto bad = shaped::scaled_dot_product_attention(q, k_heads, k_heads);
    (void)bad;
#endif
}
