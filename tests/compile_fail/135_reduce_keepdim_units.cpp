// keepdim for one of two reduced axes: a () on the right keeps a reduced axis as reduced<A>, and with two
// reduced there must be two (which () keeps which axis would otherwise be a guess).
// expect-error: shaped::reduce<Pattern, Op>(x): a () on the right keeps a reduced axis, so there is one per reduced axis or none
// expect-errors: 1
#include <shaped/ops/reduce_pattern.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<float, batch, num_tokens, d_out> x;
#ifdef SHAPE_BUG
    auto y = shaped::reduce<"batch num_tokens d_out -> batch ()", "mean">(x);
#else
    auto y = shaped::reduce<"batch num_tokens d_out -> batch () ()", "mean">(x);
#endif
    return static_cast<int>(y.numel()) - 1;
}
