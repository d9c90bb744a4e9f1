// The book's Llama 3.2 and Qwen3 (tests/golden/modern/reference.py, Llama3Model of standalone-llama32 ported to
// PyTorch 1.13, with Qwen3's QK-norm) against nn::llama_model: the parameter counts of the published 1B configuration, and small
// configurations with random weights, tied and untied, uncached and through the KV caches, and greedy
// generation with and without them.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "check.hpp"
#include "checkpoints.hpp"
#include "golden/modern_goldens.hpp"
#include "sequences.hpp"

#include <shaped/io/llama_weights.hpp>
#include <shaped/nn/generate.hpp>
#include <shaped/nn/llama_model.hpp>

namespace {

namespace torch = shaped::torch;
namespace nn = shaped::nn;

// The book's figures for Llama 3.2 1B: 1,498,482,688 parameters with the output head counted apart, 1,235,814,400
// unique (standalone-llama32's "Total number of unique parameters").
// [counts]
static_assert(nn::LlamaConfig<nn::llama32_1b>);
static_assert(nn::llama_parameter_counts<nn::llama32_1b>().total == 1'498'482'688);
static_assert(nn::llama_parameter_counts<nn::llama32_1b>().unique == 1'235'814'400);
// [counts]

// Qwen3 0.6B's: 751,632,384 and 596,049,920 (ch05/11_qwen3).
static_assert(nn::LlamaConfig<nn::qwen3_0_6b> && nn::qk_norm_of<nn::qwen3_0_6b>() && !nn::qk_norm_of<nn::llama32_1b>());
static_assert(nn::llama_parameter_counts<nn::qwen3_0_6b>().total == 751'632'384);
static_assert(nn::llama_parameter_counts<nn::qwen3_0_6b>().unique == 596'049'920);

// A small Llama 3.2: the goldens' configurations 101 (tied, head_dim 8 = 32 / 4) and 102 (untied, head_dim 12,
// 3 layers).
template <bool Tied, std::size_t HeadDim, std::size_t Layers>
struct small_llama {
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
    static constexpr double rope_theta = 500000.0;
    static constexpr std::optional<nn::llama3_rope_scaling> rope_scaling = nn::llama3_rope_scaling{8.0f, 1.0f, 4.0f, 8.0f};
    static constexpr float rms_norm_eps = 1e-5f;
    static constexpr bool tie_word_embeddings = Tied;
};
using tied_cfg = small_llama<true, 8, 2>;
using untied_cfg = small_llama<false, 12, 3>;
// A small Qwen3 (the goldens' 103): QK-norm, head_dim 16 on a width of 32, base 1,000,000 without smoothing.
struct qwen_cfg : small_llama<true, 16, 2> {
    static constexpr double rope_theta = 1000000.0;
    static constexpr std::optional<nn::llama3_rope_scaling> rope_scaling = std::nullopt;
    static constexpr float rms_norm_eps = 1e-6f;
    static constexpr bool qk_norm = true;
};

// The goldens' ids, (2, 7).
template <class Cfg, std::size_t N>
auto ids_of(const std::array<std::int64_t, N>& golden) {
    return shaped::tensor<std::int64_t, typename Cfg::batch, typename Cfg::num_tokens>::from_buffer(
        std::vector<std::int64_t>(golden.begin(), golden.end()), 2, 7);
}

// The argmax over the vocabulary of each of the golden's positions.
template <std::size_t N>
std::vector<std::int64_t> golden_argmax(const std::array<float, N>& logits, std::size_t vocab) {
    std::vector<std::int64_t> out;
    for (std::size_t row = 0; row < N / vocab; ++row) {
        const auto* first = logits.data() + row * vocab;
        out.push_back(std::max_element(first, first + vocab) - first);
    }
    return out;
}
template <class Logits>
std::vector<std::int64_t> argmax_of(const Logits& logits) {
    const auto ids = logits.template argmax<-1>();
    return {ids.data(), ids.data() + ids.numel()};
}

template <class Cfg, std::size_t I, std::size_t L, std::size_t P>
void check_against_book(std::uint64_t seed, const std::array<std::int64_t, I>& golden_ids,
                        const std::array<float, L>& golden_logits, const std::array<float, L>& golden_cached,
                        const std::array<std::int64_t, P>& golden_parameters) {
    torch::manual_seed(seed);
    nn::llama_model<Cfg> model;
    const auto ids = ids_of<Cfg>(golden_ids);
    const auto logits = model(ids);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(logits)>,
                                 shaped::tensor<float, typename Cfg::batch, typename Cfg::num_tokens, typename Cfg::vocab_size>>);
    CHECK(test::max_abs_diff(logits, golden_logits) <= 1e-4);
    CHECK(argmax_of(logits) == golden_argmax(golden_logits, 50));

    // The KV caches: the same ids in chunks of 3, 1 and 3 tokens.
    std::size_t pos = 0;
    for (std::size_t n : {3, 1, 3}) {
        std::vector<std::int64_t> part;
        for (std::size_t b = 0; b < 2; ++b)
            for (std::size_t t = pos; t < pos + n; ++t) part.push_back(ids.at(b, t));
        const auto chunk = shaped::tensor<std::int64_t, typename Cfg::batch, typename Cfg::num_tokens>::from_buffer(part, 2, n);
        const auto step = model(chunk, nn::use_cache);
        INFO("tokens ", pos, "..", pos + n);
        CHECK(test::rows_diff(step, golden_cached, pos, 7, 50, 2) <= 1e-4);
        CHECK(test::rows_diff(step, golden_logits, pos, 7, 50, 2) <= 1e-4);
        pos += n;
    }
    model.reset_kv_cache();
    // The prompt's pass with the logits of its last position only.
    const auto last = model(ids, nn::use_cache, nn::last_position);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(last)>,
                                 shaped::tensor<float, typename Cfg::batch, typename Cfg::vocab_size>>);
    CHECK(shaped::max_abs_diff(last, logits.template select<typename Cfg::num_tokens>(-1)) <= 1e-5);
    model.reset_kv_cache();

    // Tied weights are one tensor: counted once, and no out_head in the state_dict.
    CHECK(model.parameter_count() == static_cast<std::size_t>(golden_parameters[0]));
    CHECK(model.parameter_count() == nn::llama_parameter_counts<Cfg>().unique);
    const auto keys = nn::state_dict_keys(model);
    CHECK(keys.front() == "tok_emb.weight");
    CHECK(std::count(keys.begin(), keys.end(), "out_head.weight") == (Cfg::tie_word_embeddings ? 0 : 1));
    CHECK(std::count(keys.begin(), keys.end(), "trf_blocks.0.att.W_key.weight") == 1);
    CHECK(keys.back() == (Cfg::tie_word_embeddings ? "final_norm.scale" : "out_head.weight"));
}

}  // namespace

