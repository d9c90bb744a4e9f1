// The seed's bug: every head uses the full-width q/k/v, three copies are concatenated to width 18 and
// go into the attention's out_proj (d_out -> d_out). PyTorch runs this (with an 18 -> 18 out_proj).
// expect-error: shaped::nn::linear<In, Out>(x): x's last axis must be the layer's in_features axis
// expect-context: in_features<shaped::diag::sized<d_out, 6>
// expect-context: input_last<shaped::diag::sized<shaped::concat<d_out, d_out, d_out>, 18>
#include <array>

#include <boost/hana/zip_with.hpp>

#include "seed_axes.hpp"

int main() {
    namespace torch = shaped::torch;
    torch::manual_seed(1223);
    shaped::nn::linear<d_out, d_out> out_proj;
    auto q = torch::rand<batch, num_tokens, d_out>();
    auto k = torch::rand<batch, num_tokens, d_out>();
    auto v = torch::rand<batch, num_tokens, d_out>();
#ifdef SHAPE_BUG
    std::array<shaped::tensor<float, batch, num_tokens, d_out>, num_heads::extent> context_vec;
    for (auto& head : context_vec) head = shaped::matmul(shaped::matmul(q, k.transpose<1, 2>()), v);
#else
    auto context_vec = boost::hana::zip_with(
        [](const auto& q_h, const auto& k_h, const auto& v_h) {
            return shaped::matmul(shaped::matmul(q_h, k_h.template transpose<1, 2>()), v_h);
        },
        q.split<head_dim, -1>(), k.split<head_dim, -1>(), v.split<head_dim, -1>());
#endif
    auto context_vec_Final = out_proj(shaped::cat<-1>(context_vec));
    (void)context_vec_Final;
}
