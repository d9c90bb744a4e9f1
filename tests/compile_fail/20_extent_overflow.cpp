// A tensor whose element count overflows the index type: 2^32 x 2^32 floats.
// expect-error: shaped::tensor: the product of the extents overflows the index type
#include "seed_axes.hpp"

struct huge : shaped::axis<"huge", (std::size_t{1} << 32)> {};

int main() {
    shaped::tensor<float, huge>* fine = nullptr;
    (void)fine;
#ifdef SHAPE_BUG
    shaped::tensor<float, huge, huge>* bad = nullptr;
    (void)sizeof(*bad);
#endif
}
