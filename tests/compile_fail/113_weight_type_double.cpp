// A Qwen3 configuration that asks for its weights in double: a model keeps them in float or in BF16 (as
// Hugging Face checkpoints store them), and computes in float either way. PyTorch's `model.to(torch.float64)`
// converts anything; here the model does not compile, with one error naming the field.
// expect-error: shaped::nn::llama_model<Config>: Config::weight_type is float or shaped::bfloat16
// expect-errors: 1
#include <shaped/nn/llama_model.hpp>

namespace nn = shaped::nn;

struct qwen3_double : nn::qwen3_0_6b {
#ifdef SHAPE_BUG
    using weight_type = double;
#else
    using weight_type = shaped::bfloat16;
#endif
};

int main() {
    using model_t = nn::qwen3_model<qwen3_double>;
    return sizeof(model_t) > 0 ? 0 : 1;
}
