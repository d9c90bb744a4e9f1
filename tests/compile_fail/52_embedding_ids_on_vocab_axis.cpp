// Ids that lie along the vocabulary: the logits of the last position cast to integers, where their argmax
// was meant. PyTorch looks each "id" up and returns (batch, vocab_size, emb_dim).
// expect-error: shaped::nn::embedding(ids): the ids lie along the table's own vocabulary or embedding axis
// expect-context: tensor_axes<shaped::diag::run_time<tiny::batch>, shaped::diag::sized<tiny::vocab_size, 11>
#include "gpt_axes.hpp"

int main() {
    shaped::nn::embedding<vocab_size, emb_dim> tok_emb;
    auto logits = shaped::torch::rand<batch, num_tokens, vocab_size>(1, 3);
    auto next = tok_emb(logits.select<num_tokens>(-1).argmax<vocab_size>(shaped::keepdim));
    (void)next;
#ifdef SHAPE_BUG
    auto bad = tok_emb(logits.select<num_tokens>(-1).to<std::int64_t>());
    (void)bad;
#endif
}
