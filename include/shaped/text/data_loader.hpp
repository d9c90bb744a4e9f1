#ifndef SHAPED_TEXT_DATA_LOADER_HPP
#define SHAPED_TEXT_DATA_LOADER_HPP

/// \file
/// `text::data_loader<batch, num_tokens>`: a `gpt_dataset`'s windows in typed `(batch, num_tokens)`
/// batches, in order or shuffled as PyTorch's `DataLoader` shuffles under `torch.manual_seed`
/// (`create_dataloader_v1`, the book's chapter 2).

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <string_view>
#include <utility>
#include <vector>

#include "../diagnostics.hpp"
#include "../extents.hpp"
#include "../tensor.hpp"
#include "../torch/generator.hpp"
#include "../torch/multinomial.hpp"
#include "gpt_dataset.hpp"

namespace shaped::text {

/// One batch of a `data_loader`: `batch` windows of inputs and their targets.
template <class Ids>
struct gpt_batch {
    /// `(batch, num_tokens)` input ids.
    Ids inputs;
    /// `(batch, num_tokens)` target ids, each input's next token.
    Ids targets;
};

/// Batches of `batch_size` windows of a `gpt_dataset`, stacked: what `for input_batch, target_batch in
/// loader` gives in the book, `for (auto [inputs, targets] : loader)` here.
///
/// Order: the windows in order, or with `shuffle` in the order of PyTorch's `RandomSampler`, draw for draw:
/// each pass (each `begin()`) first draws the loader's base seed (64 bits, as every PyTorch `DataLoader`
/// iterator does, shuffled or not), then, when shuffling, a `randperm` of the windows: without a `generator`,
/// both seeds come from the default generator and the permutation from a new generator seeded with the
/// second, as PyTorch's `RandomSampler` does; with one (`DataLoader(generator=g)`), the seed and the
/// permutation come from it. So after `torch::manual_seed(123)` the batches come in the book's order, and the
/// default generator moves on as PyTorch's does. With `drop_last` a last batch of fewer
/// than `batch_size` windows is left out; without it, it comes out shorter.
///
/// Shapes: each batch's inputs and targets are `(Batch, NumTokens)`: `Batch` a run-time axis (the last batch
/// may be shorter) whose extent is `batch_size`, `NumTokens` the dataset's token axis.
/// Element type: `std::int64_t` ids.
/// Errors: compile time, a static `Batch`. Thrown: `shape_error` for a `batch_size` outside `1..Batch`'s
/// bound. The loader owns its dataset; an iterator is valid while its loader lives and no other pass began.
/// Source: `torch.utils.data.DataLoader(dataset, batch_size, shuffle, drop_last)` (PyTorch 1.13, one process:
/// `num_workers=0`); the book's `create_dataloader_v1` (chapter 2).
/// Example: `for (auto [inputs, targets] : shaped::text::create_dataloader_v1<batch, num_tokens>(raw_text, tokenizer, 8, 4, 4, false)) ...`
template <Axis Batch, Axis NumTokens>
class data_loader {
    static_assert(DynamicAxis<Batch>, "shaped::text::data_loader<Batch, NumTokens>: the batch axis is a run-time axis "
                                      "(shaped::dynamic_axis): the last batch may be shorter");

public:
    /// A batch's ids, `(Batch, NumTokens)`.
    using ids_type = tensor<std::int64_t, Batch, NumTokens>;
    /// What iterating gives.
    using value_type = gpt_batch<ids_type>;

    /// Batches of `dataset`'s windows, drawing from `generator` when one is given (see above).
    data_loader(gpt_dataset<NumTokens> dataset, std::size_t batch_size, bool shuffle, bool drop_last,
                torch::generator* generator = nullptr)
        : dataset_(std::move(dataset)), batch_size_(checked_batch(batch_size)), shuffle_(shuffle),
          drop_last_(drop_last), gen_(generator) {}

    /// The number of batches in a pass (`len(loader)`).
    std::size_t size() const noexcept {
        const std::size_t n = dataset_.size();
        return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
    }
    /// The dataset the batches come from.
    const gpt_dataset<NumTokens>& dataset() const noexcept { return dataset_; }
    /// The windows in each batch (the last one may have fewer without `drop_last`).
    std::size_t batch_size() const noexcept { return batch_size_; }

