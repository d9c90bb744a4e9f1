// topk's values lie along their own axis, top_k<vocab_size>: position j is the j-th largest, not vocabulary
// entry j, so adding them to the logits (which PyTorch would broadcast when k equals the vocabulary, or when
// k is 1) does not compile; gather by the indices, or compare with one value.
// expect-error: elementwise op on shapes that do not broadcast
// expect-context: top_k<vocab_size>
#include <shaped/shaped.hpp>

struct num_tokens : shaped::axis<"num_tokens", 4> {};
struct vocab_size : shaped::axis<"vocab_size", 9> {};

int main() {
    auto logits = shaped::torch::rand<num_tokens, vocab_size>();
    auto [values, indices] = shaped::topk<vocab_size>(logits, 9);
    auto same = shaped::gather<vocab_size>(logits, indices);  // (num_tokens, top_k<vocab_size>)
    auto diff = same - values;
    (void)diff;
#ifdef SHAPE_BUG
    auto bad = logits + values;
    (void)bad;
#endif
}
