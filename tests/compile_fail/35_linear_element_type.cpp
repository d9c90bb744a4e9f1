// A double tensor into a float layer.
// expect-error: shaped::nn::linear<In, Out>(x): x must have the layer's element type
#include "seed_axes.hpp"

int main() {
    shaped::nn::linear<d_out, d_out> out_proj;
    auto x = shaped::torch::rand<batch, num_tokens, d_out>();
    auto y = out_proj(x);
    (void)y;
#ifdef SHAPE_BUG
    auto bad = out_proj(x.to<double>());
    (void)bad;
#endif
}
