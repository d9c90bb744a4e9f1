// A RoPE table built for fewer positions than the tokens it rotates (the book's issue #418: the table cut to
// a shorter context than the model's). Static token axes are checked when the program compiles; run-time
// ones, and a KV cache's offset, when the call runs (shape_error).
// expect-error: shaped::nn::rope(x): more tokens than the table has positions
// expect-context: in_features<shaped::diag::sized<short_context, 3>
#include "attention_axes.hpp"

struct short_context : shaped::axis<"short_context", 3> {};

int main() {
    shaped::nn::rope<context_length, head_dim> rope;
    shaped::nn::rope<short_context, head_dim> short_rope;
    auto queries = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto rotated = rope(queries);  // 4 tokens, 6 positions
    (void)rotated;
    (void)short_rope;
#ifdef SHAPE_BUG
    auto bad = short_rope(queries);  // 4 tokens, 3 positions
    (void)bad;
#endif
}
