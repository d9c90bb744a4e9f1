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

// The machine's limit for decoding: how fast one core, or two, read memory. A sum over 512 MB of floats
// with eight independent AVX2 accumulators where the CPU has AVX2 (compiled for it alone, so that the
// benchmark needs no -march), split over the threads.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2"))) float read_avx2(const float* p, std::size_t n) {
    __m256 acc[8];
    for (auto& a : acc) a = _mm256_setzero_ps();
    for (std::size_t i = 0; i + 64 <= n; i += 64)
        for (int k = 0; k < 8; ++k) acc[k] = _mm256_add_ps(acc[k], _mm256_loadu_ps(p + i + 8 * k));
    for (int k = 1; k < 8; ++k) acc[0] = _mm256_add_ps(acc[0], acc[k]);
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
    const auto read = __builtin_cpu_supports("avx2") ? read_avx2 : read_portable;
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
