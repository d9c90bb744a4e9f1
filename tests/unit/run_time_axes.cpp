// Run-time-sized axes: names checked by the compiler as for static axes; extents checked once where they
// enter, derived by every op, compared where two of them meet. Every op is run on run-time axes and on
// static axes of the same extents, and the two must agree bit for bit.
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "check.hpp"

namespace hana = boost::hana;

namespace {

struct context_length : shaped::axis<"context_length", 8> {};
struct batch : shaped::dynamic_axis<"batch"> {};
struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
using num_keys = shaped::key<num_tokens>;
struct d_out : shaped::axis<"d_out", 6> {};
struct num_heads : shaped::axis<"num_heads", 3> {};
struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};

// Static axes of the extents the tests bind: batch 2, num_tokens 5.
struct two : shaped::axis<"batch", 2> {};
struct five : shaped::axis<"num_tokens", 5, shaped::at_most<context_length>> {};
using five_keys = shaped::key<five>;

// Same elements, bit for bit, and the same extents (a static and a run-time tensor, or two run-time ones).
template <class A, class B>
bool same_bits(const A& a, const B& b) {
    if (a.shape.sizes() != b.shape.sizes()) return false;
    const auto& ea = a.storage();
    const auto& eb = b.storage();
    return std::memcmp(ea.data(), eb.data(), a.numel() * sizeof(typename A::value_type)) == 0;
}

template <class T>
concept shape_assignable = requires(T t) { t.shape = t.shape; };

template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(nothing thrown)";
}

}  // namespace

// The axis is a type; only its extent waits for run time.
static_assert(shaped::DynamicAxis<num_tokens> && shaped::DynamicAxis<batch> && shaped::StaticAxis<d_out>);
static_assert(num_tokens::bound == 8 && batch::bound == shaped::max_extent);
static_assert(!shaped::same_axis_v<num_tokens, five>);  // a static axis is another axis, even of the same name
static_assert(shaped::DynamicAxis<num_keys> && num_keys::bound == 8);
static_assert(shaped::DynamicAxis<shaped::merged<batch, num_tokens>> && shaped::merged<batch, num_tokens>::dynamic_atoms == 2);
static_assert(shaped::DynamicAxis<shaped::concat<num_tokens, d_out>> && shaped::concat<num_tokens, d_out>::bound == 14);
// Declared within context_length: the mask may be sliced to it, a module of that context takes it.
static_assert(shaped::detail::prefix_of<num_tokens, context_length>() && shaped::detail::prefix_of<num_keys, context_length>());
static_assert(shaped::detail::prefix_of<five, context_length>() && !shaped::detail::prefix_of<batch, context_length>());
// A tensor stores only its run-time extents.
static_assert(sizeof(shaped::tensor<float, batch, num_tokens, d_out>) ==
              sizeof(xt::xtensor<float, 3>) + 2 * sizeof(std::size_t));
static_assert(sizeof(shaped::tensor<float, two, five, d_out>) == sizeof(xt::xtensor<float, 3>));
// One number per run-time axis, no more, no fewer.
template <class... N>
concept rand_takes = requires(N... n) { shaped::torch::rand<batch, num_tokens, d_out>(n...); };
static_assert(rand_takes<int, int> && !rand_takes<int> && !rand_takes<int, int, int> && !rand_takes<>);
static_assert(!rand_takes<bool, int>);

