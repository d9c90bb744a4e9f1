// A sequence-first input, (num_tokens, batch, d_in), fed to the book's batch-first module: with batch 2 and
// 2 tokens PyTorch runs it, attending across the batch.
// expect-error: shaped::nn attention module: the input's tokens are not where a batch-first module takes them
// expect-context: tensor_axes<shaped::diag::run_time<num_tokens, 6>, shaped::diag::run_time<batch>
#include "run_time_axes.hpp"

int main() {
    shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads> mha(0.0);
    auto x = shaped::torch::rand<num_tokens, batch, d_in>(2, 2);
    auto y = mha(x.transpose<0, 1>());
    (void)y;
#ifdef SHAPE_BUG
    auto bad = mha(x);
    (void)bad;
#endif
}
