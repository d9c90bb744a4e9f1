// GPT-2 124M, the book's classes (chapter 4) in LibTorch's C++ API, eval mode, no autograd: the peer of
// gpt_bench.cpp at the same sizes and threads.
#include <benchmark/benchmark.h>

#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "../golden/chapter4_goldens.hpp"
#include "../golden/text_goldens.hpp"
#include "libtorch_book.hpp"

// LibTorch's matrix products run on OpenBLAS's own threads, which torch::set_num_threads leaves alone.
extern "C" void openblas_set_num_threads(int);

namespace {

// One model per process, checked against PyTorch's logits for the book's batch before anything is timed.
book::GPTModel& model() {
    static book::GPTModel m = [] {
        torch::NoGradGuard no_grad;
        torch::manual_seed(123);
        book::GPTModel p{book::Config{}};
        p->eval();
        const auto ids = torch::tensor({6109, 3626, 6100, 345, 6109, 1110, 6622, 257}, torch::kLong).view({2, 4});
        const auto logits = p->forward(ids).contiguous();
        double diff = 0;
        for (int64_t b = 0; b < 2; ++b)
            for (int64_t t = 0; t < 4; ++t)
                for (int64_t i = 0; i < 8; ++i)
                    diff = std::max(diff, std::abs(logits[b][t][i].item<double>() -
                                                   golden::gpt2_124m_eval_head[(b * 4 + t) * 8 + i]));
        if (!(diff <= 1e-4)) {
            std::fprintf(stderr, "LibTorch's GPT-2 differs from PyTorch's by %g\n", diff);
            std::exit(1);
        }
        return p;
    }();
    return m;
}

torch::Tensor make_ids(int64_t b, int64_t t) {
    return (torch::arange(b * t, torch::kLong) * 7919 + 6109).remainder(50257).view({b, t});
}

void set_threads(const benchmark::State& state) {
    torch::set_num_threads(static_cast<int>(state.range(0)));
    openblas_set_num_threads(static_cast<int>(state.range(0)));
}

void libtorch_gpt_forward(benchmark::State& state, int64_t b, int64_t t) {
    set_threads(state);
    torch::NoGradGuard no_grad;
    auto& m = model();
    const auto ids = make_ids(b, t);
    for (auto _ : state) {
        auto logits = m->forward(ids);
        benchmark::DoNotOptimize(logits.data_ptr<float>());
    }
    state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(b * t), benchmark::Counter::kIsIterationInvariantRate);
}

void libtorch_gpt_generate(benchmark::State& state) {
    set_threads(state);
    torch::NoGradGuard no_grad;
    auto& m = model();
    const auto prompt = torch::tensor({15496, 11, 314, 716}, torch::kLong).view({1, 4});
    constexpr int64_t new_tokens = 8;
    for (auto _ : state) {
        auto out = book::generate_text_simple(m, prompt, new_tokens, 1024);
        benchmark::DoNotOptimize(out.data_ptr<int64_t>());
    }
    state.counters["tokens/s"] = benchmark::Counter(new_tokens, benchmark::Counter::kIsIterationInvariantRate);
}

// As gpt_bench.cpp: with the cache, the 32 one-token steps alone are timed.
template <bool Cached>
void libtorch_gpt_decode(benchmark::State& state) {
    set_threads(state);
    torch::NoGradGuard no_grad;
    auto& m = model();
    const auto prompt = torch::tensor({15496, 11, 314, 716}, torch::kLong).view({1, 4});
    constexpr int64_t new_tokens = 32;
    for (auto _ : state) {
        if constexpr (Cached) {
            state.PauseTiming();
            m->reset_kv_cache();
            auto logits = m->forward(prompt, true);
            state.ResumeTiming();
            for (int64_t i = 0; i < new_tokens; ++i) {
                auto next_idx = logits.index({torch::indexing::Slice(), -1}).argmax(-1, /*keepdim=*/true);
                logits = m->forward(next_idx, true);
            }
            benchmark::DoNotOptimize(logits.data_ptr<float>());
        } else {
            auto out = book::generate_text_simple(m, prompt, new_tokens, 1024);
            benchmark::DoNotOptimize(out.data_ptr<int64_t>());
        }
    }
    state.counters["tokens/s"] = benchmark::Counter(new_tokens, benchmark::Counter::kIsIterationInvariantRate);
}

// As gpt_bench.cpp's shaped_gpt/loss_verdict_ctx256: the book's calc_loss_batch over 10 batches of 2 x 256
// ids of the-verdict.txt, with the seed-123 model of context 256, eval mode, no autograd.
void libtorch_gpt_loss(benchmark::State& state) {
    set_threads(state);
    torch::NoGradGuard no_grad;
    static book::GPTModel m = [] {
        torch::manual_seed(123);
        book::Config c;
        c.context_length = 256;
        book::GPTModel p{c};
        p->eval();
        return p;
    }();
    const auto& ids = golden::text::verdict;
    std::vector<std::pair<torch::Tensor, torch::Tensor>> batches;
    for (int64_t b = 0; b < 10; ++b) {
        auto x = torch::empty({2, 256}, torch::kLong), y = torch::empty({2, 256}, torch::kLong);
        for (int64_t w = 0; w < 2; ++w)
            for (int64_t i = 0; i < 256; ++i) {
                x[w][i] = ids[static_cast<std::size_t>((2 * b + w) * 256 + i)];
                y[w][i] = ids[static_cast<std::size_t>((2 * b + w) * 256 + i + 1)];
            }
        batches.emplace_back(x, y);
    }
    double loss = 0;
    for (auto _ : state) {
        double total = 0;
        for (const auto& [x, y] : batches) {
            auto logits = m->forward(x);
            total += torch::nn::functional::cross_entropy(logits.flatten(0, 1), y.flatten()).item<double>();
        }
        loss = total / static_cast<double>(batches.size());
        benchmark::DoNotOptimize(loss);
    }
    state.counters["loss"] = loss;
    state.counters["tokens/s"] = benchmark::Counter(5120.0, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK_CAPTURE(libtorch_gpt_forward, b2_t4, 2, 4)->Name("libtorch_gpt/forward_b2_t4")->ArgName("threads")
    ->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(libtorch_gpt_forward, b1_t1024, 1, 1024)->Name("libtorch_gpt/forward_b1_t1024")
    ->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(libtorch_gpt_loss)->Name("libtorch_gpt/loss_verdict_ctx256")->ArgName("threads")->Arg(1)->Arg(2)
    ->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(libtorch_gpt_generate)->Name("libtorch_gpt/generate_b1_t4_new8")->ArgName("threads")->Arg(1)->Arg(2)
    ->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(libtorch_gpt_decode, true)->Name("libtorch_gpt/decode_cached_new32")->ArgName("threads")->Arg(1)
    ->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(libtorch_gpt_decode, false)->Name("libtorch_gpt/decode_uncached_new32")->ArgName("threads")
    ->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
