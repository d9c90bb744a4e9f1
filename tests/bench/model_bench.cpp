// Today's models at their published sizes, random weights drawn as the book's classes draw them (seed 123):
// Qwen3 0.6B (nn::qwen3_0_6b) and Gemma 3 270M (nn::gemma3_270m), with float weights and with BF16 ones
// (weight_type, the same draws rounded). Cached decoding (tokens per second, and
// the bytes of weights one step reads, against machine/read_bandwidth: the decoding bound), and a prompt of
// 512 tokens into an empty cache with the last position's logits (as llama.cpp's `llama-bench -p 512`
// times it; the pass's GFLOP against onednn_sgemm at the feed-forward layer's size: the prefill bound).
// Figures are printed, never asserted; times are wall-clock (the threads' work is in them).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <vector>

#include <dnnl.h>

#include <shaped/nn/gemma_model.hpp>
#include <shaped/nn/llama_model.hpp>
#include <shaped/shaped.hpp>
#include <shaped/threads.hpp>

#include "../golden/published_goldens.hpp"
#include "machine.hpp"

namespace {

namespace nn = shaped::nn;

template <class Model>
using ids_t = shaped::tensor<std::int64_t, typename Model::config::batch, typename Model::config::num_tokens>;

template <class Model>
ids_t<Model> make_ids(std::size_t t) {
    std::vector<std::int64_t> v(t);
    for (std::size_t i = 0; i < t; ++i) v[i] = static_cast<std::int64_t>((i * 7919 + 6109) % Model::vocab_size::extent);
    return ids_t<Model>::from_buffer(v, 1, t);
}

// The model must compute PyTorch's logits for GPT-2's ids of "Hello, I am" (tests/golden/make_goldens.py
// published) before it is timed: float weights within 1e-4 of the largest logit (a stated tolerance: logits of a
// few hundred, summed in another order), BF16 ones (the same draws rounded) within 2% of it, the argmax the same.
template <class Model>
void check(Model& m) {
    using C = typename Model::config;
    constexpr bool qwen = std::is_base_of_v<nn::qwen3_0_6b, C>;
    const auto& head = qwen ? golden::qwen3_0_6b_seed123_last_head : golden::gemma3_270m_seed123_last_head;
    const auto argmax = qwen ? golden::qwen3_0_6b_seed123_last_argmax[0] : golden::gemma3_270m_seed123_last_argmax[0];
    const double largest = qwen ? golden::qwen3_0_6b_seed123_last_max[0] : golden::gemma3_270m_seed123_last_max[0];
    const std::vector<std::int64_t> prompt{15496, 11, 314, 716};
    m.reset_kv_cache();
    const auto logits = m(ids_t<Model>::from_buffer(prompt, 1, prompt.size()), nn::use_cache, nn::last_position);
    m.reset_kv_cache();
    const float* row = logits.data();
    double diff = 0;
    for (std::size_t i = 0; i < head.size(); ++i) diff = std::max(diff, std::abs(row[i] - static_cast<double>(head[i])));
    const auto got = std::max_element(row, row + Model::vocab_size::extent) - row;
    const double tolerance = (std::is_same_v<nn::weight_type_of<C>, float> ? 1e-4 : 2e-2) * largest;
    if (!(diff <= tolerance) || got != argmax) {
        std::fprintf(stderr, "model_bench: %s differs from PyTorch's logits by %g (tolerance %g; argmax %td, PyTorch's %lld)\n",
                     qwen ? "Qwen3 0.6B" : "Gemma 3 270M", diff, tolerance, got, static_cast<long long>(argmax));
        std::exit(1);
    }
}

// One model of each per process (drawing Qwen3 0.6B's 596M weights takes seconds), checked once.
template <class Model>
Model& model() {
    static const auto m = [] {
        shaped::torch::manual_seed(123);
        auto p = std::make_unique<Model>();
        check(*p);
        return p;
    }();
    return *m;
}

// The bytes of weights one decoding step reads: every parameter, the token embeddings whole when they are the
// output head too (tied), else one row of them; 2 bytes each where the model keeps them in BF16 (the norms'
// scales, a few thousand floats, counted at 2 too).
template <class Model>
double step_bytes(const Model& m) {
    const double all = static_cast<double>(m.parameter_count());
    const double emb = static_cast<double>(m.tok_emb.weight.numel());
    return static_cast<double>(sizeof(typename decltype(m.tok_emb.weight)::value_type)) *
           (Model::config::tie_word_embeddings ? all : all - emb);
}

// The FLOPs of a 512-token prompt's pass with the last position's logits: the projections and the
// feed-forward layers at every position, the attention's two products over the causal half (within the
// window on Gemma's local layers), the output head once.
template <class Model>
double prefill_flops(const Model& m, std::size_t t) {
    using C = typename Model::config;
    const double E = C::emb_dim::extent, V = C::vocab_size::extent;
    const double non_embedding = static_cast<double>(m.parameter_count()) - V * E - (C::tie_word_embeddings ? 0 : V * E);
    const double heads = static_cast<double>(C::num_heads::extent), d = static_cast<double>(C::head_dim::extent);
    const double causal_pairs = static_cast<double>(t) * static_cast<double>(t + 1) / 2;
    return 2.0 * non_embedding * static_cast<double>(t) + 4.0 * heads * d * causal_pairs * static_cast<double>(C::n_layers) +
           2.0 * E * V;
}

template <class Model>
void decode(benchmark::State& state) {
    shaped::set_num_threads(static_cast<int>(state.range(0)));
    auto& m = model<Model>();
    const auto prompt = make_ids<Model>(4);
    constexpr std::size_t new_tokens = 16;
    using tokens = typename Model::config::num_tokens;
    using batch = typename Model::config::batch;
    for (auto _ : state) {
        state.PauseTiming();
        m.reset_kv_cache();
        auto logits = m(prompt, nn::use_cache, nn::last_position);
        state.ResumeTiming();
        for (std::size_t i = 0; i < new_tokens; ++i) {
            auto next = logits.template argmax<-1>(shaped::keepdim);
            logits = m(std::move(next).template rename<batch, tokens>(), nn::use_cache, nn::last_position);
        }
        benchmark::DoNotOptimize(logits.data());
    }
    state.counters["tokens/s"] = benchmark::Counter(new_tokens, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["weight_MB"] = step_bytes(m) / 1e6;
}

template <class Model>
void prefill(benchmark::State& state) {
    shaped::set_num_threads(static_cast<int>(state.range(0)));
    auto& m = model<Model>();
    constexpr std::size_t tokens = 512;
    const auto ids = make_ids<Model>(tokens);
    for (auto _ : state) {
        m.reset_kv_cache();
        auto logits = m(ids, nn::use_cache, nn::last_position);
        benchmark::DoNotOptimize(logits.data());
    }
    state.counters["tokens/s"] = benchmark::Counter(tokens, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["GFLOP/s"] = benchmark::Counter(prefill_flops(m, tokens) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

// oneDNN's sgemm at Qwen3 0.6B's feed-forward size for a 512-token prompt (512 × 1024 times 1024 × 3072):
// the machine's practical rate for the prefill's products.
void onednn_sgemm_512(benchmark::State& state) {
    shaped::set_num_threads(static_cast<int>(state.range(0)));
    constexpr dnnl_dim_t M = 512, K = 1024, N = 3072;
    std::vector<float> a(M * K, 0.5f), w(N * K, 0.25f), c(M * N);
    shaped::detail::apply_thread_count();  // dnnl_sgemm reads OpenMP's count, which set_num_threads leaves alone
    for (auto _ : state) {
        if (dnnl_sgemm('N', 'T', M, N, K, 1.f, a.data(), K, w.data(), K, 0.f, c.data(), N) != dnnl_success) std::abort();
        benchmark::DoNotOptimize(c.data());
    }
    state.counters["GFLOP/s"] = benchmark::Counter(2.0 * M * N * K / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

// The published configurations with their weights kept in BF16, as their checkpoints store them.
struct qwen3_0_6b_bf16 : nn::qwen3_0_6b {
    using weight_type = shaped::bfloat16;
};
struct gemma3_270m_bf16 : nn::gemma3_270m {
    using weight_type = shaped::bfloat16;
};

using qwen3 = nn::qwen3_model<nn::qwen3_0_6b>;
using gemma3 = nn::gemma_model<nn::gemma3_270m>;
using qwen3_bf16 = nn::qwen3_model<qwen3_0_6b_bf16>;
using gemma3_bf16 = nn::gemma_model<gemma3_270m_bf16>;

}  // namespace

BENCHMARK(machine_read_bandwidth)->Name("machine/read_bandwidth")->ArgName("threads")->Arg(1)->Arg(2)
    ->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(onednn_sgemm_512)->Name("onednn_sgemm/m512_k1024_n3072")->ArgName("threads")->Arg(1)->Arg(2)
    ->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(decode, qwen3)->Name("shaped_qwen3_0_6b/decode_cached_new16")->ArgName("threads")->Arg(1)->Arg(2)
    ->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(prefill, qwen3)->Name("shaped_qwen3_0_6b/prefill_t512_last")->ArgName("threads")->Arg(1)->Arg(2)
    ->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(decode, qwen3_bf16)->Name("shaped_qwen3_0_6b_bf16/decode_cached_new16")->ArgName("threads")->Arg(1)
    ->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(prefill, qwen3_bf16)->Name("shaped_qwen3_0_6b_bf16/prefill_t512_last")->ArgName("threads")->Arg(1)
    ->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(decode, gemma3)->Name("shaped_gemma3_270m/decode_cached_new16")->ArgName("threads")->Arg(1)->Arg(2)
    ->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(decode, gemma3_bf16)->Name("shaped_gemma3_270m_bf16/decode_cached_new16")->ArgName("threads")->Arg(1)
    ->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(prefill, gemma3)->Name("shaped_gemma3_270m/prefill_t512_last")->ArgName("threads")->Arg(1)->Arg(2)
    ->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
