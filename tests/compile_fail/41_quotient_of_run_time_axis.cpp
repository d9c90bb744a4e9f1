// Dividing a run-time axis: whether num_tokens divides by two could only be known at run time.
// expect-error: shaped::quotient: a run-time axis cannot be divided
// expect-context: run_time<num_tokens, 6>
#include "run_time_axes.hpp"

struct two : shaped::axis<"two", 2> {};
struct pair_of_dims : shaped::quotient<"pair_of_dims", d_out, two> {};  // a static dividend: fine
#ifdef SHAPE_BUG
struct half_tokens : shaped::quotient<"half_tokens", num_tokens, two> {};
#endif

int main() {
    auto x = shaped::torch::rand<batch, num_tokens, d_out>(1, 4).view<batch, num_tokens, two, pair_of_dims>();
    (void)x;
#ifdef SHAPE_BUG
    static_assert(sizeof(half_tokens) == 1);
#endif
}
