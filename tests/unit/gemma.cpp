// The book's Gemma 3 (tests/golden/modern/reference.py, Gemma3Model of ch05/12_gemma3 ported to PyTorch 1.13)
// against nn::gemma_model: the parameter counts of the published 270M configuration; small configurations
// with random weights loaded from Hugging Face checkpoints (F32; BF16 shards, untied, one key/value head),
// uncached and through the caches (the local layers' windows shorter than the ids), greedy and sampled
// generation with and without the caches; config.json checked field by field.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "check.hpp"
#include "checkpoints.hpp"
#include "golden/modern_goldens.hpp"
#include "sequences.hpp"

#include <shaped/io/gemma_weights.hpp>
#include <shaped/io/llama_weights.hpp>
#include <shaped/nn/gemma_model.hpp>
#include <shaped/nn/generate.hpp>

namespace {

namespace torch = shaped::torch;
namespace nn = shaped::nn;

// The book's figures for Gemma 3 270M (ch05/12_gemma3): 435,870,336 parameters with the output head counted
// apart, 268,098,176 unique.
// [counts]
static_assert(nn::GemmaConfig<nn::gemma3_270m>);
static_assert(nn::gemma_parameter_counts<nn::gemma3_270m>().total == 435'870'336);
static_assert(nn::gemma_parameter_counts<nn::gemma3_270m>().unique == 268'098'176);
// [counts]
static_assert(nn::gemma3_270m::layer_types[4] == nn::layer_type::sliding_attention &&
              nn::gemma3_270m::layer_types[5] == nn::layer_type::full_attention &&
              nn::gemma3_270m::layer_types[17] == nn::layer_type::full_attention);
static_assert(!nn::LlamaConfig<nn::gemma3_270m> && !nn::GemmaConfig<nn::qwen3_0_6b>);

// The goldens' configurations: 104, 4 query heads on 2 key/value heads of 16 on a width of 32, layers local,
// local, global, local, window 4, query_pre_attn_scalar 24, tied; 105, one key/value head of 12, layers
// local, global, local, window 3, query_pre_attn_scalar 12, untied.
template <std::size_t KvHeads, std::size_t Groups, std::size_t HeadDim, std::size_t Window, std::size_t Layers>
struct small_gemma {
    struct vocab_size : shaped::axis<"vocab_size", 50> {};
    struct context_length : shaped::axis<"context_length", 24> {};
    struct emb_dim : shaped::axis<"emb_dim", 32> {};
    struct num_kv_heads : shaped::axis<"num_kv_heads", KvHeads> {};
    struct group_size : shaped::axis<"group_size", Groups> {};
    struct num_heads : shaped::product<"num_heads", num_kv_heads, group_size> {};
    struct head_dim : shaped::axis<"head_dim", HeadDim> {};
    struct hidden_dim : shaped::axis<"hidden_dim", 48> {};
    struct sliding_window : shaped::axis<"sliding_window", Window> {};
    struct batch : shaped::dynamic_axis<"batch"> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
    static constexpr std::size_t n_layers = Layers;
    static constexpr double rope_theta = 1000000.0;
    static constexpr double rope_local_base_freq = 10000.0;
    static constexpr float rms_norm_eps = 1e-6f;
};
struct cfg_104 : small_gemma<2, 2, 16, 4, 4> {
    static constexpr std::array<nn::layer_type, 4> layer_types = nn::gemma3_layer_types<4, 3>();
    static constexpr double query_pre_attn_scalar = 24.0;
    static constexpr bool tie_word_embeddings = true;
};
struct cfg_105 : small_gemma<1, 4, 12, 3, 3> {
    static constexpr std::array<nn::layer_type, 3> layer_types = nn::gemma3_layer_types<3, 2>();
    static constexpr double query_pre_attn_scalar = 12.0;
    static constexpr bool tie_word_embeddings = false;
};

const std::filesystem::path checkpoints = std::filesystem::path(SHAPED_GOLDEN_DIR) / "gemma";

template <class Cfg, std::size_t N>
auto ids_of(const std::array<std::int64_t, N>& golden) {
    return shaped::tensor<std::int64_t, typename Cfg::batch, typename Cfg::num_tokens>::from_buffer(
        std::vector<std::int64_t>(golden.begin(), golden.end()), 2, 7);
}

template <class Logits>
std::vector<std::int64_t> argmax_of(const Logits& logits) {
    const auto ids = logits.template argmax<-1>();
    return {ids.data(), ids.data() + ids.numel()};
}
template <std::size_t N>
std::vector<std::int64_t> golden_argmax(const std::array<float, N>& logits) {
    std::vector<std::int64_t> out;
    for (std::size_t row = 0; row < N / 50; ++row)
        out.push_back(std::max_element(logits.data() + row * 50, logits.data() + row * 50 + 50) - (logits.data() + row * 50));
    return out;
}

template <class Cfg, std::size_t I, std::size_t L, std::size_t P>
void check_against_book(const std::string& folder, const std::array<std::int64_t, I>& golden_ids,
                        const std::array<float, L>& golden_logits, const std::array<float, L>& golden_cached,
                        const std::array<std::int64_t, P>& golden_parameters) {
    nn::gemma_model<Cfg> model(nn::skip_init);
    shaped::io::load_gemma_weights(model, shaped::io::hf_checkpoint(checkpoints / folder));
    const auto ids = ids_of<Cfg>(golden_ids);
    const auto logits = model(ids);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(logits)>,
                                 shaped::tensor<float, typename Cfg::batch, typename Cfg::num_tokens, typename Cfg::vocab_size>>);
    CHECK(test::max_abs_diff(logits, golden_logits) <= 1e-4);
    CHECK(argmax_of(logits) == golden_argmax(golden_logits));

