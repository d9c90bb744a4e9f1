// The seed's sizes: batch 1, num_tokens 2, d_out 6, num_heads 3, head_dim 2 (num_tokens == head_dim).
#ifndef SHAPED_COMPILE_FAIL_SEED_AXES_HPP
#define SHAPED_COMPILE_FAIL_SEED_AXES_HPP

#include <shaped/shaped.hpp>

struct batch : shaped::axis<"batch", 1> {};
struct context_length : shaped::axis<"context_length", 6> {};
struct num_tokens : shaped::axis<"num_tokens", 2, shaped::at_most<context_length>> {};
struct d_out : shaped::axis<"d_out", 6> {};
struct num_heads : shaped::axis<"num_heads", 3> {};
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};

#endif
