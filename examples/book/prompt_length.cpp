// The book's MultiHeadAttention (listing 3.5) at GPT-2 small's sizes, on a prompt whose length is known only
// when the program runs: one compiled program for every length from 1 to context_length.
//
//   book_prompt_length N
//
// prints what tests/golden/book/prompt_length.py prints with PyTorch for the same N: torch.manual_seed(123),
// MultiHeadAttention(768, 768, context_length=1024, dropout=0.0, num_heads=12), x = torch.rand(2, N, 768),
// eval mode, print(mha(x)). A length outside 1..1024 exits with status 1 and a message naming the bound.
#include <charconv>
#include <cstring>
#include <iostream>

#include <shaped/shaped.hpp>

namespace torch = shaped::torch;

// [axes]
struct context_length : shaped::axis<"context_length", 1024> {};
struct batch : shaped::dynamic_axis<"batch"> {};  // any number of sequences
struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};  // 1 to 1024
struct d_in : shaped::axis<"d_in", 768> {};
struct d_out : shaped::axis<"d_out", 768> {};
struct num_heads : shaped::axis<"num_heads", 12> {};
// [axes]

int main(int argc, char** argv) {
    long long n = 0;
    const char* end = argc == 2 ? argv[1] + std::strlen(argv[1]) : nullptr;
    if (argc != 2 || std::from_chars(argv[1], end, n).ptr != end || end == argv[1]) {  // the whole argument
        std::cerr << "usage: book_prompt_length N   (the number of tokens, 1 to " << context_length::extent << ")\n";
        return 2;
    }
    try {
        // [forward]
        torch::manual_seed(123);
        shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads> mha(0.0);
        auto x = torch::rand<batch, num_tokens, d_in>(2, n);  // torch.rand(2, N, 768): N checked here, once
        mha.eval();
        auto context_vecs = mha(x);  // (batch, num_tokens, d_out), the extents carried from x
        std::cout << context_vecs << "\n";
        // [forward]
    } catch (const shaped::shape_error& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
}
