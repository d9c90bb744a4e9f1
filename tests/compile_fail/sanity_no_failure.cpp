// The runner must be able to fail: here the SHAPE_BUG line is valid code, so the case compiles both
// ways and its test is registered as one that must fail.
// expect-error: shaped::transpose<Dim0, Dim1>(x): dimension out of range
#include "seed_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_tokens, d_out>();
#ifdef SHAPE_BUG
    auto fine = q.transpose<0, 2>();
    (void)fine;
#endif
    (void)q;
}
