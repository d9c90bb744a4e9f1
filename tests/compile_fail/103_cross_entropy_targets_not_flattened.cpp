// The book's calc_loss_batch flattens both: logits.flatten(0, 1) and target_batch.flatten(). Flattening only
// the logits leaves targets of (batch, num_tokens) against classes of (merged<batch, num_tokens>, vocab_size):
// PyTorch reports it at run time ("Expected input batch_size (6) to match target batch_size (2)"); shaped
// when it compiles.
// expect-error: the targets must have the logits' axes without the last
// expect-context: lhs_axes<shaped::diag::sized<shaped::merged<batch, num_tokens>, 6>
#include <cstdint>
#include <shaped/shaped.hpp>

struct batch : shaped::axis<"batch", 2> {};
struct num_tokens : shaped::axis<"num_tokens", 3> {};
struct vocab_size : shaped::axis<"vocab_size", 50257> {};

int main() {
    auto logits = shaped::torch::rand<batch, num_tokens, vocab_size>();
    shaped::tensor<std::int64_t, batch, num_tokens> targets{{3626, 6100, 345}, {1107, 588, 11311}};
    auto loss = shaped::cross_entropy(logits.flatten<0, 1>(), targets.flatten());
    (void)loss;
#ifdef SHAPE_BUG
    auto bad = shaped::cross_entropy(logits.flatten<0, 1>(), targets);
    (void)bad;
#endif
}
