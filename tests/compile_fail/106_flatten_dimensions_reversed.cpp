// flatten(start_dim, end_dim) merges the axes from start to end; PyTorch raises "flatten() has invalid args:
// start_dim cannot come after end_dim" when the line runs, shaped when it compiles.
// expect-error: Start must not come after End
// expect-context: dims<1, 0>
#include <shaped/shaped.hpp>

struct batch : shaped::axis<"batch", 2> {};
struct num_tokens : shaped::axis<"num_tokens", 3> {};
struct vocab_size : shaped::axis<"vocab_size", 50257> {};

int main() {
    auto logits = shaped::torch::rand<batch, num_tokens, vocab_size>();
    auto logits_flat = logits.flatten<0, 1>();  // (merged<batch, num_tokens>, vocab_size)
    (void)logits_flat;
#ifdef SHAPE_BUG
    auto bad = logits.flatten<1, 0>();
    (void)bad;
#endif
}
