// scaled_dot_product_attention and the bonus notebook's module forms against the book's steps: the fused
// kernel computes softmax(q kᵀ / sqrt(head_dim), causal) v to within 1e-5 of matmul, masked_fill, softmax
// and matmul, for every length 1..300 and at 1024, batch 1..8, on run-time and static axes. Each of the
// kernel's paths the CPU has is tested on every shape: the public op runs the widest (AVX-512 where there is
// one), and AVX2 and AVX-512 are also forced in turn (problem::path) and compared with the plain loops.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <shaped/nn/multi_head_attention_combined_qkv.hpp>
#include <shaped/nn/multi_head_attention_sdpa.hpp>
#include <shaped/ops/scaled_dot_product_attention.hpp>
#include <string>
#include <vector>

#include "check.hpp"
#include "flash_paths.hpp"

namespace {

namespace flash = shaped::detail::flash;

constexpr double tolerance = 1e-5;

// A path's name in messages (a string: doctest prints a char pointer as an address).
std::string path_name(flash::isa path) {
    switch (path) {
        case flash::isa::portable: return "plain loops";
        case flash::isa::avx2: return "AVX2";
        case flash::isa::avx512: return "AVX-512";
        default: return "the widest path";
    }
}

// The kernel's SIMD paths that this CPU runs, AVX2 then AVX-512, each to be forced in turn (AVX2 even where
// AVX-512 is there); a MESSAGE names each path the CPU lacks, whose tests are then skipped.
std::vector<flash::isa> simd_paths() {
    std::vector<flash::isa> paths;
    for (const flash::isa path : {flash::isa::avx2, flash::isa::avx512}) {
        if (flash::resolve(path) == path)
            paths.push_back(path);
        else
            MESSAGE("this CPU has no ", path_name(path), ": the kernel's ", path_name(path), " path is not tested");
    }
    return paths;
}

// A tensor of x's type and extents, every element NaN: what the kernel fails to write shows.
template <class X>
X nan_like(const X& x) {
    X y(x.shape, shaped::uninitialized);
    std::fill_n(y.data(), y.numel(), std::numeric_limits<float>::quiet_NaN());
    return y;
}

using test::run_on_path;

struct context_length : shaped::axis<"context_length", 1024> {};
struct batch : shaped::dynamic_axis<"batch"> {};
struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
struct num_heads : shaped::axis<"num_heads", 3> {};
using keys_axis = shaped::key<num_tokens>;

// The book's causal steps (listing 3.5) on q, k, v: matmul, masked_fill with the triu mask, softmax of the
// scaled scores, matmul.
template <class Q, class K, class V, class Mask>
auto book_causal(const Q& q, const K& k, const V& v, const Mask& mask, std::size_t t) {
    auto scores = shaped::matmul(q, k.template transpose<-2, -1>());
    auto masked = scores.masked_fill(mask.template slice<num_tokens, keys_axis>(t, t).template to<bool>(),
                                     -std::numeric_limits<float>::infinity());
    const float scale = std::sqrt(static_cast<float>(q.shape.extent(q.rank - 1)));
    return shaped::matmul(shaped::softmax<-1>(masked / scale), v);
}

template <class HeadDim>
struct qkv {
    shaped::tensor<float, batch, num_heads, num_tokens, HeadDim> q;
    shaped::tensor<float, batch, num_heads, keys_axis, HeadDim> k, v;
};
template <class HeadDim>
qkv<HeadDim> random_qkv(std::size_t b, std::size_t t, std::uint64_t seed) {
    shaped::torch::manual_seed(seed);
    auto q = shaped::torch::randn<batch, num_heads, num_tokens, HeadDim>(b, t);
    auto k = shaped::torch::randn<batch, num_heads, num_tokens, HeadDim>(b, t).template rename<batch, num_heads, keys_axis, HeadDim>();
    auto v = shaped::torch::randn<batch, num_heads, num_tokens, HeadDim>(b, t).template rename<batch, num_heads, keys_axis, HeadDim>();
    return {std::move(q), std::move(k), std::move(v)};
}

// The public op and each forced SIMD path in `paths` against the book's steps.
template <class HeadDim>
void check_lengths(const std::vector<flash::isa>& paths, std::size_t b, std::size_t first, std::size_t last,
                   std::size_t step = 1) {
    const auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>());
    double worst = 0;
    for (std::size_t t = first; t <= last; t += step) {
        const auto [q, k, v] = random_qkv<HeadDim>(b, t, 1000 + t);
        const auto fused = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal);
        const auto book = book_causal(q, k, v, mask, t);
        const double diff = shaped::max_abs_diff(fused, book);
        INFO("batch ", b, ", num_tokens ", t, ", head_dim ", HeadDim::extent);
        REQUIRE(diff <= tolerance);
        worst = std::max(worst, diff);
        for (const flash::isa path : paths) {
            auto forced = nan_like(fused);
            run_on_path(forced, q, k, v, true, path);
            const double forced_diff = shaped::max_abs_diff(forced, book);
            INFO("path ", path_name(path));
            REQUIRE(forced_diff <= tolerance);
            worst = std::max(worst, forced_diff);
        }
    }
    MESSAGE("head_dim ", HeadDim::extent, ", batch ", b, ", lengths ", first, "..", last, ": max |fused - book| = ", worst,
            " over the widest path and ", paths.size(), " forced");
}

}  // namespace

