// The book's multi-head attention at GPT-2 small's sizes: d_in = d_out = 768, 12 heads of 64,
// context_length 1024, on a batch of 2 x 1024 tokens. Prints what tests/golden/book/gpt2_small.py prints.
#include <iostream>

#include <shaped/shaped.hpp>

namespace torch = shaped::torch;

// [axes]
struct batch : shaped::axis<"batch", 2> {};
struct context_length : shaped::axis<"context_length", 1024> {};
struct num_tokens : shaped::axis<"num_tokens", 1024, shaped::at_most<context_length>> {};
struct d_in : shaped::axis<"d_in", 768> {};
struct d_out : shaped::axis<"d_out", 768> {};
struct num_heads : shaped::axis<"num_heads", 12> {};
// [axes]

int main() {
    torch::manual_seed(123);
    shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads> mha(0.0);
    mha.eval();
    auto x = torch::rand<batch, num_tokens, d_in>();  // 6 MB, on the heap like every tensor
    auto context_vecs = mha(x);                        // the scores alone are 2 x 12 x 1024 x 1024 floats
    std::cout << "context_vecs.shape = " << context_vecs.shape << "\n";
    std::cout << "context_vecs = " << context_vecs << "\n";
}