TEST_CASE("llama_model equals the book's Llama3Model: tied embeddings, grouped heads, Llama 3's RoPE smoothing") {
    check_against_book<tied_cfg>(101, golden::llama_101_ids, golden::llama_101_logits, golden::llama_101_cached,
                                 golden::llama_101_parameters);
}

TEST_CASE("llama_model equals the book's Llama3Model: an untied output head, head_dim apart from the width") {
    check_against_book<untied_cfg>(102, golden::llama_102_ids, golden::llama_102_logits, golden::llama_102_cached,
                                   golden::llama_102_parameters);
}

TEST_CASE("qwen3_model equals the book's Qwen3Model: QK-norm, queries wider than the embeddings") {
    check_against_book<qwen_cfg>(103, golden::llama_103_ids, golden::llama_103_logits, golden::llama_103_cached,
                                 golden::llama_103_parameters);
    nn::qwen3_model<qwen_cfg> model;
    const auto keys = nn::state_dict_keys(model);
    CHECK(std::count(keys.begin(), keys.end(), "trf_blocks.1.att.k_norm.scale") == 1);
    static_assert(std::is_same_v<decltype(model.trf_blocks[0].att.W_query),
                                 nn::linear<qwen_cfg::emb_dim, nn::llama_block<qwen_cfg>::attention_type::d_out>>);
    static_assert(nn::llama_block<qwen_cfg>::attention_type::d_out::extent == 64);
}

TEST_CASE("llama_model: greedy generation gives the same ids with the KV caches and without") {
    struct max_length : shaped::axis<"max_length", 24> {};
    struct seq : shaped::dynamic_axis<"seq", shaped::at_most<max_length>> {};
    torch::manual_seed(101);
    nn::llama_model<tied_cfg> model;
    for (std::size_t prompt : {1, 4, 9}) {
        std::vector<std::int64_t> ids(2 * prompt);
        for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>((7 * i + 3) % 50);
        const auto idx = shaped::tensor<std::int64_t, tied_cfg::batch, seq>::from_buffer(ids, 2, prompt);
        const auto uncached = nn::generate_text_simple(model, idx, 24 - prompt, 24);
        const auto cached = nn::generate_text_simple_cached(model, idx, 24 - prompt);
        INFO("prompt ", prompt);
        REQUIRE(uncached.shape.extent(1) == 24);
        CHECK(std::vector<std::int64_t>(uncached.data(), uncached.data() + 48) ==
              std::vector<std::int64_t>(cached.data(), cached.data() + cached.numel()));
        // The book's sampling with the caches and without: the same draws (temperature 25: the random model's logits
        // are far apart, and a lower one draws the greedy ids).
        torch::manual_seed(5);
        const auto sampled = nn::generate(model, idx, 24 - prompt, 24, 25.0f, 20);
        torch::manual_seed(5);
        const auto sampled_cached = nn::generate_cached(model, idx, 24 - prompt, 25.0f, 20);
        CHECK(std::vector<std::int64_t>(sampled.data(), sampled.data() + sampled.numel()) ==
              std::vector<std::int64_t>(sampled_cached.data(), sampled_cached.data() + sampled_cached.numel()));
        CHECK(std::vector<std::int64_t>(sampled.data(), sampled.data() + sampled.numel()) !=
              std::vector<std::int64_t>(uncached.data(), uncached.data() + uncached.numel()));
        // Past the context: refused before any work, naming the bound.
        CHECK(test::thrown<shaped::shape_error>([&] { (void)nn::generate_text_simple_cached(model, idx, 26 - prompt); })
                  .find("(context_length)") != std::string::npos);
    }
}