TEST_CASE("scaled_dot_product_attention, causal, equals the book's steps at every length 1..300 and at 1024") {
    struct head_dim : shaped::axis<"head_dim", 64> {};
    const auto paths = simd_paths();
    check_lengths<head_dim>(paths, 1, 1, 300);
    check_lengths<head_dim>(paths, 2, 1024, 1024);
    for (std::size_t b : {3, 8}) check_lengths<head_dim>(paths, b, 1, 300, 37);
    // head_dim not a multiple of the kernel's 16-wide panels: the values are padded.
    struct head_dim_2 : shaped::axis<"head_dim", 2> {};
    struct head_dim_20 : shaped::axis<"head_dim", 20> {};
    check_lengths<head_dim_2>(paths, 2, 1, 140, 3);
    check_lengths<head_dim_20>(paths, 2, 1, 300, 7);
}

TEST_CASE("scaled_dot_product_attention on static axes: the seed's sizes and the book's, transposed operands read in place") {
    struct b2 : shaped::axis<"batch", 2> {};
    struct context_6 : shaped::axis<"context_length", 6> {};
    struct tokens : shaped::axis<"num_tokens", 6, shaped::at_most<context_6>> {};
    struct heads : shaped::axis<"num_heads", 2> {};
    struct head_dim : shaped::axis<"head_dim", 2> {};  // num_tokens == ... and head_dim == num_heads
    shaped::torch::manual_seed(123);
    // (b, num_tokens, num_heads, head_dim) transposed to (b, num_heads, num_tokens, head_dim), as the book does.
    auto q = shaped::torch::rand<b2, tokens, heads, head_dim>().transpose<1, 2>();
    auto k = shaped::torch::rand<b2, tokens, heads, head_dim>().transpose<1, 2>().rename<b2, heads, shaped::key<tokens>, head_dim>();
    auto v = shaped::torch::rand<b2, tokens, heads, head_dim>().transpose<1, 2>().rename<b2, heads, shaped::key<tokens>, head_dim>();
    const auto fused = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(fused)>, shaped::tensor<float, b2, heads, tokens, head_dim>>);
    const auto mask = shaped::triu<1>(shaped::ones<context_6, context_6>()).slice<tokens, shaped::key<tokens>>().to<bool>();
    auto scores = shaped::matmul(q, k.transpose<2, 3>()).masked_fill(mask, -std::numeric_limits<float>::infinity());
    const auto book = shaped::matmul(shaped::softmax<-1>(scores / std::sqrt(2.0f)), v);
    CHECK(shaped::max_abs_diff(fused, book) <= tolerance);
    // Not causal: every query sees every key.
    const auto full = shaped::scaled_dot_product_attention(q, k, v);
    const auto book_full = shaped::matmul(shaped::softmax<-1>(shaped::matmul(q, k.transpose<2, 3>()) / std::sqrt(2.0f)), v);
    CHECK(shaped::max_abs_diff(full, book_full) <= tolerance);
    CHECK(shaped::max_abs_diff(full, fused) > 1e-3);  // the comparison can fail: the mask matters
    // Each SIMD path forced, on the transposed operands read in place.
    for (const flash::isa path : simd_paths()) {
        INFO("path ", path_name(path));
        auto forced = nan_like(fused);
        run_on_path(forced, q, k, v, true, path);
        CHECK(shaped::max_abs_diff(forced, book) <= tolerance);
        auto forced_full = nan_like(full);
        run_on_path(forced_full, q, k, v, false, path);
        CHECK(shaped::max_abs_diff(forced_full, book_full) <= tolerance);
    }
}

TEST_CASE("scaled_dot_product_attention against cached keys: new queries see the keys up to their own positions") {
    struct head_dim : shaped::axis<"head_dim", 32> {};
    using cached_keys = shaped::cached<num_tokens>;
    const auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>());
    const auto paths = simd_paths();
    for (std::size_t before : {0u, 1u, 63u, 64u, 200u}) {
        for (std::size_t t : {1u, 5u, 70u}) {
            const std::size_t all = before + t;
            shaped::torch::manual_seed(before * 100 + t);
            auto q = shaped::torch::randn<batch, num_heads, num_tokens, head_dim>(2, t);
            auto k = shaped::torch::randn<batch, num_heads, cached_keys, head_dim>(2, all);
            auto v = shaped::torch::randn<batch, num_heads, cached_keys, head_dim>(2, all);
            const auto fused = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal);
            // The book's cache mask: rows before .. before + t - 1 of the causal mask, keys 0 .. all - 1.
            auto rows = shaped::narrow<0, num_tokens>(mask, before, t).slice<num_tokens, cached_keys>(t, all).to<bool>();
            auto scores = shaped::matmul(q, k.transpose<2, 3>()).masked_fill(rows, -std::numeric_limits<float>::infinity());
            const auto book = shaped::matmul(shaped::softmax<-1>(scores / std::sqrt(32.0f)), v);
            INFO("cached before ", before, ", new ", t);
            CHECK(shaped::max_abs_diff(fused, book) <= tolerance);
            for (const flash::isa path : paths) {
                INFO("path ", path_name(path));
                auto forced = nan_like(fused);
                run_on_path(forced, q, k, v, true, path);
                CHECK(shaped::max_abs_diff(forced, book) <= tolerance);
            }
        }
    }
}

TEST_CASE("the kernel's AVX2 and AVX-512 paths and its plain loops compute the same attention") {
    struct head_dim : shaped::axis<"head_dim", 48> {};
    const auto paths = simd_paths();
    for (std::size_t t : {1u, 17u, 64u, 129u, 300u}) {
        const auto [q, k, v] = random_qkv<head_dim>(2, t, t);
        const auto fused = shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal);
        auto plain = nan_like(fused);
        run_on_path(plain, q, k, v, true, flash::isa::portable);
        INFO("num_tokens ", t);
        CHECK(shaped::max_abs_diff(fused, plain) <= tolerance);
        for (const flash::isa path : paths) {
            INFO("path ", path_name(path));
            auto forced = nan_like(fused);
            run_on_path(forced, q, k, v, true, path);
            CHECK(shaped::max_abs_diff(forced, plain) <= tolerance);
        }
    }
}

