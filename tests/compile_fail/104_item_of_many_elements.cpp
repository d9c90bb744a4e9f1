// `.item()` is for a tensor of one element: the book's `torch.argmax(probas).item()` reduces over the only
// axis first. On the probabilities themselves (9 of them) it does not compile.
// expect-error: only a tensor of one element has an item
// expect-context: tensor_axes<shaped::diag::sized<vocab, 9>
#include <shaped/shaped.hpp>

struct vocab : shaped::axis<"vocab", 9> {};

int main() {
    auto probas = shaped::softmax<vocab>(shaped::torch::rand<vocab>());
    auto next_token_id = probas.argmax<vocab>().item();
    (void)next_token_id;
#ifdef SHAPE_BUG
    auto bad = probas.item();
    (void)bad;
#endif
}
