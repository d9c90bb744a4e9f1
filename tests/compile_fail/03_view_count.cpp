// view whose element count differs: (1, 2, 6) has 12 elements, (1, 2, 3, 3) has 18.
// expect-error: shaped::view<To...>(x): the element count must not change
// expect-context: element_counts<shaped::diag::numbers<12, 18>
#include "seed_axes.hpp"

int main() {
    auto q = shaped::torch::rand<batch, num_tokens, d_out>();
    auto q4 = q.view<batch, num_tokens, num_heads, head_dim>();
    (void)q4;
#ifdef SHAPE_BUG
    auto bad = q.view<batch, num_tokens, num_heads, num_heads>();
    (void)bad;
#endif
}
