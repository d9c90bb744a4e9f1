// The runner must be able to fail: this case's expected text is not what the compiler prints,
// so its test is registered as one that must fail.
// expect-error: this text is printed by no compiler
#include "seed_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_tokens, d_out>();
#ifdef SHAPE_BUG
    auto bad = q.transpose<0, 5>();
    (void)bad;
#endif
    (void)q;
}
