// Queries rotated with one pair layout and keys with the other: Hugging Face's split halves on one side,
// Meta's interleaved pairs on the other (the book's issue #751). Both are rotations; their product is not
// attention. The layout is part of the rotated axis.
// expect-error: shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis; one is rotated<head_dim> and the other is not
// expect-context: rope_layout::interleaved
#include "attention_axes.hpp"

int main() {
    shaped::nn::rope<context_length, head_dim> hf;
    shaped::nn::rope<context_length, head_dim, shaped::rope_layout::interleaved> meta;
    auto queries = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto keys = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>().rename<batch, num_heads, num_keys, head_dim>();
    auto scores = shaped::matmul(meta(queries), meta(keys).transpose<2, 3>());  // one layout
    (void)scores;
    (void)hf;
#ifdef SHAPE_BUG
    auto bad = shaped::matmul(hf(queries), meta(keys).transpose<2, 3>());
    (void)bad;
#endif
}
