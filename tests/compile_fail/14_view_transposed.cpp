// view on the transposed context without contiguous(): PyTorch's run-time
// "view size is not compatible with input tensor's size and stride".
// expect-error: shaped::view<To...>(x): view size is not compatible with input tensor's size and stride
// expect-context: tensor_axes<shaped::diag::sized<batch, 1>, shaped::diag::sized<num_tokens, 2>, shaped::diag::sized<num_heads, 3>, shaped::diag::sized<head_dim, 2>
#include "seed_axes.hpp"

int main() {
    auto context_vec = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto merged = context_vec.transpose<1, 2>().contiguous().view<batch, num_tokens, d_out>();
    (void)merged;
#ifdef SHAPE_BUG
    auto bad = context_vec.transpose<1, 2>().view<batch, num_tokens, d_out>();
    (void)bad;
#endif
}
