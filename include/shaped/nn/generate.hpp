#ifndef SHAPED_NN_GENERATE_HPP
#define SHAPED_NN_GENERATE_HPP

/// \file
/// `nn::generate`: decoding with temperature, top-k filtering and an end-of-text id (the book's chapter 5).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "../diagnostics.hpp"
#include "../ops/cat.hpp"
#include "../ops/compare.hpp"
#include "../ops/index.hpp"
#include "../ops/reduce.hpp"
#include "../ops/softmax.hpp"
#include "../ops/topk.hpp"
#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "../torch/multinomial.hpp"

namespace shaped::nn {

/// `max_new_tokens` times: the model's logits for the last position of the last `context_size` tokens; with
/// `top_k`, every logit below the `top_k`-th largest of its row set to `-inf`; with `temperature > 0`, the
/// logits divided by it and one id drawn from their softmax (`torch::multinomial`, from `gen`), else the
/// largest one taken; the id appended, unless it is `eos_id`, which ends the generation.
///
/// Shapes: `idx` is `(batch, seq)` ids, `seq` a run-time axis whose bound is the longest sequence it may grow
/// to; the result is `idx` with up to `max_new_tokens` more positions. The model sees the crop on its config's
/// `num_tokens`. Element type: ids `std::int64_t`; the logits the model's float.
/// Draws: as the book's function draws from PyTorch's global generator, so after `torch::manual_seed(123)`
/// the same ids come as PyTorch's for the same model (the model's dropout draws from `gen` too, in training
/// mode). With `eos_id`, generation stops when every sequence's next id is `eos_id` (the book's
/// `if idx_next == eos_id`, which PyTorch evaluates only for a batch of one).
/// Errors: compile time, a static `seq`. Thrown: `shape_error` when the sequence would grow past `seq`'s bound,
/// `context_size` is more than the model's `num_tokens` takes, or `top_k` is 0 or more than the vocabulary;
/// `std::invalid_argument` for a negative or NaN temperature.
/// Source: the book's `generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None,
/// eos_id=None)` (chapter 5, listing 5.4), with its row-wise max subtracted before the softmax; call
/// `model.eval()` first for the book's numbers.
/// Example: `auto out = shaped::nn::generate(model, ids, 15, 256, 1.4f, 25);`
template <class Model, Axis Batch, Axis Seq>
tensor<std::int64_t, Batch, Seq> generate(const Model& model, tensor<std::int64_t, Batch, Seq> idx,
                                          std::size_t max_new_tokens, std::size_t context_size,
                                          float temperature = 0.0f, std::optional<std::size_t> top_k = {},
                                          std::optional<std::int64_t> eos_id = {},
                                          torch::generator& gen = torch::default_generator()) {
    static_assert(DynamicAxis<Seq>, "shaped::nn::generate: the sequence axis grows, so it is a run-time axis "
                                    "(shaped::dynamic_axis)");
    using tokens = typename Model::config::num_tokens;
    using vocab = typename Model::config::vocab_size;
    if (context_size > tokens::bound)
        throw shape_error("generate(model, idx, max_new_tokens, context_size, ...)",
                          "context_size <= " + std::to_string(tokens::bound) + " (the bound of the model's " +
                              axis_name<tokens>() + ")",
                          "context_size = " + std::to_string(context_size));
    if (!(temperature >= 0.0f))
        throw std::invalid_argument("shaped::nn::generate: temperature must be 0 (greedy) or more, got " +
                                    std::to_string(temperature));
    if (top_k && (*top_k == 0 || *top_k > vocab::extent))
        throw shape_error("generate(model, idx, max_new_tokens, context_size, temperature, top_k)",
                          "1 <= top_k <= " + std::to_string(vocab::extent) + " (" + axis_name<vocab>() + ")",
                          "top_k = " + std::to_string(*top_k));
    for (std::size_t step = 0; step < max_new_tokens; ++step) {
        auto idx_cond = last<Seq, tokens>(idx, context_size);                // idx[:, -context_size:]
        auto logits = model(idx_cond, gen).template select<tokens>(-1);      // logits[:, -1, :], (batch, vocab)
        if (top_k) {
            auto top = topk<vocab>(logits, *top_k);
            auto min_val = std::move(top.values).template select<shaped::top_k<vocab>>(-1);  // top_logits[:, -1], (batch)
            logits = where(logits < std::move(min_val).template unsqueeze<-1>(),
                           -std::numeric_limits<float>::infinity(), logits);
        }
        auto idx_next = [&] {
            if (temperature > 0.0f) {
                logits = logits / temperature;
                logits = logits - logits.template max<-1>(keepdim);
                return torch::multinomial(softmax<-1>(std::move(logits)), gen);  // (batch, reduced<vocab>)
            }
            return logits.template argmax<-1>(keepdim);
        }();
        if (eos_id) {
            bool all_eos = true;
            for (std::size_t b = 0; b < idx_next.numel(); ++b) all_eos = all_eos && idx_next.data()[b] == *eos_id;
            if (all_eos) break;
        }
        idx = cat<1>(hana::make_tuple(std::move(idx), std::move(idx_next)));  // torch.cat((idx, idx_next), dim=1)
    }
    return idx;
}

}  // namespace shaped::nn

#endif
