// A static token axis declared within context_length (6) but longer than it.
// expect-error: shaped::axis<Name, Extent, at_most<B>>: the extent exceeds B's
// expect-context: numbers<7, 6>
#include "run_time_axes.hpp"

struct six_tokens : shaped::axis<"six_tokens", 6, shaped::at_most<context_length>> {};
#ifdef SHAPE_BUG
struct seven_tokens : shaped::axis<"seven_tokens", 7, shaped::at_most<context_length>> {};
#endif

int main() {
    auto x = shaped::torch::rand<batch, six_tokens, d_in>(1);
    (void)x;
#ifdef SHAPE_BUG
    static_assert(sizeof(seven_tokens) == 1);
#endif
}
