// A GPT configuration in miniature for the chapter-4 cases: emb_dim, context_length and the static token
// axis all have extent 4, so only names can tell them apart.
#ifndef SHAPED_COMPILE_FAIL_GPT_AXES_HPP
#define SHAPED_COMPILE_FAIL_GPT_AXES_HPP

#include <cstdint>
#include <shaped/shaped.hpp>

struct tiny {
    struct vocab_size : shaped::axis<"vocab_size", 11> {};
    struct context_length : shaped::axis<"context_length", 4> {};
    struct emb_dim : shaped::axis<"emb_dim", 4> {};
    struct n_heads : shaped::axis<"n_heads", 2> {};
    struct batch : shaped::dynamic_axis<"batch"> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
    static constexpr std::size_t n_layers = 1;
    static constexpr double drop_rate = 0.0;
    static constexpr bool qkv_bias = false;
};
using batch = tiny::batch;
using num_tokens = tiny::num_tokens;
using emb_dim = tiny::emb_dim;
using vocab_size = tiny::vocab_size;
using context_length = tiny::context_length;

#endif
