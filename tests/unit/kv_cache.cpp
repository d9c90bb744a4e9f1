// The KV cache (the book's ch04/03_kv-cache): cached generation gives the ids of uncached generation for
// every prompt length 1..40 and up to 30 new tokens, cached logits equal uncached ones to test::tolerance
// (1e-5), prompts fed in several pieces (the mask's rows offset by what the cache holds), and the errors of
// a cache that would overflow or change its batch; memory that grows with the sequence, not the context.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "check.hpp"
#include "module_goldens.hpp"

namespace {

namespace torch = shaped::torch;
namespace nn = shaped::nn;

// Long enough a context for 40 prompt tokens and 30 new ones.
struct kv_config {
    struct vocab_size : shaped::axis<"vocab_size", 97> {};
    struct context_length : shaped::axis<"context_length", 80> {};
    struct emb_dim : shaped::axis<"emb_dim", 32> {};
    struct n_heads : shaped::axis<"n_heads", 4> {};
    struct batch : shaped::dynamic_axis<"batch"> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
    static constexpr std::size_t n_layers = 2;
    static constexpr double drop_rate = 0.1;
    static constexpr bool qkv_bias = true;
};
using batch = kv_config::batch;
using tokens = kv_config::num_tokens;
struct max_seq : shaped::axis<"max_seq", 128> {};
struct seq : shaped::dynamic_axis<"seq", shaped::at_most<max_seq>> {};

// b sequences of n token ids along the axis T (a growing sequence, or the model's num_tokens).
template <class T = seq>
shaped::tensor<std::int64_t, batch, T> prompt_of(std::size_t b, std::size_t n, std::uint64_t salt) {
    std::vector<std::int64_t> v(b * n);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>((i * 31 + salt * 17 + 5) % 97);
    return shaped::tensor<std::int64_t, batch, T>::from_buffer(v, b, n);
}

template <class F>
std::string thrown(F f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

nn::gpt_model<kv_config>& model() {
    static nn::gpt_model<kv_config> m = [] {
        torch::manual_seed(81);
        nn::gpt_model<kv_config> x;
        x.eval();
        return x;
    }();
    return m;
}

}  // namespace

TEST_CASE("cached generation gives the ids of uncached generation, every prompt length 1..40, up to 30 tokens") {
    auto& m = model();
    std::size_t compared = 0;
    for (std::size_t n = 1; n <= 40; ++n) {
        const std::size_t new_tokens = 1 + (n * 7) % 30;
        const auto prompt = prompt_of(n % 3 == 0 ? 2 : 1, n, n);
        const auto uncached = nn::generate_text_simple(m, prompt, new_tokens, kv_config::context_length::extent);
        const auto cached = nn::generate_text_simple_cached(m, prompt, new_tokens);
        INFO("prompt length ", n, ", ", new_tokens, " new tokens");
        REQUIRE(cached.shape[1] == n + new_tokens);
        CHECK(shaped::max_abs_diff(cached, uncached) == 0.0);
        ++compared;
    }
    CHECK(compared == 40);
    const auto thirty = nn::generate_text_simple_cached(m, prompt_of(1, 40, 9), 30);
    CHECK(shaped::max_abs_diff(thirty, nn::generate_text_simple(m, prompt_of(1, 40, 9), 30, 80)) == 0.0);
}

TEST_CASE("cached logits equal uncached logits, step by step and with prompts fed in pieces") {
    auto& m = model();
    for (std::size_t n : {1, 7, 40}) {
        const auto seq_ids = prompt_of<tokens>(2, n + 6, n);
        m.reset_kv_cache();
        // The prompt in two pieces (when it has two tokens or more), then one token at a time.
        const std::size_t first = n > 1 ? n / 2 : 1;
        std::size_t fed = 0;
        for (std::size_t piece : {first, n - first, std::size_t{1}, std::size_t{1}, std::size_t{1}, std::size_t{3}}) {
            if (piece == 0) continue;
            const auto part = shaped::narrow<1, tokens>(seq_ids, fed, piece);
            const auto cached_logits = m(part, nn::use_cache);
            fed += piece;
            const auto whole = m(shaped::narrow<1, tokens>(seq_ids, 0, fed));  // uncached, every position so far
            const auto tail = shaped::narrow<1, tokens>(whole, fed - piece, piece);
            INFO("prompt length ", n, ", ", fed, " tokens fed");
            CHECK(shaped::max_abs_diff(cached_logits, tail) <= test::tolerance);
            CHECK(m.current_pos() == fed);
        }
    }
}

TEST_CASE("last_position gives the last row of the cached pass's logits, and moves the cache as that pass does") {
    auto& m = model();
    for (std::size_t n : {1, 5, 40}) {
        const auto ids = prompt_of<tokens>(2, n, n + 3);
        const auto more = prompt_of<tokens>(2, 1, n + 4);
        m.reset_kv_cache();
        const auto all = m(ids, nn::use_cache);
        const auto all_next = m(more, nn::use_cache);
        m.reset_kv_cache();
        const auto last = m(ids, nn::use_cache, nn::last_position);  // (batch, vocab_size)
        CHECK(m.current_pos() == n);
        const auto last_next = m(more, nn::use_cache, nn::last_position);
        INFO("prompt length ", n);
        CHECK(last.shape[0] == 2);
        CHECK(shaped::max_abs_diff(last, all.select<tokens>(-1)) <= test::tolerance);
        CHECK(shaped::max_abs_diff(last_next, all_next.select<tokens>(-1)) <= test::tolerance);
    }
    static_assert(std::is_same_v<decltype(model()(prompt_of<tokens>(1, 1, 1), nn::use_cache, nn::last_position)),
                                 shaped::tensor<float, batch, kv_config::vocab_size>>);
}

TEST_CASE("the cache refuses to overflow the context or to change its batch, naming what it holds") {
    auto& m = model();
    m.reset_kv_cache();
    (void)m(prompt_of<tokens>(1, 78, 1), nn::use_cache);
    CHECK(thrown([&] { (void)m(prompt_of<tokens>(1, 3, 2), nn::use_cache); }) ==
          "shaped::nn::gpt_model(in_idx, use_cache): expected at most 80 tokens (context_length) in the cache, got 78 "
          "cached + 3 new");
    (void)m(prompt_of<tokens>(1, 2, 2), nn::use_cache);  // exactly full: fine
    CHECK(m.current_pos() == 80);
    m.reset_kv_cache();
    (void)m(prompt_of<tokens>(1, 2, 3), nn::use_cache);
    CHECK(thrown([&] { (void)m(prompt_of<tokens>(2, 1, 3), nn::use_cache); }) ==
          "shaped::nn::kv_cache::append(keys, values): expected batch=1 (the batch the cache holds; reset() it for "
          "another), got batch=2");
    CHECK(thrown([&] { (void)nn::generate_text_simple_cached(m, prompt_of(1, 60, 4), 22); }) ==
          "shaped::generate_text_simple_cached(model, idx, max_new_tokens): expected prompt + max_new_tokens - 1 <= 80 "
          "(context_length), got 60 + 22 - 1");
    CHECK(nn::generate_text_simple_cached(m, prompt_of(1, 60, 4), 21).shape[1] == 81);
}

TEST_CASE("the cache's keys are their own axis: scores of new queries against cached keys need the offset mask") {
    // [cache_mask]
    struct context_length : shaped::axis<"context_length", 8> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
    struct d : shaped::axis<"d", 4> {};
    torch::manual_seed(5);
    const auto q = torch::rand<num_tokens, d>(3);                     // 3 new tokens
    const auto k = torch::rand<shaped::cached<num_tokens>, d>(7);      // 4 cached before them, 7 in all
    const auto scores = shaped::matmul(q, k.T());                      // (num_tokens, cached<num_tokens>)
    const auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>()).to<bool>();
    const auto rows = shaped::narrow<0, num_tokens>(mask, 4, 3).slice<num_tokens, shaped::cached<num_tokens>>(3, 7);
    const auto masked = scores.masked_fill(rows, -std::numeric_limits<float>::infinity());
    // [cache_mask]
    for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 7; ++j) CHECK(std::isinf(masked.at(i, j)) == (j > 4 + i));
    // The book's mask[:num_tokens, :num_tokens] has the new tokens' shape, not the scores': it does not compile
    // (tests/compile_fail/56_cache_mask_of_new_tokens.cpp).
    CHECK(thrown([&] { (void)shaped::narrow<0, num_tokens>(mask, 6, 3); }) ==
          "shaped::narrow<Dim, To>(x, start, length): expected 1 <= length <= 8 (num_tokens's bound) and start + length "
          "<= 8 (context_length), got start = 6, length = 3");
}

