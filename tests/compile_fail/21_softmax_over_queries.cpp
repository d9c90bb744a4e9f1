// softmax over the query axis where the key axis was meant (dim=-2 on the scores).
// expect-error: shaped::softmax<Dim>(scores): attention weights are normalised over the keys
// expect-context: shaped::diag::sized<shaped::key<num_tokens>, 4>
#include "attention_axes.hpp"

int main() {
    auto scores = shaped::torch::rand<batch, num_heads, num_tokens, num_keys>();
    auto attn_weights = shaped::softmax<-1>(scores);
    (void)attn_weights;
#ifdef SHAPE_BUG
    auto bad = shaped::softmax<-2>(scores);
    (void)bad;
#endif
}
