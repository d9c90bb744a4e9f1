#ifndef SHAPED_NN_LOSS_HPP
#define SHAPED_NN_LOSS_HPP

/// \file
/// `nn::calc_loss_batch` and `nn::calc_loss_loader`: a model's cross-entropy on one batch and averaged over a
/// data loader's batches (the book's chapter 5).

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

#include "../ops/cross_entropy.hpp"
#include "../ops/view.hpp"
#include "../tensor.hpp"
#include "../torch/generator.hpp"

namespace shaped::nn {

/// The cross-entropy of `model`'s logits for `input_batch` against `target_batch`, over every position.
///
/// Shapes: `input_batch` and `target_batch` are `(batch, num_tokens)` ids on the model's axes (those a
/// `text::data_loader<Config::batch, Config::num_tokens>` gives); the logits `(batch, num_tokens, vocab_size)`
/// are flattened to `(merged<batch, num_tokens>, vocab_size)` and the targets to `(merged<batch, num_tokens>)`;
/// the result is a rank-0 float tensor. Errors: compile time, ids on other axes than the model takes (the
/// model's own message) or targets not on the inputs' axes. Thrown: the model's errors; `shape_error` when
/// the two batches have other extents; `std::out_of_range` for a target id outside the vocabulary.
/// The model runs as it is set (`model.eval()` first for the book's numbers: no dropout).
/// Source: the book's `calc_loss_batch(input_batch, target_batch, model, device)` (chapter 5).
/// Example: `auto loss = shaped::nn::calc_loss_batch(inputs, targets, model);   // tensor<float>`
template <class Model, class L, class LT, Axis Batch, Axis NumTokens>
auto calc_loss_batch(const basic_tensor<std::int64_t, L, Batch, NumTokens>& input_batch,
                     const basic_tensor<std::int64_t, LT, Batch, NumTokens>& target_batch, const Model& model,
                     torch::generator& gen = torch::default_generator()) {
    auto logits = model(input_batch, gen);
    return cross_entropy(std::move(logits).template flatten<0, 1>(), target_batch.template flatten<0, 1>());
}

/// The mean of `calc_loss_batch` over the first `num_batches` batches of `data_loader` (all of them when not
/// given, or when it is more), each loss taken as a number (`loss.item()`) and added in double; NaN for a
/// loader without batches. Iterating begins a pass of the loader, which draws its seeds as PyTorch's does.
///
/// Shapes: the loader's batches are `(batch, num_tokens)` on the model's axes. Element type: the result is
/// `double` (Python's float). Errors: those of `calc_loss_batch`.
/// Source: the book's `calc_loss_loader(data_loader, model, device, num_batches=None)` (chapter 5).
/// Example: `double train_loss = shaped::nn::calc_loss_loader(train_loader, model);`
template <class Loader, class Model>
double calc_loss_loader(Loader& data_loader, const Model& model, std::optional<std::size_t> num_batches = {},
                        torch::generator& gen = torch::default_generator()) {
    if (data_loader.size() == 0) return std::numeric_limits<double>::quiet_NaN();
    const std::size_t n = num_batches ? std::min(*num_batches, data_loader.size()) : data_loader.size();
    if (n == 0) return std::numeric_limits<double>::quiet_NaN();  // 0.0 / 0 in the book raises; nothing measured
    double total_loss = 0;
    std::size_t i = 0;
    for (auto it = data_loader.begin(); i < n; ++it, ++i) {
        const auto batch = *it;
        total_loss += calc_loss_batch(batch.inputs, batch.targets, model, gen).item();
    }
    return total_loss / static_cast<double>(n);
}

}  // namespace shaped::nn

#endif
