#ifndef SHAPED_NN_KV_CACHE_HPP
#define SHAPED_NN_KV_CACHE_HPP

/// \file
/// `nn::kv_cache`: the keys and values an attention module has computed for a sequence so far, so that a
/// new token is compared with every earlier one without recomputing them (the book's `cache_k`, `cache_v`).

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
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

/// Tag for a model's cached call that computes the logits of the last position only, `(batch, vocab_size)`:
/// `model(ids, nn::use_cache, nn::last_position)` (`gpt_model`, `llama_model`, `gemma_model`), what a prompt's
/// pass needs before the first new token. Source: Hugging Face's `logits_to_keep=1`.
struct last_position_t {
    explicit last_position_t() = default;
};
/// See `last_position_t`: `model(ids, nn::use_cache, nn::last_position)`.
inline constexpr last_position_t last_position{};

namespace detail {
// A cache that has taken `size` tokens of `batch` sequences takes `n` more of `b` sequences: the same batch
// (unless empty), and room for them within `capacity` tokens (`bound`, the context's name); else shape_error.
// `unit`, `where` and `taken` word the message: tokens in the cache, or the positions a sliding window passed.
inline void check_room(const char* op, std::size_t size, std::size_t batch, std::size_t b, std::size_t n,
                       std::size_t capacity, const std::string& bound, const char* unit = " tokens (",
                       const char* where = ") in the cache", const char* taken = " cached + ") {
    if (size > 0 && b != batch)
        throw shape_error(op, "batch=" + std::to_string(batch) + " (the batch the cache holds; reset() it for another)",
                          "batch=" + std::to_string(b));
    if (n > capacity || size > capacity - n)
        throw shape_error(op, "at most " + std::to_string(capacity) + unit + bound + where,
                          std::to_string(size) + taken + std::to_string(n) + " new");
}

// The room per row (tokens) a cache lays out to hold `need` tokens, at most `C`: when it is empty, as much as
// the memory it holds gives (`held` tokens per row), at least `need`; else the room it has, or when that is
// too little twice as much, at least `need`. Memory grows with the sequence, not with the context.
inline std::size_t cache_room(std::size_t size, std::size_t need, std::size_t cap, std::size_t held, std::size_t C) {
    if (size == 0) return std::max(need, std::min(C, held));
    return need <= cap ? cap : std::min(C, std::max(need, 2 * cap));
}
// `buf`, `rows` rows of `cap` tokens of `width` floats (the first `size` of each set), laid out again with
// rows of `room` tokens; reallocated only when it is too small.
inline void relayout(std::vector<float>& buf, std::size_t rows, std::size_t width, std::size_t size, std::size_t cap,
                     std::size_t room) {
    if (size == 0 || room == cap) {
        if (buf.size() < rows * room * width) buf = std::vector<float>(rows * room * width);
        return;
    }
    std::vector<float> grown(rows * room * width);
    for (std::size_t i = 0; i < rows; ++i)
        std::copy_n(buf.data() + i * cap * width, size * width, grown.data() + i * room * width);
    buf = std::move(grown);
}
}  // namespace detail