TEST_CASE("extents enter once, checked against the bound") {
    shaped::extents<batch, num_tokens, d_out> e(2, 5);
    CHECK(e[0] == 2);
    CHECK(e[1] == 5);
    CHECK(e[2] == 6);
    CHECK(e.numel() == 60);
    std::ostringstream s;
    s << e;
    CHECK(s.str() == "torch.Size([2, 5, 6])");
    CHECK(e.text() == "(batch=2, num_tokens=5, d_out=6)");
    auto [b, t, d] = e;  // b, num_tokens, d_out = x.shape
    CHECK((b == 2 && t == 5 && d == 6));
    // PyTorch's negative dimensions (keys.shape[-1] in the book); outside the rank, Python's IndexError.
    CHECK((e[-1] == 6 && e[-3] == 2));
    CHECK(error_of([&] { (void)e[3]; }) ==
          "shaped::extents: dimension 3 is out of range for 3 axes (PyTorch: IndexError: tuple index out of range)");
    CHECK_THROWS_AS((void)e[-4], std::out_of_range);

    using ext = shaped::extents<batch, num_tokens, d_out>;
    CHECK(error_of([] { ext(2, 0); }) ==
          "shaped::extents: expected 1 <= num_tokens <= 8 (num_tokens is at most context_length), got num_tokens = 0");
    CHECK(error_of([] { ext(2, 9); }) ==
          "shaped::extents: expected 1 <= num_tokens <= 8 (num_tokens is at most context_length), got num_tokens = 9");
    CHECK(error_of([] { ext(2, -1); }) ==
          "shaped::extents: expected 1 <= num_tokens <= 8 (num_tokens is at most context_length), got num_tokens = -1");
    CHECK(error_of([] { ext(0, 5); }) == "shaped::extents: expected 1 <= batch <= 9223372036854775807, got batch = 0");
    CHECK_THROWS_AS(ext(2, 9), shaped::shape_error);
    // An element count that would overflow is refused where the extents enter.
    struct rows : shaped::dynamic_axis<"rows"> {};
    struct cols : shaped::dynamic_axis<"cols"> {};
    CHECK(error_of([] { shaped::extents<rows, cols>(std::size_t{1} << 40, std::size_t{1} << 40); }) ==
          "shaped::extents: expected at most 9223372036854775807 elements, got (rows=1099511627776, "
          "cols=1099511627776)");
}

TEST_CASE("torch::rand, ones, zeros and empty take run-time extents, and draw what the static form draws") {
    shaped::torch::manual_seed(1223);
    const auto x = shaped::torch::rand<batch, num_tokens, d_out>(2, 5);
    shaped::torch::manual_seed(1223);
    const auto xs = shaped::torch::rand<two, five, d_out>();
    CHECK(same_bits(x, xs));
    static_assert(std::is_same_v<decltype(x), const shaped::tensor<float, batch, num_tokens, d_out>>);
    std::ostringstream s;
    s << x.shape;
    CHECK(s.str() == "torch.Size([2, 5, 6])");
    CHECK(error_of([] { shaped::torch::rand<batch, num_tokens, d_out>(2, 9); }) ==
          "shaped::torch::rand: expected 1 <= num_tokens <= 8 (num_tokens is at most context_length), got "
          "num_tokens = 9");
    const auto o = shaped::torch::ones<num_tokens, d_out>(3);
    CHECK((o.shape[0] == 3 && o(2, 5) == 1.0f));
    const auto z = shaped::torch::zeros<num_tokens, d_out>(4);
    CHECK((z.shape[0] == 4 && z(3, 5) == 0.0f));
    CHECK(shaped::torch::empty<batch, d_out>(7).numel() == 42);
    CHECK(error_of([] { shaped::ones<num_tokens>(0); }) ==
          "shaped::ones: expected 1 <= num_tokens <= 8 (num_tokens is at most context_length), got num_tokens = 0");
    CHECK_THROWS_AS(shaped::torch::zeros<num_tokens>(9), shaped::shape_error);
}

