// The book's MultiHeadAttention (listing 3.5) in LibTorch's C++ API, timed with Google Benchmark at the
// sizes of mha_bench.cpp: PyTorch's own CPU kernels as the peer. Causal, eval mode, no autograd.
#include <benchmark/benchmark.h>

#include <torch/torch.h>

#include "libtorch_book.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

// LibTorch's matrix products run on OpenBLAS's own threads, which torch::set_num_threads leaves alone:
// without this, a "1 thread" run uses every core for its products.
extern "C" void openblas_set_num_threads(int);

namespace {


// What PyTorch's book class gives at the seed's sizes (seed 123, module first, then x = rand(1, 2, 6);
// from tests/golden/book/chapter3.py): this peer must compute the same thing before it is timed.
constexpr float pytorch_seed_output[12] = {
    0x1.1fc3f0p-4f,  -0x1.530a4cp-3f, -0x1.78d2a0p-5f, 0x1.1e289ep-3f,  -0x1.d12530p-2f, -0x1.3ba77cp-2f,
    0x1.4410f4p-5f,  -0x1.5ff50ep-3f, -0x1.df3c90p-5f, 0x1.188050p-3f,  -0x1.dc7908p-2f, -0x1.3f121ap-2f};
static_assert(sizeof(pytorch_seed_output) / sizeof(float) == 1 * 2 * 6, "the seed's output is (1, 2, 6)");

void libtorch_mha(benchmark::State& state, int64_t b, int64_t t, int64_t d_in, int64_t d_out, int64_t heads) {
    torch::set_num_threads(static_cast<int>(state.range(0)));
    openblas_set_num_threads(static_cast<int>(state.range(0)));
    torch::NoGradGuard no_grad;
    torch::manual_seed(123);
    book::MultiHeadAttention mha(d_in, d_out, t, heads);
    mha->eval();
    auto x = torch::rand({b, t, d_in});
    if (b == 1 && t == 2 && d_in == 6 && d_out == 6 && heads == 3) {
        const auto y = mha->forward(x).contiguous();
        for (int i = 0; i < 12; ++i)
            if (std::abs(y.data_ptr<float>()[i] - pytorch_seed_output[i]) > 1e-6f) {
                // A wrong peer makes every figure meaningless: stop the run (and fail the test that runs it).
                std::fprintf(stderr, "the LibTorch module differs from PyTorch's book class at the seed's sizes\n");
                std::exit(1);
            }
    }
    for (auto _ : state) {
        auto y = mha->forward(x);
        benchmark::DoNotOptimize(y.data_ptr<float>());
    }
    const double flops = 2.0 * (3.0 * b * t * d_in * d_out + 1.0 * b * t * d_out * d_out + 2.0 * b * t * t * d_out);
    state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

#define SHAPED_LIBTORCH(NAME, B, T, DIN, DOUT, H)                                                       \
    BENCHMARK_CAPTURE(libtorch_mha, NAME, B, T, DIN, DOUT, H)->Name("libtorch/" #NAME)->ArgName("threads") \
        ->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

SHAPED_LIBTORCH(seed, 1, 2, 6, 6, 3)
SHAPED_LIBTORCH(book, 2, 6, 3, 2, 2)
SHAPED_LIBTORCH(gpt2_b1_t128, 1, 128, 768, 768, 12)
SHAPED_LIBTORCH(gpt2_b1_t256, 1, 256, 768, 768, 12)
SHAPED_LIBTORCH(gpt2_b1_t1024, 1, 1024, 768, 768, 12)
SHAPED_LIBTORCH(gpt2_b8_t128, 8, 128, 768, 768, 12)
SHAPED_LIBTORCH(gpt2_b8_t256, 8, 256, 768, 768, 12)
SHAPED_LIBTORCH(gpt2_b8_t1024, 8, 1024, 768, 768, 12)

}  // namespace

BENCHMARK_MAIN();
