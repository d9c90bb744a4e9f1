// Run time of multi-head attention's forward pass (causal, eval mode): shaped's two forms against the same
// computation written by hand on xtensor + oneDNN's sgemm (the library shaped's products run on), and that
// sgemm alone at the projection sizes and at every projection size of GPT-2 small.
// Google Benchmark; figures are printed, never asserted. GFLOP/s counts the five matrix products.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <vector>

#include <cstring>
#include <shaped/nn/multi_head_attention_sdpa.hpp>
#include <shaped/ops/einsum.hpp>
#include <shaped/ops/rearrange.hpp>
#include <shaped/shaped.hpp>
#include <shaped/threads.hpp>
#include <xsimd/xsimd.hpp>

namespace {

// The hand-written peers' matrix product: oneDNN's sgemm (row-major), on shaped's thread count, as
// shaped's own products run (detail/gemm.hpp).
void sgemm(char ta, char tb, std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
           const float* b, std::size_t ldb, float* c, std::size_t ldc) {
    shaped::detail::apply_thread_count();
    const auto d = [](std::size_t x) { return static_cast<dnnl_dim_t>(x); };
    if (dnnl_sgemm(ta, tb, d(m), d(n), d(k), 1.f, a, d(lda), b, d(ldb), 0.f, c, d(ldc)) != dnnl_success) std::abort();
}

template <std::size_t B, std::size_t T, std::size_t DIn, std::size_t DOut, std::size_t H>
struct config {
    struct batch : shaped::axis<"batch", B> {};
    struct context_length : shaped::axis<"context_length", T> {};
    struct num_tokens : shaped::axis<"num_tokens", T, shaped::at_most<context_length>> {};
    struct d_in : shaped::axis<"d_in", DIn> {};
    struct d_out : shaped::axis<"d_out", DOut> {};
    struct num_heads : shaped::axis<"num_heads", H> {};
    using mha = shaped::nn::multi_head_attention<d_in, d_out, context_length, num_heads>;
    using sdpa = shaped::nn::multi_head_attention_sdpa<d_in, d_out, context_length, num_heads>;
    static_assert(DOut % H == 0, "a benchmark configuration's heads must divide d_out");
    // The same sizes with batch and num_tokens known only at run time: one module type for every length.
    struct run_time_batch : shaped::dynamic_axis<"batch"> {};
    struct run_time_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};

    // Q, K, V and out_proj projections, scores and context: 2·(3·B·T·DIn·DOut + B·T·DOut² + 2·B·H·T²·hd).
    static constexpr double flops = 2.0 * (3.0 * B * T * DIn * DOut + 1.0 * B * T * DOut * DOut +
                                           2.0 * B * H * T * T * (DOut / H));
    // What a causal pass must compute: the products above with only the T·(T+1)/2 scores on or below the
    // diagonal, and their weights' product with the values.
    static constexpr double causal_flops = 2.0 * (3.0 * B * T * DIn * DOut + 1.0 * B * T * DOut * DOut +
                                                  2.0 * B * H * (T * (T + 1) / 2.0) * (DOut / H));
};

void set_threads(const benchmark::State& state) { shaped::set_num_threads(static_cast<int>(state.range(0))); }

