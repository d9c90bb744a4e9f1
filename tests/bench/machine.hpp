// The machine's limits that the benchmarks' figures are fractions of: how fast one core, or two, read memory
// (decoding reads every weight once per token). Shared by gpt_bench and model_bench.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <shaped/threads.hpp>

namespace {

// The machine's limit for decoding: how fast one core, or two, read memory. A sum over 512 MB of floats, each
// thread's part read as four streams side by side (a core keeps more cache lines in flight from several
// streams: on a Xeon with AVX-512, 16.3 GB/s against 13.4 from one), with the widest vectors the CPU has,
// AVX-512 or AVX2 (compiled for them alone, so that the benchmark needs no -march). Decoding's kernel reads
// four weight rows side by side too (detail/gemm_few_rows.hpp); with one stream and AVX2 here, the "bound"
// was below what decoding reached.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx512f"))) float read_avx512(const float* p, std::size_t n) {
    constexpr std::size_t streams = 4;
    const std::size_t len = n / streams;
    __m512 acc[streams];
    for (auto& a : acc) a = _mm512_setzero_ps();
    for (std::size_t i = 0; i + 16 <= len; i += 16)
        for (std::size_t s = 0; s < streams; ++s) acc[s] = _mm512_add_ps(acc[s], _mm512_loadu_ps(p + s * len + i));
    for (std::size_t s = 1; s < streams; ++s) acc[0] = _mm512_add_ps(acc[0], acc[s]);
    alignas(64) float lanes[16];  // not _mm512_reduce_add_ps, which g++ 12 warns of (-Wuninitialized)
    _mm512_store_ps(lanes, acc[0]);
    return lanes[0];
}
__attribute__((target("avx2"))) float read_avx2(const float* p, std::size_t n) {
    constexpr std::size_t streams = 4;
    const std::size_t len = n / streams;
    __m256 acc[2 * streams];
    for (auto& a : acc) a = _mm256_setzero_ps();
    for (std::size_t i = 0; i + 16 <= len; i += 16)
        for (std::size_t s = 0; s < streams; ++s) {
            acc[2 * s] = _mm256_add_ps(acc[2 * s], _mm256_loadu_ps(p + s * len + i));
            acc[2 * s + 1] = _mm256_add_ps(acc[2 * s + 1], _mm256_loadu_ps(p + s * len + i + 8));
        }
    for (std::size_t s = 1; s < 2 * streams; ++s) acc[0] = _mm256_add_ps(acc[0], acc[s]);
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc[0]);
    return lanes[0];
}
#endif
float read_portable(const float* p, std::size_t n) {
    float acc[16] = {};
    for (std::size_t i = 0; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; ++k) acc[k] += p[i + k];
    return acc[0];
}

// Each iteration reads the 512 MB five times and counts the fastest pass: the best rate the machine reaches,
// which a shared machine's other work only ever lowers (one pass per iteration gave 0.6 to 22 GB/s).
void machine_read_bandwidth(benchmark::State& state) {
    const std::size_t threads = static_cast<std::size_t>(state.range(0)), n = std::size_t{128} << 20;
    static std::vector<float> data(n, 1.0f);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    const auto read = __builtin_cpu_supports("avx512f") ? read_avx512
                      : __builtin_cpu_supports("avx2")  ? read_avx2
                                                        : read_portable;
#else
    const auto read = read_portable;
#endif
    std::vector<float> partial(threads);
    for (auto _ : state) {
        double best = 1e30;
        for (int pass = 0; pass < 5; ++pass) {
            const auto start = std::chrono::steady_clock::now();
            shaped::detail::parallel(threads, [&](std::size_t t) {
                partial[t] = read(data.data() + n / threads * t, n / threads);
            });
            best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
            benchmark::DoNotOptimize(partial.data());
        }
        state.SetIterationTime(best);
    }
    state.counters["GB/s"] = benchmark::Counter(4.0 * n / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace
