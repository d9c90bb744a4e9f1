// Gathering each target token's probability: the targets must lie along the probabilities' axes without the
// vocabulary. Targets transposed to (num_tokens, batch) have the right extents only when batch and
// num_tokens are equal; shaped refuses them by name.
// expect-error: index must have x's axes, in x's order
// expect-context: rhs_axes<shaped::diag::sized<num_tokens, 3>
#include <cstdint>
#include <shaped/shaped.hpp>

struct batch : shaped::axis<"batch", 3> {};
struct num_tokens : shaped::axis<"num_tokens", 3> {};
struct vocab_size : shaped::axis<"vocab_size", 50257> {};

int main() {
    auto probas = shaped::torch::rand<batch, num_tokens, vocab_size>();
    shaped::tensor<std::int64_t, batch, num_tokens> targets{{3626, 6100, 345}, {1107, 588, 11311}, {1, 2, 3}};
    auto target_probas = shaped::gather<vocab_size>(probas, targets);  // (batch, num_tokens)
    (void)target_probas;
#ifdef SHAPE_BUG
    auto bad = shaped::gather<vocab_size>(probas, targets.transpose<0, 1>().contiguous());
    (void)bad;
#endif
}
