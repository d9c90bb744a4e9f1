// The opening of chapter 5 of "Build a Large Language Model (From Scratch)" (sections 5.1 to 5.3, without
// training), run as the chapter runs it: the seed-123 GPT at context 256 and its text, target probabilities,
// cross-entropy and perplexity, the loss over the-verdict.txt's training and validation loaders, sampling with
// temperature and top-k from PyTorch's random stream, and the book's generate. Prints what
// tests/golden/book/chapter5.py prints with PyTorch.
// Usage: book_chapter5 DATA_DIR   (the folder of the-verdict.txt, encoder.json and vocab.bpe: tests/data)
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

// [includes]
#include <shaped/shaped.hpp>
#include <shaped/nn/generate.hpp>
#include <shaped/nn/loss.hpp>
#include <shaped/text/bpe_tokenizer.hpp>
#include <shaped/text/data_loader.hpp>
#include <shaped/torch/multinomial.hpp>

namespace torch = shaped::torch;
namespace nn = shaped::nn;
namespace text = shaped::text;
// [includes]

// [config]
// GPT_CONFIG_124M with "context_length": 256: the token axis is redeclared within the new context.
struct cfg : nn::gpt2_124m {
    struct context_length : shaped::axis<"context_length", 256> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
};
using batch = cfg::batch;
using num_tokens = cfg::num_tokens;
using vocab_size = cfg::vocab_size;
// [config]

// Python's print of a float: the shortest digits that read back as the same double.
std::string py_float(double x) {
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof buf, x).ptr;
    std::string s(buf, end);
    return s.find_first_of(".en") == std::string::npos ? s + ".0" : s;
}

