#ifndef SHAPED_NN_KV_CACHE_HPP
#define SHAPED_NN_KV_CACHE_HPP

/// \file
/// `nn::kv_cache`: the keys and values an attention module has computed for a sequence so far, so that a
/// new token is compared with every earlier one without recomputing them (the book's `cache_k`, `cache_v`).

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../axis.hpp"
#include "../diagnostics.hpp"
#include "../tensor.hpp"

namespace shaped::nn {

/// Tag for a forward pass that reads and extends the modules' KV caches: `model(ids, shaped::nn::use_cache)`
/// is the book's `model(ids, use_cache=True)`.
struct use_cache_t {
    explicit use_cache_t() = default;
};
/// The tag itself: `model(ids, shaped::nn::use_cache)`.
inline constexpr use_cache_t use_cache{};

/// The cached keys and values of one attention module, room for `ContextLength` tokens per sequence.
///
/// Shapes: `append` takes the new tokens' keys and values, `(batch, num_tokens, NumHeads, HeadDim)`, and gives
/// back every cached key and value, `(batch, NumHeads, cached<num_tokens>, HeadDim)`: the earlier tokens and
/// the new ones, a run-time extent of its own (`size()` after the call). Element type: float.
/// Errors: thrown, `shape_error` when the values' run-time extents (batch, num_tokens) are not the keys'
/// (checked before anything is copied), when the cache would hold more than `ContextLength` tokens (naming it: the
/// cache does not roll over; `reset()` and start again, or crop the prompt), and when a call's batch differs
/// from the batch the cache was started with. Memory is taken on the first call after a `reset()` whose batch
/// needs more, and kept.
/// Source: `self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)` in the book's KV-cache
/// `MultiHeadAttention` (ch04/03_kv-cache, `gpt_with_kv_cache.py`), stored per head so that appending
/// copies only the new tokens.
/// Example: `auto [k, v] = cache.append(keys_new, values_new);   // (b, num_heads, cached<num_tokens>, head_dim)`
template <Axis NumHeads, Axis HeadDim, Axis ContextLength>
class kv_cache {
    static constexpr std::size_t H = NumHeads::extent, D = HeadDim::extent, C = ContextLength::extent;

public:
    /// The number of tokens held (the position the next token takes).
    std::size_t size() const noexcept { return size_; }
    /// The batch the cache was started with (0 when empty).
    std::size_t batch() const noexcept { return size_ ? batch_ : 0; }
    /// Forgets every token; the memory stays for the next sequence.
    void reset() noexcept { size_ = 0; }

    /// Stores the new tokens' keys and values after the cached ones and gives back every cached key and
    /// value, `(batch, NumHeads, cached<num_tokens>, HeadDim)`. Throws `shape_error` as the class says.
    template <class B, class T, class L>
    auto append(const basic_tensor<float, L, B, T, NumHeads, HeadDim>& keys,
                const basic_tensor<float, L, B, T, NumHeads, HeadDim>& values) {
        static_assert(B::dynamic_atoms <= 1 && T::dynamic_atoms <= 1,
                      "shaped::nn::kv_cache: batch and num_tokens are atomic axes, static or run-time");
        const std::size_t b = keys.shape.extent(0), n = keys.shape.extent(1);
        // One batch and one token count for both: the copy below reads the values with the keys' extents.
        if (values.shape.extent(0) != b || values.shape.extent(1) != n)
            throw shape_error("nn::kv_cache::append(keys, values)", "values of the keys' shape " + keys.shape.text(),
                              values.shape.text());
        if (size_ > 0 && b != batch_)
            throw shape_error("nn::kv_cache::append(keys, values)",
                              "batch=" + std::to_string(batch_) + " (the batch the cache holds; reset() it for another)",
                              "batch=" + std::to_string(b));
        if (size_ + n > C)
            throw shape_error("nn::kv_cache::append(keys, values)",
                              "at most " + std::to_string(C) + " tokens (context_length) in the cache",
                              std::to_string(size_) + " cached + " + std::to_string(n) + " new");
        if (size_ == 0) {
            batch_ = b;
            if (k_.size() < b * H * C * D) {
                k_.resize(b * H * C * D);
                v_.resize(b * H * C * D);
            }
        }
        const auto& kn = keys.storage();  // (b, n, H, D) row-major
        const auto& vn = values.storage();
        for (std::size_t i = 0; i < b; ++i)
            for (std::size_t t = 0; t < n; ++t)
                for (std::size_t h = 0; h < H; ++h) {
                    const std::size_t from = ((i * n + t) * H + h) * D, to = ((i * H + h) * C + size_ + t) * D;
                    std::copy_n(kn.data() + from, D, k_.data() + to);
                    std::copy_n(vn.data() + from, D, v_.data() + to);
                }
        size_ += n;
        using result_t = tensor<float, B, NumHeads, cached<T>, HeadDim>;
        const auto e = [&] {
            if constexpr (DynamicAxis<B>)
                return result_t::extents_type::checked("nn::kv_cache::append", b, size_);
            else
                return result_t::extents_type::checked("nn::kv_cache::append", size_);
        }();
        result_t k(e, uninitialized), v(e, uninitialized);
        for (std::size_t i = 0; i < b * H; ++i) {  // each (sequence, head): its first size_ rows
            std::copy_n(k_.data() + i * C * D, size_ * D, k.data() + i * size_ * D);
            std::copy_n(v_.data() + i * C * D, size_ * D, v.data() + i * size_ * D);
        }
        return std::pair{std::move(k), std::move(v)};
    }

private:
    std::vector<float> k_, v_;  // (batch, NumHeads, ContextLength, HeadDim), the first size_ tokens set
    std::size_t batch_ = 0, size_ = 0;
};

}  // namespace shaped::nn

#endif