/// The cached keys and values of one attention module, room for `ContextLength` tokens per sequence.
///
/// Shapes: `append` takes the new tokens' keys and values, `(batch, num_tokens, NumHeads, HeadDim)` as the
/// projections give them or `(batch, NumHeads, num_tokens, HeadDim)` with the heads split off first, and gives
/// back every cached key and value, `(batch, NumHeads, cached<num_tokens>, HeadDim)`: the earlier tokens and
/// the new ones, a run-time extent of its own (`size()` after the call). The keys' last axis is `KeyDim`,
/// `HeadDim` unless the keys are stored rotated (RoPE: `rotated<HeadDim>`). A grouped-query module's cache
/// holds its `num_kv_heads`, not its query heads. Element type: float.
/// Errors: compile time, keys or values of other axes. Thrown, `shape_error`, when the values' run-time
/// extents (batch, num_tokens) are not the keys' (checked before anything is copied), when the cache would
/// hold more than `ContextLength` tokens (naming it: the cache does not roll over; `reset()` and start again,
/// or crop the prompt), and when a call's batch differs from the batch the cache was started with. Memory
/// grows with the tokens held, doubling, to at most `batch * ContextLength * bytes_per_token` (a model of a
/// long context, Llama 3.2's 131,072 tokens, does not take it all for a short sequence), and is kept across
/// `reset()`.
/// Source: `self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)` in the book's KV-cache
/// `MultiHeadAttention` (ch04/03_kv-cache, `gpt_with_kv_cache.py`), stored per head so that appending
/// copies only the new tokens; the grouped caches of ch05/11_qwen3 and ch05/07_gpt_to_llama.
/// Example: `auto [k, v] = cache.append(keys_new, values_new);   // (b, num_heads, cached<num_tokens>, head_dim)`
template <Axis NumHeads, Axis HeadDim, Axis ContextLength, Axis KeyDim = HeadDim>
class kv_cache {
    static_assert(StaticAxis<NumHeads> && StaticAxis<HeadDim> && StaticAxis<ContextLength> && StaticAxis<KeyDim>,
                  "shaped::nn::kv_cache: heads, head_dim and context_length are static axes");
    static constexpr std::size_t H = NumHeads::extent, D = HeadDim::extent, DK = KeyDim::extent,
                                 C = ContextLength::extent;

public:
    /// Bytes one token takes in the cache, keys and values of every head, per sequence:
    /// `NumHeads * (KeyDim + HeadDim) * sizeof(float)` (the book's estimate, `2 * n_kv_heads * head_dim * bytes`).
    static constexpr std::size_t bytes_per_token = H * (DK + D) * sizeof(float);
    /// The number of tokens held (the position the next token takes).
    std::size_t size() const noexcept { return size_; }
    /// The batch the cache was started with (0 when empty).
    std::size_t batch() const noexcept { return size_ ? batch_ : 0; }
    /// Bytes the cache holds allocated: at least `batch * size() * bytes_per_token`, less than twice that once
    /// it has grown, at most `batch * ContextLength * bytes_per_token`.
    std::size_t capacity_bytes() const noexcept { return (k_.capacity() + v_.capacity()) * sizeof(float); }
    /// Forgets every token; the memory stays for the next sequence.
    void reset() noexcept { size_ = 0; }

