// The book's chapter 5 runs GPT_CONFIG_124M with "context_length": 256. A config derived from gpt2_124m with
// only context_length replaced keeps gpt2_124m's num_tokens, declared within the old context_length of 1024:
// the model's positional embeddings would hold 256 rows while its inputs may have 1024 tokens. The model
// refuses the config where it is instantiated, with one error that says what to redeclare.
// expect-error: Config::num_tokens is not declared within Config::context_length
#include <cstdint>
#include <vector>

#include <shaped/shaped.hpp>

namespace nn = shaped::nn;

struct gpt_config_256 : nn::gpt2_124m {
    struct context_length : shaped::axis<"context_length", 256> {};
#ifndef SHAPE_BUG
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
#endif
};

int main() {
    nn::gpt_model<gpt_config_256> model;
    const std::vector<std::int64_t> prompt{6109, 3626, 6100, 345};
    auto idx = shaped::tensor<std::int64_t, gpt_config_256::batch, gpt_config_256::num_tokens>::from_buffer(prompt, 1, 4);
    auto logits = model(idx);
    (void)logits;
}
