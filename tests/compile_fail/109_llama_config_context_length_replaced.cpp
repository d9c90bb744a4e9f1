// The book runs Llama 3.2 1B with its context cut to 8,192 tokens to save memory
// (LLAMA32_CONFIG["context_length"] = 8192). A config derived from llama32_1b with only context_length
// replaced keeps llama32_1b's num_tokens, declared within 131,072: the RoPE table and the caches would hold
// 8,192 positions while the inputs may have 131,072 tokens. The model refuses the config where it is
// instantiated, with one error that says what to redeclare.
// expect-error: shaped::nn::llama_model<Config>: Config::num_tokens is not declared within Config::context_length
#include <shaped/nn/llama_model.hpp>

namespace nn = shaped::nn;

struct llama32_1b_8k : nn::llama32_1b {
    struct context_length : shaped::axis<"context_length", 8192> {};
#ifndef SHAPE_BUG
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
#endif
};

int main() {
    using model_t = nn::llama_model<llama32_1b_8k>;
    static_assert(model_t::context_length::extent == 8192);
    return sizeof(model_t) > 0 ? 0 : 1;
}
