// softmax over the query axis where the key axis was meant, with run-time token axes.
// expect-error: shaped::softmax<Dim>(scores): attention weights are normalised over the keys
// expect-context: shaped::diag::run_time<shaped::key<num_tokens>, 6>
#include "run_time_axes.hpp"

int main() {
    auto scores = shaped::torch::rand<batch, num_heads, num_tokens, num_keys>(2, 4, 4);
    auto attn_weights = shaped::softmax<-1>(scores);
    (void)attn_weights;
#ifdef SHAPE_BUG
    auto bad = shaped::softmax<-2>(scores);
    (void)bad;
#endif
}
