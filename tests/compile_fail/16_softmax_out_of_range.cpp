// softmax over a dimension the tensor does not have.
// expect-error: shaped::softmax<Dim>(x): dimension out of range
// expect-context: dims<3>
#include "seed_axes.hpp"

int main() {
    auto scores = shaped::torch::rand<batch, num_tokens, num_tokens>();
    auto weights = shaped::softmax<-1>(scores);
    (void)weights;
#ifdef SHAPE_BUG
    auto bad = shaped::softmax<3>(scores);
    (void)bad;
#endif
}
