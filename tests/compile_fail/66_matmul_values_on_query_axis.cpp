// attn_weights @ values where the values were left on the queries' token axis: the weights end on
// key<num_tokens>, so the values must start on it. The hint says so, not "transpose".
// expect-error: shaped::matmul(a, b): a's last axis and b's second-to-last axis must be the same axis; one is key<A> and the other A
// expect-context: lhs_last<shaped::diag::sized<shaped::key<num_tokens>, 4>
// expect-context: rhs_second_to_last<shaped::diag::sized<num_tokens, 4>
#include "attention_axes.hpp"

int main() {
    auto attn_weights = shaped::torch::rand<batch, num_heads, num_tokens, num_keys>();
    auto values = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto context = shaped::matmul(attn_weights, values.rename<batch, num_heads, num_keys, head_dim>());
    (void)context;
#ifdef SHAPE_BUG
    auto bad = shaped::matmul(attn_weights, values);
    (void)bad;
#endif
}
