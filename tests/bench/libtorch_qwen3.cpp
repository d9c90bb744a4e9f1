// Qwen3 0.6B, the book's Qwen3Model with its KV cache in LibTorch's C++ API (libtorch_qwen3.hpp), float32, no
// autograd: the peer of model_bench.cpp's shaped_qwen3_0_6b rows at the same sizes and threads. Run it with and
// without GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (the huge pages shaped's allocator asks for).
#include <benchmark/benchmark.h>

#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "../golden/published_goldens.hpp"
#include "libtorch_qwen3.hpp"

// LibTorch's matrix products run on OpenBLAS's own threads, which torch::set_num_threads leaves alone.
extern "C" void openblas_set_num_threads(int);

namespace {

// One model per process (seed 123: model_bench's weights), checked against PyTorch's logits for the prompt
// before anything is timed.
book::Qwen3Model& model() {
    static book::Qwen3Model m = [] {
        torch::NoGradGuard no_grad;
        torch::manual_seed(123);
        book::Qwen3Model p{book::Qwen3Config{}};
        p->eval();
        const auto logits = p->forward(torch::tensor({15496, 11, 314, 716}, torch::kLong).view({1, 4}), true);
        p->reset_kv_cache();
        double diff = 0;
        for (int64_t i = 0; i < 8; ++i)
            diff = std::max(diff, std::abs(logits[0][0][i].item<double>() - golden::qwen3_0_6b_seed123_last_head[i]));
        const auto argmax = logits[0][0].argmax().item<int64_t>();
        // A stated tolerance: logits up to a few hundred, summed in another order by another BLAS build.
        if (!(diff <= 1e-3 * golden::qwen3_0_6b_seed123_last_max[0]) || argmax != golden::qwen3_0_6b_seed123_last_argmax[0]) {
            std::fprintf(stderr, "LibTorch's Qwen3 0.6B differs from PyTorch's by %g (argmax %lld)\n", diff,
                         static_cast<long long>(argmax));
            std::exit(1);
        }
        return p;
    }();
    return m;
}

torch::Tensor make_ids(int64_t t) {
    return (torch::arange(t, torch::kLong) * 7919 + 6109).remainder(151936).view({1, t});
}

void set_threads(const benchmark::State& state) {
    torch::set_num_threads(static_cast<int>(state.range(0)));
    openblas_set_num_threads(static_cast<int>(state.range(0)));
}

// As model_bench's prefill: 512 tokens into an empty cache; the last position's logits (LastOnly), or every
// position's as the book's forward computes them.
template <bool LastOnly>
void libtorch_qwen3_prefill(benchmark::State& state) {
    set_threads(state);
    torch::NoGradGuard no_grad;
    auto& m = model();
    constexpr int64_t tokens = 512;
    const auto ids = make_ids(tokens);
    for (auto _ : state) {
        m->reset_kv_cache();
        auto logits = m->forward(ids, LastOnly);
        benchmark::DoNotOptimize(logits.data_ptr<float>());
    }
    state.counters["tokens/s"] = benchmark::Counter(tokens, benchmark::Counter::kIsIterationInvariantRate);
}

// As model_bench's decode: a 4-token prompt untimed, then 16 one-token steps with the cache.
void libtorch_qwen3_decode(benchmark::State& state) {
    set_threads(state);
    torch::NoGradGuard no_grad;
    auto& m = model();
    const auto prompt = make_ids(4);
    constexpr int64_t new_tokens = 16;
    for (auto _ : state) {
        state.PauseTiming();
        m->reset_kv_cache();
        auto logits = m->forward(prompt, true);
        state.ResumeTiming();
        for (int64_t i = 0; i < new_tokens; ++i) {
            auto next_idx = logits.index({torch::indexing::Slice(), -1}).argmax(-1, /*keepdim=*/true);
            logits = m->forward(next_idx, true);
        }
        benchmark::DoNotOptimize(logits.data_ptr<float>());
    }
    state.counters["tokens/s"] = benchmark::Counter(new_tokens, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK_TEMPLATE(libtorch_qwen3_prefill, true)->Name("libtorch_qwen3_0_6b/prefill_t512_last")->ArgName("threads")
    ->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(libtorch_qwen3_prefill, false)->Name("libtorch_qwen3_0_6b/prefill_t512_all")->ArgName("threads")
    ->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(libtorch_qwen3_decode)->Name("libtorch_qwen3_0_6b/decode_cached_new16")->ArgName("threads")->Arg(1)->Arg(2)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
