// A causal mask for context_length 6 applied to 7 tokens: mask[:7, :7] of a 6x6 mask.
// expect-error: shaped::slice<Prefix...>(x): a slice cannot be longer than its axis
// expect-context: to_axes<shaped::diag::sized<seven_tokens, 7>, shaped::diag::sized<seven_tokens, 7>
// expect-context: tensor_axes<shaped::diag::sized<context_length, 6>, shaped::diag::sized<context_length, 6>
#include "seed_axes.hpp"

struct seven_tokens : shaped::axis<"seven_tokens", 7> {};

int main() {
    auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>());
    auto scores = shaped::torch::rand<batch, num_tokens, num_tokens>();
    auto masked = scores.masked_fill(mask.slice<num_tokens, num_tokens>(), -1.0f / 0.0f);
    (void)masked;
#ifdef SHAPE_BUG
    auto bad = mask.slice<seven_tokens, seven_tokens>();
    (void)bad;
#endif
}
