#ifndef SHAPED_NN_DROPOUT_HPP
#define SHAPED_NN_DROPOUT_HPP

/// \file
/// `nn::dropout`: PyTorch's `nn.Dropout`, with PyTorch's CPU random draws.

#include <mutex>
#include <stdexcept>
#include <type_traits>

#include "../tensor.hpp"
#include "../torch/generator.hpp"

namespace shaped::nn {

/// Zeroes each element with probability `p` and scales the kept ones by `1 / (1 - p)` in training mode;
/// the identity in evaluation mode, or when `p == 0`.
///
/// Shapes: unchanged (contiguous result). Element type: float or double.
/// Errors: throws `std::invalid_argument` when `p` is outside `[0, 1]` (PyTorch's "dropout probability
/// has to be between 0 and 1").
/// Source: `torch.nn.Dropout(p)`, as PyTorch 1.13 computes it on the CPU (`at::native::_dropout_impl`):
/// a noise tensor drawn element by element in row-major order with `bernoulli_(1 - p)` (a 53-bit uniform
/// double per element, kept when below `1 - p`), divided by `1 - p`, multiplied in. The same seed gives
/// the same mask as PyTorch built without MKL (Debian's build); PyTorch built with MKL draws its
/// Bernoulli numbers differently.
/// Like `nn.Module`, a new dropout is in training mode.
/// Example: `shaped::nn::dropout dropout(0.5); dropout.eval(); auto y = dropout(attn_weights);`
class dropout {
public:
    /// `nn.Dropout(p)`, in training mode. Throws `std::invalid_argument` for `p` outside [0, 1].
    explicit dropout(double p) : p_(p) {
        if (!(p >= 0.0 && p <= 1.0))
            throw std::invalid_argument("shaped::nn::dropout: dropout probability has to be between 0 and 1, but got " +
                                        std::to_string(p));
    }

    /// `module.train(mode)`.
    void train(bool mode = true) noexcept { training_ = mode; }
    /// `module.eval()`.
    void eval() noexcept { training_ = false; }
    /// Whether the module is in training mode (`module.training`).
    bool training() const noexcept { return training_; }
    /// The probability of zeroing an element.
    double p() const noexcept { return p_; }

    /// Applies dropout, drawing from `gen` (the default generator unless given) in training mode.
    /// (Takes `x` by value: an rvalue, such as the attention weights, passes through without a copy.)
    template <class Value, class Layout, Axis... Axes>
    tensor<Value, Axes...> operator()(basic_tensor<Value, Layout, Axes...> x,
                                      torch::generator& gen = torch::default_generator()) const {
        static_assert(std::is_floating_point_v<Value>, "shaped::nn::dropout: elements must be float or double");
        const auto e = x.shape;
        tensor<Value, Axes...> out(shaped::detail::adopt_tag{}, e, std::move(x).storage());
        if (!training_ || p_ == 0.0) return out;
        Value* y = out.data();
        const std::size_t numel = out.numel();
        if (p_ == 1.0) {
            for (std::size_t i = 0; i < numel; ++i) y[i] = y[i] * Value(0);
            return out;
        }
        const Value scale = Value(1) / static_cast<Value>(1.0 - p_);
        const std::lock_guard<std::mutex> lock(gen.mutex());
        for (std::size_t i = 0; i < numel; ++i) {
            const Value noise = gen.uniform_double(0.0, 1.0) < 1.0 - p_ ? scale : Value(0);
            y[i] = y[i] * noise;
        }
        return out;
    }

private:
    double p_;
    bool training_ = true;
};

}  // namespace shaped::nn

#endif
