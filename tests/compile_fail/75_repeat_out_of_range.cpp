// repeat over a dimension the mask does not have: the error names repeat, the op that was called (its
// twin, case 73, names repeat_interleave).
// expect-error: shaped::repeat<New, Dim>(x): dimension out of range
// expect-context: dims<-4>
#include "attention_axes.hpp"

int main() {
    auto mask = shaped::torch::rand<batch, num_tokens, num_keys>();
    auto tiled = mask.repeat<num_heads, -3>();
    (void)tiled;
#ifdef SHAPE_BUG
    auto bad = mask.repeat<num_heads, -4>();
    (void)bad;
#endif
}
