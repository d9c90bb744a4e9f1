// The axis algebra: which axes are the same, and which rules are constraint-level (checked here with
// requires-expressions; rules that print messages are in tests/compile_fail/).
#include <doctest/doctest.h>

#include <shaped/shaped.hpp>

namespace {
struct num_tokens : shaped::axis<"num_tokens", 2> {};
struct d_out : shaped::axis<"d_out", 6> {};
struct num_heads : shaped::axis<"num_heads", 3> {};
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};
struct d_model : shaped::product<"d_model", num_heads, head_dim> {};
struct other_six : shaped::axis<"other_six", 6> {};
}  // namespace

// Same name and extent or not, two declared axes are different axes.
static_assert(shaped::same_axis_v<d_out, d_out>);
static_assert(!shaped::same_axis_v<head_dim, num_tokens>);  // both extent 2
static_assert(!shaped::same_axis_v<d_out, other_six>);
// Heads merged in order are d_out; the other order is not.
static_assert(shaped::same_axis_v<shaped::merged<num_heads, head_dim>, d_out>);
static_assert(!shaped::same_axis_v<shaped::merged<head_dim, num_heads>, d_out>);
// A product declared from the same factors is that same axis.
static_assert(shaped::same_axis_v<d_model, d_out>);
static_assert(shaped::same_axis_v<d_model, shaped::merged<num_heads, head_dim>>);
static_assert(head_dim::extent == 2 && d_model::extent == 6);
static_assert(shaped::concat<d_out, d_out, d_out>::extent == 18);
static_assert(!shaped::same_axis_v<shaped::concat<d_out, d_out, d_out>, shaped::merged<num_heads, d_out>>);

// What disagrees between two axes, which chooses a diagnostic's hint (shape.hpp): a key axis against its query
// axis, the same factors in another order (repeat for repeat_interleave), or anything else; and whether two
// lists hold the same axes in another order (a transpose).
namespace d = shaped::detail;
static_assert(d::mismatch_of<shaped::key<num_tokens>, num_tokens>() == d::mismatch::key_and_query);
static_assert(d::mismatch_of<num_tokens, shaped::key<num_tokens>>() == d::mismatch::key_and_query);
static_assert(d::mismatch_of<shaped::key<num_tokens>, head_dim>() == d::mismatch::different);
static_assert(d::mismatch_of<shaped::merged<num_heads, num_tokens>, shaped::merged<num_tokens, num_heads>>() ==
              d::mismatch::factors_reordered);
static_assert(d::mismatch_of<shaped::merged<num_heads, num_tokens>, shaped::merged<num_tokens, head_dim>>() ==
              d::mismatch::different);
static_assert(d::mismatch_of<d_out, other_six>() == d::mismatch::different);
static_assert(d::permutation_of(d::axis_pack<num_tokens, d_out>{}, d::axis_pack<d_out, num_tokens>{}));
static_assert(!d::permutation_of(d::axis_pack<num_tokens, d_out>{}, d::axis_pack<d_out, other_six>{}));
static_assert(!d::permutation_of(d::axis_pack<num_tokens, num_tokens, d_out>{}, d::axis_pack<d_out, d_out, num_tokens>{}));
static_assert(!d::permutation_of(d::axis_pack<num_tokens>{}, d::axis_pack<num_tokens, d_out>{}));
// Why a view does not regroup, and the pair of dimensions a transpose should swap: {kind, i, j}.
using miss = d::regroup_miss;
static_assert(d::regroup_miss_of(d::axis_pack<num_tokens, d_out>{}, d::axis_pack<num_heads, num_tokens, head_dim>{}) ==
              std::array<int, 3>{static_cast<int>(miss::transpose_after), 0, 1});
static_assert(d::regroup_miss_of(d::axis_pack<num_heads, num_tokens, head_dim>{}, d::axis_pack<num_tokens, d_out>{}) ==
              std::array<int, 3>{static_cast<int>(miss::transpose_first), 0, 1});
static_assert(d::regroup_miss_of(d::axis_pack<shaped::merged<num_heads, num_tokens>, d_out>{},
                                 d::axis_pack<num_tokens, num_heads, d_out>{})[0] == static_cast<int>(miss::split_reordered));
static_assert(d::view_regroups(boost::hana::tuple_t<shaped::merged<num_tokens, num_heads>, head_dim>,
                                boost::hana::tuple_t<num_tokens, d_out>));  // heads inner: the view is fine