    /// Stores the new tokens' keys and values, `(batch, num_tokens, NumHeads, ...)`, after the cached ones
    /// and gives back every cached key and value, `(batch, NumHeads, cached<num_tokens>, ...)`. Throws
    /// `shape_error` as the class says.
    template <class B, class T, class LK, class LV>
    auto append(const basic_tensor<float, LK, B, T, NumHeads, KeyDim>& keys,
                const basic_tensor<float, LV, B, T, NumHeads, HeadDim>& values) {
        const auto& kc = keys.storage();  // row-major: in place when contiguous, else a copy
        const auto& vc = values.storage();
        const std::size_t n = keys.shape.extent(1);
        return store<B, T>(kc.data(), vc.data(), keys.shape.extent(0), n, values.shape.extent(0),
                           values.shape.extent(1), {n * H, H, 1}, keys.shape.text(), values.shape.text());
    }
    /// The same for keys and values with their heads split off, `(batch, NumHeads, num_tokens, ...)`, as RoPE
    /// gives them.
    template <class B, class T, class LK, class LV>
    auto append(const basic_tensor<float, LK, B, NumHeads, T, KeyDim>& keys,
                const basic_tensor<float, LV, B, NumHeads, T, HeadDim>& values) {
        const auto& kc = keys.storage();  // row-major: in place when contiguous, else a copy
        const auto& vc = values.storage();
        const std::size_t n = keys.shape.extent(2);
        return store<B, T>(kc.data(), vc.data(), keys.shape.extent(0), n, values.shape.extent(0),
                           values.shape.extent(2), {H * n, 1, n}, keys.shape.text(), values.shape.text());
    }

private:
    // Copies n new tokens, rows of (sequence i, token t, head h) at (i * s[0] + t * s[1] + h * s[2]) rows of
    // the keys' and values' own widths, then gives back everything cached.
    template <class B, class T>
    auto store(const float* kn, const float* vn, std::size_t b, std::size_t n, std::size_t vb, std::size_t vn_tokens,
               std::array<std::size_t, 3> s, const std::string& k_shape, const std::string& v_shape) {
        static_assert(B::dynamic_atoms <= 1 && T::dynamic_atoms <= 1,
                      "shaped::nn::kv_cache: batch and num_tokens are atomic axes, static or run-time");
        // One batch and one token count for both: the copy below reads the values with the keys' extents.
        if (vb != b || vn_tokens != n)
            throw shape_error("nn::kv_cache::append(keys, values)", "values of the keys' batch and tokens " + k_shape,
                              v_shape);
        detail::check_room("nn::kv_cache::append(keys, values)", size_, batch_, b, n, C, axis_name<ContextLength>());
        if (size_ == 0) batch_ = b;
        make_room(size_ + n);
        for (std::size_t i = 0; i < b; ++i)
            for (std::size_t t = 0; t < n; ++t)
                for (std::size_t h = 0; h < H; ++h) {
                    const std::size_t row = i * s[0] + t * s[1] + h * s[2], to = (i * H + h) * cap_ + size_ + t;
                    std::copy_n(kn + row * DK, DK, k_.data() + to * DK);
                    std::copy_n(vn + row * D, D, v_.data() + to * D);
                }
        size_ += n;
        using keys_t = tensor<float, B, NumHeads, cached<T>, KeyDim>;
        using values_t = tensor<float, B, NumHeads, cached<T>, HeadDim>;
        auto extents_of = [&]<class R>(std::type_identity<R>) {
            if constexpr (DynamicAxis<B>)
                return R::extents_type::checked("nn::kv_cache::append", b, size_);
            else
                return R::extents_type::checked("nn::kv_cache::append", size_);
        };
        keys_t k(extents_of(std::type_identity<keys_t>{}), uninitialized);
        values_t v(extents_of(std::type_identity<values_t>{}), uninitialized);
        for (std::size_t i = 0; i < b * H; ++i) {  // each (sequence, head): its first size_ rows
            std::copy_n(k_.data() + i * cap_ * DK, size_ * DK, k.data() + i * size_ * DK);
            std::copy_n(v_.data() + i * cap_ * D, size_ * D, v.data() + i * size_ * D);
        }
        return std::pair{std::move(k), std::move(v)};
    }

    // Room for `need` tokens per (sequence, head) of batch_ (see detail::cache_room).
    void make_room(std::size_t need) {
        const std::size_t rows = batch_ * H;
        const std::size_t room = detail::cache_room(size_, need, cap_, rows ? k_.size() / (rows * DK) : 0, C);
        detail::relayout(k_, rows, DK, size_, cap_, room);
        detail::relayout(v_, rows, D, size_, cap_, room);
        cap_ = room;
    }

    // (batch, NumHeads, cap_, KeyDim or HeadDim), the first size_ tokens of each (sequence, head) set.
    std::vector<float> k_, v_;
    std::size_t batch_ = 0, size_ = 0, cap_ = 0;
};