namespace {

// One attention problem on plain row-major buffers: nb matrices of q (lq × d), k (lk × d), v (lk × dv); with
// `causal`, query i sees keys 0 .. lk - lq + i (the cache's offset mask; PyTorch's mask when lk == lq).
struct attention_case {
    std::string what;
    std::size_t nb = 2, lq = 0, lk = 0, d = 0, dv = 0;
    bool causal = false;
    std::vector<float> q, k, v;
    float& q_at(std::size_t b, std::size_t i, std::size_t p) { return q[(b * lq + i) * d + p]; }
    float& k_at(std::size_t b, std::size_t j, std::size_t p) { return k[(b * lk + j) * d + p]; }
    float& v_at(std::size_t b, std::size_t j, std::size_t c) { return v[(b * lk + j) * dv + c]; }
};

attention_case random_case(std::size_t lq, std::size_t lk, std::size_t d, std::size_t dv, bool causal,
                           std::uint64_t seed) {
    attention_case c{"", 2, lq, lk, d, dv, causal, {}, {}, {}};
    shaped::torch::manual_seed(seed);
    auto draw = [](std::size_t n) {
        const auto x = shaped::torch::randn<batch>(n);
        return std::vector<float>(x.data(), x.data() + n);
    };
    c.q = draw(c.nb * lq * d);
    c.k = draw(c.nb * lk * d);
    c.v = draw(c.nb * lk * dv);
    return c;
}

// The kernel on a case, on `path` (at most: the CPU's widest below it where it lacks that one).
std::vector<float> run_kernel(const attention_case& c, flash::isa path) {
    std::vector<float> out(c.nb * c.lq * c.dv);
    flash::problem<1> pb;
    pb.batch = {c.nb};
    pb.lq = c.lq;
    pb.lk = c.lk;
    pb.d = c.d;
    pb.dv = c.dv;
    pb.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.d)));
    pb.causal = c.causal;
    pb.offset = c.causal ? c.lk - c.lq : 0;
    pb.path = path;
    pb.threads = 1;
    pb.q = {c.q.data(), {c.lq * c.d}, c.d};
    pb.k = {c.k.data(), {c.lk * c.d}, c.d};
    pb.v = {c.v.data(), {c.lk * c.dv}, c.dv};
    pb.out = {out.data(), {c.lq * c.dv}, c.dv};
    flash::run(pb);
    return out;
}

// PyTorch's math path, softmax(q kᵀ · scale [+ mask]) v, in double over the keys each query sees: a NaN score,
// a maximum of +inf (inf - inf) or of -inf (softmax of all -inf) makes the row NaN; a -inf score weighs 0,
// and 0 · inf or 0 · NaN in v is NaN, as in any product.
std::vector<double> reference_attention(const attention_case& c) {
    const double scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.d)));
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    std::vector<double> out(c.nb * c.lq * c.dv), s(c.lk);
    for (std::size_t b = 0; b < c.nb; ++b)
        for (std::size_t i = 0; i < c.lq; ++i) {
            const std::size_t seen = c.causal ? c.lk - c.lq + i + 1 : c.lk;
            double mx = -inf;
            bool has_nan = false;
            for (std::size_t j = 0; j < seen; ++j) {
                double dot = 0;
                for (std::size_t p = 0; p < c.d; ++p)
                    dot += c.q[(b * c.lq + i) * c.d + p] * scale * c.k[(b * c.lk + j) * c.d + p];
                s[j] = dot;
                has_nan = has_nan || std::isnan(dot);
                mx = std::max(mx, dot);
            }
            double* o = out.data() + (b * c.lq + i) * c.dv;
            if (has_nan || std::isinf(mx)) {
                std::fill_n(o, c.dv, nan);
                continue;
            }
            double l = 0;
            for (std::size_t j = 0; j < seen; ++j) l += (s[j] = std::exp(s[j] - mx));
            for (std::size_t e = 0; e < c.dv; ++e) {
                double acc = 0;
                for (std::size_t j = 0; j < seen; ++j) acc += s[j] / l * c.v[(b * c.lk + j) * c.dv + e];
                o[e] = acc;
            }
        }
    return out;
}

// How many elements of `got` differ from `want`, NaN-aware: NaN where `want` is NaN, the same infinity where it
// is infinite, within the file's tolerance where it is finite; the first difference in `first`.
template <class A, class B>
std::size_t count_differences(const std::vector<A>& got, const std::vector<B>& want, std::string& first) {
    std::size_t n = 0;
    for (std::size_t e = 0; e < want.size(); ++e) {
        const double g = got[e], w = want[e];
        const bool same = std::isnan(w)   ? std::isnan(g)
                          : std::isinf(w) ? g == w
                                          : std::isfinite(g) && std::abs(g - w) <= tolerance;
        if (!same && n++ == 0) first = "element " + std::to_string(e) + ": " + std::to_string(g) + " against " + std::to_string(w);
    }
    return n;
}

template <class X>
std::vector<float> to_vector(const X& x) {
    const auto& elements = x.storage();  // row-major
    return std::vector<float>(elements.data(), elements.data() + x.numel());
}

