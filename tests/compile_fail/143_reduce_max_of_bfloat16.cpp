// The largest of bfloat16 weights: reduce's max takes float, double or integer elements.
// expect-error: shaped::reduce<Pattern, Op>(x): 'max' takes float, double or integer elements
// expect-errors: 1
#include <shaped/bfloat16.hpp>
#include <shaped/ops/reduce_pattern.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<shaped::bfloat16, num_tokens, d_out> w;
#ifdef SHAPE_BUG
    auto y = shaped::reduce<"num_tokens d_out -> d_out", "max">(w);
#else
    auto y = shaped::reduce<"num_tokens d_out -> d_out", "max">(w.to<float>());
#endif
    return static_cast<int>(y.numel()) - 6;
}
