// RoPE applied to the queries and not to the keys: the scores would mix rotated and unrotated positions,
// and PyTorch computes them without a word. The rotation marks the head axis (shaped::rotated<head_dim>), so
// the product contracts a rotated axis with a plain one.
// expect-error: shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis; one is rotated<head_dim> and the other is not
// expect-context: rotated<head_dim
#include "attention_axes.hpp"

int main() {
    shaped::nn::rope<context_length, head_dim> rope;
    auto queries = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto keys = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>().rename<batch, num_heads, num_keys, head_dim>();
    auto scores = shaped::matmul(rope(queries), rope(keys).transpose<2, 3>());  // both rotated
    (void)scores;
#ifdef SHAPE_BUG
    auto bad = shaped::matmul(rope(queries), keys.transpose<2, 3>());
    (void)bad;
#endif
}