void report(benchmark::State& state, double flops) {
    state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// shaped, the view/transpose form: nn::multi_head_attention (the book's listing 3.5).
template <class C>
void shaped_view_form(benchmark::State& state) {
    set_threads(state);
    shaped::torch::manual_seed(123);
    typename C::mha mha(0.0);
    mha.eval();
    auto x = shaped::torch::rand<typename C::batch, typename C::num_tokens, typename C::d_in>();
    for (auto _ : state) {
        auto y = mha(x);
        benchmark::DoNotOptimize(y.storage().data());
    }
    report(state, C::flops);
}

// The view/transpose form on run-time batch and num_tokens, bound to the configuration's sizes: what a
// prompt whose length is known only at run time costs against the same sizes fixed at compile time.
template <class C>
void shaped_view_run_time(benchmark::State& state) {
    set_threads(state);
    shaped::torch::manual_seed(123);
    typename C::mha mha(0.0);
    mha.eval();
    auto x = shaped::torch::rand<typename C::run_time_batch, typename C::run_time_tokens, typename C::d_in>(
        C::batch::extent, C::num_tokens::extent);
    for (auto _ : state) {
        auto y = mha(x);
        benchmark::DoNotOptimize(y.data());
    }
    report(state, C::flops);
}

// The view form's forward written in patterns (examples/patterns.cpp): rearrange for the heads' split and merge,
// einsum for the two products, the module's own weights, mask and softmax; checked against the module before
// timing. Where the module writes each head's context straight into the merged layout, the pattern form
// makes the einsum's (batch, num_tokens, num_heads, head_dim) view contiguous: that copy is its extra cost.
template <class C>
void shaped_patterns_form(benchmark::State& state) {
    using batch = typename C::batch;
    using num_tokens = typename C::num_tokens;
    using d_out = typename C::d_out;
    using num_heads = typename C::num_heads;
    struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};
    using num_keys = shaped::key<num_tokens>;
    using keys = shaped::let<"keys", num_keys>;
    set_threads(state);
    shaped::torch::manual_seed(123);
    typename C::mha mha(0.0);
    mha.eval();
    auto x = shaped::torch::rand<batch, num_tokens, typename C::d_in>();
    auto forward = [&] {
        auto q = shaped::rearrange<"batch num_tokens (num_heads head_dim) -> batch num_heads num_tokens head_dim",
                                   num_heads, head_dim>(mha.W_query(x));
        auto k = shaped::rearrange<"batch keys (num_heads head_dim) -> batch num_heads keys head_dim", num_heads,
                                   head_dim, keys>(mha.W_key(x).template rename<batch, num_keys, d_out>());
        auto v = shaped::rearrange<"batch keys (num_heads head_dim) -> batch num_heads keys head_dim", num_heads,
                                   head_dim, keys>(mha.W_value(x).template rename<batch, num_keys, d_out>());
        auto scores = shaped::einsum<"batch num_heads num_tokens head_dim, batch num_heads keys head_dim -> "
                                     "batch num_heads num_tokens keys",
                                     keys>(q, std::move(k));
        auto weights = shaped::nn::detail::causal_weights<num_tokens>(std::move(scores), mha.mask, mha.dropout,
                                                                       head_dim::extent);
        auto context = shaped::einsum<"batch num_heads num_tokens keys, batch num_heads keys head_dim -> "
                                      "batch num_tokens num_heads head_dim",
                                      keys>(weights, v);
        return mha.out_proj(
            shaped::rearrange<"batch num_tokens num_heads head_dim -> batch num_tokens (num_heads head_dim)">(
                std::move(context)));
    };
    if (!std::getenv("SHAPED_BENCH_NO_CHECK")) {
        const double diff = shaped::max_abs_diff(forward(), mha(x));
        if (!(diff <= 1e-5)) {
            state.SkipWithError(("shaped_patterns differs from shaped_view by " + std::to_string(diff)).c_str());
            return;
        }
    }
    for (auto _ : state) {
        auto y = forward();
        benchmark::DoNotOptimize(y.data());
    }
    report(state, C::flops);
}

