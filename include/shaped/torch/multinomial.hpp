#ifndef SHAPED_TORCH_MULTINOMIAL_HPP
#define SHAPED_TORCH_MULTINOMIAL_HPP

/// \file
/// PyTorch's sampling from its CPU random stream, draw for draw: `Tensor.exponential_`, `torch.multinomial`
/// (one sample), `torch.randperm` and `Tensor.random_` of an int64 scalar (the seeds a `DataLoader` draws).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "../diagnostics.hpp"
#include "../shape.hpp"
#include "../tensor.hpp"
#include "generator.hpp"

namespace shaped::torch {

/// Fills `x` in place with exponential values of rate `lambda`, in memory order, one 53-bit uniform `u` per
/// element: `-log1p(-u) / lambda` in double, rounded once to the element type.
///
/// Shapes: any. Element type: float or double. Errors: none. Nothing is thrown.
/// Source: `torch.Tensor.exponential_(lambd=1)` (ATen's serial CPU kernel, the one a build without MKL runs).
template <class Value, class Layout, Axis... Axes>
void exponential_(basic_tensor<Value, Layout, Axes...>& x, double lambda = 1.0, generator& gen = default_generator()) {
    static_assert(std::is_same_v<Value, float> || std::is_same_v<Value, double>,
                  "shaped::torch::exponential_: elements must be float or double");
    Value* p = x.data();
    const std::size_t numel = x.numel();
    const std::lock_guard<std::mutex> lock(gen.mutex());
    for (std::size_t i = 0; i < numel; ++i)
        p[i] = static_cast<Value>(-std::log1p(-gen.uniform_double(0.0, 1.0)) / lambda);
}

/// One id drawn along the last axis `A` of `probs` with the probabilities (or weights) it holds, for each
/// position of the other axes: the same id PyTorch draws from the same stream. As PyTorch does for one
/// sample, it draws an exponential `q` per element (in memory order) and takes the first position of the
/// largest `probs / q`, so one call consumes two 32-bit draws per element of `probs`.
///
/// Shapes: `probs` `(..., A)`; the result `(..., reduced<A>)`, one id per row where `A` was, as
/// `argmax<A>(keepdim)` gives it (so it appends to a sequence with `cat` as greedy decoding's id does); a
/// rank-1 `probs` gives `(reduced<A>)`, whose `.item()` is the id. Element type: `probs` float or double (not
/// normalised: weights do), the ids `std::int64_t`.
/// Errors: compile time, elements that are not floating-point. Thrown: `std::invalid_argument` for a row with
/// a negative, infinite or NaN entry, or that sums to 0 (PyTorch's "invalid multinomial distribution").
/// Source: `torch.multinomial(probs, num_samples=1)` (PyTorch 1.13's one-sample path, `probs / q` with
/// `q ~ Exp(1)`); the book's `generate` (chapter 5). More samples per row, with or without replacement, are
/// not provided.
/// Example: `shaped::torch::manual_seed(123); auto id = shaped::torch::multinomial(probas).item();`
template <class Value, class Layout, Axis... Axes>
auto multinomial(const basic_tensor<Value, Layout, Axes...>& probs, generator& gen = default_generator()) {
    static_assert(std::is_floating_point_v<Value>, "shaped::torch::multinomial(probs): elements must be float or double");
    static_assert(sizeof...(Axes) >= 1, "shaped::torch::multinomial(probs): probs needs an axis to draw along");
    if constexpr (std::is_floating_point_v<Value> && sizeof...(Axes) >= 1) {
        using last = shaped::detail::axis_at_t<sizeof...(Axes) - 1, Axes...>;
        const std::size_t len = probs.shape.extent(sizeof...(Axes) - 1);
        const std::size_t rows = probs.numel() / len;
        const auto& elements = probs.storage();  // row-major (a copy for a strided tensor)
        const Value* p = elements.data();
        for (std::size_t r = 0; r < rows; ++r) {
            Value sum = 0;
            for (std::size_t j = 0; j < len; ++j) {
                const Value v = p[r * len + j];
                if (!(v >= 0) || std::isinf(v))
                    throw std::invalid_argument("shaped::torch::multinomial(probs): probability tensor contains either "
                                                "inf, nan or element < 0 (row " + std::to_string(r) + ", " +
                                                axis_name<last>() + " " + std::to_string(j) + ")");
                sum += v;
            }
            if (!(sum > 0))
                throw std::invalid_argument("shaped::torch::multinomial(probs): invalid multinomial distribution (sum of "
                                            "probabilities <= 0) in row " + std::to_string(r));
        }
        // q ~ Exp(1), drawn for the whole tensor first, as `at::empty_like(self).exponential_(1, gen)`.
        tensor<Value, Axes...> q(probs.shape, uninitialized);
        exponential_(q, 1.0, gen);
        using result_t = decltype(probs.template argmax<-1>(keepdim));
        result_t ids(typename result_t::extents_type(shaped::detail::adopt_tag{}, [&] {
                         std::array<std::size_t, result_t::extents_type::rank_dynamic> dyn{};
                         const auto src = probs.shape.dynamic();
                         for (std::size_t i = 0; i < dyn.size(); ++i) dyn[i] = src[i];  // the last axis's atoms come last
                         return dyn;
                     }()),
                     uninitialized);
        for (std::size_t r = 0; r < rows; ++r) {
            std::size_t best = 0;
            Value best_v = p[r * len] / q.data()[r * len];
            for (std::size_t j = 1; j < len; ++j) {
                const Value v = p[r * len + j] / q.data()[r * len + j];
                if (v > best_v) {
                    best_v = v;
                    best = j;
                }
            }
            ids.data()[r] = static_cast<std::int64_t>(best);
        }
        return ids;
    } else {
        return diag::failed_shape_check{};
    }
}

/// A random permutation of the ids 0 to `n - 1` from `gen`, as PyTorch 1.13 draws it on the CPU: for each
/// position `i` from the first to the last but one, a 32-bit draw `z`, and the ids at `i` and at
/// `i + (z mod (n - i))` swapped.
///
/// Shapes: none (a `std::vector` of `n` ids, as `.tolist()` gives). Errors: none; `n == 0` gives an empty one.
/// Source: `torch.randperm(n, generator=gen)` (ATen's `randperm_cpu`); the order in which a shuffling
/// `DataLoader` visits its dataset.
inline std::vector<std::int64_t> randperm(std::size_t n, generator& gen = default_generator()) {
    std::vector<std::int64_t> r(n);
    std::iota(r.begin(), r.end(), std::int64_t{0});
    const std::lock_guard<std::mutex> lock(gen.mutex());
    for (std::size_t i = 0; i + 1 < n; ++i) {
        const std::size_t z = gen.random() % (n - i);
        std::swap(r[i], r[i + z]);
    }
    return r;
}

/// One int64 from `gen`, uniform on `[0, 2^63 - 1]`: 64 bits drawn and the top one dropped.
/// Source: `torch.empty((), dtype=torch.int64).random_()`, what `DataLoader` and `RandomSampler` draw for
/// their seeds. Errors: none.
inline std::int64_t random_int64(generator& gen = default_generator()) {
    const std::lock_guard<std::mutex> lock(gen.mutex());
    return static_cast<std::int64_t>(gen.random64() % (std::uint64_t{1} << 63));
}

}  // namespace shaped::torch

#endif