// Every injection of NaN and infinities into batch matrix 1 of a random case (matrix 0 stays finite).
std::vector<attention_case> non_finite_cases(std::size_t lq, std::size_t lk, std::size_t d, std::size_t dv,
                                             bool causal, std::uint64_t seed) {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const auto base = random_case(lq, lk, d, dv, causal, seed);
    std::vector<attention_case> cases;
    auto add = [&](std::string what, auto&& change) {
        cases.push_back(base);
        cases.back().what = std::move(what);
        change(cases.back());
    };
    const std::size_t first = 0, middle = lk / 2, last = lk - 1;
    for (std::size_t j : {first, middle, last})
        add("NaN in key " + std::to_string(j), [&](attention_case& c) { c.k_at(1, j, d / 2) = nan; });
    add("NaN in the middle query", [&](attention_case& c) { c.q_at(1, lq / 2, 0) = nan; });
    for (std::size_t j : {first, last})
        add("NaN in the value of key " + std::to_string(j), [&](attention_case& c) { c.v_at(1, j, 1) = nan; });
    add("+inf in the value of the middle key, -inf in the last's", [&](attention_case& c) {
        c.v_at(1, middle, 2) = inf;
        c.v_at(1, last, 2) = -inf;
    });
    // Keys all positive along axis 0: a query's -inf there makes its every score -inf, a +inf every score +inf.
    add("-inf scores for every key of the first, middle and last queries, +inf for the second's", [&](attention_case& c) {
        for (std::size_t j = 0; j < lk; ++j) c.k_at(1, j, 0) = std::abs(c.k_at(1, j, 0)) + 0.5f;
        for (std::size_t i : {std::size_t{0}, lq / 2, lq - 1}) c.q_at(1, i, 0) = -inf;
        if (lq > 2) c.q_at(1, 1, 0) = inf;
    });
    add("+inf in a query: scores of both infinities", [&](attention_case& c) { c.q_at(1, lq - 1, 1) = inf; });
    // Queries all negative along axis 0: a key's +inf there gives it -inf scores, weight 0.
    auto negative_queries = [&](attention_case& c) {
        for (std::size_t i = 0; i < lq; ++i) c.q_at(1, i, 0) = -std::abs(c.q_at(1, i, 0)) - 0.5f;
    };
    add("-inf scores for keys 0, every third and the last", [&](attention_case& c) {
        negative_queries(c);
        for (std::size_t j = 0; j < lk; j += 3) c.k_at(1, j, 0) = inf;
        c.k_at(1, last, 0) = inf;
    });
    add("-inf scores for the first 128 keys (a whole tile of keys), finite after", [&](attention_case& c) {
        negative_queries(c);
        for (std::size_t j = 0; j < std::min<std::size_t>(lk, 128); ++j) c.k_at(1, j, 0) = inf;
    });
    add("-inf scores for keys whose values are +inf (0 · inf)", [&](attention_case& c) {
        negative_queries(c);
        for (std::size_t j : {first, middle}) {
            c.k_at(1, j, 0) = inf;
            c.v_at(1, j, 0) = inf;
        }
    });
    for (auto& c : cases) c.what += (causal ? ", causal, " : ", ") + std::to_string(lq) + " queries, " + std::to_string(lk) +
                                    " keys, head_dim " + std::to_string(d) + ", value dim " + std::to_string(dv);
    return cases;
}

}  // namespace

