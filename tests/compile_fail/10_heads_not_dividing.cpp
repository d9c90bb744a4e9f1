// d_out not divisible by num_heads (d_out 6, num_heads 4): the book's `assert d_out % num_heads == 0`.
// expect-error: shaped::quotient: the dividend axis must be divisible by the divisor axis
// expect-context: dividend<shaped::diag::sized<d_out, 6>
// expect-context: divisor<shaped::diag::sized<num_heads, 4>
#include <shaped/shaped.hpp>

struct d_out : shaped::axis<"d_out", 6> {};
#ifdef SHAPE_BUG
struct num_heads : shaped::axis<"num_heads", 4> {};
#else
struct num_heads : shaped::axis<"num_heads", 3> {};
#endif
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};

int main() { return static_cast<int>(head_dim::extent) - 2; }
