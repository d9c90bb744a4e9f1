// torch.multinomial draws from probabilities (or weights): float or double. Passing the int64 ids of a
// previous step, or an argmax's result, where the probabilities were meant, does not compile; PyTorch
// raises "multinomial only supports floating-point dtypes for input" when the line runs.
// expect-error: shaped::torch::multinomial(probs): elements must be float or double
#include <cstdint>

#include <shaped/shaped.hpp>
#include <shaped/torch/multinomial.hpp>

struct batch : shaped::dynamic_axis<"batch"> {};
struct vocab_size : shaped::axis<"vocab_size", 50257> {};

int main() {
    auto probs = shaped::softmax<vocab_size>(shaped::torch::rand<batch, vocab_size>(2));
    auto idx_next = shaped::torch::multinomial(probs);  // (batch, reduced<vocab_size>)
#ifdef SHAPE_BUG
    auto bad = shaped::torch::multinomial(idx_next);
    (void)bad;
#endif
    (void)idx_next;
}