    /// Walks one pass of batches.
    class iterator {
    public:
        /// A single pass: an input iterator.
        using iterator_category = std::input_iterator_tag;
        /// A batch, `{inputs, targets}`.
        using value_type = gpt_batch<ids_type>;
        /// Batches between two positions.
        using difference_type = std::ptrdiff_t;
        /// None: batches are made on dereference.
        using pointer = void;
        /// A batch by value (each dereference stacks the windows anew).
        using reference = value_type;

        iterator() = default;
        /// The current batch, stacked from the dataset's windows (a copy).
        value_type operator*() const { return loader_->make_batch(batch_); }
        /// To the next batch.
        iterator& operator++() {
            ++batch_;
            return *this;
        }
        /// To the next batch, returning the old position.
        iterator operator++(int) {
            iterator old = *this;
            ++batch_;
            return old;
        }
        /// Whether both are at the same batch.
        friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.batch_ == b.batch_; }

    private:
        friend class data_loader;
        iterator(const data_loader* loader, std::size_t batch) : loader_(loader), batch_(batch) {}
        const data_loader* loader_ = nullptr;
        std::size_t batch_ = 0;
    };

    /// A new pass: draws the base seed (and, shuffling, the order) from the generator, as `iter(loader)` does.
    iterator begin() {
        torch::generator& gen = gen_ ? *gen_ : torch::default_generator();
        (void)torch::random_int64(gen);  // _BaseDataLoaderIter's _base_seed (used only by worker processes)
        order_.resize(dataset_.size());
        if (shuffle_ && gen_) {
            order_ = torch::randperm(dataset_.size(), gen);
        } else if (shuffle_) {
            torch::generator sampler(static_cast<std::uint64_t>(torch::random_int64(gen)));  // RandomSampler's seed
            order_ = torch::randperm(dataset_.size(), sampler);
        } else {
            std::iota(order_.begin(), order_.end(), std::int64_t{0});
        }
        return iterator(this, 0);
    }
    /// Past the last batch.
    iterator end() const { return iterator(this, size()); }

private:
    static std::size_t checked_batch(std::size_t batch_size) {
        (void)extents<Batch>::checked("text::data_loader (batch_size)", batch_size);
        return batch_size;
    }

    value_type make_batch(std::size_t b) const {
        const std::size_t first = b * batch_size_;
        const std::size_t rows = std::min(batch_size_, order_.size() - first);
        const std::size_t m = dataset_.max_length();
        const auto e = [&] {
            if constexpr (StaticAxis<NumTokens>) return extents<Batch, NumTokens>::checked("text::data_loader", rows);
            else return extents<Batch, NumTokens>::checked("text::data_loader", rows, m);
        }();
        value_type out{ids_type(e, uninitialized), ids_type(e, uninitialized)};
        for (std::size_t r = 0; r < rows; ++r)
            dataset_.copy_window(static_cast<std::size_t>(order_[first + r]), out.inputs.data() + r * m,
                                 out.targets.data() + r * m);
        return out;
    }

    gpt_dataset<NumTokens> dataset_;
    std::size_t batch_size_;
    bool shuffle_;
    bool drop_last_;
    torch::generator* gen_;
    std::vector<std::int64_t> order_;
};

/// The book's `create_dataloader_v1`: `txt` encoded by `tokenizer` (`<|endoftext|>` allowed), cut into windows
/// of `max_length` every `stride` tokens, in batches of `batch_size`; shuffled and `drop_last` as asked.
///
/// Shapes, element type, errors and order: those of `gpt_dataset` and `data_loader`.
/// Source: `create_dataloader_v1(txt, batch_size=4, max_length=256, stride=128, shuffle=True, drop_last=True,
/// num_workers=0)` (the book's chapter 2), which makes GPT-2's tokenizer itself; here it is passed in.
/// Example: `auto loader = shaped::text::create_dataloader_v1<batch, num_tokens>(raw_text, tokenizer, 1, 4, 1, false);`
template <Axis Batch, Axis NumTokens>
data_loader<Batch, NumTokens> create_dataloader_v1(std::string_view txt, const bpe_tokenizer& tokenizer,
                                                   std::size_t batch_size = 4, std::size_t max_length = 256,
                                                   std::size_t stride = 128, bool shuffle = true, bool drop_last = true,
                                                   torch::generator* generator = nullptr) {
    return data_loader<Batch, NumTokens>(gpt_dataset<NumTokens>(txt, tokenizer, max_length, stride), batch_size,
                                         shuffle, drop_last, generator);
}

}  // namespace shaped::text

#endif
