// A gated feed-forward layer given the hidden values of another layer instead of the block's input: its
// fc1 and fc2 take emb_dim, and the tensor ends in hidden_dim (the up projection's output).
// expect-error: shaped::nn::gated_feed_forward<Emb, Hidden>(x): x's last axis must be the layer's Emb axis
// expect-context: in_features<shaped::diag::sized<emb_dim, 8>
// expect-context: shaped::diag::sized<hidden_dim, 12>
#include <shaped/shaped.hpp>

struct batch : shaped::axis<"batch", 2> {};
struct num_tokens : shaped::axis<"num_tokens", 3> {};
struct emb_dim : shaped::axis<"emb_dim", 8> {};
struct hidden_dim : shaped::axis<"hidden_dim", 12> {};

int main() {
    shaped::nn::swiglu_feed_forward<emb_dim, hidden_dim> ff;
    auto x = shaped::torch::rand<batch, num_tokens, emb_dim>();
    auto y = ff(x);
    (void)y;
#ifdef SHAPE_BUG
    auto bad = ff(ff.fc2(x));
    (void)bad;
#endif
}
