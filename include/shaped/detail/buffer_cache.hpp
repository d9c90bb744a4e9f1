#ifndef SHAPED_DETAIL_BUFFER_CACHE_HPP
#define SHAPED_DETAIL_BUFFER_CACHE_HPP

/// \file
/// Where tensors' elements live: large buffers are kept when freed and handed out again. A forward pass writes
/// the same large intermediates (projections, scores, feed-forward activations) layer after layer; glibc maps
/// each large block anew and unmaps it on free, so every one of their pages is faulted in and zeroed by the
/// kernel again on its first write. On the virtual machines measured for docs/performance.md those faults cost
/// as much as the arithmetic: a 512-token prompt of Qwen3 0.6B took 7.1 s with fresh memory for each buffer and
/// 3.8 s with freed memory kept. Buffers of at least `cached_buffer_min_bytes` are therefore kept in a cache of
/// bounded size (`shaped::set_cached_memory_limit`, 1 GiB unless set) and reused for the next request they fit;
/// smaller ones come from the standard allocator. One cache per program, behind a mutex.

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "huge_pages.hpp"

namespace shaped::detail {

/// Buffers of at least this many bytes are cached (smaller ones reuse the allocator's heap already).
inline constexpr std::size_t cached_buffer_min_bytes = std::size_t{1} << 20;
/// The alignment of every buffer: a cache line, and the widest SIMD register.
inline constexpr std::size_t buffer_alignment = 64;

/// The program's cache of freed large buffers. Each block starts with a header that records its size, so that
/// a block handed out for a smaller request than it was made for is returned whole.
class buffer_cache {
public:
    /// The one cache. Never destroyed: tensors of static storage duration may free their buffers after any
    /// other static object is gone (the blocks it holds stay reachable through it).
    static buffer_cache& instance() {
        static buffer_cache* const cache = new buffer_cache;
        return *cache;
    }

    /// A buffer of at least `bytes` bytes, aligned to `buffer_alignment`: a kept block that fits (at most a
    /// quarter larger, so that a small request does not hold a large block), else a new one. Throws
    /// `std::bad_alloc`.
    void* allocate(std::size_t bytes) {
        const std::size_t need = round_up(bytes) + header;
        {
            std::lock_guard lock(mutex_);
            auto best = free_.end();
            for (auto it = free_.begin(); it != free_.end(); ++it)
                if (it->bytes >= need && it->bytes - need <= need / 4 && (best == free_.end() || it->bytes < best->bytes))
                    best = it;
            if (best != free_.end()) {
                void* block = best->block;
                held_ -= best->bytes;
                free_.erase(best);
                return static_cast<char*>(block) + header;
            }
        }
        // A block of a huge page or more starts on a huge page, so that all its whole 2 MB pages can be huge
        // ones (the advice below); a 2.4 MB weight matrix placed anywhere would seldom hold a whole one.
        // posix_memalign, not aligned_alloc, whose size must be a multiple of the alignment (C11 7.22.3.1;
        // glibc lets others by, ThreadSanitizer does not): rounding a 4 MiB buffer and its header up to 6 MB
        // would back a whole huge page for the header's 64 bytes.
        void* block = nullptr;
        if (posix_memalign(&block, need >= huge_page_bytes ? huge_page_bytes : buffer_alignment, need) != 0)
            throw std::bad_alloc();
        advise_huge_pages(block, need);  // before the header's write, which would fault in a small page
        *static_cast<std::size_t*>(block) = need;
        return static_cast<char*>(block) + header;
    }

    /// Takes a buffer from `allocate` back: kept if the cache has room for it (the oldest kept blocks are freed
    /// to make room), else freed.
    void deallocate(void* p) noexcept {
        void* block = static_cast<char*>(p) - header;
        const std::size_t bytes = *static_cast<std::size_t*>(block);
        std::lock_guard lock(mutex_);
        if (bytes > limit_) {
            std::free(block);
            return;
        }
        while (held_ + bytes > limit_ && !free_.empty()) evict_oldest();
        try {
            free_.push_back({block, bytes});
            held_ += bytes;
        } catch (...) {  // no room to record it: give it back instead
            std::free(block);
        }
    }

    /// Frees every kept block.
    void release() noexcept { set_limit_and_trim(limit(), true); }
    /// The bytes of the blocks kept now.
    std::size_t held() {
        std::lock_guard lock(mutex_);
        return held_;
    }
    /// The most the cache keeps.
    std::size_t limit() {
        std::lock_guard lock(mutex_);
        return limit_;
    }
    /// Sets the most the cache keeps; kept blocks beyond it are freed now.
    void set_limit(std::size_t bytes) noexcept { set_limit_and_trim(bytes, false); }

private:
    struct kept {
        void* block;
        std::size_t bytes;
    };
    // The header before each buffer: its block's size, padded to the alignment.
    static constexpr std::size_t header = buffer_alignment;

    // Sizes are rounded up to 64 KiB, so that buffers of nearly the same size share blocks.
    static constexpr std::size_t round_up(std::size_t bytes) {
        constexpr std::size_t step = std::size_t{64} << 10;
        return (bytes + step - 1) / step * step;
    }

    void set_limit_and_trim(std::size_t bytes, bool all) noexcept {
        std::lock_guard lock(mutex_);
        limit_ = bytes;
        while (!free_.empty() && (all || held_ > limit_)) evict_oldest();
    }

    // Frees the oldest kept block (the caller holds the mutex).
    void evict_oldest() noexcept {
        std::free(free_.front().block);
        held_ -= free_.front().bytes;
        free_.erase(free_.begin());
    }

    std::mutex mutex_;
    std::vector<kept> free_;  // oldest first
    std::size_t held_ = 0;
    std::size_t limit_ = std::size_t{1} << 30;
};

/// The allocator of tensors' element buffers: large ones through `buffer_cache`, the rest from aligned
/// `operator new`. Stateless: any two compare equal.
template <class T>
struct buffer_allocator {
    using value_type = T;

    buffer_allocator() noexcept = default;
    template <class U>
    buffer_allocator(const buffer_allocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T) - buffer_alignment) throw std::bad_array_new_length();
        const std::size_t bytes = n * sizeof(T);
        if (bytes >= cached_buffer_min_bytes) return static_cast<T*>(buffer_cache::instance().allocate(bytes));
        return static_cast<T*>(::operator new(bytes, std::align_val_t{buffer_alignment}));
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n * sizeof(T) >= cached_buffer_min_bytes)
            buffer_cache::instance().deallocate(p);
        else
            ::operator delete(p, std::align_val_t{buffer_alignment});
    }

    template <class U>
    friend bool operator==(const buffer_allocator&, const buffer_allocator<U>&) noexcept {
        return true;
    }
};

/// The element storage of a tensor of `N` axes: an xtensor container whose buffer comes from `buffer_allocator`.
template <class T, std::size_t N>
using storage_t = xt::xtensor_container<xt::uvector<T, buffer_allocator<T>>, N, xt::layout_type::row_major>;

}  // namespace shaped::detail

#endif
