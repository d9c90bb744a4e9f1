// A static six_tokens where a run-time num_tokens is expected: two different axes, however long.
// expect-error: shaped::tensor: cannot convert a tensor to one with other axes
// expect-context: expected_axes<shaped::diag::run_time<batch>, shaped::diag::run_time<num_tokens, 6>, shaped::diag::sized<d_out, 6>
// expect-context: actual_axes<shaped::diag::run_time<batch>, shaped::diag::sized<six_tokens, 6>, shaped::diag::sized<d_out, 6>
#include "run_time_axes.hpp"

struct six_tokens : shaped::axis<"six_tokens", 6, shaped::at_most<context_length>> {};

float first(const shaped::tensor<float, batch, num_tokens, d_out>& x) { return x(0, 0, 0); }

int main() {
    auto fixed = shaped::torch::rand<batch, six_tokens, d_out>(2);
    float f = first(fixed.rename<batch, num_tokens, d_out>());  // the explicit conversion
    (void)f;
#ifdef SHAPE_BUG
    float bad = first(fixed);
    (void)bad;
#endif
}
