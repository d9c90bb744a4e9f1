// A Qwen3-style configuration with head_dim 63: RoPE rotates the head's elements in pairs, so a head of odd
// width cannot be rotated. The book asserts it when the tables are computed (`assert head_dim % 2 == 0`);
// here the model does not compile, with one error naming the rule.
// expect-error: shaped::nn::rope<ContextLength, HeadDim>: head_dim must be even (RoPE rotates pairs)
#include <shaped/nn/llama_model.hpp>

namespace nn = shaped::nn;

struct qwen3_odd_heads : nn::qwen3_0_6b {
#ifdef SHAPE_BUG
    struct head_dim : shaped::axis<"head_dim", 63> {};
#else
    struct head_dim : shaped::axis<"head_dim", 64> {};
#endif
};

int main() {
    using model_t = nn::qwen3_model<qwen3_odd_heads>;
    return sizeof(model_t) > 0 ? 0 : 1;
}
