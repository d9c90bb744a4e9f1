// A transposed tensor stored in a variable declared contiguous, which would make view legal on it.
// expect-error: shaped::tensor: a transposed (strided) tensor becomes contiguous only through .contiguous()
// expect-context: tensor_axes<shaped::diag::sized<batch, 1>, shaped::diag::sized<d_out, 6>, shaped::diag::sized<num_tokens, 2>
#include "seed_axes.hpp"

int main() {
    auto k = shaped::torch::rand<batch, num_tokens, d_out>();
    shaped::tensor<float, batch, d_out, num_tokens> kt = k.transpose<1, 2>().contiguous();
    (void)kt;
#ifdef SHAPE_BUG
    shaped::tensor<float, batch, d_out, num_tokens> bad = k.transpose<1, 2>();
    (void)bad;
#endif
}
