// The attention modules of chapter 3 of "Build a Large Language Model (From Scratch)" on the book's
// inputs, printing what tests/golden/book/chapter3.py prints with PyTorch.
#include <array>
#include <iostream>

// [includes]
#include <shaped/shaped.hpp>

namespace torch = shaped::torch;
namespace nn = shaped::nn;
// [includes]

// [axes]
struct context_length : shaped::axis<"context_length", 6> {};  // batch.shape[1]
struct num_tokens : shaped::axis<"num_tokens", 6, shaped::at_most<context_length>> {};
struct d_in : shaped::axis<"d_in", 3> {};
struct d_out : shaped::axis<"d_out", 2> {};
struct batch : shaped::axis<"batch", 2> {};
struct num_heads : shaped::axis<"num_heads", 2> {};
// [axes]

int main() {
    // [inputs]
    shaped::tensor<float, num_tokens, d_in> inputs{{0.43, 0.15, 0.89},   // Your     (x^1)
                                                   {0.55, 0.87, 0.66},   // journey  (x^2)
                                                   {0.57, 0.85, 0.64},   // starts   (x^3)
                                                   {0.22, 0.58, 0.33},   // with     (x^4)
                                                   {0.77, 0.25, 0.10},   // one      (x^5)
                                                   {0.05, 0.80, 0.55}};  // step     (x^6)
    auto x = shaped::stack<0, batch>(std::array{inputs, inputs});  // torch.stack((inputs, inputs), dim=0)
    // [inputs]

    // [self_attention]
    torch::manual_seed(123);
    nn::self_attention_v1<d_in, d_out> sa_v1;
    std::cout << "sa_v1(inputs) = " << sa_v1(inputs) << "\n";

    torch::manual_seed(789);  // the book seeds listing 3.2's class with 789
    nn::self_attention_v2<d_in, d_out> sa_v2;
    std::cout << "sa_v2(inputs) = " << sa_v2(inputs) << "\n";
    // [self_attention]

    // [causal]
    torch::manual_seed(123);
    nn::causal_attention<d_in, d_out, context_length> ca(0.0);
    auto context_vecs = ca(x);
    std::cout << "context_vecs.shape = " << context_vecs.shape << " context_vecs = " << context_vecs << "\n";
    // [causal]

    // [wrapper]
    torch::manual_seed(123);
    nn::multi_head_attention_wrapper<d_in, d_out, context_length, num_heads> wrapper(0.0);
    auto wrapper_vecs = wrapper(x);  // (batch, num_tokens, concat<d_out, d_out>): 4 wide
    std::cout << "context_vecs.shape = " << wrapper_vecs.shape << " context_vecs = " << wrapper_vecs << "\n";
    // [wrapper]

    // [mha]
    torch::manual_seed(123);
    nn::multi_head_attention<d_in, d_out, context_length, num_heads> mha(0.0);
    auto mha_vecs = mha(x);
    std::cout << "context_vecs.shape = " << mha_vecs.shape << " context_vecs = " << mha_vecs << "\n";
    // [mha]

    // Dropout in training mode draws from the generator as PyTorch's CPU dropout does.
    torch::manual_seed(123);
    nn::causal_attention<d_in, d_out, context_length> ca_dropout(0.5);
    std::cout << "training, dropout 0.5: context_vecs = " << ca_dropout(x) << "\n";
}
