// The output head declared the wrong way round, Linear(vocab_size, emb_dim): it cannot take the final
// norm's (batch, num_tokens, emb_dim).
// expect-error: shaped::nn::linear<In, Out>(x): x's last axis must be the layer's in_features axis
// expect-context: in_features<shaped::diag::sized<tiny::vocab_size, 11>
#include "gpt_axes.hpp"

int main() {
    shaped::nn::layer_norm<emb_dim> final_norm;
    auto x = final_norm(shaped::torch::rand<batch, num_tokens, emb_dim>(2, 3));
    shaped::nn::linear<emb_dim, vocab_size> out_head(false);
    auto logits = out_head(x);
    (void)logits;
#ifdef SHAPE_BUG
    shaped::nn::linear<vocab_size, emb_dim> swapped(false);
    auto bad = swapped(x);
    (void)bad;
#endif
}
