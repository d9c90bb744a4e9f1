// Greedy generation with OpenAI's GPT-2 124M, loaded from a checkpoint in Hugging Face's layout:
//   gpt2_generate --weights FILE.safetensors --ids 6109,3626,6100,345 --max-new-tokens 10 [--no-cache]
//   gpt2_generate --weights FILE.safetensors --prompt "Every effort moves you" [--vocab DIR] ...
// prints the ids as PyTorch prints `idx` (`tensor([[ 6109,  3626, ...]])`). With --prompt, the text is encoded
// with GPT-2's tokenizer (Hugging Face's tokenizer.json, or encoder.json and vocab.bpe, or vocab.json and
// merges.txt, from --vocab DIR, else from the checkpoint's folder) and printed, then each new token's text as it is generated, then the
// ids. With the KV cache by default (the book's generate_text_simple_cached), with --no-cache the book's
// generate_text_simple. A file that is not such a checkpoint stops the program with its name and what is wrong.
//
// The command line is checked whole before the 500 MB are read: numbers are decimal digits only, ids are below
// vocab_size, the prompt and the new tokens fit context_length (with or without the cache: the uncached loop
// would crop and run on for hours), and --weights names an existing regular file (open(2) of a FIFO blocks until
// a writer appears). Each refusal is one line on stderr naming the flag, its value and the rule; the exit code is
// 2 for a command line wrong as written, 1 for a file that cannot be read as the checkpoint.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cli.hpp"

// [includes]
#include <shaped/io/gpt2_weights.hpp>  // not in shaped.hpp: the loaders and their file mapping
#include <shaped/shaped.hpp>
#include <shaped/text/bpe_tokenizer.hpp>  // not in shaped.hpp: GPT-2's tokenizer (PCRE2, ICU)

namespace nn = shaped::nn;
namespace io = shaped::io;
namespace text = shaped::text;
// [includes]

namespace {

// [axes]
using cfg = nn::gpt2_small;  // GPT_CONFIG_124M with qkv_bias=True, as OpenAI's checkpoint has it
struct max_length : shaped::axis<"max_length", 4096> {};
struct seq : shaped::dynamic_axis<"seq", shaped::at_most<max_length>> {};  // the prompt and what is appended
// [axes]

struct options {
    std::string weights;
    std::vector<std::int64_t> ids;
    std::optional<text::bpe_tokenizer> tokenizer;  // with --prompt
    std::size_t max_new_tokens = 10;
    bool cache = true;
};

constexpr std::size_t vocab_size = cfg::vocab_size::extent;
constexpr std::size_t context_length = cfg::context_length::extent;
constexpr std::string_view usage_text =
    "usage: gpt2_generate --weights FILE.safetensors (--ids 6109,3626,6100,345 | --prompt TEXT [--vocab DIR]) "
    "[--max-new-tokens 10] [--no-cache]";

[[noreturn]] void refuse(int exit_code, const std::string& message) {
    std::cerr << "gpt2_generate: " << message << "\n";
    std::exit(exit_code);
}
[[noreturn]] void usage(const std::string& problem) { refuse(2, problem + "; " + std::string(usage_text)); }

std::vector<std::int64_t> parse_ids(std::string_view text) {
    constexpr std::string_view rule =
        "ids are token ids in decimal digits (no sign, no spaces) separated by single commas, e.g. 6109,3626,6100,345";
    std::vector<std::string_view> fields;
    for (std::size_t from = 0;;) {  // by hand: std::getline drops the empty field after a trailing comma
        const std::size_t comma = text.find(',', from);
        fields.push_back(text.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from));
        if (comma == std::string_view::npos) break;
        from = comma + 1;
    }
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const std::string which = "id " + std::to_string(i + 1) + " of " + std::to_string(fields.size());
        bool too_large = false;
        const auto id = parse_digits(fields[i], too_large);
        if (fields[i].empty()) refuse(2, "--ids " + as_typed(text) + ": " + which + " is empty; " + std::string(rule));
        if (!id && !too_large)
            refuse(2, "--ids " + as_typed(text) + ": " + which + " " + as_typed(fields[i]) + " is not a token id; " +
                          std::string(rule));
        if (!id || *id >= vocab_size)
            refuse(2, "--ids " + as_typed(text) + ": " + which + " " + as_typed(fields[i]) +
                          " is not below vocab_size " + std::to_string(vocab_size) + "; token ids run from 0 to " +
                          std::to_string(vocab_size - 1));
        ids.push_back(static_cast<std::int64_t>(*id));
    }
    if (ids.size() > context_length)
        refuse(2, "--ids " + as_typed(text) + ": " + std::to_string(ids.size()) + " ids; a prompt has at most " +
                      std::to_string(context_length) + " (context_length)");
    return ids;
}