// shaped, the fused form: nn::multi_head_attention_sdpa (the bonus notebook's MHAPyTorchScaledDotProduct) on
// scaled_dot_product_attention, with the view form's weights (qkv = [W_query; W_key; W_value], proj =
// out_proj) and its output checked against the view form's before timing. "causal GFLOP/s" counts only
// the FLOPs a causal pass needs.
template <class C>
void shaped_sdpa_form(benchmark::State& state) {
    set_threads(state);
    shaped::torch::manual_seed(123);
    typename C::mha mha(0.0);
    mha.eval();
    typename C::sdpa sdpa(shaped::nn::skip_init, 0.0);
    sdpa.eval();
    const std::size_t n = mha.W_query.weight.numel();
    std::memcpy(sdpa.qkv.weight.data(), mha.W_query.weight.data(), n * sizeof(float));
    std::memcpy(sdpa.qkv.weight.data() + n, mha.W_key.weight.data(), n * sizeof(float));
    std::memcpy(sdpa.qkv.weight.data() + 2 * n, mha.W_value.weight.data(), n * sizeof(float));
    sdpa.proj.weight = mha.out_proj.weight;
    sdpa.proj.bias = mha.out_proj.bias;
    auto x = shaped::torch::rand<typename C::batch, typename C::num_tokens, typename C::d_in>();
    if (!std::getenv("SHAPED_BENCH_NO_CHECK")) {
        const double diff = shaped::max_abs_diff(sdpa(x), mha(x));
        if (!(diff <= 1e-5)) {
            state.SkipWithError(("shaped_sdpa differs from shaped_view by " + std::to_string(diff)).c_str());
            return;
        }
    }
    for (auto _ : state) {
        auto y = sdpa(x);
        benchmark::DoNotOptimize(y.data());
    }
    report(state, C::flops);
    state.counters["causal GFLOP/s"] =
        benchmark::Counter(C::causal_flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// shaped, the loop-over-heads form: head_dim-wide heads, cat, out_proj (nn::split_heads of the same weights).
template <class C>
void shaped_loop_form(benchmark::State& state) {
    set_threads(state);
    shaped::torch::manual_seed(123);
    typename C::mha mha(0.0);
    auto heads = shaped::nn::split_heads(mha);
    auto x = shaped::torch::rand<typename C::batch, typename C::num_tokens, typename C::d_in>();
    for (auto _ : state) {
        auto y = heads(x);
        benchmark::DoNotOptimize(y.storage().data());
    }
    report(state, C::flops);
}

// A hand-written peer's result must equal shaped's: compared once, before timing (skipped when
// SHAPED_BENCH_NO_CHECK is set, so that a process's peak memory is the hand-written pass's alone).
template <class Setup, class Forward>
void check_against_shaped(const char* name, Setup& s, Forward& forward) {
    if (std::getenv("SHAPED_BENCH_NO_CHECK")) return;
    const auto reference = s.mha(s.x);
    const auto once = forward();
    double diff = 0;
    for (std::size_t i = 0; i < once.size(); ++i)
        diff = std::max(diff, static_cast<double>(std::abs(once.data()[i] - reference.storage().data()[i])));
    if (diff > 1e-5) {  // a wrong peer makes every figure meaningless: stop the run, fail the test
        std::fprintf(stderr, "the %s forward pass differs from shaped's by %g\n", name, diff);
        std::exit(1);
    }
}

// Softmax of one row of causal scores in place, scaled, with the keys after `last` masked; exp on
// xsimd batches, as shaped's softmax does, so that the peers differ only in what shaped adds.
inline void causal_softmax_row(float* row, std::size_t len, std::size_t last, float scale) {
    using batch = xsimd::batch<float>;
    constexpr std::size_t width = batch::size;
    const std::size_t n = last + 1;
    float mx = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < n; ++j) mx = std::max(mx, row[j] *= scale);
    const batch max_b(mx);
    batch sum_b(0.f);
    std::size_t j = 0;
    for (; j + width <= n; j += width) {
        const batch e = xsimd::exp(batch::load_unaligned(row + j) - max_b);
        e.store_unaligned(row + j);
        sum_b += e;
    }
    float sum = xsimd::hadd(sum_b);
    for (; j < n; ++j) sum += (row[j] = std::exp(row[j] - mx));
    const batch sum_all(sum);
    for (j = 0; j + width <= n; j += width) (batch::load_unaligned(row + j) / sum_all).store_unaligned(row + j);
    for (; j < n; ++j) row[j] /= sum;
    std::fill(row + n, row + len, 0.f);
}

// The weights and input that the hand-written peers share with shaped's module.
template <class C>
struct raw_setup {
    static constexpr std::size_t B = C::batch::extent, T = C::num_tokens::extent, DIn = C::d_in::extent,
                                 D = C::d_out::extent, H = C::num_heads::extent, hd = D / H;
    typename C::mha mha;
    decltype(shaped::torch::rand<typename C::batch, typename C::num_tokens, typename C::d_in>()) x;
    raw_setup() : mha((shaped::torch::manual_seed(123), 0.0)), x(shaped::torch::rand<typename C::batch,
                                                                                  typename C::num_tokens,
                                                                                  typename C::d_in>()) {
        mha.eval();
    }
    // x W^T for one projection, B·T rows at once (the input's rows and the weight's rows are contiguous).
    void project(const float* w, const float* in, float* out, std::size_t in_features) const {
        sgemm('N', 'T', B * T, D, in_features, in, in_features, w, in_features, out, D);
    }
    void project_qkv(float* q, float* k, float* v) const {
        const float* in = x.storage().data();
        project(mha.W_query.weight.storage().data(), in, q, DIn);
        project(mha.W_key.weight.storage().data(), in, k, DIn);
        project(mha.W_value.weight.storage().data(), in, v, DIn);
    }
    void add_out_bias(float* y) const {
        const float* bo = mha.out_proj.bias->data();
        for (std::size_t r = 0; r < B * T; ++r)
            for (std::size_t c = 0; c < D; ++c) y[r * D + c] += bo[c];
    }
};

// Checks a hand-written peer against shaped, then times it. A peer gives only its attention core,
// `attention(q, k, v, ctx)` on (batch·num_tokens, d_out) row-major buffers; the projections around it
// are the same BLAS calls for both peers.
template <class C, class Attention>
void time_hand_written(benchmark::State& state, const char* name, raw_setup<C>& s, Attention attention) {
    constexpr std::size_t rows = raw_setup<C>::B * raw_setup<C>::T, D = raw_setup<C>::D;
    auto forward = [&] {
        xt::xtensor<float, 2> q({rows, D}), k({rows, D}), v({rows, D}), ctx({rows, D}), y({rows, D});
        s.project_qkv(q.data(), k.data(), v.data());
        attention(q.data(), k.data(), v.data(), ctx.data());
        s.project(s.mha.out_proj.weight.storage().data(), ctx.data(), y.data(), D);
        s.add_out_bias(y.data());
        return y;
    };
    check_against_shaped(name, s, forward);
    for (auto _ : state) {
        auto y = forward();
        benchmark::DoNotOptimize(y.data());
    }
    report(state, C::flops);
}

// The book's forward pass (listing 3.5), step for step as shaped and PyTorch run it, written by hand
// on xtensor storage and BLAS without shaped's types: the abstraction's cost is measured against this.
// Like the book it keeps every head's (num_tokens, num_tokens) scores, then the weights in their place;
// heads are addressed in place through BLAS's leading dimensions, as shaped's strided transposes are.
template <class C>
void hand_written(benchmark::State& state) {
    set_threads(state);
    raw_setup<C> s;
    constexpr std::size_t B = s.B, T = s.T, D = s.D, H = s.H, hd = s.hd;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    time_hand_written(state, "hand-written", s, [&](const float* q, const float* k, const float* v, float* ctx) {
        xt::xtensor<float, 4> scores({B, H, T, T});
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                sgemm('N', 'T', T, T, hd, q + b * T * D + h * hd, D, k + b * T * D + h * hd, D,
                      scores.data() + (b * H + h) * T * T, T);
        for (std::size_t r = 0; r < B * H * T; ++r) causal_softmax_row(scores.data() + r * T, T, r % T, scale);
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                sgemm('N', 'N', T, hd, T, scores.data() + (b * H + h) * T * T, T, v + b * T * D + h * hd, D,
                      ctx + b * T * D + h * hd, D);
    });
}

// A different algorithm, for scale: each head's scores live only while that head is computed (one
// (num_tokens, num_tokens) buffer, reused), as a fused attention kernel would do. Not the book's steps.
template <class C>
void hand_fused(benchmark::State& state) {
    set_threads(state);
    raw_setup<C> s;
    constexpr std::size_t B = s.B, T = s.T, D = s.D, H = s.H, hd = s.hd;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    time_hand_written(state, "fused hand-written", s, [&](const float* q, const float* k, const float* v, float* ctx) {
        xt::xtensor<float, 2> scores({T, T});
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h) {
                const std::size_t off = b * T * D + h * hd;
                sgemm('N', 'T', T, T, hd, q + off, D, k + off, D, scores.data(), T);
                for (std::size_t i = 0; i < T; ++i) causal_softmax_row(scores.data() + i * T, T, i, scale);
                sgemm('N', 'N', T, hd, T, scores.data(), T, v + off, D, ctx + off, D);
            }
    });
}

