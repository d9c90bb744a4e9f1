// A float layer with its weight in double: nn::linear keeps its weight in the layer's
// element type, or in BF16 in a float layer (converted in the kernel, summed in float). PyTorch's F.linear
// refuses any mix at run time ("expected scalar type Float but found Double"); here it is a compile-time error.
// expect-error: shaped::nn::linear<In, Out, Value, Weight>: the weight's element type is the layer's, or bfloat16
// expect-errors: 1
#include <shaped/nn/linear.hpp>

struct d_in : shaped::axis<"d_in", 8> {};
struct d_out : shaped::axis<"d_out", 4> {};

int main() {
#ifdef SHAPE_BUG
    shaped::nn::linear<d_in, d_out, float, double> layer;
#else
    shaped::nn::linear<d_in, d_out, float, shaped::bfloat16> layer;
#endif
    return layer.weight.numel() == 32 ? 0 : 1;
}