/// The cached keys and values of one sliding-window attention module: the last `Window` tokens of each
/// sequence (a ring buffer), however long the sequence, positions up to `ContextLength`.
///
/// Shapes: `append` takes the new tokens' keys and values as `kv_cache::append` does, `(batch, num_tokens,
/// NumHeads, ...)` or `(batch, NumHeads, num_tokens, ...)`, and gives back the keys and values the new queries
/// may see, `(batch, NumHeads, windowed<num_tokens, Window>, ...)`: the last `Window - 1` tokens before them
/// (fewer at the start) and the new ones, in order. Their axis makes `scaled_dot_product_attention` insist
/// on `is_causal` with `sliding_window<Window>`, the cache's own window. `KeyDim` as for `kv_cache`.
/// Element type: float.
/// Errors: compile time, keys or values of other axes, a run-time axis among the class's. Thrown,
/// `shape_error`: values whose run-time extents (batch, num_tokens) are not the keys'; positions past
/// `ContextLength` (`size()` counts every token taken since `reset()`, not those held: the positions a RoPE
/// table or a positional embedding covers), naming it; a call's batch other than the one the cache started
/// with. Nothing is copied before these checks. Memory: `batch * min(Window, ContextLength) * bytes_per_token`,
/// taken on the first call after a `reset()` whose batch needs more, and kept.
/// Source: the book's `MultiHeadAttentionWithSWA` cache (ch04/06_swa, `gpt_with_kv_swa.py`): its keys for
/// attention, `attn_keep = min(len, W + num_tokens - 1)`, and what it keeps, `cache_keep = min(len, W)`; here
/// the kept tokens are written in place into a ring of `W` slots. A chunked prefill gives the uncached
/// forward's numbers (the earliest queries of a chunk still reach `W - 1` tokens back).
/// Example: `nn::sliding_window_cache<num_kv_heads, head_dim, window, context_length> cache;`
///          `auto [k, v] = cache.append(keys_new, values_new);`
template <Axis NumHeads, Axis HeadDim, Axis Window, Axis ContextLength, Axis KeyDim = HeadDim>
class sliding_window_cache {
    static_assert(StaticAxis<NumHeads> && StaticAxis<HeadDim> && StaticAxis<Window> && StaticAxis<ContextLength> &&
                      StaticAxis<KeyDim>,
                  "shaped::nn::sliding_window_cache: heads, head_dim, the window and context_length are static axes");
    static_assert(Window::extent >= 1, "shaped::nn::sliding_window_cache: a window of at least one token");
    static constexpr std::size_t H = NumHeads::extent, D = HeadDim::extent, DK = KeyDim::extent,
                                 W = Window::extent, C = ContextLength::extent;
    // Slots per ring: the window, or the context when it is shorter (positions stay below C, so p % W < S).
    static constexpr std::size_t S = W < C ? W : C;

public:
    /// Bytes one held token takes, keys and values of every head, per sequence (as `kv_cache`'s).
    static constexpr std::size_t bytes_per_token = H * (DK + D) * sizeof(float);
    /// The number of tokens taken since `reset()` (the position the next token takes).
    std::size_t size() const noexcept { return size_; }
    /// The number of tokens held: `min(size(), Window)`.
    std::size_t held() const noexcept { return std::min(size_, W); }
    /// The batch the cache was started with (0 when empty).
    std::size_t batch() const noexcept { return size_ ? batch_ : 0; }
    /// Bytes the cache holds allocated: `batch * min(Window, ContextLength) * bytes_per_token` after its first
    /// append.
    std::size_t capacity_bytes() const noexcept { return (k_.capacity() + v_.capacity()) * sizeof(float); }
    /// Forgets every token; the memory stays for the next sequence.
    void reset() noexcept { size_ = 0; }