int main(int argc, char** argv) {
    const std::filesystem::path data = argc > 1 ? argv[1] : "tests/data";
    auto tokenizer = text::bpe_tokenizer::gpt2(data / "encoder.json", data / "vocab.bpe");

    // [text]
    torch::manual_seed(123);
    nn::gpt_model<cfg> model;
    model.eval();
    auto idx = tokenizer.encode<num_tokens>("Every effort moves you", {"<|endoftext|>"}).unsqueeze<0>()
                   .rename<batch, num_tokens>();                                      // text_to_token_ids
    auto token_ids = nn::generate_text_simple(model, idx, 10, cfg::context_length::extent);
    std::cout << "Output text:\n " << tokenizer.decode(token_ids.select<batch>(0)) << "\n";
    // [text]

    // [probas]
    shaped::tensor<std::int64_t, batch, num_tokens> inputs{{16833, 3626, 6100}, {40, 1107, 588}};
    shaped::tensor<std::int64_t, batch, num_tokens> targets{{3626, 6100, 345}, {1107, 588, 11311}};
    auto logits = model(inputs);                                      // (batch, num_tokens, vocab_size)
    auto probas = shaped::softmax<vocab_size>(logits);
    std::cout << probas.shape << "\n";
    auto argmax_ids = probas.argmax<vocab_size>(shaped::keepdim);    // (batch, num_tokens, reduced<vocab_size>)
    std::cout << "Token IDs:\n " << argmax_ids << "\n";
    std::cout << "Targets batch 1: " << tokenizer.decode(targets.select<batch>(0)) << "\n";
    std::cout << "Outputs batch 1: " << tokenizer.decode(argmax_ids.select<batch>(0).flatten()) << "\n";
    // probas[text_idx, [0, 1, 2], targets[text_idx]]: one probability per token, along the targets' axis
    auto target_probas_1 = shaped::gather<vocab_size>(probas.select<batch>(0), targets.select<batch>(0));
    std::cout << "Text 1: " << target_probas_1 << "\n";
    auto target_probas_2 = shaped::gather<vocab_size>(probas.select<batch>(1), targets.select<batch>(1));
    std::cout << "Text 2: " << target_probas_2 << "\n";
    auto log_probas = shaped::log(shaped::cat<0>(boost::hana::make_tuple(target_probas_1, target_probas_2)));
    std::cout << log_probas << "\n";
    auto avg_log_probas = log_probas.mean<0>();                       // a rank-0 tensor
    std::cout << avg_log_probas << "\n";
    auto neg_avg_log_probas = avg_log_probas * -1.0f;
    std::cout << neg_avg_log_probas << "\n";
    // [probas]

    // [loss]
    std::cout << "Logits shape: " << logits.shape << "\n";
    std::cout << "Targets shape: " << targets.shape << "\n";
    auto logits_flat = logits.flatten<0, 1>();                        // (merged<batch, num_tokens>, vocab_size)
    auto targets_flat = targets.flatten();                            // (merged<batch, num_tokens>)
    std::cout << "Flattened logits: " << logits_flat.shape << "\n";
    std::cout << "Flattened targets: " << targets_flat.shape << "\n";
    auto loss = shaped::cross_entropy(logits_flat, targets_flat);
    std::cout << loss << "\n";
    auto perplexity = shaped::exp(loss);
    std::cout << perplexity << "\n";
    // [loss]

    // [loaders]
    std::ifstream file(data / "the-verdict.txt", std::ios::binary);
    const std::string text_data{std::istreambuf_iterator<char>(file), {}};
    std::vector<std::size_t> char_starts;  // Python indexes characters, not bytes
    for (std::size_t i = 0; i < text_data.size(); ++i)
        if ((static_cast<unsigned char>(text_data[i]) & 0xC0) != 0x80) char_starts.push_back(i);
    std::cout << "Characters: " << char_starts.size() << "\n";
    std::cout << "Tokens: " << tokenizer.encode(text_data).size() << "\n";
    const double train_ratio = 0.90;
    const auto split_idx = static_cast<std::size_t>(train_ratio * static_cast<double>(char_starts.size()));
    const std::string train_data = text_data.substr(0, char_starts[split_idx]);
    const std::string val_data = text_data.substr(char_starts[split_idx]);
    torch::manual_seed(123);
    auto train_loader = text::create_dataloader_v1<batch, num_tokens>(train_data, tokenizer, 2, 256, 256, true, true);
    auto val_loader = text::create_dataloader_v1<batch, num_tokens>(val_data, tokenizer, 2, 256, 256, false, false);
    std::cout << "Train loader:\n";
    for (auto [x, y] : train_loader) std::cout << x.shape << " " << y.shape << "\n";
    std::cout << "\nValidation loader:\n";
    for (auto [x, y] : val_loader) std::cout << x.shape << " " << y.shape << "\n";
    std::size_t train_tokens = 0, val_tokens = 0;
    for (auto [x, y] : train_loader) train_tokens += x.numel();
    for (auto [x, y] : val_loader) val_tokens += x.numel();
    std::cout << "Training tokens: " << train_tokens << "\n";
    std::cout << "Validation tokens: " << val_tokens << "\n";
    std::cout << "All tokens: " << train_tokens + val_tokens << "\n";
    torch::manual_seed(123);
    const double train_loss = nn::calc_loss_loader(train_loader, model);
    const double val_loss = nn::calc_loss_loader(val_loader, model);
    std::cout << "Training loss: " << py_float(train_loss) << "\n";
    std::cout << "Validation loss: " << py_float(val_loss) << "\n";
    // [loaders]

    // [sampling]
    struct vocab : shaped::axis<"vocab", 9> {};
    const std::vector<std::string> inverse_vocab = {"closer", "every", "effort", "forward", "inches",
                                                    "moves", "pizza", "toward", "you"};
    shaped::tensor<float, vocab> next_token_logits{4.51f, 0.89f, -1.90f, 6.75f, 1.63f, -1.62f, -1.89f, 6.28f, 1.79f};
    auto next_probas = shaped::softmax<vocab>(next_token_logits);
    std::cout << inverse_vocab[next_probas.argmax<vocab>().item()] << "\n";
    torch::manual_seed(123);
    std::cout << inverse_vocab[torch::multinomial(next_probas).item()] << "\n";

    struct draws : shaped::dynamic_axis<"draws"> {};
    auto print_sampled_tokens = [&](const shaped::tensor<float, vocab>& p) {
        torch::manual_seed(123);
        std::vector<std::int64_t> sample;
        for (int i = 0; i < 1000; ++i) sample.push_back(torch::multinomial(p).item());
        auto sampled_ids = shaped::bincount<vocab>(shaped::tensor<std::int64_t, draws>::from_buffer(sample, sample.size()));
        for (std::size_t i = 0; i < vocab::extent; ++i)
            std::cout << sampled_ids(i) << " x " << inverse_vocab[i] << "\n";
    };
    print_sampled_tokens(next_probas);
    print_sampled_tokens(shaped::softmax<vocab>(next_token_logits / 0.1f));
    print_sampled_tokens(shaped::softmax<vocab>(next_token_logits / 5.0f));
    // [sampling]

    // [top_k]
    auto [top_logits, top_pos] = shaped::topk<vocab>(next_token_logits, 3);   // along top_k<vocab>
    std::cout << "Top logits: " << top_logits << "\n";
    std::cout << "Top positions: " << top_pos << "\n";
    auto new_logits = shaped::where(next_token_logits < top_logits.select<0>(-1), -INFINITY, next_token_logits);
    std::cout << new_logits << "\n";
    std::cout << shaped::softmax<vocab>(new_logits) << "\n";
    // [top_k]

    // [generate]
    torch::manual_seed(123);
    auto generated = nn::generate(model, idx, 15, cfg::context_length::extent, /*temperature=*/1.4f, /*top_k=*/25);
    std::cout << "Output text:\n " << tokenizer.decode(generated.select<batch>(0)) << "\n";
    // [generate]
}
