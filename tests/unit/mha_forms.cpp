// Property: the two multi-head attention forms (a loop over heads with split/cat, and view/transpose)
// agree on random inputs of many sizes, with and without the causal mask and softmax, including
// batch > 1, num_tokens != head_dim and num_tokens == head_dim.
#include <boost/hana/zip_with.hpp>
#include <cmath>
#include <limits>

#include "check.hpp"

namespace hana = boost::hana;

namespace {

template <class Batch, class Tokens, class DOut, class Heads, class HeadDim, class Context>
struct forms {
    // Scores -> weights: scaled by 1/sqrt(head_dim), causal mask, softmax over the key axis (listing 3.5).
    template <class Scores>
    static auto weights(const Scores& scores, bool causal) {
        if (!causal)
            return scores;
        auto mask = shaped::triu<1>(shaped::ones<Context, Context>()).template slice<Tokens, Tokens>();
        auto masked = scores.masked_fill(mask.template to<bool>(), -std::numeric_limits<float>::infinity());
        return shaped::softmax<-1>(masked / std::sqrt(static_cast<float>(HeadDim::extent)));
    }

    template <class Q>
    static auto simple(const shaped::nn::linear<DOut, DOut>& out_proj, const Q& q, const Q& k, const Q& v,
                       bool causal) {
        auto heads = hana::zip_with(
            [causal](const auto& q_h, const auto& k_h, const auto& v_h) {
                return shaped::matmul(weights(shaped::matmul(q_h, k_h.template transpose<1, 2>()), causal), v_h);
            },
            q.template split<HeadDim, -1>(), k.template split<HeadDim, -1>(), v.template split<HeadDim, -1>());
        return out_proj(shaped::cat<-1>(heads));
    }

    template <class Q>
    static auto alternative(const shaped::nn::linear<DOut, DOut>& out_proj, const Q& q, const Q& k, const Q& v,
                            bool causal) {
        auto qh = q.template view<Batch, Tokens, Heads, HeadDim>().template transpose<1, 2>();
        auto kh = k.template view<Batch, Tokens, Heads, HeadDim>().template transpose<1, 2>();
        auto vh = v.template view<Batch, Tokens, Heads, HeadDim>().template transpose<1, 2>();
        auto w = weights(shaped::matmul(qh, kh.template transpose<2, 3>()), causal);
        auto context =
            shaped::matmul(w, vh).template transpose<1, 2>().contiguous().template view<Batch, Tokens, DOut>();
        return out_proj(context);
    }

    static void check(std::uint64_t seed) {
        for (bool causal : {false, true}) {
            shaped::torch::manual_seed(seed);
            shaped::nn::linear<DOut, DOut> out_proj;
            auto q = shaped::torch::rand<Batch, Tokens, DOut>();
            auto k = shaped::torch::rand<Batch, Tokens, DOut>();
            auto v = shaped::torch::rand<Batch, Tokens, DOut>();
            const auto a = simple(out_proj, q, k, v, causal);
            const auto b = alternative(out_proj, q, k, v, causal);
            static_assert(std::is_same_v<decltype(a), decltype(b)>);
            INFO("batch ", Batch::extent, ", num_tokens ", Tokens::extent, ", d_out ", DOut::extent, ", num_heads ",
                 Heads::extent, ", causal ", causal, ", seed ", seed);
            CHECK(shaped::max_abs_diff(a, b) <= 1e-6);
            // Not a vacuous agreement: other values give other outputs (values, since with one token
            // and the causal mask the output does not depend on the queries).
            shaped::torch::manual_seed(seed + 1);
            auto v2 = shaped::torch::rand<Batch, Tokens, DOut>();
            CHECK(shaped::max_abs_diff(simple(out_proj, q, k, v2, causal), a) > 1e-4);
        }
    }
};

template <std::size_t B, std::size_t T, std::size_t D, std::size_t H>
void check_size(std::uint64_t seed) {
    struct batch : shaped::axis<"batch", B> {};
    struct context_length : shaped::axis<"context_length", T + 3> {};
    struct num_tokens : shaped::axis<"num_tokens", T, shaped::at_most<context_length>> {};
    struct d_out : shaped::axis<"d_out", D> {};
    struct num_heads : shaped::axis<"num_heads", H> {};
    struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};
    forms<batch, num_tokens, d_out, num_heads, head_dim, context_length>::check(seed);
}

}  // namespace

TEST_CASE("the loop-over-heads and view/transpose forms agree") {
    check_size<1, 2, 6, 3>(1223);  // the seed: num_tokens == head_dim == 2
    check_size<2, 3, 8, 2>(1);     // head_dim 4 != num_tokens 3
    check_size<2, 4, 16, 4>(2);    // num_tokens == head_dim == 4, batch > 1
    check_size<4, 5, 12, 6>(3);    // six heads of 2
    check_size<3, 7, 12, 4>(4);    // head_dim 3
    check_size<2, 16, 48, 4>(5);   // larger: head_dim 12
    check_size<1, 1, 4, 1>(6);     // one token, one head
}
