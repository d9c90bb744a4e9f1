// Generation with a Llama 3, Qwen3 or Gemma 3 checkpoint in Hugging Face's layout:
//   generate --model DIR (--ids 1,2,3,4 | --prompt TEXT) [--max-new-tokens 10] [--no-cache] [--bf16]
//            [--temperature T] [--top-k K] [--seed S]
// DIR holds config.json and the weights (model.safetensors, or shards and model.safetensors.index.json). The
// program picks the compiled configuration that config.json matches field by field (Llama 3.2 1B, Qwen3 0.6B,
// Gemma 3 270M, and the test suite's small ones) and refuses any other, listing what it supports. It prints the ids as
// PyTorch prints `idx` (and with --prompt, which encodes TEXT with DIR's tokenizer.json as it is, no BOS
// added, the text first); on stderr, the tokens per second and the KV caches' memory.
// Greedy by default; with --temperature above 0, the book's sampling (and --top-k), drawn from the random
// stream that --seed (default 123) starts, as torch.manual_seed does. With the KV caches by default
// (nn::generate_cached), with --no-cache the book's generate over the whole sequence at every step. With
// --bf16 the weights are kept in BF16 (a BF16 checkpoint's as stored, others rounded): half the memory, and
// about twice the tokens per second where decoding waits on memory.
//
// The command line is checked before the weights are read; each refusal is one line on stderr naming the flag,
// its value and the rule. Exit code 2 for a command line wrong as written, 1 for a folder that cannot be read
// as a supported checkpoint.
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "cli.hpp"

// [includes]
#include <shaped/io/gemma_weights.hpp>
#include <shaped/io/hf_checkpoint.hpp>  // not in shaped.hpp: the loaders and their file mapping
#include <shaped/io/llama_weights.hpp>
#include <shaped/nn/gemma_model.hpp>    // not in shaped.hpp: Gemma 3
#include <shaped/nn/generate.hpp>
#include <shaped/nn/llama_model.hpp>    // not in shaped.hpp: Llama 3 and Qwen3
#include <shaped/shaped.hpp>
#include <shaped/text/bpe_tokenizer.hpp>  // not in shaped.hpp: the tokenizer (PCRE2, ICU)

namespace nn = shaped::nn;
namespace io = shaped::io;
namespace text = shaped::text;
// [includes]

