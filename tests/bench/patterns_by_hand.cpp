// The twin of examples/patterns.cpp written with view, transpose and matmul: the compile-time baseline of the
// pattern form (docs/performance.md, compile table). Same program, same output.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>

// [includes]
#include <shaped/shaped.hpp>

namespace torch = shaped::torch;
// [includes]

struct context_length : shaped::axis<"context_length", 6> {};
struct num_tokens : shaped::axis<"num_tokens", 6, shaped::at_most<context_length>> {};
struct d_in : shaped::axis<"d_in", 3> {};
struct d_out : shaped::axis<"d_out", 2> {};
struct batch : shaped::axis<"batch", 2> {};
struct num_heads : shaped::axis<"num_heads", 2> {};
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};
using num_keys = shaped::key<num_tokens>;  // the keys' token axis: not the queries'

// [class]
class MultiHeadAttention {
public:
    using input_t = shaped::tensor<float, batch, num_tokens, d_in>;
    using output_t = shaped::tensor<float, batch, num_tokens, d_out>;

    output_t forward(const input_t& x) const {
        auto queries = W_query(x).view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
        auto keys_h = W_key(x).view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>()
                          .rename<batch, num_heads, num_keys, head_dim>();
        auto values_h = W_value(x).view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>()
                            .rename<batch, num_heads, num_keys, head_dim>();
        auto attn_scores = shaped::matmul(queries, keys_h.transpose<2, 3>());
        auto mask_bool = mask.to<bool>().slice<num_tokens, num_keys>();
        auto masked = attn_scores.masked_fill(mask_bool, -std::numeric_limits<float>::infinity());
        auto attn_weights = shaped::softmax<num_keys>(masked / std::sqrt(static_cast<float>(head_dim::extent)));
        auto context_vec = shaped::matmul(attn_weights, values_h).transpose<1, 2>();
        auto merged = context_vec.contiguous().view<batch, num_tokens, d_out>();
        return out_proj(merged);
    }

    // Declared, so constructed and drawn from the random stream, in the book's order.
    shaped::nn::linear<d_in, d_out> W_query{false}, W_key{false}, W_value{false};
    shaped::nn::linear<d_out, d_out> out_proj;
    shaped::tensor<float, context_length, context_length> mask =
        shaped::triu<1>(shaped::ones<context_length, context_length>());
};
// [class]

int main() {
    shaped::tensor<float, num_tokens, d_in> inputs{{0.43, 0.15, 0.89},   // Your     (x^1)
                                                   {0.55, 0.87, 0.66},   // journey  (x^2)
                                                   {0.57, 0.85, 0.64},   // starts   (x^3)
                                                   {0.22, 0.58, 0.33},   // with     (x^4)
                                                   {0.77, 0.25, 0.10},   // one      (x^5)
                                                   {0.05, 0.80, 0.55}};  // step     (x^6)
    auto x = shaped::stack<0, batch>(std::array{inputs, inputs});  // torch.stack((inputs, inputs), dim=0)

    torch::manual_seed(123);
    const MultiHeadAttention mha;
    const auto context_vecs = mha.forward(x);
    std::cout << "context_vecs.shape = " << context_vecs.shape << " context_vecs = " << context_vecs << "\n";

    // The library's module, view/transpose inside, from the same seed: the same numbers.
    torch::manual_seed(123);
    shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads> book(0.0);
    book.eval();
    const double diff = shaped::max_abs_diff(context_vecs, book(x));
    std::cerr << "max |patterns - nn::multi_head_attention| = " << diff << "\n";
    return diff <= 1e-6 ? EXIT_SUCCESS : EXIT_FAILURE;
}
