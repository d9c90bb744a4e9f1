// Run-time batch and num_tokens (bound 6 by context_length), with the seed's static axes: d_out 6,
// num_heads 3, head_dim 2. At run time num_tokens may well be 2 == head_dim: names still decide.
#ifndef SHAPED_COMPILE_FAIL_RUN_TIME_AXES_HPP
#define SHAPED_COMPILE_FAIL_RUN_TIME_AXES_HPP

#include <shaped/shaped.hpp>

struct context_length : shaped::axis<"context_length", 6> {};
struct batch : shaped::dynamic_axis<"batch"> {};
struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
using num_keys = shaped::key<num_tokens>;
struct d_in : shaped::axis<"d_in", 3> {};
struct d_out : shaped::axis<"d_out", 6> {};
struct num_heads : shaped::axis<"num_heads", 3> {};
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};

#endif
