// GPT-2 124M (the book's GPT_CONFIG_124M, chapter 4) in shaped, eval mode: the forward pass at batch 2 × 4
// tokens (the book's batch) and batch 1 × 1024, and generate_text_simple's tokens per second, with 1 and 2
// threads. The peer is libtorch_gpt.cpp, the book's classes in LibTorch. Figures are printed, never asserted.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <shaped/shaped.hpp>

#include "../golden/chapter4_goldens.hpp"

extern "C" void openblas_set_num_threads(int);

namespace {

using cfg = shaped::nn::gpt2_124m;
using ids_t = shaped::tensor<std::int64_t, cfg::batch, cfg::num_tokens>;

// One model per process (drawing its 163M weights takes seconds), first checked against PyTorch's logits for
// the book's batch: a wrong model makes every figure meaningless.
const shaped::nn::gpt_model<cfg>& model() {
    static const auto m = [] {
        shaped::torch::manual_seed(123);
        auto p = std::make_unique<shaped::nn::gpt_model<cfg>>();
        p->eval();
        const ids_t ids{{6109, 3626, 6100, 345}, {6109, 1110, 6622, 257}};
        const auto logits = (*p)(ids);
        double diff = 0;
        for (std::size_t i = 0; i < 8; ++i)
            for (std::size_t b = 0; b < 2; ++b)
                for (std::size_t t = 0; t < 4; ++t)
                    diff = std::max(diff, std::abs(static_cast<double>(logits.at(b, t, i)) -
                                                   golden::gpt2_124m_eval_head[(b * 4 + t) * 8 + i]));
        if (!(diff <= 1e-4)) {
            std::fprintf(stderr, "shaped's GPT-2 differs from PyTorch's by %g\n", diff);
            std::exit(1);
        }
        return p;
    }();
    return *m;
}

// Token ids for a batch of sequences: the book's batch, or a repeating pattern.
ids_t make_ids(std::size_t b, std::size_t t) {
    std::vector<std::int64_t> v(b * t);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>((i * 7919 + 6109) % 50257);
    return ids_t::from_buffer(v, b, t);
}

void shaped_gpt_forward(benchmark::State& state, std::size_t b, std::size_t t) {
    openblas_set_num_threads(static_cast<int>(state.range(0)));
    const auto& m = model();
    const auto ids = make_ids(b, t);
    for (auto _ : state) {
        auto logits = m(ids);
        benchmark::DoNotOptimize(logits.data());
    }
    state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(b * t), benchmark::Counter::kIsIterationInvariantRate);
}

// The book's generation: "Hello, I am" and 8 new tokens, the whole sequence recomputed at every step.
void shaped_gpt_generate(benchmark::State& state) {
    openblas_set_num_threads(static_cast<int>(state.range(0)));
    const auto& m = model();
    const ids_t prompt{{15496, 11, 314, 716}};
    constexpr std::size_t new_tokens = 8;
    for (auto _ : state) {
        auto out = shaped::nn::generate_text_simple(m, prompt, new_tokens, cfg::context_length::extent);
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["tokens/s"] = benchmark::Counter(new_tokens, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK_CAPTURE(shaped_gpt_forward, b2_t4, 2, 4)->Name("shaped_gpt/forward_b2_t4")->ArgName("threads")
    ->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(shaped_gpt_forward, b1_t1024, 1, 1024)->Name("shaped_gpt/forward_b1_t1024")->ArgName("threads")
    ->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(shaped_gpt_generate)->Name("shaped_gpt/generate_b1_t4_new8")->ArgName("threads")->Arg(1)->Arg(2)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