    /// Takes the new tokens' keys and values, `(batch, num_tokens, NumHeads, ...)`, and gives back those the
    /// new queries see, `(batch, NumHeads, windowed<num_tokens, Window>, ...)`. Throws as the class says.
    template <class B, class T, class LK, class LV>
    auto append(const basic_tensor<float, LK, B, T, NumHeads, KeyDim>& keys,
                const basic_tensor<float, LV, B, T, NumHeads, HeadDim>& values) {
        const auto& kc = keys.storage();  // row-major: in place when contiguous, else a copy
        const auto& vc = values.storage();
        const std::size_t n = keys.shape.extent(1);
        return store<B, T>(kc.data(), vc.data(), keys.shape.extent(0), n, values.shape.extent(0),
                           values.shape.extent(1), {n * H, H, 1}, keys.shape.text(), values.shape.text());
    }
    /// The same for keys and values with their heads split off, `(batch, NumHeads, num_tokens, ...)`.
    template <class B, class T, class LK, class LV>
    auto append(const basic_tensor<float, LK, B, NumHeads, T, KeyDim>& keys,
                const basic_tensor<float, LV, B, NumHeads, T, HeadDim>& values) {
        const auto& kc = keys.storage();
        const auto& vc = values.storage();
        const std::size_t n = keys.shape.extent(2);
        return store<B, T>(kc.data(), vc.data(), keys.shape.extent(0), n, values.shape.extent(0),
                           values.shape.extent(2), {H * n, 1, n}, keys.shape.text(), values.shape.text());
    }

private:
    // Row (sequence i, token t, head h) of the new keys and values is at i * s[0] + t * s[1] + h * s[2]; the
    // token at position p of sequence i, head h, lives in slot p % W of ring (i * H + h).
    template <class B, class T>
    auto store(const float* kn, const float* vn, std::size_t b, std::size_t n, std::size_t vb, std::size_t vn_tokens,
               std::array<std::size_t, 3> s, const std::string& k_shape, const std::string& v_shape) {
        static_assert(B::dynamic_atoms <= 1 && T::dynamic_atoms <= 1,
                      "shaped::nn::sliding_window_cache: batch and num_tokens are atomic axes, static or run-time");
        constexpr const char* op = "nn::sliding_window_cache::append(keys, values)";
        if (vb != b || vn_tokens != n) throw shape_error(op, "values of the keys' batch and tokens " + k_shape, v_shape);
        detail::check_room(op, size_, batch_, b, n, C, axis_name<ContextLength>(), " positions (", ")", " taken + ");
        if (size_ == 0) {
            batch_ = b;
            if (k_.size() < b * H * S * DK) {  // exactly what is needed; nothing to keep
                k_ = std::vector<float>(b * H * S * DK);
                v_ = std::vector<float>(b * H * S * D);
            }
        }
        const std::size_t before = std::min(size_, W - 1), m = before + n;  // the book's attn_keep
        using keys_t = tensor<float, B, NumHeads, windowed<T, Window>, KeyDim>;
        using values_t = tensor<float, B, NumHeads, windowed<T, Window>, HeadDim>;
        auto extents_of = [&]<class R>(std::type_identity<R>) {
            if constexpr (DynamicAxis<B>)
                return R::extents_type::checked(op, b, m);
            else
                return R::extents_type::checked(op, m);
        };
        keys_t k(extents_of(std::type_identity<keys_t>{}), uninitialized);
        values_t v(extents_of(std::type_identity<values_t>{}), uninitialized);
        for (std::size_t i = 0; i < b; ++i)
            for (std::size_t h = 0; h < H; ++h) {
                const std::size_t ring = i * H + h, out = ring * m;
                for (std::size_t j = 0; j < before; ++j) {  // the held tokens the window still reaches
                    const std::size_t slot = (size_ - before + j) % W;
                    std::copy_n(k_.data() + (ring * S + slot) * DK, DK, k.data() + (out + j) * DK);
                    std::copy_n(v_.data() + (ring * S + slot) * D, D, v.data() + (out + j) * D);
                }
                for (std::size_t t = 0; t < n; ++t) {  // the new ones
                    const std::size_t row = i * s[0] + t * s[1] + h * s[2];
                    std::copy_n(kn + row * DK, DK, k.data() + (out + before + t) * DK);
                    std::copy_n(vn + row * D, D, v.data() + (out + before + t) * D);
                }
                for (std::size_t t = n > W ? n - W : 0; t < n; ++t) {  // the book's cache_keep: the last W
                    const std::size_t row = i * s[0] + t * s[1] + h * s[2], slot = (size_ + t) % W;
                    std::copy_n(kn + row * DK, DK, k_.data() + (ring * S + slot) * DK);
                    std::copy_n(vn + row * D, D, v_.data() + (ring * S + slot) * D);
                }
            }
        size_ += n;
        return std::pair{std::move(k), std::move(v)};
    }

