#ifndef SHAPED_DETAIL_HUGE_PAGES_HPP
#define SHAPED_DETAIL_HUGE_PAGES_HPP

/// \file
/// Advice to the kernel for large buffers: back them by transparent huge pages where the system offers them
/// on request. A forward pass at GPT-2 sizes writes hundreds of MB of fresh memory (glibc maps every large
/// block anew and unmaps it on free); in 4 KB pages each first write is a page fault, and on the virtual
/// machines measured for docs/performance.md those faults cost as much as the arithmetic. In 2 MB pages
/// there are 512 times fewer. The memory comes from the standard allocator as before; only the advice is new.

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace shaped::detail {

/// The size of a transparent huge page on x86-64 and of the pages the advice asks for.
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;
/// Buffers of at least this many bytes get the advice: those that hold a whole huge page (smaller ones reuse
/// the allocator's heap). A layer's weight of GPT-2 small's width, 2.4 MB, is read from memory at every
/// decoding step, and in huge pages it is read faster (the hardware prefetchers stop at each 4 KB page).
inline constexpr std::size_t huge_page_advice_bytes = huge_page_bytes;

/// `madvise(MADV_HUGEPAGE)` on the whole 2 MB pages inside `[p, p + bytes)`, before they are first written.
/// A hint: where the kernel has no transparent huge pages, or refuses, nothing changes.
inline void advise_huge_pages([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::uintptr_t huge = huge_page_bytes;
    if (bytes < huge_page_advice_bytes) return;
    const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(p) + huge - 1) & ~(huge - 1);
    const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(huge - 1);
    if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

}  // namespace shaped::detail

#endif
