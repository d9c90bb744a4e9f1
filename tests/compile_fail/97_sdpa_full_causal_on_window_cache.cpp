// Keys from a sliding-window cache read by full causal attention: the cache dropped every token older than
// its window, so the queries would silently attend to a truncated past. The keys' axis, windowed<num_tokens,
// sliding_window>, asks for that window.
// expect-error: the keys come from a sliding-window cache
#include <shaped/ops/scaled_dot_product_attention.hpp>

#include "gqa_axes.hpp"

struct sliding_window : shaped::axis<"sliding_window", 3> {};

int main() {
    shaped::nn::sliding_window_cache<num_kv_heads, head_dim, sliding_window, context_length> cache;
    auto q = shaped::torch::rand<batch, num_heads, num_tokens, head_dim>();
    auto [k, v] = cache.append(shaped::torch::rand<batch, num_kv_heads, num_tokens, head_dim>(),
                               shaped::torch::rand<batch, num_kv_heads, num_tokens, head_dim>());
    auto context = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal, shaped::sliding_window<sliding_window>);
    (void)context;
#ifdef SHAPE_BUG
    auto bad = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal);
    (void)bad;
#endif
}
