// One mistake, one error: user code that goes on using the result of a failed check (its storage, its
// shape, a reduction, arithmetic, a typed variable, a module of its own) adds no error of its own.
// expect-error: shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis
// expect-errors: 1
#include "gpt_axes.hpp"

// Probabilities over the vocabulary, in a module of one's own.
struct my_probabilities {
    auto operator()(const shaped::LastAxis<vocab_size> auto& logits) const { return logits.template softmax<-1>(); }
};

int main() {
    auto x = shaped::torch::rand<batch, num_tokens, emb_dim>(2, 3);
    auto out_head = shaped::torch::rand<vocab_size, emb_dim>();  // a Linear's weight: (out, in)
#ifdef SHAPE_BUG
    auto logits = shaped::matmul(x, out_head);  // the weight not transposed
#else
    auto logits = shaped::matmul(x, out_head.transpose<0, 1>());
#endif
    float first = logits.storage()[0];
    for (float v : logits.storage()) first += v;
    std::size_t n = logits.shape[0];
    auto total = logits.sum<vocab_size>();
    shaped::tensor<float, batch, num_tokens, vocab_size> y = logits;
    y = y + logits;
    auto probas = my_probabilities{}(logits);
    (void)first;
    (void)n;
    (void)total;
    (void)probas;
}
