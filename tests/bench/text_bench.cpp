// GPT-2's tokenizer on one thread: text::bpe_tokenizer encoding and decoding the-verdict.txt repeated to 1 MB
// (the book's text; tiktoken's benchmark text is likewise English prose), in MB of text per second
// (`bytes_per_second`). tests/bench/tiktoken/compare.py runs it in turns with tiktoken (npm) on the same text.
#include <benchmark/benchmark.h>

#include <fstream>
#include <iterator>
#include <string>

#include <shaped/text/bpe_tokenizer.hpp>

namespace {

const std::string data_dir = SHAPED_DATA_DIR;

const shaped::text::bpe_tokenizer& tokenizer() {
    static const auto tok = shaped::text::bpe_tokenizer::gpt2(data_dir + "/encoder.json", data_dir + "/vocab.bpe");
    return tok;
}

std::string text(std::size_t copies) {
    std::ifstream in(data_dir + "/the-verdict.txt", std::ios::binary);
    const std::string one{std::istreambuf_iterator<char>(in), {}};
    std::string all;
    for (std::size_t i = 0; i < copies; ++i) all += one;
    return all;
}

void shaped_bpe_encode(benchmark::State& state) {
    const auto& tok = tokenizer();
    const std::string t = text(static_cast<std::size_t>(state.range(0)));
    std::size_t n = 0;
    for (auto _ : state) {
        const auto ids = tok.encode_ordinary(t);
        n = ids.size();
        benchmark::DoNotOptimize(ids.data());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * t.size()));
    state.counters["tokens"] = static_cast<double>(n);
}
BENCHMARK(shaped_bpe_encode)->Name("shaped_bpe_encode/verdict")->Arg(1)->Arg(50)->Unit(benchmark::kMillisecond);

void shaped_bpe_decode(benchmark::State& state) {
    const auto& tok = tokenizer();
    const std::string t = text(static_cast<std::size_t>(state.range(0)));
    const auto ids = tok.encode_ordinary(t);
    for (auto _ : state) {
        const auto back = tok.decode(ids);
        benchmark::DoNotOptimize(back.data());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * t.size()));
}
BENCHMARK(shaped_bpe_decode)->Name("shaped_bpe_decode/verdict")->Arg(1)->Arg(50)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