static_assert(!d::view_regroups(boost::hana::tuple_t<shaped::merged<num_heads, num_tokens>, head_dim>,
                                 boost::hana::tuple_t<num_tokens, d_out>));
static_assert(d::regroup_miss_of(d::axis_pack<shaped::merged<num_heads, num_tokens>, head_dim>{},
                                 d::axis_pack<num_tokens, d_out>{})[0] == static_cast<int>(miss::merged_back_out_first));
static_assert(d::regroup_miss_of(d::axis_pack<num_tokens, d_out>{}, d::axis_pack<num_tokens, other_six>{})[0] ==
              static_cast<int>(miss::other_axes));

// Constraint-level rules: what is an axis, what is a tensor, how many indices an element takes.
static_assert(shaped::Axis<d_out> && shaped::Axis<head_dim> && shaped::Axis<shaped::merged<num_heads, head_dim>>);
static_assert(!shaped::Axis<int> && !shaped::Axis<float>);
static_assert(shaped::Tensor<shaped::tensor<float, d_out>> && !shaped::Tensor<xt::xtensor<float, 1>>);
template <class T, class... Index>
concept indexable_with = requires(T t, Index... i) {
    t(i...);
};
static_assert(indexable_with<shaped::tensor<float, num_tokens, d_out>, int, int>);
static_assert(!indexable_with<shaped::tensor<float, num_tokens, d_out>, int>);
static_assert(!indexable_with<shaped::tensor<float, num_tokens, d_out>, int, int, int>);

TEST_CASE("a tensor's type states its shape") {
    using t = shaped::tensor<float, num_tokens, num_heads, head_dim>;
    static_assert(t::rank == 3 && t::is_contiguous && t::is_static);
    static_assert(t::extents_type{}.numel() == 12);
    static_assert(t::extents_type::static_extent(0) == 2 && t::extents_type::static_extent(1) == 3 &&
                  t::extents_type::static_extent(2) == 2);
    static_assert(!shaped::strided_tensor<float, num_tokens>::is_contiguous);
    // An all-static tensor stores no extents: its shape takes no memory.
    static_assert(std::is_empty_v<t::extents_type> && sizeof(t) == sizeof(t::storage_type));
    const t x;
    CHECK(x.numel() == 12);
    CHECK(x.shape_text() == "(num_tokens=2, num_heads=3, head_dim=2)");
    CHECK(shaped::detail::shape_text<shaped::merged<num_heads, head_dim>, shaped::concat<d_out, d_out>>() ==
          "((num_heads*head_dim)=6, cat(d_out, d_out)=12)");
    std::ostringstream s;
    s << x.shape;
    CHECK(s.str() == "torch.Size([2, 3, 2])");
    auto [a, b, c] = x.shape;  // num_tokens, num_heads, head_dim = x.shape
    CHECK((a == 2 && b == 3 && c == 2));
}

TEST_CASE("rename is explicit and keeps the elements") {
    struct tokens_k : shaped::axis<"tokens_k", 2> {};
    shaped::torch::manual_seed(0);
    auto keys = shaped::torch::rand<num_tokens, d_out>();
    auto renamed = keys.rename<tokens_k, d_out>();
    static_assert(std::is_same_v<decltype(renamed), shaped::tensor<float, tokens_k, d_out>>);
    CHECK(renamed(1, 5) == keys(1, 5));
    // A view that merges heads back may name the result either d_out or the product it is.
    auto heads = shaped::torch::rand<num_tokens, num_heads, head_dim>();
    auto as_d_out = heads.view<num_tokens, d_out>();
    auto as_product = heads.view<num_tokens, d_model>();
    CHECK(shaped::max_abs_diff(as_d_out, as_product) == 0.0);
}

TEST_CASE("nested quotients fold all the way back") {
    struct two : shaped::axis<"two", 2> {};
    struct half : shaped::quotient<"half", head_dim, two> {};  // head_dim / 2 = 1
    static_assert(shaped::same_axis_v<shaped::merged<num_heads, two, half>, d_out>);
    static_assert(shaped::same_axis_v<shaped::merged<two, half>, head_dim>);
    shaped::torch::manual_seed(8);
    auto x = shaped::torch::rand<num_tokens, d_out>();
    auto fine = x.view<num_tokens, num_heads, two, half>();
    CHECK(shaped::max_abs_diff(fine.view<num_tokens, d_out>(), x) == 0.0);
}
