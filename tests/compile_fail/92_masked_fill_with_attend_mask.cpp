// masked_fill given a mask that is true where a query may attend (SDPA's attn_mask meaning): it would fill
// with -inf exactly the keys each query may see. The book's own mask is true where a key is masked out; the
// two meanings are two types, and ! converts one into the other.
// expect-error: this mask is true where a query may attend
// expect-context: mask_axes<shaped::diag::sized<num_tokens, 4>
#include "attention_axes.hpp"

int main() {
    auto scores = shaped::torch::rand<batch, num_heads, num_tokens, num_keys>();
    auto causal = shaped::true_masks(shaped::triu<1>(shaped::ones<num_tokens, num_keys>()));
    auto attend = !causal;  // true where a query may attend
    auto masked = shaped::masked_fill(scores, !attend, -1e9f);
    (void)masked;
#ifdef SHAPE_BUG
    auto bad = shaped::masked_fill(scores, attend, -1e9f);
    (void)bad;
#endif
}