TEST_CASE("data from outside: a buffer, an xtensor, nested braces") {
    using t = shaped::tensor<float, batch, num_tokens, d_out>;
    std::vector<float> values(60);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
    const auto x = t::from_buffer(values, 2, 5);
    CHECK((x.shape[1] == 5 && x(1, 4, 5) == 59.0f));
    CHECK(error_of([&] { t::from_buffer(values, 2, 4); }) ==
          "shaped::tensor::from_buffer: expected 48 elements for (batch=2, num_tokens=4, d_out=6), got 60 elements");
    CHECK(error_of([&] { t::from_buffer(values, 2, 30); }) ==
          "shaped::tensor::from_buffer: expected 1 <= num_tokens <= 8 (num_tokens is at most context_length), got "
          "num_tokens = 30");

    xt::xtensor<float, 3> good(std::array<std::size_t, 3>{3, 7, 6}, 0.5f);
    const t from_x(good);
    CHECK((from_x.shape[0] == 3 && from_x.shape[1] == 7 && from_x(2, 6, 5) == 0.5f));
    CHECK(error_of([] { t(xt::xtensor<float, 3>(std::array<std::size_t, 3>{2, 9, 6})); }) ==
          "shaped::tensor(xt::xtensor): expected 1 <= num_tokens <= 8 (num_tokens is at most context_length), got "
          "num_tokens = 9");
    CHECK(error_of([] { t(xt::xtensor<float, 3>(std::array<std::size_t, 3>{2, 5, 7})); }) ==
          "shaped::tensor(xt::xtensor): expected (batch, num_tokens<=8, d_out=6), got (2, 5, 7)");

    const shaped::tensor<float, num_tokens, d_out> inputs{{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}};
    CHECK((inputs.shape[0] == 2 && inputs(1, 0) == 7.0f));
    CHECK(error_of([] { shaped::tensor<float, num_tokens, d_out>{{1, 2, 3, 4, 5, 6}, {7, 8}}; }) ==
          "shaped::tensor({...}): expected (num_tokens=2, d_out=6), got a list of 2 at depth 1 (axis 1 has 6)");
    CHECK(error_of([] { shaped::tensor<float, num_tokens>{1, 2, 3, 4, 5, 6, 7, 8, 9}; }) ==
          "shaped::tensor({...}): expected 1 <= num_tokens <= 8 (num_tokens is at most context_length), got "
          "num_tokens = 9");
}