TEST_CASE("the kernel's AVX2 and AVX-512 paths and its plain loops give PyTorch's NaN and infinities") {
    // softmax(q kᵀ · scale [+ mask]) v as PyTorch's math path computes it, over the keys each query sees: the
    // AVX2 path once dropped NaN (its maximum and its exp's clamp) and gave finite rows for all -inf scores.
    // Each SIMD path the CPU has is forced in turn, AVX2 even where AVX-512 is there, and AVX-512 must also
    // agree with AVX2.
    const auto paths = simd_paths();
    MESSAGE(paths.size(), " SIMD paths compared with the plain loops, the math and the book's steps");
    struct head_dim_any : shaped::dynamic_axis<"head_dim"> {};
    const auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>());
    std::size_t total = 0, plain_vs_math = 0, book_checked = 0;
    // Per path: cases that differ from the plain loops, from the math, from AVX2 (AVX-512 only).
    std::vector<std::size_t> vs_plain(paths.size()), vs_math(paths.size()), vs_avx2(paths.size());
    struct sizes {
        std::size_t lq, lk, d, dv;
        bool causal;
    };
    // One tile and several (64 queries, 128 keys a tile), ragged edges, cached keys (lk > lq, causal).
    for (const sizes s : {sizes{1, 1, 20, 20, true}, sizes{5, 5, 20, 20, false}, sizes{17, 17, 32, 48, true},
                          sizes{64, 64, 20, 20, true}, sizes{65, 65, 32, 48, false}, sizes{129, 129, 20, 20, true},
                          sizes{129, 129, 32, 48, false}, sizes{300, 300, 20, 20, true}, sizes{300, 300, 32, 48, false},
                          sizes{70, 300, 32, 48, false}, sizes{3, 129, 20, 20, false}, sizes{5, 133, 20, 20, true},
                          sizes{70, 300, 32, 48, true}}) {
        for (const auto& c : non_finite_cases(s.lq, s.lk, s.d, s.dv, s.causal, 100 * s.lq + s.lk)) {
            INFO(c.what);
            const auto plain = run_kernel(c, flash::isa::portable);
            const auto math = reference_attention(c);
            std::string first;
            const std::size_t n_plain_math = count_differences(plain, math, first);
            CHECK_MESSAGE(n_plain_math == 0, n_plain_math, " elements differ between plain loops and the math, first ", first);
            ++total;
            plain_vs_math += n_plain_math != 0;
            // The book's steps (PyTorch's math path) where they read the same keys: square, finite values (the
            // math path multiplies the values of masked keys by 0, so their NaN would reach every query).
            const bool finite_v = std::all_of(c.v.begin(), c.v.end(), [](float x) { return std::isfinite(x); });
            std::vector<float> book_v;
            if (c.lq == c.lk && (finite_v || !c.causal)) {
                using q_t = shaped::tensor<float, batch, num_tokens, head_dim_any>;
                using k_t = shaped::tensor<float, batch, keys_axis, head_dim_any>;
                const auto q = q_t::from_buffer(c.q, c.nb, c.lq, c.d);
                const auto k = k_t::from_buffer(c.k, c.nb, c.lk, c.d);
                const auto v = k_t::from_buffer(c.v, c.nb, c.lk, c.dv);
                if (c.causal) {
                    book_v = to_vector(book_causal(q, k, v, mask, c.lq));
                } else {
                    const auto scores = shaped::matmul(q, k.transpose<-2, -1>());
                    book_v = to_vector(shaped::matmul(shaped::softmax<-1>(scores / std::sqrt(static_cast<float>(c.d))), v));
                }
                ++book_checked;
            }
            std::vector<float> avx2;
            for (std::size_t i = 0; i < paths.size(); ++i) {
                const std::string name = path_name(paths[i]);
                const auto fast = run_kernel(c, paths[i]);
                const std::size_t n_fast_plain = count_differences(fast, plain, first);
                CHECK_MESSAGE(n_fast_plain == 0, n_fast_plain, " elements differ between ", name, " and plain loops, first ", first);
                const std::size_t n_fast_math = count_differences(fast, math, first);
                CHECK_MESSAGE(n_fast_math == 0, n_fast_math, " elements differ between ", name, " and the math, first ", first);
                vs_plain[i] += n_fast_plain != 0;
                vs_math[i] += n_fast_math != 0;
                if (paths[i] == flash::isa::avx2) avx2 = fast;
                if (paths[i] == flash::isa::avx512 && !avx2.empty()) {
                    const std::size_t n_avx2 = count_differences(fast, avx2, first);
                    CHECK_MESSAGE(n_avx2 == 0, n_avx2, " elements differ between AVX-512 and AVX2, first ", first);
                    vs_avx2[i] += n_avx2 != 0;
                }
                if (!book_v.empty()) {
                    const std::size_t n_book = count_differences(fast, book_v, first);
                    CHECK_MESSAGE(n_book == 0, n_book, " elements differ between ", name, " and the book's steps, first ", first);
                }
            }
        }
    }
    MESSAGE(total, " cases (", book_checked, " also against the book's steps); the plain loops differ from the math in ",
            plain_vs_math);
    for (std::size_t i = 0; i < paths.size(); ++i)
        MESSAGE(path_name(paths[i]), " differs from the plain loops in ", vs_plain[i], " cases, from the math in ",
                vs_math[i], paths[i] == flash::isa::avx512 ? ", from AVX2 in " + std::to_string(vs_avx2[i]) : std::string());
    // The public op takes the same path as run_kernel(c, best).
    auto c = non_finite_cases(129, 129, 20, 20, true, 5)[0];
    using q_t = shaped::tensor<float, batch, num_tokens, head_dim_any>;
    using k_t = shaped::tensor<float, batch, keys_axis, head_dim_any>;
    const auto fused = shaped::scaled_dot_product_attention(q_t::from_buffer(c.q, c.nb, c.lq, c.d),
                                                            k_t::from_buffer(c.k, c.nb, c.lk, c.d),
                                                            k_t::from_buffer(c.v, c.nb, c.lk, c.dv), shaped::is_causal);
    std::string first;
    CHECK(count_differences(to_vector(fused), run_kernel(c, flash::isa::best), first) == 0);
}

TEST_CASE("the kernel's threads share out the tiles: 1, 2 and 4 threads give the same bits") {
    struct head_dim : shaped::axis<"head_dim", 64> {};
    auto paths = simd_paths();
    paths.push_back(flash::isa::portable);
    for (const flash::isa path : paths)
        for (std::size_t t : {5u, 200u}) {
            const auto [q, k, v] = random_qkv<head_dim>(3, t, t + 7);
            std::vector<shaped::tensor<float, batch, num_heads, num_tokens, head_dim>> outs;
            for (std::size_t threads : {1u, 2u, 4u}) {
                outs.emplace_back(q.shape, shaped::uninitialized);
                flash::problem<2> pb;
                pb.batch = {3, num_heads::extent};
                pb.lq = pb.lk = t;
                pb.d = pb.dv = head_dim::extent;
                pb.scale = 0.125f;
                pb.causal = true;
                pb.threads = threads;
                pb.path = path;
                const std::size_t per_head = t * head_dim::extent;
                pb.q = {q.data(), {num_heads::extent * per_head, per_head}, head_dim::extent};
                pb.k = {k.data(), {num_heads::extent * per_head, per_head}, head_dim::extent};
                pb.v = {v.data(), {num_heads::extent * per_head, per_head}, head_dim::extent};
                pb.out = {outs.back().data(), {num_heads::extent * per_head, per_head}, head_dim::extent};
                flash::run(pb);
            }
            INFO("num_tokens ", t, ", path ", path_name(path));
            CHECK(shaped::max_abs_diff(outs[0], outs[1]) == 0.0);
            CHECK(shaped::max_abs_diff(outs[0], outs[2]) == 0.0);
            CHECK(shaped::max_abs_diff(outs[0], shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal)) <= tolerance);
        }
}

