// A padding mask broadcast over the query axis instead of the key axis (PyTorch: mask[:, :, None]
// where mask[:, None, :] was meant): whole query rows are blanked.
// expect-error: shaped::masked_fill(scores, mask, value): a mask on attention scores must lie along the key<...> axis
// expect-context: mask_axes<shaped::diag::sized<batch, 2>, shaped::diag::sized<num_tokens, 4>, shaped::diag::sized<shaped::one, 1>
#include <limits>

#include "attention_axes.hpp"

int main() {
    auto scores = shaped::torch::rand<batch, num_tokens, num_keys>();
    auto padding = shaped::torch::rand<batch, num_tokens>().to<bool>();  // true where a token is padding
    auto masked = scores.masked_fill(padding.rename<batch, num_keys>().unsqueeze<1>(),
                                     -std::numeric_limits<float>::infinity());
    (void)masked;
#ifdef SHAPE_BUG
    auto bad = scores.masked_fill(padding.unsqueeze<2>(), -std::numeric_limits<float>::infinity());
    (void)bad;
#endif
}
