// log_softmax over the vocabulary of logits already flattened for cross_entropy is fine; over the token axis
// that flatten merged away it names the missing axis (PyTorch's log_softmax(dim=1) on the flattened logits
// runs, over the vocabulary, and gives a different loss if the logits were not flattened).
// expect-error: the named axis must appear exactly once in x
// expect-context: expected_axes<shaped::diag::sized<num_tokens, 3>
#include <shaped/shaped.hpp>

struct batch : shaped::axis<"batch", 2> {};
struct num_tokens : shaped::axis<"num_tokens", 3> {};
struct vocab_size : shaped::axis<"vocab_size", 50257> {};

int main() {
    auto logits_flat = shaped::torch::rand<batch, num_tokens, vocab_size>().flatten<0, 1>();
    auto log_probas = shaped::log_softmax<vocab_size>(logits_flat);
    (void)log_probas;
#ifdef SHAPE_BUG
    auto bad = shaped::log_softmax<num_tokens>(logits_flat);
    (void)bad;
#endif
}
