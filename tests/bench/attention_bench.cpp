// Run time of the attention kernels of today's models: scaled_dot_product_attention on grouped keys and
// values (grouped-query attention, read in place) against the same kernel on as many key/value heads as
// query heads (multi-head attention at the same query heads: four times the keys to read) and against the
// keys and values expanded with repeat_interleave first, as the book's GroupedQueryAttention expands them.
// Google Benchmark; figures are printed, never asserted. "causal GFLOP/s" counts the products a causal
// pass needs, 2 · heads · T(T+1)/2 · (head_dim + head_dim).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include <shaped/ops/scaled_dot_product_attention.hpp>
#include <shaped/shaped.hpp>
#include <shaped/threads.hpp>

namespace {

// Llama 3.2 1B's attention: 32 query heads on 8 key/value heads (groups of 4), head_dim 64.
template <std::size_t B, std::size_t T, std::size_t KvHeads, std::size_t Group, std::size_t HeadDim>
struct config {
    struct batch : shaped::axis<"batch", B> {};
    struct context_length : shaped::axis<"context_length", T> {};
    struct num_tokens : shaped::axis<"num_tokens", T, shaped::at_most<context_length>> {};
    using keys = shaped::key<num_tokens>;
    struct num_kv_heads : shaped::axis<"num_kv_heads", KvHeads> {};
    struct group_size : shaped::axis<"group_size", Group> {};
    struct num_heads : shaped::product<"num_heads", num_kv_heads, group_size> {};
    struct head_dim : shaped::axis<"head_dim", HeadDim> {};
    static constexpr double causal_flops = 2.0 * B * KvHeads * Group * (T * (T + 1) / 2.0) * (2.0 * HeadDim);

    struct inputs {
        shaped::tensor<float, batch, num_heads, num_tokens, head_dim> q;
        shaped::tensor<float, batch, num_kv_heads, keys, head_dim> k, v;       // grouped
        shaped::tensor<float, batch, num_heads, keys, head_dim> k_all, v_all;  // one per query head
        inputs()
            : q((shaped::torch::manual_seed(123), shaped::torch::randn<batch, num_heads, num_tokens, head_dim>())),
              k(shaped::torch::randn<batch, num_kv_heads, keys, head_dim>()),
              v(shaped::torch::randn<batch, num_kv_heads, keys, head_dim>()),
              k_all(shaped::torch::randn<batch, num_heads, keys, head_dim>()),
              v_all(shaped::torch::randn<batch, num_heads, keys, head_dim>()) {}
    };
};

void set_threads(const benchmark::State& state) { shaped::set_num_threads(static_cast<int>(state.range(0))); }

template <class C>
void report(benchmark::State& state) {
    state.counters["causal GFLOP/s"] =
        benchmark::Counter(C::causal_flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Grouped keys and values, each read in place for its group of query heads.
template <class C>
void shaped_sdpa_gqa(benchmark::State& state) {
    set_threads(state);
    const typename C::inputs in;
    if (!std::getenv("SHAPED_BENCH_NO_CHECK")) {  // the grouped pass equals the expanded one, or no figures
        const auto expanded_k = in.k.template repeat_interleave<typename C::group_size, 1>();
        const auto expanded_v = in.v.template repeat_interleave<typename C::group_size, 1>();
        const double diff = shaped::max_abs_diff(shaped::scaled_dot_product_attention(in.q, in.k, in.v, shaped::is_causal),
                                                 shaped::scaled_dot_product_attention(in.q, expanded_k, expanded_v,
                                                                                      shaped::is_causal));
        if (!(diff <= 1e-5)) {
            state.SkipWithError(("grouped differs from expanded by " + std::to_string(diff)).c_str());
            return;
        }
    }
    for (auto _ : state) {
        auto y = shaped::scaled_dot_product_attention(in.q, in.k, in.v, shaped::is_causal);
        benchmark::DoNotOptimize(y.data());
    }
    report<C>(state);
}

// Multi-head attention at the same query heads: a key and value head for each.
template <class C>
void shaped_sdpa_mha(benchmark::State& state) {
    set_threads(state);
    const typename C::inputs in;
    for (auto _ : state) {
        auto y = shaped::scaled_dot_product_attention(in.q, in.k_all, in.v_all, shaped::is_causal);
        benchmark::DoNotOptimize(y.data());
    }
    report<C>(state);
}

// The book's way: keys and values expanded with repeat_interleave, then attention over every query head.
template <class C>
void shaped_sdpa_gqa_expanded(benchmark::State& state) {
    set_threads(state);
    const typename C::inputs in;
    for (auto _ : state) {
        const auto k = in.k.template repeat_interleave<typename C::group_size, 1>();
        const auto v = in.v.template repeat_interleave<typename C::group_size, 1>();
        auto y = shaped::scaled_dot_product_attention(in.q, k, v, shaped::is_causal);
        benchmark::DoNotOptimize(y.data());
    }
    report<C>(state);
}

// Causal attention within a sliding window against full causal attention at the same size.
template <class C>
void shaped_sdpa_window(benchmark::State& state) {
    set_threads(state);
    struct window : shaped::axis<"sliding_window", C::window> {};
    const typename C::inputs in;
    for (auto _ : state) {
        auto y = shaped::scaled_dot_product_attention(in.q, in.k, in.v, shaped::is_causal, shaped::sliding_window<window>);
        benchmark::DoNotOptimize(y.data());
    }
    report<C>(state);
}

using llama32_1b_t1024 = config<1, 1024, 8, 4, 64>;
using small_t64 = config<1, 64, 2, 2, 16>;
// Gemma 3 270M's attention at 4096 tokens: 4 query heads on one key/value head, head_dim 256; its local layers'
// window is 512.
struct gemma3_270m_t4096 : config<1, 4096, 1, 4, 256> {
    static constexpr std::size_t window = 512;
};
struct small_t64_w16 : config<1, 64, 2, 2, 16> {
    static constexpr std::size_t window = 16;
};

}  // namespace

#define SHAPED_ATTENTION_BENCH(FN, CONFIG)                                                                     \
    BENCHMARK_TEMPLATE(FN, CONFIG)->Name(#FN "/" #CONFIG)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime() \
        ->Unit(benchmark::kMillisecond);
SHAPED_ATTENTION_BENCH(shaped_sdpa_gqa, llama32_1b_t1024)
SHAPED_ATTENTION_BENCH(shaped_sdpa_mha, llama32_1b_t1024)
SHAPED_ATTENTION_BENCH(shaped_sdpa_gqa_expanded, llama32_1b_t1024)
SHAPED_ATTENTION_BENCH(shaped_sdpa_gqa, small_t64)
SHAPED_ATTENTION_BENCH(shaped_sdpa_mha, small_t64)
SHAPED_ATTENTION_BENCH(shaped_sdpa_gqa_expanded, small_t64)
// "causal GFLOP/s" counts the full causal pairs for both, so that the window's rate is the speed-up.
SHAPED_ATTENTION_BENCH(shaped_sdpa_gqa, gemma3_270m_t4096)
SHAPED_ATTENTION_BENCH(shaped_sdpa_window, gemma3_270m_t4096)
SHAPED_ATTENTION_BENCH(shaped_sdpa_window, small_t64_w16)

BENCHMARK_MAIN();