TEST_CASE("kv_cache::append refuses values whose batch or token count is not the keys'") {
    // Before, the values were copied with the keys' extents: shorter values were read past their end.
    struct heads : shaped::axis<"num_heads", 2> {};
    struct head_dim : shaped::axis<"head_dim", 3> {};
    struct context : shaped::axis<"context_length", 8> {};
    nn::kv_cache<heads, head_dim, context> cache;
    const auto keys = torch::rand<batch, tokens, heads, head_dim>(1, 3);
    const auto shorter = torch::rand<batch, tokens, heads, head_dim>(1, 2);
    const auto longer = torch::rand<batch, tokens, heads, head_dim>(1, 4);
    const auto wider = torch::rand<batch, tokens, heads, head_dim>(2, 3);
    const std::string expected = "shaped::nn::kv_cache::append(keys, values): expected values of the keys' batch and tokens " +
                                 keys.shape.text() + ", got ";
    CHECK(thrown([&] { (void)cache.append(keys, shorter); }) == expected + shorter.shape.text());
    CHECK(thrown([&] { (void)cache.append(keys, longer); }) == expected + longer.shape.text());
    CHECK(thrown([&] { (void)cache.append(keys, wider); }) == expected + wider.shape.text());
    CHECK(cache.size() == 0);  // nothing was stored
    const auto [k, v] = cache.append(keys, keys);
    CHECK(cache.size() == 3);
    CHECK(shaped::max_abs_diff(k, v) == 0.0);
}

