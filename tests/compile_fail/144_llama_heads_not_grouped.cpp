// A Qwen3-style configuration ported from a config.json that says num_attention_heads 14 and
// num_key_value_heads 4: 14 query heads cannot be shared out among 4 key/value heads. Written as a bare
// count, num_heads has no group for the model to read; declared as num_kv_heads × group_size, as the
// published configurations do, 14 is not a product of 4 and so cannot be written at all. The twin declares
// 16 query heads as 4 key/value heads times groups of 4.
// expect-error: num_heads must be declared as the key/value heads times the group
// expect-context: num_kv_heads
#include <shaped/nn/llama_model.hpp>

namespace nn = shaped::nn;

struct qwen3_14_heads : nn::qwen3_0_6b {
    struct num_kv_heads : shaped::axis<"num_kv_heads", 4> {};
#ifdef SHAPE_BUG
    struct num_heads : shaped::axis<"num_heads", 14> {};
#else
    struct group_size : shaped::axis<"group_size", 4> {};
    struct num_heads : shaped::product<"num_heads", num_kv_heads, group_size> {};
#endif
};

int main() {
    using model_t = nn::qwen3_model<qwen3_14_heads>;
    return sizeof(model_t) > 0 ? 0 : 1;
}