// GPT-2's tokenizer from `dir`: a Hugging Face directory's tokenizer.json when there is one, else
// encoder.json and vocab.bpe (OpenAI's names) or vocab.json and merges.txt (Hugging Face's older ones).
text::bpe_tokenizer load_tokenizer(const std::filesystem::path& dir, const std::string& flag) {
    if (std::filesystem::is_regular_file(dir / "tokenizer.json")) {
        try {
            auto tok = text::bpe_tokenizer::from_tokenizer_json(dir / "tokenizer.json");
            if (tok.n_vocab() != vocab_size)
                refuse(1, (dir / "tokenizer.json").string() + ": " + std::to_string(tok.n_vocab()) +
                              " token ids, not GPT-2's " + std::to_string(vocab_size));
            return tok;
        } catch (const io::file_error& e) {
            refuse(1, e.what());
        }
    }
    for (const auto& [vocab, merges] : {std::pair{"encoder.json", "vocab.bpe"}, std::pair{"vocab.json", "merges.txt"}})
        if (std::filesystem::is_regular_file(dir / vocab) && std::filesystem::is_regular_file(dir / merges)) {
            try {
                return text::bpe_tokenizer::gpt2(dir / vocab, dir / merges);
            } catch (const io::file_error& e) {
                refuse(1, e.what());
            }
        }
    refuse(2, flag + " " + as_typed(dir.string()) +
                  ": no GPT-2 tokenizer there (tokenizer.json, encoder.json and vocab.bpe, or vocab.json and merges.txt); "
                  "give --vocab DIR");
}

