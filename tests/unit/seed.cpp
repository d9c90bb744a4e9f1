// The seed's corrected forms in full precision against PyTorch (tests/golden/seed/*.py).
#include <boost/hana/zip_with.hpp>

#include "check.hpp"
#include "golden/ops_goldens.hpp"

namespace {
struct batch : shaped::axis<"batch", 1> {};
struct num_tokens : shaped::axis<"num_tokens", 2> {};
struct d_out : shaped::axis<"d_out", 6> {};
struct num_heads : shaped::axis<"num_heads", 3> {};
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};
}  // namespace

TEST_CASE("the seed's corrected simple form equals PyTorch's context_vec_Final") {
    shaped::torch::manual_seed(1223);
    shaped::nn::linear<d_out, d_out> out_proj;
    auto q = shaped::torch::rand<batch, num_tokens, d_out>();
    auto k = shaped::torch::rand<batch, num_tokens, d_out>();
    auto v = shaped::torch::rand<batch, num_tokens, d_out>();
    auto heads = boost::hana::zip_with(
        [](const auto& q_h, const auto& k_h, const auto& v_h) {
            return shaped::matmul(shaped::matmul(q_h, k_h.template transpose<1, 2>()), v_h);
        },
        q.split<head_dim, -1>(), k.split<head_dim, -1>(), v.split<head_dim, -1>());
    auto final_ = out_proj(shaped::cat<-1>(heads));
    static_assert(std::is_same_v<decltype(final_), shaped::tensor<float, batch, num_tokens, d_out>>);
    CHECK(test::max_abs_diff(final_, golden::seed_corrected_final) <= 1e-6);
}
