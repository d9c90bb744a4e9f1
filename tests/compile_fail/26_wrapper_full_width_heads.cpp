// The wrapper's heads built full-width (d_out each, as the book's MultiHeadAttentionWrapper) and fed to
// the weight-split form's out_proj (d_out -> d_out); head_dim-wide heads join back into d_out.
// expect-error: shaped::nn::linear<In, Out>(x): x's last axis must be the layer's in_features axis
// expect-context: input_last<shaped::diag::sized<shaped::concat<d_out, d_out>, 16>
#include "attention_axes.hpp"

int main() {
    shaped::torch::manual_seed(123);
    shaped::nn::multi_head_attention_wrapper<d_in, head_dim, context_length, num_heads> heads(0.0);
    shaped::nn::linear<d_out, d_out> out_proj;
    auto x = shaped::torch::rand<batch, num_tokens, d_in>();
    auto y = out_proj(heads(x));
    (void)y;
#ifdef SHAPE_BUG
    shaped::nn::multi_head_attention_wrapper<d_in, d_out, context_length, num_heads> full_width(0.0);
    auto bad = out_proj(full_width(x));
    (void)bad;
#endif
}
