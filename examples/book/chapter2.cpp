// Chapter 2 of "Build a Large Language Model (From Scratch)" from GPT-2's tokenizer on, run as the chapter
// runs it: the-verdict.txt tokenized, input-target pairs, the sliding-window dataset and its data loader
// (in order, and shuffled as PyTorch shuffles under torch.manual_seed), token and position embeddings. Prints
// what tests/golden/book/chapter2.py prints with PyTorch.
// Usage: book_chapter2 DATA_DIR   (the folder of the-verdict.txt, encoder.json and vocab.bpe: tests/data)
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

// [includes]
#include <shaped/shaped.hpp>
#include <shaped/text/bpe_tokenizer.hpp>
#include <shaped/text/data_loader.hpp>

namespace torch = shaped::torch;
namespace nn = shaped::nn;
namespace text = shaped::text;
// [includes]

// [axes]
struct context_length : shaped::axis<"context_length", 1024> {};
struct batch : shaped::dynamic_axis<"batch"> {};
struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
struct vocab_size : shaped::axis<"vocab_size", 50257> {};
struct output_dim : shaped::axis<"output_dim", 256> {};
// [axes]

// Python's print of a list of ints: [290, 4920, 2241, 287].
std::string py_list(const std::vector<std::int64_t>& ids) {
    std::string s = "[";
    for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
    return s + "]";
}

// Python's len(text): code points, not bytes.
std::size_t code_points(const std::string& s) {
    std::size_t n = 0;
    for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

int main(int argc, char** argv) {
    const std::filesystem::path data = argc > 1 ? argv[1] : "tests/data";
    std::ifstream file(data / "the-verdict.txt", std::ios::binary);
    const std::string raw_text{std::istreambuf_iterator<char>(file), {}};
    if (raw_text.empty()) {
        std::cerr << "book_chapter2: cannot read " << (data / "the-verdict.txt") << "\n";
        return 1;
    }
    // [tokenize]
    auto tokenizer = text::bpe_tokenizer::gpt2(data / "encoder.json", data / "vocab.bpe");
    std::cout << "Total number of character: " << code_points(raw_text) << "\n";
    std::cout << raw_text.substr(0, 99) << "\n";

    const std::string sentence = "Hello, do you like tea? <|endoftext|> In the sunlit terracesof someunknownPlace.";
    const auto integers = tokenizer.encode(sentence, {"<|endoftext|>"});
    std::cout << py_list(integers) << "\n";
    std::cout << tokenizer.decode(integers) << "\n";
    // [tokenize]

    // [pairs]
    const auto enc_text = tokenizer.encode(raw_text);
    std::cout << enc_text.size() << "\n";
    const std::vector<std::int64_t> enc_sample(enc_text.begin() + 50, enc_text.end());
    const std::size_t context_size = 4;
    std::cout << "x: " << py_list({enc_sample.begin(), enc_sample.begin() + 4}) << "\n";
    std::cout << "y:      " << py_list({enc_sample.begin() + 1, enc_sample.begin() + 5}) << "\n";
    for (std::size_t i = 1; i <= context_size; ++i)
        std::cout << py_list({enc_sample.begin(), enc_sample.begin() + i}) << " ----> " << enc_sample[i] << "\n";
    for (std::size_t i = 1; i <= context_size; ++i)
        std::cout << tokenizer.decode(std::span(enc_sample).first(i)) << " ----> "
                  << tokenizer.decode(std::span(enc_sample).subspan(i, 1)) << "\n";
    // [pairs]

    // [loader]
    // create_dataloader_v1(raw_text, batch_size=1, max_length=4, stride=1, shuffle=False)
    auto dataloader = text::create_dataloader_v1<batch, num_tokens>(raw_text, tokenizer, 1, 4, 1, false);
    auto data_iter = dataloader.begin();
    auto first_batch = *data_iter;
    std::cout << "[" << first_batch.inputs << ", " << first_batch.targets << "]\n";
    auto second_batch = *++data_iter;
    std::cout << "[" << second_batch.inputs << ", " << second_batch.targets << "]\n";

    auto loader8 = text::create_dataloader_v1<batch, num_tokens>(raw_text, tokenizer, 8, 4, 4, false);
    auto [inputs, targets] = *loader8.begin();  // (batch, num_tokens): 8 x 4
    std::cout << "Inputs:\n " << inputs << "\n";
    std::cout << "\nTargets:\n " << targets << "\n";
    // [loader]

    // [shuffled]
    torch::manual_seed(123);
    auto shuffled = text::create_dataloader_v1<batch, num_tokens>(raw_text, tokenizer, 8, 4, 4, true);
    std::cout << "Batches: " << shuffled.size() << "\n";
    for (int epoch = 0; epoch < 2; ++epoch) {
        std::vector<std::int64_t> first_ids;
        for (auto [x, y] : shuffled) first_ids.push_back(x(0, 0));
        first_ids.resize(6);
        std::cout << "First ids: " << py_list(first_ids) << "\n";
    }
    // [shuffled]

    // [embedding]
    struct six : shaped::axis<"vocab_size", 6> {};
    struct three : shaped::axis<"output_dim", 3> {};
    struct ids : shaped::dynamic_axis<"ids"> {};
    shaped::tensor<std::int64_t, ids> input_ids{2, 3, 5, 1};
    torch::manual_seed(123);
    nn::embedding<six, three> embedding_layer;
    std::cout << embedding_layer.weight << "\n";
    std::cout << embedding_layer(shaped::tensor<std::int64_t, ids>{3}) << "\n";
    std::cout << embedding_layer(input_ids) << "\n";
    // [embedding]

    // [embeddings]
    nn::embedding<vocab_size, output_dim> token_embedding_layer;
    const std::size_t max_length = 4;
    auto loader = text::create_dataloader_v1<batch, num_tokens>(raw_text, tokenizer, 8, max_length, max_length, false);
    auto [token_ids, next_ids] = *loader.begin();            // begin() draws a seed, as iter(dataloader) does
    std::cout << "Token IDs:\n " << token_ids << "\n";
    std::cout << "\nInputs shape:\n " << token_ids.shape << "\n";
    auto token_embeddings = token_embedding_layer(token_ids);  // (batch, num_tokens, output_dim)
    std::cout << token_embeddings.shape << "\n";
    // The book's Embedding(context_length, output_dim) with context_length = max_length = 4; a table of all
    // 1024 positions has the same first four rows (the same draws), and any max_length up to 1024 fits it.
    nn::embedding<context_length, output_dim> pos_embedding_layer;
    auto positions = torch::arange<num_tokens>(max_length);
    auto pos_embeddings = pos_embedding_layer(positions);    // (num_tokens, output_dim)
    std::cout << pos_embeddings.shape << "\n";
    auto input_embeddings = token_embeddings + pos_embeddings;
    std::cout << input_embeddings.shape << "\n";
    std::cout << input_embeddings.select<output_dim>(0) << "\n";   // input_embeddings[:, :, 0]
    // [embeddings]
}
