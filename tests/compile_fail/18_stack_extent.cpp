// stack of two tensors along a new axis whose extent is not two.
// expect-error: shaped::stack<Dim, New>(tensors): the new axis's extent must be the number of tensors
// expect-context: expected_axes<shaped::diag::sized<num_heads, 3>
#include <array>

#include "seed_axes.hpp"

struct two_copies : shaped::axis<"two_copies", 2> {};

int main() {
    auto x = shaped::torch::rand<num_tokens, d_out>();
    auto pair = shaped::stack<0, two_copies>(std::array{x, x});
    (void)pair;
#ifdef SHAPE_BUG
    auto bad = shaped::stack<0, num_heads>(std::array{x, x});
    (void)bad;
#endif
}
