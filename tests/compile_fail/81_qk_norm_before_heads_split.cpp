// QK-norm applied to the projected queries before the heads are split: RMSNorm over head_dim given
// (batch, num_tokens, d_out). Qwen3 and Gemma 3 normalise each head's queries and keys, after the view to
// (batch, num_tokens, num_heads, head_dim) and the transpose; PyTorch finds the mistake only when the line
// runs, and not at all when there is one head.
// expect-error: shaped::nn::rms_norm<Emb>(x): x's last axis must be the axis the norm normalises
// expect-context: in_features<shaped::diag::sized<head_dim, 4>
// expect-context: tensor_axes<shaped::diag::sized<batch, 2>, shaped::diag::sized<num_tokens, 4>, shaped::diag::sized<d_out, 8>
#include "attention_axes.hpp"

int main() {
    shaped::nn::linear<d_in, d_out> W_query(shaped::nn::skip_init, false);
    shaped::nn::rms_norm<head_dim> q_norm;
    auto x = shaped::torch::rand<batch, num_tokens, d_in>();
    auto queries = W_query(x).view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
    auto normed = q_norm(queries);  // (batch, num_heads, num_tokens, head_dim)
    (void)normed;
#ifdef SHAPE_BUG
    auto bad = q_norm(W_query(x));
    (void)bad;
#endif
}
