// A first program: multi-head attention's view/transpose steps (the book's listing 3.5, without the
// weights), with every shape checked by the compiler. It prints what tests/golden/first/first_program.py
// prints in PyTorch. From the repository's root:
//   g++ -std=c++20 -O1 -Iinclude examples/first_program.cpp -ldnnl -lgomp -lopenblas -o first_program && ./first_program
// Add -DSHAPE_BUG to forget k's transpose, as PyTorch lets you when num_tokens == head_dim:
// expect-error: shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis
// expect-context: lhs_last<shaped::diag::sized<head_dim, 2>
// expect-context: rhs_second_to_last<shaped::diag::sized<num_tokens, 2>
#include <cmath>
#include <iostream>

#include <shaped/shaped.hpp>

// [axes]
struct batch : shaped::axis<"batch", 1> {};
struct num_tokens : shaped::axis<"num_tokens", 2> {};
struct d_out : shaped::axis<"d_out", 6> {};
struct num_heads : shaped::axis<"num_heads", 3> {};
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};  // d_out // num_heads = 2
// [axes]

int main() {
    namespace torch = shaped::torch;  // PyTorch's names and random stream
    torch::manual_seed(123);
    auto queries = torch::rand<batch, num_tokens, d_out>();  // torch.rand(1, 2, 6)
    auto keys = torch::rand<batch, num_tokens, d_out>();
    auto values = torch::rand<batch, num_tokens, d_out>();

    // [heads]
    // (batch, num_tokens, d_out) -> (batch, num_heads, num_tokens, head_dim)
    auto q = queries.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
    auto k = keys.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
    auto v = values.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
    #ifdef SHAPE_BUG
    auto attn_scores = shaped::matmul(q, k);  // q @ k: the transpose forgotten
    #else
    auto attn_scores = shaped::matmul(q, k.transpose<2, 3>());  // q @ k.transpose(2, 3)
    #endif
    // [heads]
    auto attn_weights = shaped::softmax<-1>(attn_scores / std::sqrt(static_cast<float>(head_dim::extent)));
    auto context_vec = shaped::matmul(attn_weights, v).transpose<1, 2>().contiguous().view<batch, num_tokens, d_out>();

    std::cout << "q.shape = " << q.shape << "\n";
    std::cout << "attn_weights.shape = " << attn_weights.shape << "\n";
    std::cout << "context_vec.shape = " << context_vec.shape << "\n";
    std::cout << "context_vec = " << context_vec << "\n";
}