namespace {

// The test suite's small checkpoints (tests/golden/llama/, gemma/): 2 to 4 layers of width 32, 50 token ids.
template <bool Tied, std::size_t HeadDim, std::size_t Layers, bool Qwen>
struct tiny {
    struct vocab_size : shaped::axis<"vocab_size", 50> {};
    struct context_length : shaped::axis<"context_length", 24> {};
    struct emb_dim : shaped::axis<"emb_dim", 32> {};
    struct num_kv_heads : shaped::axis<"num_kv_heads", 2> {};
    struct group_size : shaped::axis<"group_size", 2> {};
    struct num_heads : shaped::product<"num_heads", num_kv_heads, group_size> {};
    struct head_dim : shaped::axis<"head_dim", HeadDim> {};
    struct hidden_dim : shaped::axis<"hidden_dim", 48> {};
    struct batch : shaped::dynamic_axis<"batch"> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
    static constexpr std::size_t n_layers = Layers;
    static constexpr double rope_theta = Qwen ? 1000000.0 : 500000.0;
    static constexpr std::optional<nn::llama3_rope_scaling> rope_scaling =
        Qwen ? std::nullopt : std::optional(nn::llama3_rope_scaling{8.0f, 1.0f, 4.0f, 8.0f});
    static constexpr float rms_norm_eps = Qwen ? 1e-6f : 1e-5f;
    static constexpr bool tie_word_embeddings = Tied;
    static constexpr bool qk_norm = Qwen;
};

// A small Gemma 3: local layers within a window of `Window`, every `Pattern`-th layer global.
template <std::size_t KvHeads, std::size_t HeadDim, std::size_t Window, std::size_t Layers, std::size_t Pattern,
          std::size_t QueryPreAttnScalar, bool Tied>
struct tiny_gemma {
    struct vocab_size : shaped::axis<"vocab_size", 50> {};
    struct context_length : shaped::axis<"context_length", 24> {};
    struct emb_dim : shaped::axis<"emb_dim", 32> {};
    struct num_kv_heads : shaped::axis<"num_kv_heads", KvHeads> {};
    struct group_size : shaped::axis<"group_size", 4 / KvHeads> {};
    struct num_heads : shaped::product<"num_heads", num_kv_heads, group_size> {};
    struct head_dim : shaped::axis<"head_dim", HeadDim> {};
    struct hidden_dim : shaped::axis<"hidden_dim", 48> {};
    struct sliding_window : shaped::axis<"sliding_window", Window> {};
    struct batch : shaped::dynamic_axis<"batch"> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
    static constexpr std::size_t n_layers = Layers;
    static constexpr std::array<nn::layer_type, Layers> layer_types = nn::gemma3_layer_types<Layers, Pattern>();
    static constexpr double rope_theta = 1000000.0;
    static constexpr double rope_local_base_freq = 10000.0;
    static constexpr float rms_norm_eps = 1e-6f;
    static constexpr double query_pre_attn_scalar = QueryPreAttnScalar;
    static constexpr bool tie_word_embeddings = Tied;
};

// [configs]
// The configurations this program is compiled for, and their names.
using configs = std::tuple<nn::llama32_1b, nn::qwen3_0_6b, nn::gemma3_270m, tiny<true, 8, 2, false>,
                           tiny<false, 12, 3, false>, tiny<true, 16, 2, true>, tiny_gemma<2, 16, 4, 4, 3, 24, true>,
                           tiny_gemma<1, 12, 3, 3, 2, 12, false>>;
constexpr const char* config_names[] = {"llama32_1b (Llama 3.2 1B)", "qwen3_0_6b (Qwen3 0.6B)",
                                        "gemma3_270m (Gemma 3 270M)", "the tests' tiny Llama",
                                        "the tests' tiny untied Llama", "the tests' tiny Qwen3",
                                        "the tests' tiny Gemma 3", "the tests' tiny untied Gemma 3"};

// Each family's model type and loader, chosen by the configuration's concept.
template <class Config>
struct family;
template <nn::LlamaConfig Config>
struct family<Config> {
    using model = nn::llama_model<Config>;
    static void load(model& m, const io::hf_checkpoint& ck) { io::load_llama_weights(m, ck); }
    static auto problems(const io::hf_checkpoint& ck) { return io::detail::llama_config_problems<Config>(ck.config()); }
};
template <nn::GemmaConfig Config>
struct family<Config> {
    using model = nn::gemma_model<Config>;
    static void load(model& m, const io::hf_checkpoint& ck) { io::load_gemma_weights(m, ck); }
    static auto problems(const io::hf_checkpoint& ck) { return io::detail::gemma_config_problems<Config>(ck.config()); }
};
// [configs]

// The bytes every block's cache holds (a local Gemma layer's: its window).
template <class Config>
std::size_t cache_bytes(const nn::llama_model<Config>& model) {
    std::size_t n = 0;
    for (const auto& block : model.trf_blocks) n += block.att.cache.capacity_bytes();
    return n;
}
template <class Config>
std::size_t cache_bytes(const nn::gemma_model<Config>& model) {
    return std::apply([](const auto&... block) { return (std::size_t{0} + ... + block.att.cache.capacity_bytes()); },
                      model.blocks);
}

// The bytes the model's parameters take (the matrices' element type times their count, the norms' floats).
template <class Model>
std::size_t weight_bytes(Model& model) {
    std::size_t n = 0;
    nn::for_each_parameter(model, "", [&](const std::string&, const auto& t, nn::entry_kind) {
        n += t.numel() * sizeof(typename std::remove_cvref_t<decltype(t)>::value_type);
    });
    return n;
}

// [bf16]
// The same configuration with its weights kept in BF16 (--bf16).
template <class Config>
struct kept_in_bf16 : Config {
    using weight_type = shaped::bfloat16;
};
// [bf16]

struct max_length : shaped::axis<"max_length", 262144> {};
struct seq : shaped::dynamic_axis<"seq", shaped::at_most<max_length>> {};  // the prompt and what is appended

struct options {
    std::filesystem::path model;
    std::optional<std::string> ids_text, prompt;
    std::size_t max_new_tokens = 10;
    bool cache = true;
    bool bf16 = false;
    float temperature = 0.0f;
    std::optional<std::size_t> top_k;
    std::uint64_t seed = 123;
};

constexpr std::string_view usage_text =
    "usage: generate --model DIR (--ids 1,2,3,4 | --prompt TEXT) [--max-new-tokens 10] [--no-cache] [--bf16] "
    "[--temperature T] [--top-k K] [--seed S]";

[[noreturn]] void refuse(int exit_code, const std::string& message) {
    std::cerr << "generate: " << message << "\n";
    std::exit(exit_code);
}
[[noreturn]] void usage(const std::string& problem) { refuse(2, problem + "; " + std::string(usage_text)); }

std::size_t count(std::string_view flag, std::string_view value) {
    bool too_large = false;
    const auto n = parse_digits(value, too_large);
    if (!n) refuse(2, std::string(flag) + " " + as_typed(value) + ": write decimal digits only (no sign, no spaces)");
    return static_cast<std::size_t>(*n);
}

options parse(int argc, char** argv) {
    options o;
    std::optional<std::string_view> model, ids, prompt, max_new, temperature, top_k, seed;
    for (int i = 1; i < argc; ++i) {
        const std::string_view flag = argv[i];
        const auto value = [&](std::optional<std::string_view>& to) {
            if (to) usage(std::string(flag) + " is given twice");
            if (i + 1 >= argc) usage(std::string(flag) + " needs a value");
            to = argv[++i];
        };
        if (flag == "--model") value(model);
        else if (flag == "--ids") value(ids);
        else if (flag == "--prompt") value(prompt);
        else if (flag == "--max-new-tokens") value(max_new);
        else if (flag == "--temperature") value(temperature);
        else if (flag == "--top-k") value(top_k);
        else if (flag == "--seed") value(seed);
        else if (flag == "--no-cache") o.cache = false;
        else if (flag == "--bf16") o.bf16 = true;
        else usage("unknown flag " + as_typed(flag));
    }
    if (!model) usage("--model is required");
    if (ids && prompt) usage("--ids and --prompt are two prompts; give one");
    if (!ids && !prompt) usage("--ids or --prompt is required");
    o.model = std::string(*model);
    if (ids) o.ids_text = std::string(*ids);
    if (prompt) o.prompt = std::string(*prompt);
    if (max_new) o.max_new_tokens = count("--max-new-tokens", *max_new);
    if (top_k) o.top_k = count("--top-k", *top_k);
    if (seed) o.seed = count("--seed", *seed);
    if (temperature) {
        const std::string t(*temperature);
        char* end = nullptr;
        const float v = std::strtof(t.c_str(), &end);
        if (t.empty() || end != t.c_str() + t.size() || !(v >= 0.0f) || v > 1e6f)
            refuse(2, "--temperature " + as_typed(t) + ": a number from 0 (greedy) to 1e6, e.g. 1.4");
        o.temperature = v;
    }
    if (o.top_k && o.temperature == 0.0f) usage("--top-k filters the sampling of --temperature above 0");
    if (!std::filesystem::is_directory(o.model))
        refuse(1, "--model " + as_typed(o.model.string()) + ": not a folder; give a folder with config.json and the weights");
    return o;
}

// The prompt's ids: --ids checked against the vocabulary, or --prompt encoded with the folder's tokenizer.json.
std::vector<std::int64_t> prompt_ids(const options& o, std::size_t vocab, std::optional<text::bpe_tokenizer>& tok) {
    std::vector<std::int64_t> ids;
    if (o.prompt) {
        try {
            tok = text::bpe_tokenizer::from_tokenizer_json(o.model / "tokenizer.json");
            ids = tok->encode(*o.prompt);
            for (const auto id : ids)
                if (id < 0 || static_cast<std::size_t>(id) >= vocab)
                    refuse(2, "--prompt " + as_typed(*o.prompt) + ": tokenizer.json encodes it to id " + std::to_string(id) +
                                  ", outside the model's vocab_size " + std::to_string(vocab) +
                                  " (the folder's tokenizer.json and config.json disagree)");
        } catch (const io::file_error& e) {
            refuse(1, e.what());
        } catch (const std::invalid_argument& e) {
            refuse(2, "--prompt " + as_typed(*o.prompt) + ": " + e.what());
        }
    } else {
        const std::string& text = *o.ids_text;
        for (std::size_t from = 0;;) {
            const std::size_t comma = text.find(',', from);
            const std::string_view field = std::string_view(text).substr(from, comma == std::string::npos ? std::string::npos : comma - from);
            bool too_large = false;
            const auto id = parse_digits(field, too_large);
            if (!id || *id >= vocab)
                refuse(2, "--ids " + as_typed(text) + ": " + as_typed(field) + " is not a token id below vocab_size " +
                              std::to_string(vocab) + " (ids in decimal digits, separated by single commas)");
            ids.push_back(static_cast<std::int64_t>(*id));
            if (comma == std::string::npos) break;
            from = comma + 1;
        }
    }
    if (ids.empty()) refuse(2, "--prompt '': the prompt needs at least one token");
    return ids;
}

template <class Config>
int run(const io::hf_checkpoint& checkpoint, const options& o, const char* name);

// The configuration config.json matched, run with float weights or, with --bf16, BF16 ones.
template <class Config>
int run_matched(const io::hf_checkpoint& checkpoint, const options& o, const char* name) {
    return o.bf16 ? run<kept_in_bf16<Config>>(checkpoint, o, name) : run<Config>(checkpoint, o, name);
}

template <class Config>
int run(const io::hf_checkpoint& checkpoint, const options& o, const char* name) {
    std::optional<text::bpe_tokenizer> tokenizer;
    const auto ids = prompt_ids(o, Config::vocab_size::extent, tokenizer);
    constexpr std::size_t context = Config::context_length::extent;
    if (ids.size() > context || o.max_new_tokens > context - ids.size())
        refuse(2, "the prompt's " + std::to_string(ids.size()) + " ids and --max-new-tokens " +
                      std::to_string(o.max_new_tokens) + " must fit context_length " + std::to_string(context));
    if (o.top_k && *o.top_k > Config::vocab_size::extent)
        refuse(2, "--top-k " + std::to_string(*o.top_k) + ": at most vocab_size " + std::to_string(Config::vocab_size::extent));
    std::cerr << "generate: " << name << (std::is_same_v<nn::weight_type_of<Config>, float> ? "" : ", BF16 weights")
              << ", from " << checkpoint.directory().string() << "\n";
    // [generate]
    typename family<Config>::model model(nn::skip_init);  // no random draws: every weight comes from the folder
    family<Config>::load(model, checkpoint);
    const auto idx = shaped::tensor<std::int64_t, typename Config::batch, seq>::from_buffer(ids, 1, ids.size());
    shaped::torch::manual_seed(o.seed);
    const auto start = std::chrono::steady_clock::now();
    const auto out = o.cache ? nn::generate_cached(model, idx, o.max_new_tokens, o.temperature, o.top_k)
                             : nn::generate(model, idx, o.max_new_tokens, context, o.temperature, o.top_k);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // [generate]
    if (tokenizer) std::cout << tokenizer->decode(std::vector<std::int64_t>(out.data(), out.data() + out.numel())) << "\n";
    std::cout << out << "\n";
    std::cerr << "generate: " << out.shape.extent(1) - ids.size() << " new tokens in " << seconds << " s, "
              << (out.shape.extent(1) - ids.size()) / seconds << " tokens/s"
              << ", weights " << (weight_bytes(model) >> 10) << " KB"
              << (o.cache ? ", KV caches " + std::to_string(cache_bytes(model) >> 10) + " KB" : std::string(", no cache")) << "\n";
    return 0;
}

// The first configuration that config.json matches, run; or a refusal that lists them all, with how the
// closest one differs.
template <std::size_t I = 0>
int pick(const io::hf_checkpoint& checkpoint, const options& o, std::string closest = {}, std::size_t fewest = ~std::size_t{0}) {
    if constexpr (I == std::tuple_size_v<configs>) {
        std::string names;
        for (const char* n : config_names) names += (names.empty() ? "" : ", ") + std::string(n);
        refuse(1, (checkpoint.directory() / "config.json").string() +
                      " matches none of the configurations this program is compiled for (" + names +
                      "); the closest, " + closest);
    } else {
        using config = std::tuple_element_t<I, configs>;
        const auto problems = family<config>::problems(checkpoint);
        if (problems.empty()) return run_matched<config>(checkpoint, o, config_names[I]);
        if (problems.size() < fewest) {
            closest = std::string(config_names[I]) + ", differs: " + problems.front();
            for (std::size_t i = 1; i < problems.size(); ++i) closest += "; " + problems[i];
            fewest = problems.size();
        }
        return pick<I + 1>(checkpoint, o, std::move(closest), fewest);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    try {
        const io::hf_checkpoint checkpoint(o.model);
        return pick(checkpoint, o);
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
}