TEST_CASE("every op on run-time axes equals the same op on static axes, bit for bit") {
    shaped::torch::manual_seed(7);
    auto q = shaped::torch::rand<batch, num_tokens, d_out>(2, 5);
    auto k = shaped::torch::rand<batch, num_tokens, d_out>(2, 5);
    shaped::torch::manual_seed(7);
    auto qs = shaped::torch::rand<two, five, d_out>();
    auto ks = shaped::torch::rand<two, five, d_out>();
    REQUIRE(same_bits(q, qs));

    // view (split a static axis, keep run-time ones), transpose, rename to the key axis, matmul.
    auto qh = q.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>();
    auto kh = k.view<batch, num_tokens, num_heads, head_dim>().transpose<1, 2>().rename<batch, num_heads, num_keys, head_dim>();
    auto qhs = qs.view<two, five, num_heads, head_dim>().transpose<1, 2>();
    auto khs = ks.view<two, five, num_heads, head_dim>().transpose<1, 2>().rename<two, num_heads, five_keys, head_dim>();
    CHECK(same_bits(qh, qhs));
    auto scores = shaped::matmul(qh, kh.transpose<2, 3>());  // (batch, num_heads, num_tokens, key<num_tokens>)
    auto scores_s = shaped::matmul(qhs, khs.transpose<2, 3>());
    static_assert(std::is_same_v<decltype(scores), shaped::tensor<float, batch, num_heads, num_tokens, num_keys>>);
    CHECK(same_bits(scores, scores_s));

    // The causal mask of context_length, sliced to the run-time lengths; masked_fill; scalar ops; softmax.
    const auto mask = shaped::triu<1>(shaped::ones<context_length, context_length>()).to<bool>();
    auto sliced = mask.slice<num_tokens, num_keys>(5, 5);
    CHECK(same_bits(sliced, mask.slice<five, five_keys>()));
    CHECK(error_of([&] { mask.slice<num_tokens, num_keys>(5, 9); }) ==
          "shaped::slice<...>(x, n...): expected 1 <= key<num_tokens> <= 8 (key<num_tokens> is at most "
          "context_length), got key<num_tokens> = 9");
    const float minus_inf = -std::numeric_limits<float>::infinity();
    auto weights = shaped::softmax<-1>(scores.masked_fill(sliced, minus_inf) / 1.5f);
    auto weights_s = shaped::softmax<-1>(scores_s.masked_fill(mask.slice<five, five_keys>(), minus_inf) / 1.5f);
    CHECK(same_bits(weights, weights_s));
    CHECK(same_bits(shaped::softmax<1>(q), shaped::softmax<1>(qs)));  // over the run-time axis itself
    CHECK(same_bits(shaped::triu<1>(scores), shaped::triu<1>(scores_s)));

    // matmul with the values, permute back, contiguous, merge the heads, a static bias broadcast.
    auto v = k.view<batch, num_tokens, num_heads, head_dim>().permute<0, 2, 1, 3>().rename<batch, num_heads, num_keys, head_dim>();
    auto vs = ks.view<two, five, num_heads, head_dim>().permute<0, 2, 1, 3>().rename<two, num_heads, five_keys, head_dim>();
    auto context = shaped::matmul(weights, v).transpose<1, 2>().contiguous().view<batch, num_tokens, d_out>();
    auto context_s = shaped::matmul(weights_s, vs).transpose<1, 2>().contiguous().view<two, five, d_out>();
    CHECK(same_bits(context, context_s));
    shaped::torch::manual_seed(8);
    shaped::nn::linear<d_out, d_out> out_proj;
    const auto bias = shaped::torch::rand<d_out>();
    CHECK(same_bits(out_proj(context) + bias, out_proj(context_s) + bias));
    CHECK(same_bits(2.0f - context * context, 2.0f - context_s * context_s));
    CHECK(same_bits(-context.T(), -context_s.T()));
    CHECK(same_bits(context.reshape<batch, num_tokens, num_heads, head_dim>(),
                    context_s.reshape<two, five, num_heads, head_dim>()));

    // Run-time axes merged, and split back by view.
    auto rows = q.view<shaped::merged<batch, num_tokens>, d_out>();
    CHECK(rows.shape[0] == 10);
    CHECK(same_bits(rows.view<batch, num_tokens, d_out>(), q));
    CHECK(same_bits(rows, qs.view<shaped::merged<two, five>, d_out>()));

    // split, cat back, stack, unsqueeze, repeat, repeat_interleave.
    auto parts = q.split<head_dim, -1>();
    CHECK(same_bits(hana::at_c<1>(parts), hana::at_c<1>(qs.split<head_dim, -1>())));
    CHECK(same_bits(shaped::cat<-1>(parts), q));
    auto stacked = shaped::stack<0, num_heads>(std::array{q, k, q});
    CHECK(same_bits(stacked, shaped::stack<0, num_heads>(std::array{qs, ks, qs})));
    CHECK(same_bits(q.unsqueeze<1>(), qs.unsqueeze<1>()));
    CHECK(same_bits(q.repeat<num_heads, 1>(), qs.repeat<num_heads, 1>()));
    CHECK(same_bits(q.repeat_interleave<num_heads, 0>(), qs.repeat_interleave<num_heads, 0>()));

    // Dropout draws as for static axes.
    shaped::nn::dropout dropout(0.5);
    shaped::torch::manual_seed(9);
    const auto dropped = dropout(q);
    shaped::torch::manual_seed(9);
    CHECK(same_bits(dropped, dropout(qs)));

    // Printing, as PyTorch prints the tensor and its shape.
    std::ostringstream a, b;
    a << weights << context.shape;
    b << weights_s << context_s.shape;
    CHECK(a.str() == b.str());
}

TEST_CASE("cat along a run-time axis grows it, up to its bound") {
    shaped::torch::manual_seed(3);
    auto idx = shaped::torch::rand<batch, num_tokens>(2, 7);
    auto next = shaped::torch::rand<batch, shaped::one>(2);
    auto longer = shaped::cat<1>(hana::make_tuple(idx, next));  // torch.cat((idx, idx_next), dim=1)
    static_assert(std::is_same_v<decltype(longer), shaped::tensor<float, batch, num_tokens>>);
    CHECK(longer.shape[1] == 8);
    CHECK((longer(1, 6) == idx(1, 6) && longer(1, 7) == next(1, 0)));
    CHECK(error_of([&] { shaped::cat<1>(hana::make_tuple(longer, next)); }) ==
          "shaped::cat<Dim>(tensors): expected num_tokens <= 8 (num_tokens is at most context_length), got "
          "num_tokens = 9 (8 + 1)");
    // Along a static axis, with run-time axes elsewhere; a concat with a run-time part is a run-time axis.
    auto wide = shaped::cat<1>(hana::make_tuple(shaped::torch::rand<batch, d_out>(3), shaped::torch::rand<batch, num_tokens>(3, 4)));
    static_assert(std::is_same_v<decltype(wide), shaped::tensor<float, batch, shaped::concat<d_out, num_tokens>>>);
    CHECK(wide.shape[1] == 10);
}

