// The GPT model of chapter 4 of "Build a Large Language Model (From Scratch)", run as the chapter runs it,
// printing what tests/golden/book/chapter4.py prints with PyTorch: layer normalisation step by step, the
// feed-forward network and the transformer block, GPT-2 124M's logits for two sequences (in training mode,
// as in the book), its parameter count, and the tokens its greedy decoding appends to a prompt. Token ids are
// GPT-2's ("Every effort moves you", "Every day holds a", "Hello, I am").
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <string>

// [includes]
#include <shaped/shaped.hpp>

namespace torch = shaped::torch;
namespace nn = shaped::nn;
// [includes]

// [config]
// The book's GPT_CONFIG_124M, a type: vocab_size 50257, context_length 1024, emb_dim 768, n_heads 12,
// n_layers 12, drop_rate 0.1, qkv_bias false; its run-time axes batch and num_tokens (1 to 1024).
using cfg = nn::gpt2_124m;
// [config]

// [walk_axes]
struct batch : shaped::axis<"batch", 2> {};
struct emb_dim : shaped::axis<"emb_dim", 5> {};
struct d_out : shaped::axis<"d_out", 6> {};
// [walk_axes]

// `f'{n:,}'`: digits in groups of three.
std::string with_commas(std::size_t n) {
    const std::string digits = std::to_string(n);
    std::string grouped;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
        grouped += digits[i];
    }
    return grouped;
}

int main() {
    // [layer_norm_steps]
    torch::manual_seed(123);
    auto batch_example = torch::randn<batch, emb_dim>();
    nn::linear<emb_dim, d_out> layer;                   // nn.Sequential(nn.Linear(5, 6), nn.ReLU())
    auto out = shaped::relu(layer(batch_example));
    std::cout << "out = " << out << "\n";
    auto mean = out.mean<-1>(shaped::keepdim);          // (batch, reduced<d_out>)
    auto var = out.var<-1>(shaped::keepdim);
    std::cout << "mean = " << mean << "\n";
    std::cout << "var = " << var << "\n";
    auto out_norm = (out - mean) / shaped::sqrt(var);  // reduced<d_out> broadcasts against d_out only
    std::cout << "out_norm = " << out_norm << "\n";
    std::cout << "mean = " << out_norm.mean<-1>(shaped::keepdim) << "\n";
    std::cout << "var = " << out_norm.var<-1>(shaped::keepdim) << "\n";
    // [layer_norm_steps]

    // [layer_norm]
    nn::layer_norm<emb_dim> ln;
    auto out_ln = ln(batch_example);
    std::cout << "mean = " << out_ln.mean<-1>(shaped::keepdim) << "\n";
    std::cout << "var = " << out_ln.var<-1>(shaped::keepdim, /*unbiased=*/false) << "\n";
    // [layer_norm]

    // [feed_forward]
    nn::feed_forward<cfg::emb_dim> ffn;                 // 768 -> hidden (3072) -> 768
    auto x = torch::rand<cfg::batch, cfg::num_tokens, cfg::emb_dim>(2, 3);
    std::cout << "ffn(x).shape = " << ffn(x).shape << "\n";
    // [feed_forward]

    // [block]
    torch::manual_seed(123);
    auto block_input = torch::rand<cfg::batch, cfg::num_tokens, cfg::emb_dim>(2, 4);
    nn::transformer_block<cfg> block;
    auto output = block(block_input);
    std::cout << "Input shape: " << block_input.shape << "\n";
    std::cout << "Output shape: " << output.shape << "\n";
    // [block]

    // [model]
    shaped::tensor<std::int64_t, cfg::batch, cfg::num_tokens> ids{{6109, 3626, 6100, 345}, {6109, 1110, 6622, 257}};
    torch::manual_seed(123);
    nn::gpt_model<cfg> model;
    auto logits = model(ids);                          // (batch, num_tokens, vocab_size)
    std::cout << "Input batch:\n" << ids << "\n";
    std::cout << "Output shape: " << logits.shape << "\n";
    std::cout << logits << "\n";
    std::cout << "Total number of parameters: " << with_commas(model.parameter_count()) << "\n";
    std::cout << "Token embedding layer shape: " << model.tok_emb.weight.shape << "\n";
    std::cout << "Output layer shape: " << model.out_head.weight.shape << "\n";
    // [model]

    // [generate]
    model.eval();
    shaped::tensor<std::int64_t, cfg::batch, cfg::num_tokens> encoded_tensor{{15496, 11, 314, 716}};
    auto generated = nn::generate_text_simple(model, encoded_tensor, 6, cfg::context_length::extent);
    std::cout << "Output: " << generated << "\n";
    std::cout << "Output length: " << generated.shape[1] << "\n";
    // [generate]
}
