#ifndef SHAPED_NN_GENERATE_HPP
#define SHAPED_NN_GENERATE_HPP

/// \file
/// `nn::generate`: decoding with temperature, top-k filtering and an end-of-text id (the book's chapter 5).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
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
#include "kv_cache.hpp"

namespace shaped::nn {

namespace detail {

// The book's checks of generate's arguments: temperature 0 (greedy) or more, top_k within the vocabulary.
template <Axis Vocab>
void check_sampling(float temperature, std::optional<std::size_t> top_k) {
    if (!(temperature >= 0.0f))
        throw std::invalid_argument("shaped::nn::generate: temperature must be 0 (greedy) or more, got " +
                                    std::to_string(temperature));
    if (top_k && (*top_k == 0 || *top_k > Vocab::extent))
        throw shape_error("generate(model, idx, max_new_tokens, context_size, temperature, top_k)",
                          "1 <= top_k <= " + std::to_string(Vocab::extent) + " (" + axis_name<Vocab>() + ")",
                          "top_k = " + std::to_string(*top_k));
}

// The book's choice of the next ids from the last position's logits `(batch, vocab)`: top-k filtering, then
// a draw from the softmax at `temperature`, or the argmax at 0. `(batch, reduced<vocab>)`.
template <Axis Vocab, class Logits>
auto next_ids(Logits logits, float temperature, std::optional<std::size_t> top_k, torch::generator& gen) {
    if (top_k) {
        auto top = topk<Vocab>(logits, *top_k);
        auto min_val = std::move(top.values).template select<shaped::top_k<Vocab>>(-1);  // top_logits[:, -1], (batch)
        logits = where(logits < std::move(min_val).template unsqueeze<-1>(), -std::numeric_limits<float>::infinity(),
                       logits);
    }
    if (temperature > 0.0f) {
        logits = logits / temperature;
        logits = logits - logits.template max<-1>(keepdim);
        return torch::multinomial(softmax<-1>(std::move(logits)), gen);  // (batch, reduced<vocab>)
    }
    return logits.template argmax<-1>(keepdim);
}

// Whether every id of `ids` is `id` (the book's `if idx_next == eos_id`).
template <class Ids>
bool all_are(const Ids& ids, std::int64_t id) {
    for (std::size_t b = 0; b < ids.numel(); ++b)
        if (ids.data()[b] != id) return false;
    return true;
}

}  // namespace detail

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
    detail::check_sampling<vocab>(temperature, top_k);
    for (std::size_t step = 0; step < max_new_tokens; ++step) {
        auto idx_cond = last<Seq, tokens>(idx, context_size);                // idx[:, -context_size:]
        auto logits = model(idx_cond, gen).template select<tokens>(-1);      // logits[:, -1, :], (batch, vocab)
        auto idx_next = detail::next_ids<vocab>(std::move(logits), temperature, top_k, gen);
        if (eos_id && detail::all_are(idx_next, *eos_id)) break;
        idx = cat<1>(hana::make_tuple(std::move(idx), std::move(idx_next)));  // torch.cat((idx, idx_next), dim=1)
    }
    return idx;
}

/// `generate` with the KV cache: the prompt once, then each new id alone, chosen as `generate` chooses it
/// (top-k, temperature, `eos_id`), drawing from `gen` as it draws.
///
/// Shapes: as `generate`; the model needs the cached call `model(ids, use_cache, gen)` and
/// `reset_kv_cache()` (`gpt_model`, `llama_model`, `gemma_model`); where it also has `model(ids, use_cache,
/// last_position, gen)`, the prompt's pass computes the logits of its last position only. Gives the ids `generate` gives with `context_size` the
/// context, as long as the sequence fits it (to float rounding of the logits: a draw that falls on the edge
/// between two ids may differ). Errors: compile time, a static `seq`. Thrown: as `generate`, and
/// `shape_error` when the prompt and the new ids together exceed `context_length` (the cache does not crop:
/// refused before any work).
/// Source: the book's `generate` (chapter 5) over its KV-cache models (ch04/03_kv-cache, and the caches of
/// standalone-llama32 and ch05/11_qwen3).
/// Example: `auto out = shaped::nn::generate_cached(model, ids, 15, 1.4f, 25);`
template <class Model, Axis Batch, Axis Seq>
tensor<std::int64_t, Batch, Seq> generate_cached(Model& model, tensor<std::int64_t, Batch, Seq> idx,
                                                 std::size_t max_new_tokens, float temperature = 0.0f,
                                                 std::optional<std::size_t> top_k = {},
                                                 std::optional<std::int64_t> eos_id = {},
                                                 torch::generator& gen = torch::default_generator()) {
    static_assert(DynamicAxis<Seq>, "shaped::nn::generate_cached: the sequence axis grows, so it is a run-time axis "
                                    "(shaped::dynamic_axis)");
    using tokens = typename Model::config::num_tokens;
    using vocab = typename Model::config::vocab_size;
    constexpr std::size_t context = Model::context_length::extent;
    detail::check_sampling<vocab>(temperature, top_k);
    const std::size_t prompt = idx.shape.extent(1);
    if (prompt + max_new_tokens > context + 1)  // the last new id is never fed back
        throw shape_error("generate_cached(model, idx, max_new_tokens, ...)",
                          "prompt + max_new_tokens - 1 <= " + std::to_string(context) + " (context_length)",
                          std::to_string(prompt) + " + " + std::to_string(max_new_tokens) + " - 1");
    model.eval();
    model.reset_kv_cache();
    if (max_new_tokens == 0) return idx;
    // The logits of the last position: only those computed where the model can (`last_position`).
    const auto last_logits = [&](auto ids) {
        if constexpr (requires { model(ids, use_cache, last_position, gen); })
            return model(ids, use_cache, last_position, gen);
        else
            return model(ids, use_cache, gen).template select<tokens>(-1);
    };
    auto logits = last_logits(last<Seq, tokens>(idx, context));
    for (std::size_t step = 0;; ++step) {
        auto next = detail::next_ids<vocab>(std::move(logits), temperature, top_k, gen);  // (batch, reduced<vocab>)
        if (eos_id && detail::all_are(next, *eos_id)) break;
        idx = cat<1>(hana::make_tuple(std::move(idx), next));
        if (step + 1 == max_new_tokens) break;
        logits = last_logits(std::move(next).template rename<Batch, tokens>());
    }
    return idx;
}

}  // namespace shaped::nn

#endif
