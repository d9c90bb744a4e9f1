// With a KV cache, the new tokens' queries meet every cached key: scores (num_tokens, cached<num_tokens>).
// The book's mask[:num_tokens, :num_tokens] covers the new tokens only; PyTorch broadcasts it when one token
// is new and fails or masks the wrong keys otherwise. The mask's rows must begin after the cached tokens.
// expect-error: shaped::masked_fill(scores, mask, value): the scores run over the KV cache's keys
// expect-context: mask_axes<shaped::diag::run_time<num_tokens, 6>, shaped::diag::run_time<shaped::key<num_tokens>, 6>
#include "run_time_axes.hpp"

int main() {
    auto q = shaped::torch::rand<num_tokens, d_out>(2);                     // 2 new tokens
    auto k = shaped::torch::rand<shaped::cached<num_tokens>, d_out>(5);      // 3 cached before them
    auto scores = shaped::matmul(q, k.T());                                  // (num_tokens, cached<num_tokens>)
    auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>()).to<bool>();
    auto rows = shaped::narrow<0, num_tokens>(mask, 3, 2).slice<num_tokens, shaped::cached<num_tokens>>(2, 5);
    auto masked = scores.masked_fill(rows, -1e9f);
    (void)masked;
#ifdef SHAPE_BUG
    auto bad = scores.masked_fill(mask.slice<num_tokens, num_keys>(2, 2), -1e9f);
    (void)bad;
#endif
}
