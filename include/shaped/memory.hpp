#ifndef SHAPED_MEMORY_HPP
#define SHAPED_MEMORY_HPP

/// \file
/// The memory shaped keeps for tensors: large buffers (1 MiB and more) are kept when a tensor frees them and
/// handed to the next tensor they fit, up to a limit (1 GiB unless set), so that a forward pass does not fault
/// in fresh pages for every intermediate of every layer (detail/buffer_cache.hpp says why). These functions set
/// the limit, tell what is kept, and give it back.

#include <cstddef>

#include "detail/buffer_cache.hpp"

namespace shaped {

/// Sets the most memory kept for reuse, in bytes (0 keeps nothing: every buffer goes back to the allocator when
/// its tensor frees it); blocks kept beyond it are freed now. Thread-safe. Nothing is thrown.
/// Source: none in PyTorch's CPU tensors; its CUDA caching allocator keeps freed blocks the same way
/// (`PYTORCH_CUDA_ALLOC_CONF`).
inline void set_cached_memory_limit(std::size_t bytes) noexcept { detail::buffer_cache::instance().set_limit(bytes); }

/// The most memory kept for reuse, in bytes (1 GiB unless `set_cached_memory_limit` was called). Thread-safe.
inline std::size_t cached_memory_limit() { return detail::buffer_cache::instance().limit(); }

/// The memory kept for reuse now, in bytes: freed buffers not yet handed out again (not the live tensors').
/// Thread-safe. Source: `torch.cuda.memory_reserved() - torch.cuda.memory_allocated()`.
inline std::size_t cached_memory_bytes() { return detail::buffer_cache::instance().held(); }

/// Frees every buffer kept for reuse (live tensors are not touched). Thread-safe. Nothing is thrown.
/// Source: `torch.cuda.empty_cache()`.
inline void release_cached_memory() noexcept { detail::buffer_cache::instance().release(); }

}  // namespace shaped

#endif