    std::vector<float> k_, v_;  // (batch, NumHeads, S, KeyDim or HeadDim): position p in slot p % Window
    std::size_t batch_ = 0, size_ = 0;
};

/// The cache of multi-head latent attention: the latent vectors of the tokens seen so far, one per token,
/// from which every head's keys and values are projected again at each call; room for `ContextLength`
/// tokens per sequence.
///
/// Shapes: `append` takes the new tokens' latents, `(batch, num_tokens, LatentDim)`, and gives back every
/// cached latent, `(batch, cached<num_tokens>, LatentDim)`. Element type: float.
/// Errors: thrown, `shape_error`, when the cache would hold more than `ContextLength` tokens, and when a
/// call's batch differs from the batch the cache was started with. Memory grows with the tokens held, as
/// `kv_cache`'s does.
/// Source: `self.cache_c_kv = torch.cat([self.cache_c_kv, latent_new], dim=1)` in the book's
/// `MultiHeadLatentAttention` (ch04/05_mla, `gpt_with_kv_mla.py`).
template <Axis LatentDim, Axis ContextLength>
class latent_cache {
    static_assert(StaticAxis<LatentDim> && StaticAxis<ContextLength>,
                  "shaped::nn::latent_cache: latent_dim and context_length are static axes");
    static constexpr std::size_t L = LatentDim::extent, C = ContextLength::extent;

public:
    /// Bytes one token takes in the cache, per sequence: `LatentDim * sizeof(float)`.
    static constexpr std::size_t bytes_per_token = L * sizeof(float);
    /// The number of tokens held (the position the next token takes).
    std::size_t size() const noexcept { return size_; }
    /// Bytes the cache holds allocated.
    std::size_t capacity_bytes() const noexcept { return c_.capacity() * sizeof(float); }
    /// Forgets every token; the memory stays for the next sequence.
    void reset() noexcept { size_ = 0; }

    /// Stores the new tokens' latents after the cached ones and gives back every cached latent.
    template <class B, class T, class Layout>
    auto append(const basic_tensor<float, Layout, B, T, LatentDim>& latent) {
        static_assert(B::dynamic_atoms <= 1 && T::dynamic_atoms <= 1,
                      "shaped::nn::latent_cache: batch and num_tokens are atomic axes, static or run-time");
        const std::size_t b = latent.shape.extent(0), n = latent.shape.extent(1);
        detail::check_room("nn::latent_cache::append(latent)", size_, batch_, b, n, C, axis_name<ContextLength>());
        if (size_ == 0) batch_ = b;
        const std::size_t room = detail::cache_room(size_, size_ + n, cap_, b ? c_.size() / (b * L) : 0, C);
        detail::relayout(c_, b, L, size_, cap_, room);
        cap_ = room;
        const auto& from = latent.storage();  // row-major (b, n, L)
        for (std::size_t i = 0; i < b; ++i)
            std::copy_n(from.data() + i * n * L, n * L, c_.data() + (i * cap_ + size_) * L);
        size_ += n;
        using result_t = tensor<float, B, cached<T>, LatentDim>;
        const auto e = [&] {
            if constexpr (DynamicAxis<B>)
                return result_t::extents_type::checked("nn::latent_cache::append", b, size_);
            else
                return result_t::extents_type::checked("nn::latent_cache::append", size_);
        }();
        result_t out(e, uninitialized);
        for (std::size_t i = 0; i < b; ++i) std::copy_n(c_.data() + i * cap_ * L, size_ * L, out.data() + i * size_ * L);
        return out;
    }

private:
    std::vector<float> c_;  // (batch, cap_, LatentDim), the first size_ tokens set
    std::size_t batch_ = 0, size_ = 0, cap_ = 0;
};

}  // namespace shaped::nn

#endif
