// The book's TransformerBlock (chapter 4) written by hand, as a module of one's own, with shaped's concepts in
// its signature: shaped::TensorOf says which axes the block takes, shaped::LastAxis which width the helper
// takes. It prints what tests/golden/book/own_module.py prints with PyTorch for the same seed and input, and
// checks that it computes what the library's nn::transformer_block computes.
#include <cstdlib>
#include <iostream>

// [includes]
#include <shaped/shaped.hpp>

namespace torch = shaped::torch;
namespace nn = shaped::nn;
// [includes]

// [config]
// A small configuration: 8 wide, 2 heads, at most 6 tokens; batch and num_tokens known at run time.
struct small {
    struct vocab_size : shaped::axis<"vocab_size", 11> {};
    struct context_length : shaped::axis<"context_length", 6> {};
    struct emb_dim : shaped::axis<"emb_dim", 8> {};
    struct n_heads : shaped::axis<"n_heads", 2> {};
    struct batch : shaped::dynamic_axis<"batch"> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
    static constexpr std::size_t n_layers = 1;
    static constexpr double drop_rate = 0.0;
    static constexpr bool qkv_bias = false;
};
// [config]

// [shortcut]
// `x + f(x)` for any f that keeps the width: the helper takes any tensor whose last axis is Emb.
template <class Emb>
auto shortcut(const shaped::LastAxis<Emb> auto& x, const auto& f) {
    return f(x) + x;
}
// [shortcut]

// [block]
template <class Config>
struct my_transformer_block {
    using emb_dim = typename Config::emb_dim;
    using context_length = typename Config::context_length;

    // The book's members, in the book's order (the weights are drawn in this order).
    nn::multi_head_attention<emb_dim, emb_dim, context_length, typename Config::n_heads> att{Config::drop_rate,
                                                                                             Config::qkv_bias};
    nn::feed_forward<emb_dim> ff;
    nn::layer_norm<emb_dim> norm1, norm2;

    // (any batch axis, tokens within context_length, emb_dim): the book's `forward(self, x)`, with what it
    // assumes of x written in the signature.
    auto operator()(
        const shaped::TensorOf<shaped::any_axis, shaped::within<context_length>, emb_dim> auto& x) const {
        auto h = shortcut<emb_dim>(x, [&](const auto& t) { return att(norm1(t)); });
        return shortcut<emb_dim>(h, [&](const auto& t) { return ff(norm2(t)); });
    }

    // The state_dict's names, declared once: saving, loading and counting follow from this list.
    static constexpr auto parameters() {
        return nn::parameter_list(nn::submodule("att", &my_transformer_block::att),
                                  nn::submodule("ff", &my_transformer_block::ff),
                                  nn::submodule("norm1", &my_transformer_block::norm1),
                                  nn::submodule("norm2", &my_transformer_block::norm2));
    }
};
// [block]

int main() {
    // [run]
    using batch = small::batch;
    using num_tokens = small::num_tokens;
    using emb_dim = small::emb_dim;

    torch::manual_seed(123);
    auto x = torch::rand<batch, num_tokens, emb_dim>(2, 4);
    my_transformer_block<small> block;
    auto output = block(x);
    std::cout << "Input shape: " << x.shape << "\n";
    std::cout << "Output shape: " << output.shape << "\n";
    std::cout << output << "\n";
    std::cout << block(shaped::narrow<1, num_tokens>(x, 0, 3)) << "\n";  // x[:, :3]: the first three tokens
    // [run]

    // The library's block, drawn from the same seed after the same input, computes the same numbers.
    torch::manual_seed(123);
    auto same_input = torch::rand<batch, num_tokens, emb_dim>(2, 4);
    nn::transformer_block<small> library_block;
    library_block.eval();
    auto expected = library_block(same_input);
    for (std::size_t i = 0; i < expected.numel(); ++i)
        if (expected.storage()[i] != output.storage()[i]) {
            std::cerr << "my_transformer_block differs from nn::transformer_block at element " << i << "\n";
            return EXIT_FAILURE;
        }
    // And it has the library block's state_dict: the same names, in the same order, and parameter count.
    if (nn::state_dict_keys(block) != nn::state_dict_keys(library_block) ||
        nn::parameter_count(block) != nn::parameter_count(library_block)) {
        std::cerr << "my_transformer_block's state_dict differs from nn::transformer_block's\n";
        return EXIT_FAILURE;
    }
}
