#ifndef SHAPED_THREADS_HPP
#define SHAPED_THREADS_HPP

/// \file
/// The thread policy: one count and one pool for every parallel part of shaped. Matrix products run on
/// oneDNN, whose threads are OpenMP's (GNU libgomp, the runtime Debian's oneDNN is built with); the fused
/// attention kernel and the row-split matrix-vector products run their work on that same pool, so that
/// no two sets of threads ever compete for the cores (a second pool started right after a oneDNN call finds
/// its workers still spinning, and loses about 4 ms to them on a 2-core machine). The program need not be
/// compiled with `-fopenmp`: the pool is entered through libgomp's entry point for `#pragma omp parallel`.

#include <algorithm>
#include <atomic>
#include <cstddef>

/// \cond
extern "C" {
// libgomp's API (omp.h declares the same; its `throw ()` is `noexcept`) and the function `#pragma omp
// parallel` compiles to (GCC's ABI, stable since GCC 4.9): `fn(data)` on `num_threads` threads (0 meaning
// the default), the caller being thread 0, returning when all are done.
int omp_get_max_threads(void) noexcept;
void omp_set_num_threads(int) noexcept;
int omp_get_thread_num(void) noexcept;
void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
}
/// \endcond

#if defined(__SANITIZE_THREAD__)
#define SHAPED_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SHAPED_TSAN 1
#endif
#endif
#ifdef SHAPED_TSAN
// libgomp is not built for ThreadSanitizer, so the ordering its barriers give is told to it here: all that
// the caller wrote before a parallel region is seen by each worker, and all that the workers wrote is seen
// by the caller after it.
extern "C" void __tsan_acquire(void*);
extern "C" void __tsan_release(void*);
#endif

namespace shaped {

namespace detail {
/// The count set by `set_num_threads`; 0 until it is called.
inline std::atomic<int> thread_count{0};
}  // namespace detail

/// Sets how many threads shaped uses from now on, in every thread of the program: oneDNN's matrix
/// products, the fused attention kernel (`scaled_dot_product_attention`) and the row-split
/// matrix-vector products of one-token decoding. `n < 1` is taken as 1. Results do not depend on it:
/// every kernel of shaped gives the same bits at 1, 2 or 4 threads (tested).
/// Source: `torch.set_num_threads`.
inline void set_num_threads(int n) noexcept { detail::thread_count.store(n < 1 ? 1 : n, std::memory_order_relaxed); }

/// How many threads shaped uses: the last `set_num_threads`, else OpenMP's default (`OMP_NUM_THREADS`,
/// else one per core), as oneDNN and PyTorch read it. Source: `torch.get_num_threads`.
inline int num_threads() noexcept {
    const int n = detail::thread_count.load(std::memory_order_relaxed);
    return n > 0 ? n : omp_get_max_threads();
}

namespace detail {

/// Makes oneDNN, called next from this thread, use `num_threads()` threads (OpenMP's count is per thread).
inline void apply_thread_count() noexcept {
    const int n = num_threads();
    if (omp_get_max_threads() != n) omp_set_num_threads(n);
}

/// Runs `f(i)` for i = 0 .. n-1, each on its own thread of the pool, the caller's being 0; returns when
/// all have. `f` must not throw. Inside a region already parallel (a oneDNN call or another `parallel`),
/// the pool gives one thread, and `f(0)` alone runs: callers hand out work dynamically, never by index.
template <class F>
void parallel(std::size_t n, F&& f) {
    if (n <= 1) {
        f(std::size_t{0});
        return;
    }
    struct context {
        F* f;
        int done;  // only an address for ThreadSanitizer
    } ctx{&f, 0};
#ifdef SHAPED_TSAN
    __tsan_release(&ctx.f);
#endif
    GOMP_parallel(
        [](void* p) {
            auto* c = static_cast<context*>(p);
#ifdef SHAPED_TSAN
            __tsan_acquire(&c->f);
#endif
            (*c->f)(static_cast<std::size_t>(omp_get_thread_num()));
#ifdef SHAPED_TSAN
            __tsan_release(&c->done);
#endif
        },
        &ctx, static_cast<unsigned>(n), 0);
#ifdef SHAPED_TSAN
    __tsan_acquire(&ctx.done);
#endif
}

/// Runs `f(begin, end)` over [0, n) in chunks of `grain` (the last one shorter), handed out to `num_threads()`
/// threads as they come free; on one thread, or when there is a single chunk, `f(0, n)` on the caller's.
/// For loops whose iterations are independent (rows of a softmax, blocks of an elementwise function), so
/// that the result does not depend on the split. `f` must not throw.
template <class F>
void parallel_for(std::size_t n, std::size_t grain, F&& f) {
    const std::size_t chunks = grain == 0 ? 1 : (n + grain - 1) / grain;
    const std::size_t threads = std::min<std::size_t>(static_cast<std::size_t>(num_threads()), chunks);
    if (threads <= 1) {
        if (n > 0) f(std::size_t{0}, n);
        return;
    }
    std::atomic<std::size_t> next{0};
    parallel(threads, [&](std::size_t) {
        for (std::size_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;)
            f(c * grain, std::min(n, (c + 1) * grain));
    });
}

}  // namespace detail

}  // namespace shaped

#endif