// shaped's projection alone: `W_query(x)`, an nn::linear over (batch, num_tokens, d_in), at the size
// that sgemm_projection times, so that the two rates compare directly.
template <class C>
void shaped_projection(benchmark::State& state) {
    set_threads(state);
    raw_setup<C> s;
    for (auto _ : state) {
        auto q = s.mha.W_query(s.x);
        benchmark::DoNotOptimize(q.storage().data());
    }
    report(state, 2.0 * s.B * s.T * s.DIn * s.D);
}

// oneDNN's sgemm at the projection size (B·T × DIn times DIn × DOut): the machine's practical rate (twice
// OpenBLAS's Haswell kernels' on an AVX-512 CPU; OpenBLAS is not timed here).
template <class C>
void sgemm_projection(benchmark::State& state) {
    set_threads(state);
    constexpr std::size_t M = C::batch::extent * C::num_tokens::extent, K = C::d_in::extent, N = C::d_out::extent;
    std::vector<float> a(M * K, 0.5f), w(N * K, 0.25f), c(M * N);
    for (auto _ : state) {
        sgemm('N', 'T', M, N, K, a.data(), K, w.data(), K, c.data(), N);
        benchmark::DoNotOptimize(c.data());
    }
    report(state, 2.0 * M * N * K);
}

