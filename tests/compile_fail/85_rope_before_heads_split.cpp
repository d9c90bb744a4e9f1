// RoPE applied to the projected queries before they are split into heads: a table of head_dim given
// (batch, num_tokens, d_out). The book rotates each head's queries and keys, after the view to heads and
// the transpose; PyTorch broadcasts cos of (num_tokens, head_dim) against d_out only when the two happen to
// be equal, which one head gives, and then rotates the wrong pairs.
// expect-error: shaped::nn::rope(x): x's last axis must be the table's head_dim
// expect-context: in_features<shaped::diag::sized<head_dim, 4>
// expect-context: shaped::diag::sized<d_out, 8>
#include "attention_axes.hpp"

int main() {
    shaped::nn::linear<d_in, d_out> W_query(shaped::nn::skip_init, false);
    shaped::nn::rope<context_length, head_dim> rope;
    auto x = shaped::torch::rand<batch, num_tokens, d_in>();
    auto queries = rope(W_query(x).view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>());
    (void)queries;
#ifdef SHAPE_BUG
    auto bad = rope(W_query(x));
    (void)bad;
#endif
}
