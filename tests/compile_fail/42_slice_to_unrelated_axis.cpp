// A causal mask sliced to an axis that is short enough but not declared within context_length.
// expect-error: shaped::slice<Prefix...>(x): each prefix axis must be declared as a prefix of the axis it cuts
// expect-context: to_axes<shaped::diag::sized<four_heads, 4>
#include "run_time_axes.hpp"

struct four_heads : shaped::axis<"four_heads", 4> {};

int main() {
    auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>());
    auto sliced = mask.slice<num_tokens, num_keys>(4, 4);  // mask[:num_tokens, :num_tokens]
    (void)sliced;
#ifdef SHAPE_BUG
    auto bad = mask.slice<four_heads, four_heads>();
    (void)bad;
#endif
}