// The flags as typed, then each value checked, then the file: all before the model is built or the file opened.
options parse(int argc, char** argv) {
    std::optional<std::string_view> weights, ids, max_new_tokens, prompt, vocab;
    bool no_cache = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view flag = argv[i];
        const auto value = [&](std::optional<std::string_view>& to) {
            if (to) usage(std::string(flag) + " is given twice");
            if (i + 1 >= argc) usage(std::string(flag) + " needs a value");
            to = argv[++i];
        };
        if (flag == "--weights") {
            value(weights);
        } else if (flag == "--ids") {
            value(ids);
        } else if (flag == "--prompt") {
            value(prompt);
        } else if (flag == "--vocab") {
            value(vocab);
        } else if (flag == "--max-new-tokens") {
            value(max_new_tokens);
        } else if (flag == "--no-cache") {
            no_cache = true;
        } else {
            usage("unknown flag " + as_typed(flag));
        }
    }
    if (!weights) usage("--weights is required");
    if (ids && prompt) usage("--ids and --prompt are two prompts; give one");
    if (!ids && !prompt) usage("--ids or --prompt is required");
    if (vocab && !prompt) usage("--vocab is the tokenizer of --prompt");

    options o;
    o.cache = !no_cache;
    if (ids) {
        o.ids = parse_ids(*ids);
    } else {
        const std::filesystem::path dir = vocab ? std::filesystem::path(*vocab)
                                                : std::filesystem::path(*weights).parent_path();
        o.tokenizer = load_tokenizer(dir.empty() ? "." : dir, vocab ? "--vocab" : "--weights' folder");
        try {
            o.ids = o.tokenizer->encode(*prompt);  // <|endoftext|> in a prompt is refused, as tiktoken refuses it
        } catch (const std::invalid_argument& e) {
            refuse(2, "--prompt " + as_typed(*prompt) + ": " + e.what());
        }
        if (o.ids.empty()) refuse(2, "--prompt '': the prompt needs at least one token");
        if (o.ids.size() > context_length)
            refuse(2, "--prompt " + as_typed(*prompt) + ": " + std::to_string(o.ids.size()) +
                          " tokens; a prompt has at most " + std::to_string(context_length) + " (context_length)");
    }
    if (max_new_tokens) {
        bool too_large = false;
        const auto n = parse_digits(*max_new_tokens, too_large);
        if (!n && !too_large)
            refuse(2, "--max-new-tokens " + as_typed(*max_new_tokens) +
                          ": not a number of tokens; write decimal digits only (no sign, no spaces), e.g. 10");
        // Compared with what the prompt leaves, not added to it: the sum could wrap. Checked with and without the
        // cache: generate_text_simple_cached refuses only after the weights are loaded, and generate_text_simple
        // crops to the context and runs on, for hours, until seq's bound of 4096.
        const std::size_t room = context_length - o.ids.size();
        if (!n || *n > room)
            refuse(2, "--max-new-tokens " + as_typed(*max_new_tokens) + ": the prompt's " +
                          std::to_string(o.ids.size()) + " ids and the new tokens must fit context_length " +
                          std::to_string(context_length) + "; at most " + std::to_string(room) +
                          " new tokens after this prompt");
        o.max_new_tokens = static_cast<std::size_t>(*n);
    } else if (o.max_new_tokens > context_length - o.ids.size()) {
        refuse(2, (ids ? "--ids " + as_typed(*ids) : "--prompt " + as_typed(*prompt)) + ": the prompt's " +
                      std::to_string(o.ids.size()) +
                      " ids leave no room for the default " + std::to_string(o.max_new_tokens) +
                      " new tokens in context_length " + std::to_string(context_length) +
                      "; give --max-new-tokens " + std::to_string(context_length - o.ids.size()) + " or fewer");
    }

    o.weights = std::string(*weights);
    std::error_code error;
    const auto status = std::filesystem::status(o.weights, error);  // follows symlinks, opens nothing
    if (status.type() == std::filesystem::file_type::not_found)
        refuse(1, "--weights " + as_typed(o.weights) +
                      ": cannot open: no such file; give an existing .safetensors file");
    if (error) refuse(1, "--weights " + as_typed(o.weights) + ": cannot open: " + error.message());
    if (status.type() != std::filesystem::file_type::regular) {
        using enum std::filesystem::file_type;
        const auto type = status.type();
        const std::string what = type == directory   ? "a directory"
                                 : type == fifo      ? "a FIFO"
                                 : type == socket    ? "a socket"
                                 : type == block     ? "a block device"
                                 : type == character ? "a character device"
                                                     : "a special file";
        refuse(1, "--weights " + as_typed(o.weights) + ": " + what +
                      ", not a regular file; give the .safetensors file itself (reading a FIFO or device could block)");
    }
    return o;
}

// --prompt: the prompt's text, then each new token's as it is generated (a character split between tokens
// printed once whole), then the ids.
int generate_printing_text(nn::gpt_model<cfg>& model, const options& o) {
    // [prompt]
    const auto idx = shaped::tensor<std::int64_t, cfg::batch, seq>::from_buffer(o.ids, 1, o.ids.size());
    text::utf8_stream stream;
    std::cout << o.tokenizer->decode(o.ids) << std::flush;
    const auto print = [&](std::span<const std::int64_t> next) {  // the new token of each sequence (batch 1)
        std::cout << stream.push(o.tokenizer->token_bytes(next[0])) << std::flush;
    };
    const auto out = o.cache ? nn::generate_text_simple_cached(model, idx, o.max_new_tokens, print)
                             : nn::generate_text_simple(model, idx, o.max_new_tokens, cfg::context_length::extent);
    if (!o.cache)  // the book's uncached loop takes no callback: the new tokens' text at the end
        for (std::size_t i = o.ids.size(); i < out.shape.extent(1); ++i) print(std::span(&out.at(0, i), 1));
    std::cout << stream.finish() << "\n" << out << "\n";
    // [prompt]
    return 0;
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
        if (o.tokenizer) return generate_printing_text(model, o);
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