TEST_CASE("the kernel reads queries, keys and values in place from one qkv buffer: the same bits as from their own") {
    // The fused module's layout: per token one row of the combined projection, [queries | keys | values], each
    // head's d (or dv) values side by side, rows 3·d_out apart. Where several query tiles read a head's keys and
    // values (more than 64 queries, or a group of query heads), the kernel copies them into adjacent rows once
    // per thread; the copy must change nothing: the same bits as the kernel on separate, adjacent operands.
    struct shape_case {
        std::size_t nb, kv_heads, group, lq, lk, d, dv;
        bool causal;
        std::size_t window;
        bool inf_value;  // an infinite value in a tile that the causal mask cuts: the kernel adds key by key
        const char* what;
    };
    auto paths = simd_paths();
    paths.push_back(flash::isa::portable);
    for (const shape_case& c :
         {shape_case{2, 3, 1, 130, 130, 64, 64, true, 0, false, "GPT-2's layout, three query tiles"},
          shape_case{1, 2, 1, 200, 300, 32, 20, true, 0, false, "cached keys (offset 100), values padded to 32"},
          shape_case{1, 2, 1, 150, 150, 16, 16, true, 40, false, "a sliding window of 40"},
          shape_case{2, 2, 2, 64, 64, 64, 64, true, 0, false, "one query tile, groups of two query heads"},
          shape_case{1, 1, 3, 100, 100, 20, 48, false, 0, false, "not causal, groups of three"},
          shape_case{1, 2, 1, 140, 140, 64, 64, true, 0, true, "an infinite value under the causal mask"}}) {
        const std::size_t hq = c.kv_heads * c.group, row = hq * c.d + c.kv_heads * (c.d + c.dv);
        // Tokens of the keys and values; the queries are the last lq of them (as in the module, one buffer).
        std::vector<float> qkv_buffer(c.nb * c.lk * row);
        shaped::torch::manual_seed(c.lq * 1000 + c.lk);
        const auto draws = shaped::torch::randn<batch>(qkv_buffer.size());
        std::copy_n(draws.data(), qkv_buffer.size(), qkv_buffer.data());
        const std::size_t k_at = hq * c.d, v_at = k_at + c.kv_heads * c.d, first_q = c.lk - c.lq;
        if (c.inf_value) qkv_buffer[(c.lk - 3) * row + v_at + 1] = std::numeric_limits<float>::infinity();
        // The same operands, each head's rows adjacent: (batch, head, token, d).
        std::vector<float> q(c.nb * hq * c.lq * c.d), k(c.nb * c.kv_heads * c.lk * c.d), v(c.nb * c.kv_heads * c.lk * c.dv);
        for (std::size_t b = 0; b < c.nb; ++b)
            for (std::size_t t = 0; t < c.lk; ++t) {
                const float* src = qkv_buffer.data() + (b * c.lk + t) * row;
                for (std::size_t h = 0; h < c.kv_heads; ++h) {
                    std::copy_n(src + k_at + h * c.d, c.d, k.data() + ((b * c.kv_heads + h) * c.lk + t) * c.d);
                    std::copy_n(src + v_at + h * c.dv, c.dv, v.data() + ((b * c.kv_heads + h) * c.lk + t) * c.dv);
                }
                if (t >= first_q)
                    for (std::size_t h = 0; h < hq; ++h)
                        std::copy_n(src + h * c.d, c.d, q.data() + ((b * hq + h) * c.lq + t - first_q) * c.d);
            }
        for (const flash::isa path : paths)
            for (std::size_t threads : {1u, 2u}) {
                auto problem = [&] {
                    flash::problem<2> pb;
                    pb.batch = {c.nb, hq};
                    pb.group = c.group;
                    pb.lq = c.lq;
                    pb.lk = c.lk;
                    pb.d = c.d;
                    pb.dv = c.dv;
                    pb.scale = 0.25f;
                    pb.causal = c.causal;
                    pb.offset = c.causal ? first_q : 0;
                    pb.window = c.window;
                    pb.path = path;
                    pb.threads = threads;
                    return pb;
                };
                std::vector<float> in_place(c.nb * c.lq * hq * c.dv, -1.0f), adjacent(in_place.size(), -2.0f);
                // Both write (batch, token, head, dv), as the module's output.
                flash::problem<2> strided = problem();
                strided.q = {qkv_buffer.data() + first_q * row, {c.lk * row, c.d}, row};
                strided.k = {qkv_buffer.data() + k_at, {c.lk * row, c.d}, row};
                strided.v = {qkv_buffer.data() + v_at, {c.lk * row, c.dv}, row};
                strided.out = {in_place.data(), {c.lq * hq * c.dv, c.dv}, hq * c.dv};
                flash::run(strided);
                flash::problem<2> separate = problem();
                separate.q = {q.data(), {hq * c.lq * c.d, c.lq * c.d}, c.d};
                separate.k = {k.data(), {c.kv_heads * c.lk * c.d, c.lk * c.d}, c.d};
                separate.v = {v.data(), {c.kv_heads * c.lk * c.dv, c.lk * c.dv}, c.dv};
                separate.out = {adjacent.data(), {c.lq * hq * c.dv, c.dv}, hq * c.dv};
                flash::run(separate);
                INFO(std::string(c.what), ", path ", path_name(path), ", threads ", threads);
                std::size_t differ = 0, non_finite = 0;
                for (std::size_t e = 0; e < in_place.size(); ++e) {
                    differ += std::memcmp(&in_place[e], &adjacent[e], sizeof(float)) != 0;
                    non_finite += !std::isfinite(in_place[e]);
                }
                CHECK(differ == 0);
                // The infinite value reaches the outputs of the queries that see its key, at its column, and no
                // other: queries lq - 3 .. lq - 1 of each batch and query head of its key and value head (0).
                CHECK(non_finite == (c.inf_value ? 3 * c.group : 0));
            }
    }
}