TEST_CASE("kv_cache and latent_cache take memory as the sequence grows, not the whole context, and keep what they hold") {
    // Llama 3.2's context is 131,072 tokens: a cache that took it all on its first token would hold 8.6 GB for
    // the 1B model's 16 layers, whatever the sequence.
    struct heads : shaped::axis<"num_heads", 2> {};
    struct head_dim : shaped::axis<"head_dim", 3> {};
    struct context : shaped::axis<"context_length", 131072> {};
    nn::kv_cache<heads, head_dim, context> cache;
    std::vector<float> all;  // every key appended, (token, head, head_dim) for one sequence
    for (std::size_t n : {3, 1, 1, 5, 40, 1}) {
        const auto keys = torch::rand<batch, tokens, heads, head_dim>(1, n);
        all.insert(all.end(), keys.data(), keys.data() + keys.numel());
        const auto [k, v] = cache.append(keys, keys);
        const std::size_t size = cache.size();
        INFO("tokens held ", size);
        CHECK(cache.capacity_bytes() >= size * decltype(cache)::bytes_per_token);
        CHECK(cache.capacity_bytes() <= 2 * size * decltype(cache)::bytes_per_token);
        // What was held before each growth is still there: k is (1, heads, size, head_dim).
        double worst = 0;
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t t = 0; t < size; ++t)
                for (std::size_t d = 0; d < 3; ++d)
                    worst = std::max(worst, double(std::abs(k.at(0, h, t, d) - all[(t * 2 + h) * 3 + d])));
        CHECK(worst == 0.0);
        CHECK(shaped::max_abs_diff(k, v) == 0.0);
    }
    // After reset, a larger batch lays the memory out again; a smaller one reuses it.
    cache.reset();
    const auto three = torch::rand<batch, tokens, heads, head_dim>(3, 4);
    const auto [k3, v3] = cache.append(three, three);
    double worst = 0;
    for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t t = 0; t < 4; ++t)
                for (std::size_t d = 0; d < 3; ++d)
                    worst = std::max(worst, double(std::abs(k3.at(i, h, t, d) - three.at(i, t, h, d))));
    CHECK(worst == 0.0);
    CHECK(shaped::max_abs_diff(k3, v3) == 0.0);
    CHECK(cache.capacity_bytes() <= 3 * 51 * decltype(cache)::bytes_per_token);

    struct latent : shaped::axis<"latent_dim", 5> {};
    nn::latent_cache<latent, context> latents;
    for (std::size_t n : {2, 1, 9}) {
        const auto c = torch::rand<batch, tokens, latent>(2, n);
        const auto held = latents.append(c);
        CHECK(latents.capacity_bytes() <= 2 * latents.size() * 2 * decltype(latents)::bytes_per_token);
        CHECK(shaped::max_abs_diff(shaped::last<shaped::cached<tokens>, tokens>(held, n), c) == 0.0);
    }
}
