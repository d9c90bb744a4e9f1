// rename where a transpose was meant: the keys' heads are moved in front of the tokens by renaming,
// which PyTorch's view(...) without transpose(1, 2) would also do silently when the extents agree.
// expect-error: shaped::rename<To...>(x): rename gives new names in place; it does not move axes
// expect-context: to_axes<shaped::diag::sized<batch, 2>, shaped::diag::sized<num_heads, 2>, shaped::diag::sized<shaped::key<num_tokens>, 2>
#include <shaped/shaped.hpp>

struct batch : shaped::axis<"batch", 2> {};
struct num_tokens : shaped::axis<"num_tokens", 2> {};
struct num_heads : shaped::axis<"num_heads", 2> {};
struct head_dim : shaped::axis<"head_dim", 4> {};
using num_keys = shaped::key<num_tokens>;

int main() {
    auto k = shaped::torch::rand<batch, num_tokens, num_heads, head_dim>();
    auto keys = k.transpose<1, 2>().rename<batch, num_heads, num_keys, head_dim>();
    (void)keys;
#ifdef SHAPE_BUG
    auto bad = k.rename<batch, num_heads, num_keys, head_dim>();
    (void)bad;
#endif
}
