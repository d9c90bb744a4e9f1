#ifndef SHAPED_TORCH_GENERATOR_HPP
#define SHAPED_TORCH_GENERATOR_HPP

/// \file
/// PyTorch's CPU random stream: `torch.manual_seed`, `torch.rand`, `Tensor.uniform_`, bit for bit.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <utility>

#include "../tensor_fwd.hpp"

namespace shaped::torch {

/// PyTorch's CPU generator: a 32-bit Mersenne Twister seeded with the low 32 bits of the seed, with the
/// second value of the last Box-Muller pair cached for `normal_` (as PyTorch caches it), and a mutex that
/// every fill takes for its whole run of draws, as PyTorch's kernels take the generator's: two threads
/// drawing from one generator do not race, though which draws each gets depends on which runs first.
///
/// Errors: none. Nothing is thrown. Copying copies the stream's state (a new mutex).
/// Source: `at::CPUGeneratorImpl` (ATen/CPUGeneratorImpl.cpp, at::mt19937 in ATen/core/MT19937RNGEngine.h),
/// `torch.Generator`; default seed 67280421310721 (`c10::detail::default_rng_seed_val`).
/// Example: `shaped::torch::generator g(1223); auto q = shaped::torch::rand<batch, num_tokens, d_out>(g);`
class generator {
public:
    /// PyTorch's default seed, `c10::detail::default_rng_seed_val`.
    static constexpr std::uint64_t default_seed = 67280421310721ULL;

    /// A stream seeded with the low 32 bits of `seed`, as `torch.Generator().manual_seed(seed)`.
    explicit generator(std::uint64_t seed = default_seed) : engine_(static_cast<std::uint32_t>(seed)) {}
    /// The same stream state as `other` (and its cached normal value), with a mutex of its own.
    generator(const generator& other) : engine_(other.state().first), next_normal_(other.state().second) {}
    /// Takes `other`'s stream state and cached normal value; keeps its own mutex.
    generator& operator=(const generator& other) {
        if (this != &other) {
            const auto [engine, next] = other.state();
            const std::lock_guard<std::mutex> lock(mutex_);
            engine_ = engine;
            next_normal_ = next;
        }
        return *this;
    }

    /// `torch.manual_seed(seed)` for this generator: a new stream, and no cached normal value.
    void manual_seed(std::uint64_t seed) {
        const std::lock_guard<std::mutex> lock(mutex_);
        engine_.seed(static_cast<std::uint32_t>(seed));
        next_normal_.reset();
    }

    /// What a fill holds while it draws: `const std::lock_guard<std::mutex> lock(gen.mutex());`.
    std::mutex& mutex() const noexcept { return mutex_; }

    /// One 32-bit draw (`CPUGeneratorImpl::random()`).
    std::uint32_t random() { return static_cast<std::uint32_t>(engine_()); }

    /// One 64-bit draw, two 32-bit ones, the first high (`CPUGeneratorImpl::random64()`).
    std::uint64_t random64() {
        const std::uint64_t hi = random(), lo = random();
        return (hi << 32) | lo;
    }

    /// One float in `[from, to)`, as `at::uniform_real_distribution<float>`: the low 24 bits of a draw
    /// scaled by 2^-24, then `x * (to - from) + from` rounded once (a fused multiply-add), which is what
    /// PyTorch's AVX2 CPU kernel computes; it differs from two roundings in about half of the elements.
    float uniform_float(float from, float to) {
        const float x = static_cast<float>(random() & ((1u << 24) - 1)) * (1.0f / 16777216.0f);
        return std::fma(x, to - from, from);
    }

