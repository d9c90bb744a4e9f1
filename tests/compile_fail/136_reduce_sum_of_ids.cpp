// The mean of token ids: a sum or mean of integers (PyTorch's mean refuses them too); max takes any element
// type.
// expect-error: shaped::reduce<Pattern, Op>(x): a sum or mean takes float or double elements
// expect-errors: 1
#include <cstdint>

#include <shaped/ops/reduce_pattern.hpp>

#include "seed_axes.hpp"

int main() {
    shaped::tensor<std::int64_t, batch, num_tokens> ids;
#ifdef SHAPE_BUG
    auto y = shaped::reduce<"batch num_tokens -> batch", "mean">(ids);
#else
    auto y = shaped::reduce<"batch num_tokens -> batch", "max">(ids);
#endif
    return static_cast<int>(y.numel()) - 1;
}
