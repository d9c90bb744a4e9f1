// softmax of a bool mask instead of the masked scores.
// expect-error: shaped::softmax<Dim>(x): elements must be float or double
#include "seed_axes.hpp"

int main() {
    auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>()).to<bool>();
    auto weights = shaped::softmax<-1>(shaped::ones<context_length, context_length>().masked_fill(mask, 0.0f));
    (void)weights;
#ifdef SHAPE_BUG
    auto bad = shaped::softmax<-1>(mask);
    (void)bad;
#endif
}
