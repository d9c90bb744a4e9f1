// A Gemma 3 configuration cut to a short context for a test, its sliding window left at 512: a local layer
// would see every position, as a global one does, and its ring cache would be longer than any sequence.
// The model refuses the config where it is instantiated, naming both axes with their extents.
// expect-error: shaped::nn::gemma_model<Config>: Config::sliding_window is longer than Config::context_length
#include <shaped/nn/gemma_model.hpp>

namespace nn = shaped::nn;

struct gemma3_270m_256 : nn::gemma3_270m {
    struct context_length : shaped::axis<"context_length", 256> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
#ifndef SHAPE_BUG
    struct sliding_window : shaped::axis<"sliding_window", 128> {};
#endif
};

int main() {
    using model_t = nn::gemma_model<gemma3_270m_256>;
    static_assert(model_t::context_length::extent == 256);
    return sizeof(model_t) > 0 ? 0 : 1;
}
