// Grouped-query attention where the silent bug hides: num_kv_heads == group_size == 2, so that keys tiled
// with repeat and keys expanded with repeat_interleave have the same sizes, 4 heads, and PyTorch runs both.
#ifndef SHAPED_COMPILE_FAIL_GQA_AXES_HPP
#define SHAPED_COMPILE_FAIL_GQA_AXES_HPP

#include <shaped/shaped.hpp>
#include <shaped/nn/grouped_query_attention.hpp>

struct batch : shaped::axis<"batch", 2> {};
struct context_length : shaped::axis<"context_length", 6> {};
struct num_tokens : shaped::axis<"num_tokens", 4, shaped::at_most<context_length>> {};
struct d_in : shaped::axis<"d_in", 8> {};
struct num_kv_heads : shaped::axis<"num_kv_heads", 2> {};
struct group_size : shaped::axis<"group_size", 2> {};
struct num_heads : shaped::product<"num_heads", num_kv_heads, group_size> {};
struct head_dim : shaped::axis<"head_dim", 4> {};
using num_keys = shaped::key<num_tokens>;

#endif
