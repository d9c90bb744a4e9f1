// A mean kept over num_tokens, subtracted from the last token's embeddings (batch, emb_dim): its size-1
// axis meets batch. PyTorch broadcasts (2, 4) - (2, 1, 4) to (2, 2, 4) without a word.
// expect-error: shaped: elementwise op on shapes that do not broadcast
// expect-context: rhs_axes<shaped::diag::run_time<tiny::batch>, shaped::diag::sized<shaped::reduced<tiny::num_tokens>, 1>
#include "gpt_axes.hpp"

int main() {
    auto x = shaped::torch::rand<batch, num_tokens, emb_dim>(2, 3);
    auto last = x.select<num_tokens>(-1);  // (batch, emb_dim)
    auto centred = last - x.mean<num_tokens>();
    (void)centred;
    auto normed = x - x.mean<emb_dim>(shaped::keepdim);
    (void)normed;
#ifdef SHAPE_BUG
    auto bad = last - x.mean<num_tokens>(shaped::keepdim);
    (void)bad;
#endif
}
