// The book's top-k filter, `torch.where(logits < min_val, -inf, logits)` with `min_val = top_logits[:, -1]`:
// logits are (batch, vocab_size) and min_val is (batch), so the comparison aligns vocab_size with batch.
// PyTorch runs it only for a batch of one (1 broadcasts); shaped refuses it at any batch: unsqueeze min_val.
// expect-error: elementwise op on shapes that do not broadcast
// expect-context: sized<vocab_size, 50257>
// expect-context: rhs_axes<shaped::diag::run_time<batch>
// expect-errors: 1
#include <cmath>
#include <shaped/shaped.hpp>

struct batch : shaped::dynamic_axis<"batch"> {};
struct vocab_size : shaped::axis<"vocab_size", 50257> {};

int main() {
    auto logits = shaped::torch::rand<batch, vocab_size>(2);
    auto [top_logits, top_pos] = shaped::topk<vocab_size>(logits, 25);
    auto min_val = top_logits.select<shaped::top_k<vocab_size>>(-1);  // (batch)
    auto kept = shaped::where(logits < min_val.unsqueeze<-1>(), -INFINITY, logits);
    (void)kept;
#ifdef SHAPE_BUG
    auto bad = shaped::where(logits < min_val, -INFINITY, logits);
    (void)bad;
#endif
}
