// A module of one's own, written with shaped::TensorOf, fed a sequence-first input: shaped's message at
// the call names the axes the module takes and the axes it got.
// expect-error: shaped::TensorOf<...>: the argument does not have the axes the module takes
// expect-errors: 1
// expect-context: expected_axes<shaped::diag::any, shaped::diag::within_of<shaped::diag::sized<tiny::context_length, 4>
// expect-context: actual_axes<shaped::diag::run_time<tiny::num_tokens, 4>, shaped::diag::run_time<tiny::batch>, shaped::diag::sized<tiny::emb_dim, 4>
#include "gpt_axes.hpp"

// The book's chapter-4 block, in miniature: a layer norm and a shortcut.
struct my_block {
    shaped::nn::layer_norm<emb_dim> norm;
    auto operator()(const shaped::TensorOf<shaped::any_axis, shaped::within<context_length>, emb_dim> auto& x) const {
        return norm(x) + x;
    }
};

int main() {
    my_block block;
    auto x = shaped::torch::rand<batch, num_tokens, emb_dim>(2, 3);
    auto y = block(x);
    (void)y;
#ifdef SHAPE_BUG
    auto bad = block(x.transpose<0, 1>());
    (void)bad;
#endif
}
