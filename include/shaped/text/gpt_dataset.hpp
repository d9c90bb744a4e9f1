#ifndef SHAPED_TEXT_GPT_DATASET_HPP
#define SHAPED_TEXT_GPT_DATASET_HPP

/// \file
/// `text::gpt_dataset<num_tokens>`: a text's token ids cut into overlapping windows of `max_length` inputs
/// and the same windows one token later as targets (the book's `GPTDatasetV1`, chapter 2).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../diagnostics.hpp"
#include "../extents.hpp"
#include "../tensor.hpp"
#include "bpe_tokenizer.hpp"

namespace shaped::text {

/// One window of a `gpt_dataset`: `max_length` input ids and the `max_length` ids that follow each one.
template <class Ids>
struct gpt_example {
    /// `token_ids[i : i + max_length]`.
    Ids input_ids;
    /// `token_ids[i + 1 : i + max_length + 1]`: each input's next token.
    Ids target_ids;
};

/// The windows of a token sequence that a GPT is trained on: window `k` starts at token `k * stride` and holds
/// `max_length` ids, its targets the same positions one token later; windows start while a full target window
/// fits (`range(0, len(token_ids) - max_length, stride)`).
///
/// Shapes: each input and target is `(NumTokens)`, `NumTokens` the model's token axis: a run-time axis whose
/// extent is `max_length` (at most its bound, the context length), or a static one of extent `max_length`.
/// Element type: `std::int64_t` ids.
/// Errors: thrown, `shape_error` for a `max_length` outside `1..NumTokens`'s bound (or other than a static
/// axis's extent), `std::invalid_argument` for a stride of 0 or a sequence of at most `max_length` ids (the
/// book asserts "Number of tokenized inputs must at least be equal to max_length+1"), `std::out_of_range`
/// from `at` for a window that does not exist.
/// Source: the book's `GPTDatasetV1(txt, tokenizer, max_length, stride)` (chapter 2, listing 2.5), which
/// encodes `txt` with `allowed_special={"<|endoftext|>"}`; `torch.utils.data.Dataset`.
/// Example: `shaped::text::gpt_dataset<num_tokens> dataset(raw_text, tokenizer, 4, 1);  auto [x, y] = dataset.at(0);`
template <Axis NumTokens>
class gpt_dataset {
public:
    /// The ids of one window, `(NumTokens)`.
    using ids_type = tensor<std::int64_t, NumTokens>;

    /// The windows of `token_ids`, which are copied.
    gpt_dataset(std::span<const std::int64_t> token_ids, std::size_t max_length, std::size_t stride)
        : ids_(token_ids.begin(), token_ids.end()), shape_(checked_length(max_length)), stride_(stride) {
        if (stride == 0)
            throw std::invalid_argument("shaped::text::gpt_dataset: stride must be at least 1, got 0");
        if (ids_.size() <= max_length)
            throw std::invalid_argument("shaped::text::gpt_dataset: number of tokenized inputs must at least be equal "
                                        "to max_length+1: got " + std::to_string(ids_.size()) + " tokens for max_length " +
                                        std::to_string(max_length));
    }
    /// The windows of `txt` encoded by `tokenizer` with `<|endoftext|>` allowed, as the book's class encodes it.
    gpt_dataset(std::string_view txt, const bpe_tokenizer& tokenizer, std::size_t max_length, std::size_t stride)
        : gpt_dataset(tokenizer.encode(txt, {"<|endoftext|>"}), max_length, stride) {}

    /// The number of windows (`len(dataset)`).
    std::size_t size() const noexcept { return (ids_.size() - max_length() - 1) / stride_ + 1; }
    /// The ids in each window.
    std::size_t max_length() const noexcept { return shape_.extent(0); }
    /// How far each window starts from the one before.
    std::size_t stride() const noexcept { return stride_; }
    /// The whole token sequence.
    std::span<const std::int64_t> token_ids() const noexcept { return ids_; }

    /// Window `k`: its input and target ids (`dataset[k]`). Throws `std::out_of_range` for `k >= size()`.
    gpt_example<ids_type> at(std::size_t k) const {
        if (k >= size())
            throw std::out_of_range("shaped::text::gpt_dataset::at: window " + std::to_string(k) + " of " +
                                    std::to_string(size()));
        return {window(k * stride_), window(k * stride_ + 1)};
    }

    /// Window `k`'s input and target ids written to `inputs` and `targets`, `max_length()` each (a loader fills
    /// its batches so). `k` must be below `size()`.
    void copy_window(std::size_t k, std::int64_t* inputs, std::int64_t* targets) const {
        const auto first = ids_.begin() + static_cast<std::ptrdiff_t>(k * stride_);
        std::copy_n(first, max_length(), inputs);
        std::copy_n(first + 1, max_length(), targets);
    }

private:
    static extents<NumTokens> checked_length(std::size_t max_length) {
        if constexpr (StaticAxis<NumTokens>) {
            if (max_length != NumTokens::extent)
                throw shape_error("text::gpt_dataset", "max_length = " + std::to_string(NumTokens::extent) + " (" +
                                                           axis_name<NumTokens>() + ")",
                                  "max_length = " + std::to_string(max_length));
            return {};
        } else {
            return extents<NumTokens>::checked("text::gpt_dataset (max_length)", max_length);
        }
    }
    ids_type window(std::size_t start) const {
        ids_type t(shape_, uninitialized);
        std::copy_n(ids_.begin() + static_cast<std::ptrdiff_t>(start), max_length(), t.data());
        return t;
    }

    std::vector<std::int64_t> ids_;
    extents<NumTokens> shape_;
    std::size_t stride_;
};

}  // namespace shaped::text

#endif