namespace {

const std::filesystem::path checkpoints = std::filesystem::path(SHAPED_GOLDEN_DIR) / "llama";

}  // namespace

TEST_CASE("load_llama_weights: Hugging Face checkpoints in F32, in BF16 shards, and a Qwen3 in F16, give the book's logits") {
    {
        nn::llama_model<tied_cfg> model(nn::skip_init);
        shaped::io::load_llama_weights(model, shaped::io::hf_checkpoint(checkpoints / "101_f32"));
        CHECK(test::max_abs_diff(model(ids_of<tied_cfg>(golden::llama_101_ids)), golden::llama_101_f32_logits) <= 1e-4);
    }
    {
        const shaped::io::hf_checkpoint ck(checkpoints / "102_bf16");
        CHECK(ck.files().size() == 2);
        CHECK(*ck.config_value("rope_scaling.rope_type") == "llama3");
        nn::llama_model<untied_cfg> model(nn::skip_init);
        shaped::io::load_llama_weights(model, ck);
        const auto logits = model(ids_of<untied_cfg>(golden::llama_102_ids));
        CHECK(test::max_abs_diff(logits, golden::llama_102_bf16_logits) <= 1e-4);
        CHECK(test::max_abs_diff(logits, golden::llama_102_logits) > 1e-4);  // the weights were rounded to BF16
    }
    {
        nn::qwen3_model<qwen_cfg> model(nn::skip_init);
        shaped::io::load_llama_weights(model, shaped::io::hf_checkpoint(checkpoints / "103_f16"));
        CHECK(test::max_abs_diff(model(ids_of<qwen_cfg>(golden::llama_103_ids)), golden::llama_103_f16_logits) <= 1e-4);
    }
}

TEST_CASE("weight_type bfloat16: a BF16 checkpoint kept as stored gives the book's logits; an F32 one, rounded, within 1%") {
    struct untied_bf16 : untied_cfg {
        using weight_type = shaped::bfloat16;
    };
    struct tied_bf16 : tied_cfg {
        using weight_type = shaped::bfloat16;
    };
    using model_t = nn::llama_model<untied_bf16>;
    static_assert(std::is_same_v<decltype(std::declval<model_t&>().tok_emb.weight)::value_type, shaped::bfloat16>);
    static_assert(std::is_same_v<decltype(std::declval<model_t&>().trf_blocks[0].att.W_query.weight)::value_type,
                                 shaped::bfloat16>);
    static_assert(std::is_same_v<decltype(std::declval<model_t&>().trf_blocks[0].norm1.scale)::value_type, float>);
    {
        model_t model(nn::skip_init);
        shaped::io::load_llama_weights(model, shaped::io::hf_checkpoint(checkpoints / "102_bf16"));
        const auto ids = ids_of<untied_bf16>(golden::llama_102_ids);
        const auto logits = model(ids);
        CHECK(test::max_abs_diff(logits, golden::llama_102_bf16_logits) <= 1e-4);
        // Through the caches in chunks of 4 and 3, and the prompt's last position alone.
        for (std::size_t pos : {0, 4}) {
            const std::size_t n = pos == 0 ? 4 : 3;
            std::vector<std::int64_t> part;
            for (std::size_t b = 0; b < 2; ++b)
                for (std::size_t t = pos; t < pos + n; ++t) part.push_back(ids.at(b, t));
            const auto step = model(shaped::tensor<std::int64_t, untied_bf16::batch, untied_bf16::num_tokens>::from_buffer(part, 2, n),
                                    nn::use_cache);
            CHECK(test::rows_diff(step, golden::llama_102_bf16_logits, pos, 7, 50, 2) <= 1e-4);
        }
        model.reset_kv_cache();
        const auto last = model(ids, nn::use_cache, nn::last_position);
        CHECK(shaped::max_abs_diff(last, logits.select<untied_bf16::num_tokens>(-1)) <= 1e-5);
        CHECK(model.parameter_count() == nn::llama_parameter_counts<untied_bf16>().unique);
    }
    {
        nn::llama_model<tied_bf16> model(nn::skip_init);
        shaped::io::load_llama_weights(model, shaped::io::hf_checkpoint(checkpoints / "101_f32"));
        const auto logits = model(ids_of<tied_bf16>(golden::llama_101_ids));
        // Rounding the weights moves the logits by about BF16's relative precision (2^-8) of their size.
        double largest = 0;
        for (const float v : golden::llama_101_f32_logits) largest = std::max(largest, double(std::abs(v)));
        const double off = test::max_abs_diff(logits, golden::llama_101_f32_logits);
        CHECK(off <= 1e-2 * largest);
        CHECK(off > 1e-6);  // the weights were rounded on load
        CHECK(argmax_of(logits) == golden_argmax(golden::llama_101_f32_logits, 50));
    }
}