// nn::linear (with its bias, as GPT-2's layers have) at a GPT-2 small projection size, rows × in × out,
// against oneDNN's sgemm called directly on the same sizes (no bias).
template <std::size_t M, std::size_t K, std::size_t N>
void shaped_linear(benchmark::State& state) {
    set_threads(state);
    struct rows : shaped::axis<"num_tokens", M> {};
    struct in : shaped::axis<"d_in", K> {};
    struct out : shaped::axis<"d_out", N> {};
    shaped::torch::manual_seed(123);
    const shaped::nn::linear<in, out> layer;
    const auto x = shaped::torch::rand<rows, in>();
    for (auto _ : state) {
        auto y = layer(x);
        benchmark::DoNotOptimize(y.data());
    }
    report(state, 2.0 * M * N * K);
}
template <std::size_t M, std::size_t K, std::size_t N>
void onednn_sgemm(benchmark::State& state) {
    set_threads(state);
    std::vector<float> a(M * K, 0.5f), w(N * K, 0.25f), c(M * N);
    for (auto _ : state) {
        sgemm('N', 'T', M, N, K, a.data(), K, w.data(), K, c.data(), N);
        benchmark::DoNotOptimize(c.data());
    }
    report(state, 2.0 * M * N * K);
}
#define SHAPED_BENCH_LINEAR(M, K, N)                                                                            \
    BENCHMARK_TEMPLATE(shaped_linear, M, K, N)->Name("shaped_linear/m" #M "_k" #K "_n" #N)->ArgName("threads") \
        ->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);                                                        \
    BENCHMARK_TEMPLATE(onednn_sgemm, M, K, N)->Name("onednn_sgemm/m" #M "_k" #K "_n" #N)->ArgName("threads")   \
        ->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
// GPT-2 small's projections: q, k, v and out_proj (768 → 768), the three at once (768 → 2304), the
// feed-forward layers (768 → 3072, 3072 → 768), the output head (768 → 50257); 1024 and 8 × 1024 rows,
// and 4 rows (a short prompt).
SHAPED_BENCH_LINEAR(4, 768, 768)
SHAPED_BENCH_LINEAR(1024, 768, 768)
SHAPED_BENCH_LINEAR(1024, 768, 2304)
SHAPED_BENCH_LINEAR(1024, 768, 3072)
SHAPED_BENCH_LINEAR(1024, 3072, 768)
SHAPED_BENCH_LINEAR(1024, 768, 50257)
SHAPED_BENCH_LINEAR(8192, 768, 768)
SHAPED_BENCH_LINEAR(8192, 768, 2304)
SHAPED_BENCH_LINEAR(8192, 768, 3072)
SHAPED_BENCH_LINEAR(8192, 3072, 768)

using seed = config<1, 2, 6, 6, 3>;        // the seed's sizes (d_in = d_out = 6, 3 heads)
using book = config<2, 6, 3, 2, 2>;        // the book's MultiHeadAttention example
using gpt2_b1_t128 = config<1, 128, 768, 768, 12>;
using gpt2_b1_t256 = config<1, 256, 768, 768, 12>;
using gpt2_b1_t1024 = config<1, 1024, 768, 768, 12>;
using gpt2_b8_t128 = config<8, 128, 768, 768, 12>;
using gpt2_b8_t256 = config<8, 256, 768, 768, 12>;
using gpt2_b8_t1024 = config<8, 1024, 768, 768, 12>;

#define SHAPED_BENCH_ALL(NAME)                                                                            \
    BENCHMARK_TEMPLATE(shaped_view_form, NAME)->Name("shaped_view/" #NAME)->ArgName("threads")->Arg(1)->Arg(2) \
        ->Unit(benchmark::kMillisecond);                                                                  \
    BENCHMARK_TEMPLATE(shaped_view_run_time, NAME)->Name("shaped_view_run_time/" #NAME)->ArgName("threads")    \
        ->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);                                                  \
    BENCHMARK_TEMPLATE(shaped_patterns_form, NAME)->Name("shaped_patterns/" #NAME)->ArgName("threads")->Arg(1) \
        ->Arg(2)->Unit(benchmark::kMillisecond);                                                          \
    BENCHMARK_TEMPLATE(shaped_sdpa_form, NAME)->Name("shaped_sdpa/" #NAME)->ArgName("threads")->Arg(1)->Arg(2) \
        ->Unit(benchmark::kMillisecond);                                                                  \
    BENCHMARK_TEMPLATE(shaped_loop_form, NAME)->Name("shaped_loop/" #NAME)->ArgName("threads")->Arg(1)->Arg(2) \
        ->Unit(benchmark::kMillisecond);                                                                  \
    BENCHMARK_TEMPLATE(hand_written, NAME)->Name("hand_written/" #NAME)->ArgName("threads")->Arg(1)->Arg(2)    \
        ->Unit(benchmark::kMillisecond);                                                                  \
    BENCHMARK_TEMPLATE(hand_fused, NAME)->Name("hand_fused/" #NAME)->ArgName("threads")->Arg(1)->Arg(2)        \
        ->Unit(benchmark::kMillisecond);                                                                  \
    BENCHMARK_TEMPLATE(shaped_projection, NAME)->Name("shaped_projection/" #NAME)->ArgName("threads")->Arg(1) \
        ->Arg(2)->Unit(benchmark::kMillisecond);                                                          \
    BENCHMARK_TEMPLATE(sgemm_projection, NAME)->Name("sgemm_projection/" #NAME)->ArgName("threads")->Arg(1)   \
        ->Arg(2)->Unit(benchmark::kMillisecond);

SHAPED_BENCH_ALL(seed)
SHAPED_BENCH_ALL(book)
SHAPED_BENCH_ALL(gpt2_b1_t128)
SHAPED_BENCH_ALL(gpt2_b1_t256)
SHAPED_BENCH_ALL(gpt2_b1_t1024)
SHAPED_BENCH_ALL(gpt2_b8_t128)
SHAPED_BENCH_ALL(gpt2_b8_t256)
SHAPED_BENCH_ALL(gpt2_b8_t1024)

}  // namespace

BENCHMARK_MAIN();