    // The caches: the same ids in chunks of 3, 1 and 3 tokens, the local layers' windows shorter than the ids.
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

    CHECK(model.parameter_count() == static_cast<std::size_t>(golden_parameters[0]));
    CHECK(model.parameter_count() == nn::gemma_parameter_counts<Cfg>().unique);
    const auto keys = nn::state_dict_keys(model);
    CHECK(std::count(keys.begin(), keys.end(), "out_head.weight") == (Cfg::tie_word_embeddings ? 0 : 1));
    CHECK(std::count(keys.begin(), keys.end(), "blocks.1.pre_feedforward_layernorm.scale") == 1);
    CHECK(std::count(keys.begin(), keys.end(), "blocks.0.att.k_norm.scale") == 1);
}

}  // namespace

TEST_CASE("gemma_model equals the book's Gemma3Model: local and global layers, windows shorter than the ids, "
          "query_pre_attn_scalar apart from head_dim, tied embeddings") {
    using blocks = nn::gemma_model<cfg_104>::blocks_type;
    static_assert(std::tuple_element_t<0, blocks>::sliding && std::tuple_element_t<1, blocks>::sliding &&
                  !std::tuple_element_t<2, blocks>::sliding && std::tuple_element_t<3, blocks>::sliding);
    static_assert(std::is_same_v<decltype(std::get<0>(std::declval<blocks&>()).att.cache),
                                 nn::sliding_window_cache<cfg_104::num_kv_heads, cfg_104::head_dim, cfg_104::sliding_window,
                                                          cfg_104::context_length,
                                                          shaped::rotated<cfg_104::head_dim, shaped::rope_layout::split_halves>>>);
    check_against_book<cfg_104>("104_f32", golden::gemma_104_ids, golden::gemma_104_logits, golden::gemma_104_cached,
                                golden::gemma_104_parameters);
}

TEST_CASE("gemma_model equals the book's Gemma3Model: one key/value head, an untied head, BF16 shards") {
    check_against_book<cfg_105>("105_bf16", golden::gemma_105_ids, golden::gemma_105_logits, golden::gemma_105_cached,
                                golden::gemma_105_parameters);
}

TEST_CASE("gemma_model with weight_type bfloat16: BF16 shards kept as stored give the book's logits, cached too") {
    struct cfg_105_bf16 : cfg_105 {
        using weight_type = shaped::bfloat16;
    };
    static_assert(std::is_same_v<decltype(std::declval<nn::gemma_model<cfg_105_bf16>&>().tok_emb.weight)::value_type,
                                 shaped::bfloat16>);
    check_against_book<cfg_105_bf16>("105_bf16", golden::gemma_105_ids, golden::gemma_105_logits, golden::gemma_105_cached,
                                     golden::gemma_105_parameters);
}

TEST_CASE("gemma_model: generation gives the same ids with the caches and without, past every window") {
    struct max_length : shaped::axis<"max_length", 24> {};
    struct seq : shaped::dynamic_axis<"seq", shaped::at_most<max_length>> {};
    nn::gemma_model<cfg_104> model(nn::skip_init);
    shaped::io::load_gemma_weights(model, shaped::io::hf_checkpoint(checkpoints / "104_f32"));
    for (std::size_t prompt : {1, 4, 9}) {
        std::vector<std::int64_t> ids(2 * prompt);
        for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>((7 * i + 3) % 50);
        const auto idx = shaped::tensor<std::int64_t, cfg_104::batch, seq>::from_buffer(ids, 2, prompt);
        const auto uncached = nn::generate_text_simple(model, idx, 24 - prompt, 24);
        const auto cached = nn::generate_text_simple_cached(model, idx, 24 - prompt);
        INFO("prompt ", prompt);
        REQUIRE(uncached.shape.extent(1) == 24);
        CHECK(std::vector<std::int64_t>(uncached.data(), uncached.data() + 48) ==
              std::vector<std::int64_t>(cached.data(), cached.data() + cached.numel()));
        torch::manual_seed(5);
        const auto sampled = nn::generate(model, idx, 24 - prompt, 24, 25.0f, 20);
        torch::manual_seed(5);
        const auto sampled_cached = nn::generate_cached(model, idx, 24 - prompt, 25.0f, 20);
        CHECK(std::vector<std::int64_t>(sampled.data(), sampled.data() + sampled.numel()) ==
              std::vector<std::int64_t>(sampled_cached.data(), sampled_cached.data() + sampled_cached.numel()));
        CHECK(test::thrown<shaped::shape_error>([&] { (void)nn::generate_text_simple_cached(model, idx, 26 - prompt); })
                  .find("(context_length)") != std::string::npos);
    }
}