TEST_CASE("load_llama_weights refuses a config.json that differs from the type, naming each field, and bad indexes") {
    using shaped::io::file_error;
    const shaped::io::hf_checkpoint ck(checkpoints / "101_f32");
    {
        nn::llama_model<untied_cfg> other(nn::skip_init);
        const std::string message = test::thrown<file_error>([&] { shaped::io::load_llama_weights(other, ck); });
        CHECK(message.find("config.json: does not match the compiled configuration: ") != std::string::npos);
        CHECK(message.find("head_dim is 8 in the file, 12 in the type") != std::string::npos);
        CHECK(message.find("num_hidden_layers is 2 in the file, 3 in the type") != std::string::npos);
        CHECK(message.find("tie_word_embeddings is true in the file, false in the type") != std::string::npos);
        nn::qwen3_model<qwen_cfg> qwen(nn::skip_init);
        CHECK(test::thrown<file_error>([&] { shaped::io::load_llama_weights(qwen, ck); })
                  .find("model_type is llama in the file, qwen3 in the type") != std::string::npos);
    }
    {
        const test::edited_checkpoint edited(checkpoints / "101_f32", "config.json", "\"rope_theta\": 500000.0", "\"rope_theta\": 10000.0");
        nn::llama_model<tied_cfg> model;
        const auto before = model(ids_of<tied_cfg>(golden::llama_101_ids));
        CHECK(test::thrown<file_error>([&] { shaped::io::load_llama_weights(model, shaped::io::hf_checkpoint(edited.dir)); })
                  .find("rope_theta is 10000.0 in the file, 500000 in the type") != std::string::npos);
        CHECK(shaped::max_abs_diff(model(ids_of<tied_cfg>(golden::llama_101_ids)), before) == 0);  // all or nothing
    }
    {
        const test::edited_checkpoint edited(checkpoints / "102_bf16", "model.safetensors.index.json", "\"model.norm.weight\": \"model-00002",
                                       "\"model.norm.weight\": \"../model-00002");
        CHECK(test::thrown<file_error>([&] { (void)shaped::io::hf_checkpoint(edited.dir); })
                  .find("gives model.norm.weight to \"../model-00002-of-00002.safetensors\", which is not a file name") !=
              std::string::npos);
    }
    {
        const test::edited_checkpoint edited(checkpoints / "102_bf16", "model.safetensors.index.json", "\"model.norm.weight\": \"model-00002",
                                       "\"model.norm.weight\": \"model-00001");
        CHECK(test::thrown<file_error>([&] { (void)shaped::io::hf_checkpoint(edited.dir); })
                  .find("holds no tensor model.norm.weight, which the index gives to it") != std::string::npos);
    }
}

TEST_CASE("Llama 3.2 1B's config.json matches llama32_1b field by field, and not Qwen3's configuration") {
    std::ifstream in(std::filesystem::path(SHAPED_GOLDEN_DIR) / ".." / "fuzz" / "corpus" / "hf_config" / "llama32_1b.json");
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    const auto config = shaped::io::hf_checkpoint::flat_json(text, "config.json");
    CHECK(config.at("rope_scaling.original_max_position_embeddings") == "8192");
    CHECK(config.at("eos_token_id") == "128001");
    CHECK(shaped::io::detail::llama_config_problems<nn::llama32_1b>(config).empty());
    const auto qwen = shaped::io::detail::llama_config_problems<nn::qwen3_0_6b>(config);
    CHECK(std::find(qwen.begin(), qwen.end(), "hidden_size is 2048 in the file, 1024 in the type") != qwen.end());
}
