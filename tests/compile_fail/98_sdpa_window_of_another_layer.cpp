// A cache sized for one window read with another (a local layer's cache of 3 tokens attended with a window
// of 5 set for another layer): the queries would miss keys the wider window should see, and nothing at run
// time says so. The window is part of the keys' axis, so the two must agree.
// expect-error: of the cache's own window W
#include <shaped/ops/scaled_dot_product_attention.hpp>

#include "gqa_axes.hpp"

struct sliding_window : shaped::axis<"sliding_window", 3> {};
struct global_window : shaped::axis<"sliding_window", 5> {};

int main() {
    shaped::nn::sliding_window_cache<num_kv_heads, head_dim, sliding_window, context_length> cache;
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto [k, v] = cache.append(shaped::torch::rand<batch, num_kv_heads, num_tokens, head_dim>(),
                               shaped::torch::rand<batch, num_kv_heads, num_tokens, head_dim>());
    auto context = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal, shaped::sliding_window<sliding_window>);
    (void)context;
#ifdef SHAPE_BUG
    auto bad = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal, shaped::sliding_window<global_window>);
    (void)bad;
#endif
}