TEST_CASE("scaled_dot_product_attention refuses run-time extents that differ, naming the axis and both extents") {
    struct head_dim : shaped::axis<"head_dim", 8> {};
    const auto [q, k, v] = random_qkv<head_dim>(2, 5, 1);
    const auto [q3, k3, v3] = random_qkv<head_dim>(3, 5, 1);
    const auto [q7, k7, v7] = random_qkv<head_dim>(2, 7, 1);
    CHECK_THROWS_WITH_AS(shaped::scaled_dot_product_attention(q3, k, v, shaped::is_causal),
                         doctest::Contains("scaled_dot_product_attention(q, k, v): batch is 3 in q but 2 in k"),
                         shaped::shape_error);
    CHECK_THROWS_WITH_AS(shaped::scaled_dot_product_attention(q, k, v7),
                         doctest::Contains("key<num_tokens> is 5 in k but 7 in v"), shaped::shape_error);
    CHECK_THROWS_WITH_AS(shaped::scaled_dot_product_attention(q7, k, v, shaped::is_causal),
                         doctest::Contains("expected as many keys as queries"), shaped::shape_error);
    CHECK_THROWS_WITH_AS(shaped::scaled_dot_product_attention(q, k, v, shaped::is_causal, 0.1),
                         doctest::Contains("dropout_p = 0.1"), std::invalid_argument);
    // Not causal, queries and keys may differ in number when the keys are on their own axis.
    CHECK(shaped::scaled_dot_product_attention(q7, k, v).shape.extent(2) == 7);
    // Keys on the queries' own num_tokens are that axis: one extent, as a + b requires (before, 5 queries
    // against 7 keys of the same axis ran).
    const auto k_own = k7.rename<batch, num_heads, num_tokens, head_dim>();
    const auto v_own = v7.rename<batch, num_heads, num_tokens, head_dim>();
    CHECK_THROWS_WITH_AS(shaped::scaled_dot_product_attention(q, k_own, v_own),
                         doctest::Contains("scaled_dot_product_attention(q, k, v): num_tokens is 5 in q but 7 in k"),
                         shaped::shape_error);
    const auto k_five = k.rename<batch, num_heads, num_tokens, head_dim>();
    const auto v_five = v.rename<batch, num_heads, num_tokens, head_dim>();
    CHECK(shaped::max_abs_diff(shaped::scaled_dot_product_attention(q, k_five, v_five),
                               shaped::scaled_dot_product_attention(q, k, v)) == 0.0);
}

namespace {

struct d_in : shaped::axis<"d_in", 32> {};
struct d_out : shaped::axis<"d_out", 48> {};
struct heads : shaped::axis<"num_heads", 4> {};
struct context_300 : shaped::axis<"context_length", 300> {};
struct tokens_300 : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_300>> {};

using book_mha = shaped::nn::multi_head_attention<d_in, d_out, context_300, heads>;
using combined_mha = shaped::nn::multi_head_attention_combined_qkv<d_in, d_out, context_300, heads>;
using sdpa_mha = shaped::nn::multi_head_attention_sdpa<d_in, d_out, context_300, heads>;

// The combined projection's weight is [W_query; W_key; W_value], its bias likewise; proj is out_proj.
template <class Book, class Combined>
void copy_weights(const Book& from, Combined& to) {
    const std::size_t n = from.W_query.weight.numel(), d = n / from.W_query.weight.shape.extent(1);
    std::memcpy(to.qkv.weight.data(), from.W_query.weight.data(), n * sizeof(float));
    std::memcpy(to.qkv.weight.data() + n, from.W_key.weight.data(), n * sizeof(float));
    std::memcpy(to.qkv.weight.data() + 2 * n, from.W_value.weight.data(), n * sizeof(float));
    if (from.W_query.bias) {
        REQUIRE(to.qkv.bias);
        std::memcpy(to.qkv.bias->data(), from.W_query.bias->data(), d * sizeof(float));
        std::memcpy(to.qkv.bias->data() + d, from.W_key.bias->data(), d * sizeof(float));
        std::memcpy(to.qkv.bias->data() + 2 * d, from.W_value.bias->data(), d * sizeof(float));
    }
    to.proj.weight = from.out_proj.weight;
    to.proj.bias = from.out_proj.bias;
}

}  // namespace

TEST_CASE("the three module forms compute the same attention with the same weights, every length 1..300") {
    for (bool qkv_bias : {false, true}) {
        shaped::torch::manual_seed(123);
        book_mha book(0.0, qkv_bias);
        combined_mha combined(shaped::nn::skip_init, 0.0, qkv_bias);
        sdpa_mha fused(shaped::nn::skip_init, 0.0, qkv_bias);
        copy_weights(book, combined);
        copy_weights(book, fused);
        fused.eval();
        double worst_combined = 0, worst_fused = 0;
        for (std::size_t t = 1; t <= 300; ++t) {
            const std::size_t b = 1 + t % 8;
            const auto x = shaped::torch::rand<batch, tokens_300, d_in>(b, t);
            const auto y = book(x);
            const double dc = shaped::max_abs_diff(combined(x), y), df = shaped::max_abs_diff(fused(x), y);
            INFO("qkv_bias ", qkv_bias, ", batch ", b, ", num_tokens ", t);
            REQUIRE(dc <= tolerance);
            REQUIRE(df <= tolerance);
            worst_combined = std::max(worst_combined, dc);
            worst_fused = std::max(worst_fused, df);
        }
        MESSAGE("qkv_bias ", qkv_bias, ": max |combined - book| = ", worst_combined, ", max |sdpa - book| = ", worst_fused);
        // The comparison can fail: another weight gives another output.
        const auto x = shaped::torch::rand<batch, tokens_300, d_in>(2, 9);
        fused.proj.weight = fused.proj.weight * 1.01f;
        CHECK(shaped::max_abs_diff(fused(x), book(x)) > 1e-4);
    }
}

