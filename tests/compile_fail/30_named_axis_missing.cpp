// softmax over an axis (by name) that the tensor does not have.
// expect-error: shaped::softmax<A>(x): the named axis must appear exactly once in x
// expect-context: expected_axes<shaped::diag::sized<num_heads, 3>
#include "seed_axes.hpp"

int main() {
    auto x = shaped::torch::rand<batch, num_tokens, d_out>();
    auto y = x.softmax<d_out>();
    (void)y;
#ifdef SHAPE_BUG
    auto bad = x.softmax<num_heads>();
    (void)bad;
#endif
}
