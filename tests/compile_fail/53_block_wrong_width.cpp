// A transformer block fed tensors of another width: the model's hidden width is emb_dim, not d_in.
// expect-error: shaped::nn::transformer_block(x): x must be (batch, num_tokens, emb_dim)
// expect-context: in_features<shaped::diag::sized<tiny::emb_dim, 4>
#include "gpt_axes.hpp"

struct d_in : shaped::axis<"d_in", 4> {};

int main() {
    shaped::nn::transformer_block<tiny> block;
    auto y = block(shaped::torch::rand<batch, num_tokens, emb_dim>(2, 3));
    (void)y;
#ifdef SHAPE_BUG
    auto bad = block(shaped::torch::rand<batch, num_tokens, d_in>(2, 3));
    (void)bad;
#endif
}