TEST_CASE("where two run-time extents of one axis meet, the op throws and names both") {
    auto a = shaped::torch::rand<batch, num_tokens, d_out>(2, 5);
    auto b = shaped::torch::rand<batch, num_tokens, d_out>(2, 4);
    CHECK(error_of([&] { (void)(a + b); }) ==
          "shaped::operator+(a, b): num_tokens is 5 in a but 4 in b\n"
          "  a: (batch=2, num_tokens=5, d_out=6)\n"
          "  b: (batch=2, num_tokens=4, d_out=6)");
    CHECK(error_of([&] { (void)(a * shaped::torch::rand<batch, num_tokens, d_out>(3, 5)); }) ==
          "shaped::operator*(a, b): batch is 2 in a but 3 in b\n"
          "  a: (batch=2, num_tokens=5, d_out=6)\n"
          "  b: (batch=3, num_tokens=5, d_out=6)");
    // q and k bound separately with different lengths: the product over the token axis.
    auto w = shaped::torch::rand<batch, num_tokens, num_tokens>(2, 5, 5);
    CHECK(error_of([&] { (void)shaped::matmul(w, b); }) ==
          "shaped::matmul(a, b): num_tokens is 5 in a but 4 in b\n"
          "  a: (batch=2, num_tokens=5, num_tokens=5)\n"
          "  b: (batch=2, num_tokens=4, d_out=6)");
    auto mask = shaped::torch::rand<num_tokens, num_keys>(4, 4).to<bool>();
    auto scores = shaped::torch::rand<batch, num_tokens, num_keys>(2, 5, 5);
    CHECK(error_of([&] { (void)scores.masked_fill(mask, 0.0f); }) ==
          "shaped::masked_fill(x, mask, value): num_tokens is 5 in x but 4 in mask\n"
          "  x: (batch=2, num_tokens=5, key<num_tokens>=5)\n"
          "  mask: (num_tokens=4, key<num_tokens>=4)");
    CHECK(error_of([&] { (void)shaped::cat<-1>(hana::make_tuple(a, b)); }) ==
          "shaped::cat<Dim>(tensors): num_tokens is 5 in tensors[0] but 4 in tensors[1]\n"
          "  tensors[0]: (batch=2, num_tokens=5, d_out=6)\n"
          "  tensors[1]: (batch=2, num_tokens=4, d_out=6)");
    CHECK(error_of([&] { (void)shaped::stack<0, num_heads>(std::array{a, a, b}); }) ==
          "shaped::stack<Dim, New>(tensors): num_tokens is 5 in tensors[0] but 4 in tensors[2]\n"
          "  tensors[0]: (batch=2, num_tokens=5, d_out=6)\n"
          "  tensors[2]: (batch=2, num_tokens=4, d_out=6)");
    CHECK(error_of([&] { (void)shaped::max_abs_diff(a, b); }) ==
          "shaped::max_abs_diff(a, b): num_tokens is 5 in a but 4 in b\n"
          "  a: (batch=2, num_tokens=5, d_out=6)\n"
          "  b: (batch=2, num_tokens=4, d_out=6)");
    // A merged axis compares its factors: 2 x 6 is not 3 x 4, though both are 12 rows.
    auto r = shaped::torch::rand<batch, num_tokens, d_out>(2, 6).view<shaped::merged<batch, num_tokens>, d_out>();
    auto s = shaped::torch::rand<batch, num_tokens, d_out>(3, 4).view<shaped::merged<batch, num_tokens>, d_out>();
    CHECK(error_of([&] { (void)(r - s); }) ==
          "shaped::operator-(a, b): batch is 2 in a but 3 in b\n"
          "  a: ((batch*num_tokens)=12 (2*6), d_out=6)\n"
          "  b: ((batch*num_tokens)=12 (3*4), d_out=6)");
    CHECK_THROWS_AS((void)(a / b), shaped::shape_error);
}

