// The book's MultiHeadAttention with d_out 6 and 4 heads: PyTorch's `assert d_out % num_heads == 0`
// fails in __init__; here the module's declaration does not compile.
// expect-error: shaped::nn::multi_head_attention: d_out must be divisible by num_heads
// expect-context: divisor<shaped::diag::sized<four_heads, 4>
#include "seed_axes.hpp"

struct four_heads : shaped::axis<"four_heads", 4> {};

int main() {
    shaped::nn::multi_head_attention<d_out, d_out, context_length, num_heads> mha(0.0);
    (void)mha;
#ifdef SHAPE_BUG
    shaped::nn::multi_head_attention<d_out, d_out, context_length, four_heads> bad(0.0);
    (void)bad;
#endif
}
