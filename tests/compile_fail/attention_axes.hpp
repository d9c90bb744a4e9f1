// Sizes where the silent bugs hide: batch == num_heads == 2 and num_tokens == head_dim == 4.
#ifndef SHAPED_COMPILE_FAIL_ATTENTION_AXES_HPP
#define SHAPED_COMPILE_FAIL_ATTENTION_AXES_HPP

#include <shaped/shaped.hpp>

struct batch : shaped::axis<"batch", 2> {};
struct context_length : shaped::axis<"context_length", 6> {};
struct num_tokens : shaped::axis<"num_tokens", 4, shaped::at_most<context_length>> {};
struct d_in : shaped::axis<"d_in", 3> {};
struct d_out : shaped::axis<"d_out", 8> {};
struct num_heads : shaped::axis<"num_heads", 2> {};
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};
using num_keys = shaped::key<num_tokens>;

#endif
