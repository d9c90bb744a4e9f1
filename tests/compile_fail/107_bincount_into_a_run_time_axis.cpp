// bincount counts along the axis the ids index, whose extent is minlength: a static axis. A run-time axis
// (the draws' own axis, say) would leave the number of counts unknown to the type.
// expect-error: the counts' axis A must be a static axis
// expect-context: run_time<draws>
#include <cstdint>
#include <vector>

#include <shaped/shaped.hpp>

struct vocab : shaped::axis<"vocab", 9> {};
struct draws : shaped::dynamic_axis<"draws"> {};

int main() {
    const std::vector<std::int64_t> sample{3, 3, 7, 0};
    const auto ids = shaped::tensor<std::int64_t, draws>::from_buffer(sample, sample.size());
    auto counts = shaped::bincount<vocab>(ids);  // tensor<std::int64_t, vocab>
    (void)counts;
#ifdef SHAPE_BUG
    auto bad = shaped::bincount<draws>(ids);
    (void)bad;
#endif
}
