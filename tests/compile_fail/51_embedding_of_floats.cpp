// An embedding fed values, not ids: nn.Embedding refuses a float tensor at run time; here it does not compile.
// expect-error: shaped::nn::embedding(ids): ids are integers
#include "gpt_axes.hpp"

int main() {
    shaped::nn::embedding<vocab_size, emb_dim> tok_emb;
    const shaped::tensor<std::int64_t, batch, num_tokens> ids{{3, 1, 4}};
    auto x = tok_emb(ids);
    (void)x;
#ifdef SHAPE_BUG
    auto bad = tok_emb(shaped::torch::rand<batch, num_tokens>(1, 3));
    (void)bad;
#endif
}