    /// One double in `[from, to)`, as `at::uniform_real_distribution<double>`: 53 bits of a 64-bit draw.
    double uniform_double(double from, double to) {
        const std::uint64_t r = random64();
        const double x = static_cast<double>(r & ((std::uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
        return std::fma(x, to - from, from);
    }

    /// One standard normal double, as `at::normal_distribution<double>` draws it: the cached second value of
    /// the last pair if there is one, else a new Box-Muller pair from two 53-bit uniforms
    /// (r = sqrt(-2 log(1 - u2)), theta = 2 pi u1; returns r cos theta and caches r sin theta).
    double normal_double() {
        if (next_normal_) {
            const double v = *next_normal_;
            next_normal_.reset();
            return v;
        }
        const double u1 = uniform_double(0.0, 1.0), u2 = uniform_double(0.0, 1.0);
        const double r = std::sqrt(-2.0 * std::log(1.0 - u2));
        const double theta = 2.0 * 3.14159265358979323846 * u1;
        next_normal_ = r * std::sin(theta);
        return r * std::cos(theta);
    }

private:
    std::pair<std::mt19937, std::optional<double>> state() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return {engine_, next_normal_};
    }

    std::mt19937 engine_;
    std::optional<double> next_normal_;
    mutable std::mutex mutex_;
};

/// The process-wide generator that `torch.manual_seed` seeds and the functions without a generator
/// argument draw from. Fills lock it, as PyTorch's do; threads that want reproducible draws each take a
/// generator of their own.
inline generator& default_generator() {
    static generator g;
    return g;
}

/// `torch.manual_seed(seed)`: reseeds the default generator. Source: `torch.manual_seed`.
inline void manual_seed(std::uint64_t seed) {
    default_generator().manual_seed(seed);
}

/// Fills `x` in place with uniform values on `[from, to)` from `gen`, in the order its elements lie in
/// memory (row-major for a contiguous tensor; a transposed one is filled through its buffer, as
/// PyTorch's TensorIterator walks a non-contiguous tensor in memory order).
///
/// Shapes: any. Element type: float or double. Errors: none. Nothing is thrown.
/// Source: `torch.Tensor.uniform_(from, to)` (ATen's `uniform_kernel`, serial over the elements).
template <class Value, class Layout, Axis... Axes>
void uniform_(basic_tensor<Value, Layout, Axes...>& x, double from, double to, generator& gen = default_generator()) {
    static_assert(std::is_same_v<Value, float> || std::is_same_v<Value, double>,
                  "shaped::torch::uniform_: elements must be float or double");
    Value* p = x.data();
    const std::size_t numel = x.numel();
    const std::lock_guard<std::mutex> lock(gen.mutex());
    for (std::size_t i = 0; i < numel; ++i) {
        if constexpr (std::is_same_v<Value, float>)
            p[i] = gen.uniform_float(static_cast<float>(from), static_cast<float>(to));
        else
            p[i] = gen.uniform_double(from, to);
    }
}

/// `torch.rand(*size)`: float32 uniform on `[0, 1)`, equal to PyTorch's bit for bit for the same seed.
///
/// Shapes: `(Axes...)`; a run-time axis takes its extent from the numbers given, one per run-time axis in
/// order (`torch::rand<batch, num_tokens, d_in>(2, n)` is `torch.rand(2, n, 768)`), or from `shape`.
/// Element type: float (for float64, fill a `tensor<double, ...>` with `uniform_`).
/// Errors: compile time, a count of numbers other than the number of run-time axes. Thrown
/// (`shape_error`): a number outside `1..bound` of its axis.
/// Source: `torch.rand`.
/// Example: `shaped::torch::manual_seed(1223); auto q = shaped::torch::rand<batch, num_tokens, d_out>();`
template <Axis... Axes>
tensor<float, Axes...> rand(const extents<Axes...>& shape, generator& gen = default_generator()) {
    tensor<float, Axes...> t(shape);
    uniform_(t, 0.0, 1.0, gen);
    return t;
}
/// From `gen`, the run-time extents as numbers: `torch::rand<batch, num_tokens, d_in>(g, 2, n)`.
template <Axis... Axes, shaped::detail::extent_number... N>
    requires(sizeof...(N) == extents<Axes...>::rank_dynamic)
tensor<float, Axes...> rand(generator& gen, N... n) {
    return rand(extents<Axes...>::checked("torch::rand", n...), gen);
}
/// From the default generator, the run-time extents as numbers: `torch::rand<batch, num_tokens, d_in>(2, n)`.
template <Axis... Axes, shaped::detail::extent_number... N>
    requires(sizeof...(N) == extents<Axes...>::rank_dynamic)
tensor<float, Axes...> rand(N... n) {
    return rand(extents<Axes...>::checked("torch::rand", n...), default_generator());
}

/// `torch.ones(*size)`, `torch.zeros(*size)`, `torch.empty(*size)`: float32, with the extents of run-time
/// axes given as for `rand`. Errors: thrown (`shape_error`), a number outside `1..bound` of its axis.
/// Source: `torch.ones`, `torch.zeros`, `torch.empty` (whose elements are unset).
template <Axis... Axes, shaped::detail::extent_number... N>
    requires(sizeof...(N) == extents<Axes...>::rank_dynamic)
tensor<float, Axes...> ones(N... n) {
    tensor<float, Axes...> t(extents<Axes...>::checked("torch::ones", n...), uninitialized);
    std::fill_n(t.data(), t.numel(), 1.0f);
    return t;
}
/// `torch.zeros(*size)`: float32 zeros, the run-time extents given as for `rand`.
template <Axis... Axes, shaped::detail::extent_number... N>
    requires(sizeof...(N) == extents<Axes...>::rank_dynamic)
tensor<float, Axes...> zeros(N... n) {
    return tensor<float, Axes...>(extents<Axes...>::checked("torch::zeros", n...));
}
/// `torch.empty(*size)`: float32, elements unset, the run-time extents given as for `rand`.
template <Axis... Axes, shaped::detail::extent_number... N>
    requires(sizeof...(N) == extents<Axes...>::rank_dynamic)
tensor<float, Axes...> empty(N... n) {
    return tensor<float, Axes...>(extents<Axes...>::checked("torch::empty", n...), uninitialized);
}

/// `torch.arange(n)`: the integers `0, 1, ..., n - 1` along the axis `A`, as `std::int64_t` (`torch.long`).
///
/// Shapes: `(A)`; a run-time `A` takes its extent `n` (checked against its bound), a static one its own.
/// Element type: `std::int64_t`. Errors: thrown (`shape_error`), `n` outside `1..bound`.
/// Source: `torch.arange(end)`; `torch.arange(seq_len)` in the book's `GPTModel.forward`.
template <Axis A, shaped::detail::extent_number... N>
    requires(sizeof...(N) == extents<A>::rank_dynamic)
tensor<std::int64_t, A> arange(N... n) {
    tensor<std::int64_t, A> t(extents<A>::checked("torch::arange", n...), uninitialized);
    for (std::size_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<std::int64_t>(i);
    return t;
}

}  // namespace shaped::torch

#endif