TEST_CASE("scaled_dot_product_attention with attention_scale: 1 / sqrt(head_dim) is the default, bit for bit") {
    struct b : shaped::axis<"b", 2> {};
    struct t : shaped::axis<"t", 9> {};
    struct d : shaped::axis<"d", 16> {};
    torch::manual_seed(3);
    const auto q = torch::randn<b, t, d>(), k = torch::randn<b, t, d>(), v = torch::randn<b, t, d>();
    const auto plain = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal);
    CHECK(shaped::max_abs_diff(shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal, shaped::attention_scale{0.25}),
                               plain) == 0);
    // Scaling the scores by s is scaling the queries by s * sqrt(head_dim) (here by 2, exactly).
    const auto doubled = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal, shaped::attention_scale{0.5});
    CHECK(shaped::max_abs_diff(doubled, plain) > 1e-3);
    CHECK(shaped::max_abs_diff(doubled, shaped::scaled_dot_product_attention(q * 2.0f, k, v, shaped::is_causal)) <= 1e-6);
}

TEST_CASE("load_gemma_weights refuses a config.json that differs from the type, naming each field") {
    using shaped::io::file_error;
    {
        const test::edited_checkpoint edited(checkpoints / "104_f32", "config.json", "\"full_attention\"",
                                             "\"sliding_attention\"");
        nn::gemma_model<cfg_104> model(nn::skip_init);
        const std::string message =
            test::thrown<file_error>([&] { shaped::io::load_gemma_weights(model, shaped::io::hf_checkpoint(edited.dir)); });
        CHECK(message.find("config.json: does not match the compiled configuration: ") != std::string::npos);
        CHECK(message.find("layer_types.2 is sliding_attention in the file, full_attention in the type") != std::string::npos);
    }
    {
        const test::edited_checkpoint edited(checkpoints / "104_f32", "config.json", "\"query_pre_attn_scalar\": 24",
                                             "\"query_pre_attn_scalar\": 16");
        nn::gemma_model<cfg_104> model(nn::skip_init);
        CHECK(test::thrown<file_error>([&] { shaped::io::load_gemma_weights(model, shaped::io::hf_checkpoint(edited.dir)); })
                  .find("query_pre_attn_scalar is 16 in the file, 24 in the type") != std::string::npos);
    }
    {
        nn::gemma_model<cfg_105> other(nn::skip_init);
        const std::string message = test::thrown<file_error>(
            [&] { shaped::io::load_gemma_weights(other, shaped::io::hf_checkpoint(checkpoints / "104_f32")); });
        CHECK(message.find("num_key_value_heads is 2 in the file, 1 in the type") != std::string::npos);
        CHECK(message.find("sliding_window is 4 in the file, 3 in the type") != std::string::npos);
        CHECK(message.find("tie_word_embeddings is true in the file, false in the type") != std::string::npos);
    }
    {
        // A Llama folder is not a Gemma's, nor the other way round.
        nn::gemma_model<cfg_104> model(nn::skip_init);
        CHECK(test::thrown<file_error>([&] {
                  shaped::io::load_gemma_weights(
                      model, shaped::io::hf_checkpoint(std::filesystem::path(SHAPED_GOLDEN_DIR) / "llama" / "101_f32"));
              }).find("model_type is llama in the file, gemma3_text in the type") != std::string::npos);
    }
}

TEST_CASE("Gemma 3 270M's config.json matches gemma3_270m field by field") {
    std::ifstream in(std::filesystem::path(SHAPED_GOLDEN_DIR) / ".." / "fuzz" / "corpus" / "hf_config" / "gemma3_270m.json");
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    REQUIRE(!text.empty());
    const auto config = shaped::io::hf_checkpoint::flat_json(text, "config.json");
    CHECK(config.at("layer_types") == "[18]");
    CHECK(config.at("layer_types.5") == "full_attention");
    CHECK(shaped::io::detail::gemma_config_problems<nn::gemma3_270m>(config).empty());
    // Without layer_types, the pattern transformers derives them from.
    auto derived = config;
    for (std::size_t i = 0; i < 18; ++i) derived.erase("layer_types." + std::to_string(i));
    derived.erase("layer_types");
    CHECK(shaped::io::detail::gemma_config_problems<nn::gemma3_270m>(derived).empty());
    derived["sliding_window_pattern"] = "4";
    CHECK(shaped::io::detail::gemma_config_problems<nn::gemma3_270m>(derived) ==
          std::vector<std::string>{"layer_types is absent in the file, another pattern in the type"});
}
