// A linear whose in_features differs from the input's last axis.
// expect-error: shaped::nn::linear<In, Out>(x): x's last axis must be the layer's in_features axis
// expect-context: in_features<shaped::diag::sized<d_in, 3>
// expect-context: input_last<shaped::diag::sized<d_out, 6>
#include "seed_axes.hpp"

struct d_in : shaped::axis<"d_in", 3> {};

int main() {
    shaped::nn::linear<d_in, d_out> W_query;
    auto x = shaped::torch::rand<batch, num_tokens, d_in>();
    auto queries = W_query(x);
    (void)queries;
#ifdef SHAPE_BUG
    auto bad = W_query(queries);
    (void)bad;
#endif
}
