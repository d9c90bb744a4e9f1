// The peak memory of loading Qwen3 0.6B (nn::qwen3_0_6b) from a Hugging Face folder: a fresh process builds
// the model without drawing its weights (nn::skip_init) and loads an F32 checkpoint into it, as
// examples/generate does; its peak resident memory (VmHWM, the mapped file's pages included) is printed
// against the bytes of the model's weights in memory. An F32 file is as large as the weights it holds, so a
// loader that kept the file's pages while it filled the model would show 2.0 here.
// Usage: load_bench DIR  (writes DIR/config.json, the published one, and DIR/model.safetensors, 2.4 GB, with
// values of no meaning, unless they are there; then loads it in a child process). Figures are printed, never
// asserted.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <shaped/io/llama_weights.hpp>
#include <shaped/io/safetensors.hpp>
#include <shaped/nn/llama_model.hpp>
#include <shaped/nn/parameters.hpp>

namespace {

namespace fs = std::filesystem;
namespace nn = shaped::nn;
namespace io = shaped::io;
using model_t = nn::qwen3_model<nn::qwen3_0_6b>;

// A line of /proc/self/status in kB ("VmHWM", "VmRSS").
long status_kb(const std::string& field) {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
    return -1;
}

void write_checkpoint(const fs::path& dir) {
    fs::create_directories(dir);
    fs::copy_file(fs::path(SHAPED_SOURCE_DIR) / "tests/fuzz/corpus/hf_config/qwen3_0_6b.json", dir / "config.json",
                  fs::copy_options::overwrite_existing);
    auto model = std::make_unique<model_t>(nn::skip_init);
    std::vector<io::safetensors_tensor> tensors;
    std::size_t i = 0;
    nn::for_each_parameter(*model, "", [&](const std::string& name, auto& t, nn::entry_kind) {
        for (std::size_t j = 0; j < t.numel(); ++j) t.data()[j] = static_cast<float>((i + j) % 17) * 0.01f;
        ++i;
        const auto sizes = t.shape.sizes();
        tensors.push_back({io::detail::llama_hf_key(name), std::vector<std::size_t>(sizes.begin(), sizes.end()),
                           std::span<const float>(t.data(), t.numel())});
    });
    io::save_safetensors((dir / "model.safetensors").string(), tensors);
}

int load(const fs::path& dir) {
    const long before = status_kb("VmHWM");
    const auto start = std::chrono::steady_clock::now();
    auto model = std::make_unique<model_t>(nn::skip_init);
    io::load_llama_weights(*model, io::hf_checkpoint(dir));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double weights_mb = 4.0 * static_cast<double>(model->parameter_count()) / 1e6;
    const double peak_mb = static_cast<double>(status_kb("VmHWM")) * 1024 / 1e6;
    const double file_mb = static_cast<double>(fs::file_size(dir / "model.safetensors")) / 1e6;
    std::printf("qwen3_0_6b/load_f32: weights %.0f MB in memory, file %.0f MB; peak resident %.0f MB (%.0f MB before "
                "the model) = %.2f x the weights; %.1f s\n",
                weights_mb, file_mb, peak_mb, static_cast<double>(before) * 1024 / 1e6, peak_mb / weights_mb, seconds);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "--load") return load(argv[2]);
    if (argc != 2) {
        std::fprintf(stderr, "usage: load_bench DIR\n");
        return 2;
    }
    const fs::path dir = argv[1];
    if (!fs::exists(dir / "model.safetensors") || !fs::exists(dir / "config.json")) write_checkpoint(dir);
    // The load in a fresh process, so that its peak is the load's alone.
    const pid_t child = ::fork();
    if (child == 0) {
        ::execl("/proc/self/exe", argv[0], "--load", dir.c_str(), static_cast<char*>(nullptr));
        std::_Exit(127);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
