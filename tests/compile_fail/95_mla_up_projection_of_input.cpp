// Multi-head latent attention's keys projected up from the input instead of from the latent: the book's
// W_UK takes the latent of latent_dim per token. When d_in happens to equal latent_dim, PyTorch runs it and
// the cache of latents is bypassed; in shaped the latent is an axis of its own.
// expect-error: shaped::nn::linear
// expect-context: latent_dim
#include <shaped/nn/multi_head_latent_attention.hpp>

#include "attention_axes.hpp"

struct latent_dim : shaped::axis<"latent_dim", 3> {};  // as wide as d_in

int main() {
    shaped::nn::multi_head_latent_attention<d_in, d_out, context_length, num_heads, latent_dim> mla(
        shaped::nn::skip_init);
    auto x = shaped::torch::rand<batch, num_tokens, d_in>();
    auto keys = mla.W_UK(mla.W_DKV(x));  // (batch, num_tokens, d_out), from the latent
    (void)keys;
#ifdef SHAPE_BUG
    auto bad = mla.W_UK(x);
    (void)bad;
#endif
}
