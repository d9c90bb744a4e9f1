// permute with a repeated dimension.
// expect-error: shaped::permute<Dims...>(x): the dimensions must be a permutation of 0..rank-1
// expect-context: dims<0, 0, 1>
#include "seed_axes.hpp"

int main() {
    auto x = shaped::torch::rand<batch, num_tokens, d_out>();
    auto y = x.permute<0, 2, 1>();
    (void)y;
#ifdef SHAPE_BUG
    auto bad = x.permute<0, 0, 1>();
    (void)bad;
#endif
}