TEST_CASE("the module forms on static axes, and the combined form's names and creation order") {
    struct b2 : shaped::axis<"batch", 2> {};
    struct tokens : shaped::axis<"num_tokens", 6, shaped::at_most<context_300>> {};
    shaped::torch::manual_seed(7);
    book_mha book(0.0);
    shaped::torch::manual_seed(7);
    combined_mha combined(0.0);
    // qkv (3·d_out × d_in) is drawn first, then proj: the notebook's order; its first d_out rows take the
    // book's first draws, which are W_query's.
    CHECK(std::memcmp(combined.qkv.weight.data(), book.W_query.weight.data(), 8 * sizeof(float)) == 0);
    sdpa_mha fused(shaped::nn::skip_init, 0.0);
    copy_weights(book, combined);
    copy_weights(book, fused);
    fused.eval();
    const auto x = shaped::torch::rand<b2, tokens, d_in>();
    const auto y = book(x);
    CHECK(shaped::max_abs_diff(combined(x), y) <= tolerance);
    CHECK(shaped::max_abs_diff(fused(x), y) <= tolerance);
    CHECK(shaped::nn::state_dict_keys(combined) ==
          std::vector<std::string>{"mask", "qkv.weight", "proj.weight", "proj.bias"});
    CHECK(shaped::nn::state_dict_keys(fused) == std::vector<std::string>{"qkv.weight", "proj.weight", "proj.bias"});
}

TEST_CASE("the fused module refuses dropout in training mode, and its KV cache gives the uncached outputs") {
    sdpa_mha fused(0.1);
    const auto x = shaped::torch::rand<batch, tokens_300, d_in>(2, 9);
    CHECK_THROWS_WITH_AS(fused(x), doctest::Contains("the fused kernel has no dropout"), std::invalid_argument);
    fused.eval();
    const auto whole = fused(x);
    // The same 9 tokens fed as 4, 1 and 4 through the cache.
    fused.reset_cache();
    auto part = [&](std::size_t start, std::size_t n) { return shaped::narrow<1, tokens_300>(x, start, n); };
    const auto y0 = fused(part(0, 4), shaped::nn::use_cache);
    const auto y1 = fused(part(4, 1), shaped::nn::use_cache);
    const auto y2 = fused(part(5, 4), shaped::nn::use_cache);
    CHECK(shaped::max_abs_diff(y0, shaped::narrow<1, tokens_300>(whole, 0, 4)) <= tolerance);
    CHECK(shaped::max_abs_diff(y1, shaped::narrow<1, tokens_300>(whole, 4, 1)) <= tolerance);
    CHECK(shaped::max_abs_diff(y2, shaped::narrow<1, tokens_300>(whole, 5, 4)) <= tolerance);
}

namespace {
struct small_gpt {
    struct vocab_size : shaped::axis<"vocab_size", 97> {};
    struct context_length : shaped::axis<"context_length", 80> {};
    struct emb_dim : shaped::axis<"emb_dim", 64> {};
    struct n_heads : shaped::axis<"n_heads", 4> {};
    struct batch : shaped::dynamic_axis<"batch"> {};
    struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
    static constexpr std::size_t n_layers = 2;
    static constexpr double drop_rate = 0.1;
    static constexpr bool qkv_bias = true;
};
// A GPT model on another attention form with the book-form model's weights.
template <class Book, class Other>
void copy_model(const Book& from, Other& to) {
    to.tok_emb = from.tok_emb;
    to.pos_emb = from.pos_emb;
    to.final_norm = from.final_norm;
    to.out_head = from.out_head;
    for (std::size_t i = 0; i < from.trf_blocks.size(); ++i) {
        copy_weights(from.trf_blocks[i].att, to.trf_blocks[i].att);
        to.trf_blocks[i].ff = from.trf_blocks[i].ff;
        to.trf_blocks[i].norm1 = from.trf_blocks[i].norm1;
        to.trf_blocks[i].norm2 = from.trf_blocks[i].norm2;
    }
}
}  // namespace

TEST_CASE("gpt_model on the fused attention gives the book-form model's logits and generated ids") {
    namespace nn = shaped::nn;
    shaped::torch::manual_seed(123);
    nn::gpt_model<small_gpt> book;
    nn::gpt_model<small_gpt, nn::multi_head_attention_sdpa> fused(nn::skip_init);
    copy_model(book, fused);
    CHECK(nn::state_dict_keys(fused)[2] == "trf_blocks.0.att.qkv.weight");
    book.eval();
    fused.eval();
    std::vector<std::int64_t> ids(3 * 50);
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>((i * 31 + 5) % 97);
    for (std::size_t t : {1u, 7u, 50u}) {
        const auto x = shaped::tensor<std::int64_t, small_gpt::batch, small_gpt::num_tokens>::from_buffer(
            std::span(ids).first(3 * t), 3, t);
        INFO("num_tokens ", t);
        CHECK(shaped::max_abs_diff(fused(x), book(x)) <= 1e-4);
        // The combined-QKV form too (no cache of its own: the uncached forward).
        nn::gpt_model<small_gpt, nn::multi_head_attention_combined_qkv> combined(nn::skip_init);
        copy_model(book, combined);
        combined.eval();
        CHECK(shaped::max_abs_diff(combined(x), book(x)) <= 1e-4);
        const auto a = nn::generate_text_simple(book, x, 20, small_gpt::context_length::extent);
        const auto b = nn::generate_text_simple_cached(fused, x, 20);
        CHECK(shaped::max_abs_diff(a.to<float>(), b.to<float>()) == 0.0);
    }
}
