// Greedy generation with OpenAI's GPT-2 124M, loaded from a checkpoint in Hugging Face's layout:
//   gpt2_generate --weights FILE.safetensors --ids 6109,3626,6100,345 --max-new-tokens 10 [--no-cache]
// prints the ids as PyTorch prints `idx` (`tensor([[ 6109,  3626, ...]])`). With the KV cache by default (the
// book's generate_text_simple_cached), with --no-cache the book's generate_text_simple. A file that is not
// such a checkpoint stops the program with its name and what is wrong.
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <shaped/io/gpt2_weights.hpp>
#include <shaped/shaped.hpp>

namespace nn = shaped::nn;
namespace io = shaped::io;

namespace {

// [axes]
using cfg = nn::gpt2_small;  // GPT_CONFIG_124M with qkv_bias=True, as OpenAI's checkpoint has it
struct max_length : shaped::axis<"max_length", 4096> {};
struct seq : shaped::dynamic_axis<"seq", shaped::at_most<max_length>> {};  // the prompt and what is appended
// [axes]

struct options {
    std::string weights;
    std::vector<std::int64_t> ids;
    std::size_t max_new_tokens = 10;
    bool cache = true;
};

[[noreturn]] void usage(const std::string& problem) {
    std::cerr << "gpt2_generate: " << problem << "\n"
              << "usage: gpt2_generate --weights FILE.safetensors --ids 6109,3626,6100,345 --max-new-tokens 10 "
                 "[--no-cache]\n";
    std::exit(2);
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(std::string(a) + " needs a value");
            return argv[++i];
        };
        if (a == "--weights") {
            o.weights = value();
        } else if (a == "--ids") {
            std::stringstream s(value());
            for (std::string id; std::getline(s, id, ',');) {
                std::size_t used = 0;
                long long v = -1;
                try {
                    v = std::stoll(id, &used);
                } catch (const std::exception&) {
                }
                if (used != id.size() || v < 0) usage("not a token id: '" + id + "'");
                o.ids.push_back(v);
            }
        } else if (a == "--max-new-tokens") {
            const std::string v = value();
            std::size_t used = 0;
            try {
                o.max_new_tokens = std::stoul(v, &used);
            } catch (const std::exception&) {
            }
            if (used != v.size() || v.empty() || v[0] == '-') usage("not a number of tokens: '" + v + "'");
        } else if (a == "--no-cache") {
            o.cache = false;
        } else {
            usage("unknown argument '" + std::string(a) + "'");
        }
    }
    if (o.weights.empty()) usage("--weights is required");
    if (o.ids.empty()) usage("--ids is required");
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    try {
        // [load]
        nn::gpt_model<cfg> model(nn::skip_init);  // no random draws: every weight comes from the file
        io::load_gpt2_weights(model, io::safetensors_file(o.weights));
        model.eval();
        // [load]
        // [generate]
        const auto idx = shaped::tensor<std::int64_t, cfg::batch, seq>::from_buffer(o.ids, 1, o.ids.size());
        const auto out = o.cache ? nn::generate_text_simple_cached(model, idx, o.max_new_tokens)
                                 : nn::generate_text_simple(model, idx, o.max_new_tokens, cfg::context_length::extent);
        std::cout << out << "\n";
        // [generate]
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
}
