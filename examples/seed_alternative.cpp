// The seed's alternative form of multi-head attention (view/transpose, no out_proj), line for line.
// PyTorch prints context_vec = tensor([[[0.7713, 1.1682, 0.6141, 0.8472, 0.9745, 0.6424],
//                                       [0.3327, 0.6094, 0.1885, 0.2612, 0.6739, 0.3949]]])
#include <iostream>
#include <shaped/shaped.hpp>

// [axes]
struct batch : shaped::axis<"batch", 1> {};
struct num_tokens : shaped::axis<"num_tokens", 2> {};
struct d_out : shaped::axis<"d_out", 6> {};
struct num_heads : shaped::axis<"num_heads", 3> {};
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};  // head_dim = d_out // num_heads
// [axes]

int main() {
    namespace torch = shaped::torch;
    torch::manual_seed(1223);

    std::cout << "batch = " << batch::extent << " num_tokens = " << num_tokens::extent << " d_out = " << d_out::extent
              << " num_heads = " << num_heads::extent << " head_dim = " << head_dim::extent << "\n";
    auto q = torch::rand<batch, num_tokens, d_out>();
    auto k = torch::rand<batch, num_tokens, d_out>();
    auto v = torch::rand<batch, num_tokens, d_out>();
    std::cout << "q.shape = " << q.shape << " k.shape = " << k.shape << " v.shape = " << v.shape << "\n";
    std::cout << "q = " << q << "\n";

    // [view]
    auto q4 = q.view<batch, num_tokens, num_heads, head_dim>();
    auto k4 = k.view<batch, num_tokens, num_heads, head_dim>();
    auto v4 = v.view<batch, num_tokens, num_heads, head_dim>();
    // [view]
    std::cout << "q.shape = " << q4.shape << " k.shape = " << k4.shape << " v.shape = " << v4.shape << "\n";

    auto qh = q4.transpose<1, 2>();
    auto kh = k4.transpose<1, 2>();
    auto vh = v4.transpose<1, 2>();
    std::cout << "q.shape = " << qh.shape << " k.shape = " << kh.shape << " v.shape = " << vh.shape << "\n";

    auto attn_scores = shaped::matmul(qh, kh.transpose<2, 3>());
    std::cout << "attn_scores.shape = " << attn_scores.shape << " attn_scores = " << attn_scores << "\n";

    auto context_vec = shaped::matmul(attn_scores, vh);
    std::cout << "context_vec.shape = " << context_vec.shape << "\n";

    auto context_t = context_vec.transpose<1, 2>();
    std::cout << "context_vec.shape = " << context_t.shape << "\n";

    auto context = context_t.contiguous().view<batch, num_tokens, d_out>();
    std::cout << "attn_scores.shape = " << attn_scores.shape << " context_vec.shape = " << context.shape << "\n";
    std::cout << "context_vec.shape = " << context.shape << " context_vec = " << context << "\n";
}
