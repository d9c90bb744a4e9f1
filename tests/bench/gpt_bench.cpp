// GPT-2 124M (the book's GPT_CONFIG_124M, chapter 4) in shaped, eval mode: the forward pass at batch 2 × 4
// tokens (the book's batch) and batch 1 × 1024, and generate_text_simple's tokens per second, with 1 and 2
// threads. The peer is libtorch_gpt.cpp, the book's classes in LibTorch. Figures are printed, never asserted.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include <shaped/io/state_dict.hpp>
#include <shaped/nn/loss.hpp>
#include <shaped/shaped.hpp>
#include <shaped/threads.hpp>

#include "../golden/chapter4_goldens.hpp"
#include "machine.hpp"
#include "../golden/text_goldens.hpp"

namespace {

using cfg = shaped::nn::gpt2_124m;
using ids_t = shaped::tensor<std::int64_t, cfg::batch, cfg::num_tokens>;

// One model per process (drawing its 163M weights takes seconds), first checked against PyTorch's logits for
// the book's batch: a wrong model makes every figure meaningless.
shaped::nn::gpt_model<cfg>& model() {
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
    shaped::set_num_threads(static_cast<int>(state.range(0)));
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
    shaped::set_num_threads(static_cast<int>(state.range(0)));
    const auto& m = model();
    const ids_t prompt{{15496, 11, 314, 716}};
    constexpr std::size_t new_tokens = 8;
    for (auto _ : state) {
        auto out = shaped::nn::generate_text_simple(m, prompt, new_tokens, cfg::context_length::extent);
        benchmark::DoNotOptimize(out.data());
    }
    state.counters["tokens/s"] = benchmark::Counter(new_tokens, benchmark::Counter::kIsIterationInvariantRate);
}

// Decoding "Hello, I am": 32 new tokens without the cache (the book's generate_text_simple, every step over
// the whole sequence), and with it, timing the 32 one-token steps alone (the prompt's pass is set up
// untimed), which is what a decoding step costs.
template <bool Cached>
void shaped_gpt_decode(benchmark::State& state) {
    shaped::set_num_threads(static_cast<int>(state.range(0)));
    auto& m = model();  // the cache is the model's state
    const ids_t prompt{{15496, 11, 314, 716}};
    constexpr std::size_t new_tokens = 32;
    for (auto _ : state) {
        if constexpr (Cached) {
            state.PauseTiming();
            m.reset_kv_cache();
            auto logits = m(prompt, shaped::nn::use_cache);
            state.ResumeTiming();
            for (std::size_t i = 0; i < new_tokens; ++i) {
                auto next = logits.select<cfg::num_tokens>(-1).argmax<-1>(shaped::keepdim);
                logits = m(std::move(next).rename<cfg::batch, cfg::num_tokens>(), shaped::nn::use_cache);
            }
            benchmark::DoNotOptimize(logits.data());
        } else {
            auto out = shaped::nn::generate_text_simple(m, prompt, new_tokens, cfg::context_length::extent);
            benchmark::DoNotOptimize(out.data());
        }
    }
    state.counters["tokens/s"] = benchmark::Counter(new_tokens, benchmark::Counter::kIsIterationInvariantRate);
    // What one decoding step must read: every weight but the embeddings' (one row of each per token).
    const double bytes = 4.0 * static_cast<double>(m.parameter_count() - m.tok_emb.weight.numel() -
                                                   m.pos_emb.weight.numel());
    state.counters["weight_MB"] = bytes / 1e6;
}

// A prompt's pass as llama.cpp's `llama-bench -p 512` times it: 512 tokens into an empty cache, the logits
// of the last position only (`nn::last_position`).
void shaped_gpt_prefill(benchmark::State& state) {
    shaped::set_num_threads(static_cast<int>(state.range(0)));
    auto& m = model();
    constexpr std::size_t tokens = 512;
    const auto ids = make_ids(1, tokens);
    for (auto _ : state) {
        m.reset_kv_cache();
        auto logits = m(ids, shaped::nn::use_cache, shaped::nn::last_position);
        benchmark::DoNotOptimize(logits.data());
    }
    state.counters["tokens/s"] = benchmark::Counter(tokens, benchmark::Counter::kIsIterationInvariantRate);
}

// Loading GPT-2 124M's weights from a safetensors file of its state_dict (written once, read from the page
// cache), against reading the same file's bytes into memory.
void shaped_gpt_load(benchmark::State& state) {
    const auto& m = model();
    static const std::string path = [&] {
        const std::string p = "/tmp/shaped_bench_gpt2_" + std::to_string(::getpid()) + ".safetensors";
        shaped::io::save_state_dict(m, p);
        return p;
    }();
    static shaped::nn::gpt_model<cfg> target(shaped::nn::skip_init);
    for (auto _ : state) shaped::io::load_state_dict(target, shaped::io::safetensors_file(path));
    const auto size = std::filesystem::file_size(path);
    state.counters["GB/s"] = benchmark::Counter(static_cast<double>(size) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
void machine_read_file(benchmark::State& state) {
    const std::string path = "/tmp/shaped_bench_gpt2_" + std::to_string(::getpid()) + ".safetensors";
    if (!std::filesystem::exists(path)) {
        state.SkipWithError("run after shaped_gpt/load");
        return;
    }
    const auto size = std::filesystem::file_size(path);
    std::vector<char> buffer(size);
    for (auto _ : state) {
        std::ifstream in(path, std::ios::binary);
        in.read(buffer.data(), static_cast<std::streamsize>(size));
        benchmark::DoNotOptimize(buffer.data());
    }
    state.counters["GB/s"] = benchmark::Counter(static_cast<double>(size) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
    std::filesystem::remove(path);
}

// The loss of the book's chapter 5 over the-verdict.txt at context 256: the seed-123 model of that context,
// the story's 5,145 ids (tiktoken's) in 10 batches of 2 windows of 256 tokens (the shapes of the book's
// training and validation loaders together), each batch's logits and cross-entropy, their mean. The peer,
// libtorch_gpt.cpp's libtorch_gpt/loss_verdict_ctx256, does the same with the book's classes; both print the
// loss they compute ("loss"), which must agree.
struct cfg256 : cfg {
    struct context_length : shaped::axis<"context_length", 256> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
};
void shaped_gpt_loss(benchmark::State& state) {
    shaped::set_num_threads(static_cast<int>(state.range(0)));
    static const auto m = [] {
        shaped::torch::manual_seed(123);
        auto p = std::make_unique<shaped::nn::gpt_model<cfg256>>();
        p->eval();
        return p;
    }();
    using batch_t = shaped::tensor<std::int64_t, cfg256::batch, cfg256::num_tokens>;
    std::vector<std::pair<batch_t, batch_t>> batches;
    const auto& ids = golden::text::verdict;
    for (std::size_t b = 0; b < 10; ++b) {
        std::vector<std::int64_t> x, y;
        for (std::size_t w = 0; w < 2; ++w)
            for (std::size_t i = 0; i < 256; ++i) {
                x.push_back(ids[(2 * b + w) * 256 + i]);
                y.push_back(ids[(2 * b + w) * 256 + i + 1]);
            }
        batches.emplace_back(batch_t::from_buffer(x, 2, 256), batch_t::from_buffer(y, 2, 256));
    }
    double loss = 0;
    for (auto _ : state) {
        double total = 0;
        for (const auto& [x, y] : batches) total += shaped::nn::calc_loss_batch(x, y, *m).item();
        loss = total / static_cast<double>(batches.size());
        benchmark::DoNotOptimize(loss);
    }
    state.counters["loss"] = loss;
    state.counters["tokens/s"] = benchmark::Counter(5120.0, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK_CAPTURE(shaped_gpt_forward, b2_t4, 2, 4)->Name("shaped_gpt/forward_b2_t4")->ArgName("threads")
    ->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(shaped_gpt_forward, b1_t1024, 1, 1024)->Name("shaped_gpt/forward_b1_t1024")->ArgName("threads")
    ->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(shaped_gpt_generate)->Name("shaped_gpt/generate_b1_t4_new8")->ArgName("threads")->Arg(1)->Arg(2)
    ->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(shaped_gpt_decode, true)->Name("shaped_gpt/decode_cached_new32")->ArgName("threads")->Arg(1)
    ->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(shaped_gpt_decode, false)->Name("shaped_gpt/decode_uncached_new32")->ArgName("threads")->Arg(1)
    ->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(machine_read_bandwidth)->Name("machine/read_bandwidth")->ArgName("threads")->Arg(1)->Arg(2)
    ->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(shaped_gpt_prefill)->Name("shaped_gpt/prefill_t512_last")->ArgName("threads")->Arg(1)->Arg(2)
    ->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(shaped_gpt_loss)->Name("shaped_gpt/loss_verdict_ctx256")->ArgName("threads")->Arg(1)->Arg(2)
    ->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(shaped_gpt_load)->Name("shaped_gpt/load_state_dict")->ArgName("threads")->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(machine_read_file)->Name("machine/read_file")->ArgName("threads")->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
