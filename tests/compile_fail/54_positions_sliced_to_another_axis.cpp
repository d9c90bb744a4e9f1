// The positional embeddings cut to an axis of the right length that is not a prefix of the positions: the
// embedding dimension (4, as long as the context). pos_emb.weight[:4] would run in PyTorch.
// expect-error: shaped::slice<Prefix...>(x): each prefix axis must be declared as a prefix of the axis it cuts
// expect-context: to_axes<shaped::diag::sized<tiny::emb_dim, 4>
#include "gpt_axes.hpp"

struct four_tokens : shaped::axis<"num_tokens", 4, shaped::at_most<context_length>> {};

int main() {
    shaped::nn::embedding<context_length, emb_dim> pos_emb;
    auto pos = pos_emb.weight.slice<four_tokens, emb_dim>();  // pos_emb.weight[:num_tokens]
    (void)pos;
#ifdef SHAPE_BUG
    auto bad = pos_emb.weight.slice<emb_dim, emb_dim>();
    (void)bad;
#endif
}
