// A module of one's own, written with shaped::LastAxis, fed a tensor of another width: shaped's message
// at the call, not a deduction failure or an error inside the module. The check holds after it reports, so
// the call goes on: the body's linear layer, which checks the same axis, reports it once more (two errors,
// both shaped's; a module whose body does not check that axis again gets one, as in case 63).
// expect-errors: 2
// expect-error: shaped::LastAxis<A>: the argument's last axis must be A
// expect-context: expected_axes<shaped::diag::sized<tiny::emb_dim, 4>
// expect-context: actual_axes<shaped::diag::run_time<tiny::batch>, shaped::diag::run_time<tiny::num_tokens, 4>, shaped::diag::sized<d_in, 4>
#include "gpt_axes.hpp"

struct d_in : shaped::axis<"d_in", 4> {};

// An output head of one's own: emb_dim to vocab_size.
struct my_head {
    shaped::nn::linear<emb_dim, vocab_size> out_head{false};
    auto operator()(const shaped::LastAxis<emb_dim> auto& x) const { return out_head(x); }
};

int main() {
    my_head head;
    auto logits = head(shaped::torch::rand<batch, num_tokens, emb_dim>(2, 3));
    (void)logits;
#ifdef SHAPE_BUG
    auto bad = head(shaped::torch::rand<batch, num_tokens, d_in>(2, 3));
    (void)bad;
#endif
}