TEST_CASE("static and run-time axes convert only explicitly, through rename") {
    auto xs = shaped::torch::rand<two, five, d_out>();
    auto x = xs.rename<batch, num_tokens, d_out>();  // static to run-time: the bound holds 5
    static_assert(std::is_same_v<decltype(x), shaped::tensor<float, batch, num_tokens, d_out>>);
    CHECK((x.shape[0] == 2 && x.shape[1] == 5 && same_bits(x, xs)));
    auto back = x.rename<two, five, d_out>();  // run-time to static: checked as it runs
    CHECK(same_bits(back, xs));
    auto other = shaped::torch::rand<batch, num_tokens, d_out>(2, 4);
    CHECK(error_of([&] { (void)other.rename<two, five, d_out>(); }) ==
          "shaped::rename<...>(x): expected num_tokens=5 at dimension 1, got num_tokens=4 in (batch=2, num_tokens=4, "
          "d_out=6)");
    // key<num_tokens> has its own run-time extent, taken from num_tokens when renamed.
    auto keys = x.rename<batch, num_keys, d_out>();
    CHECK(keys.shape[1] == 5);
}

TEST_CASE("no public path changes a tensor's shape behind its type") {
    auto x = shaped::torch::rand<batch, num_tokens, d_out>(2, 5);
    x.storage()(1, 4, 5) = 3.0f;  // writable through the adaptor
    CHECK(x(1, 4, 5) == 3.0f);
    CHECK_THROWS_AS(x.storage().resize({3, 3, 3}), std::runtime_error);  // another size: refused
    CHECK_THROWS_AS(x.buffer().resize({1, 1, 1}), std::runtime_error);
    CHECK(x.numel() == 60);
    static_assert(!shape_assignable<decltype(x)>);  // extents change only with the elements

    // A tensor whose elements were moved out says so on the checked paths.
    auto moved = shaped::torch::rand<batch, num_tokens, d_out>(2, 3);
    auto taken = std::move(moved);
    CHECK(taken.numel() == 36);
    CHECK(error_of([&] { (void)moved.at(0, 0, 0); }) ==  // NOLINT(bugprone-use-after-move): the point here
          "shaped::tensor::at: the tensor's elements were moved out (std::move); assign to it before using it");
    CHECK_THROWS_AS((void)moved.storage(), std::logic_error);
    std::ostringstream sink;
    CHECK_THROWS_AS(sink << moved, std::logic_error);
    moved = taken;  // assigned to: usable again
    CHECK(moved.at(1, 2, 5) == taken(1, 2, 5));

    // A negative index is reported as given.
    CHECK(error_of([&] { (void)x.at(0, -1, 0); }) ==
          "shaped::tensor::at: index -1 is out of range for axis num_tokens (dimension 1), whose extent is 5");
    CHECK(error_of([&] { (void)x.at(0, 5, 0); }) ==
          "shaped::tensor::at: index 5 is out of range for axis num_tokens (dimension 1), whose extent is 5");
    CHECK(x.at(1, 4, 5) == 3.0f);

    // A stride that would wrap the reach computation around is refused, not wrapped.
    using strided = shaped::strided_tensor<float, two, five>;
    xt::xtensor<float, 2> buffer(std::array<std::size_t, 2>{2, 5});
    const std::size_t huge = std::numeric_limits<std::size_t>::max() / 2 + 1;  // 1 * huge + 4 * huge wraps
    CHECK(error_of([&] { strided(shaped::detail::strided_tag{}, {}, buffer, {huge, huge}); }) ==
          "shaped::strided tensor: expected more than 10 elements for extents (2, 5) and strides (" +
              std::to_string(huge) + ", " + std::to_string(huge) + "), got 10 elements in the buffer");
    CHECK_NOTHROW(strided(shaped::detail::strided_tag{}, {}, buffer, {1, 2}));
}
