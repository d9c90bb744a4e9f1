// transpose index out of range: a 3-d tensor has dimensions -3..2.
// expect-error: shaped::transpose<Dim0, Dim1>(x): dimension out of range
// expect-context: dims<1, 3>
#include "seed_axes.hpp"

int main() {
    auto k = shaped::torch::rand<batch, num_tokens, d_out>();
    auto kt = k.transpose<1, 2>();
    (void)kt;
#ifdef SHAPE_BUG
    auto bad = k.transpose<1, 3>();
    (void)bad;
#endif
}
