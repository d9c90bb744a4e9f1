// repeat_interleave over a dimension the mask does not have: the error names repeat_interleave, the op that
// was called, not the helper it shares with repeat.
// expect-error: shaped::repeat_interleave<New, Dim>(x): dimension out of range
// expect-context: dims<3>
#include "attention_axes.hpp"

int main() {
    auto mask = shaped::torch::rand<batch, num_tokens, num_keys>();
    auto per_head = mask.repeat_interleave<num_heads, 0>();
    (void)per_head;
#ifdef SHAPE_BUG
    auto bad = mask.repeat_interleave<num_heads, 3>();
    (void)bad;
#endif
}
