// cat of tensors that differ on an axis other than the one joined.
// expect-error: shaped::cat<Dim>(tensors): the tensors must have the same element type, the same rank and the same axes everywhere but at Dim
#include <boost/hana/tuple.hpp>

#include "seed_axes.hpp"

int main() {
    auto a = shaped::torch::rand<num_tokens, d_out>();
    auto b = shaped::torch::rand<num_tokens, head_dim>();
    auto joined = shaped::cat<-1>(boost::hana::make_tuple(a, b));
    (void)joined;
#ifdef SHAPE_BUG
    auto c = shaped::torch::rand<context_length, d_out>();
    auto bad = shaped::cat<-1>(boost::hana::make_tuple(a, c));
    (void)bad;
#endif
}
