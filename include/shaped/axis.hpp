#ifndef SHAPED_AXIS_HPP
#define SHAPED_AXIS_HPP

/// \file
/// Axes: a name, fixed at compile time, and an extent, fixed at compile time (`axis`) or at run time
/// (`dynamic_axis`), that make up a tensor's type.
///
/// Declare each axis as a named struct, so that compilers print `d_out` rather than an instantiation:
/// \code
///   struct context_length : shaped::axis<"context_length", 1024> {};
///   struct batch          : shaped::dynamic_axis<"batch"> {};                                // any size
///   struct num_tokens     : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};
///   struct d_out          : shaped::axis<"d_out", 768> {};
///   struct num_heads      : shaped::axis<"num_heads", 12> {};
///   struct head_dim       : shaped::quotient<"head_dim", d_out, num_heads> {};  // d_out / num_heads = 64
/// \endcode
/// Two axes are *the same axis* when they are the same type, or when both are the same ordered product
/// of the same factors: `merged<num_heads, head_dim>` is `d_out` above, because `head_dim` was declared as
/// `d_out / num_heads` (heads outermost, as `view(b, t, num_heads, head_dim)` splits in PyTorch).
/// `merged<head_dim, num_heads>` is not `d_out`: the order of the factors is part of the axis.
///
/// A run-time axis is as much a type as a static one: every rule that compares names compares it the same
/// way. Only its extent is a number that a tensor carries (as `std::extents` carries its dynamic extents),
/// checked once where it enters (`1 <= n <= bound`) and derived from the operands inside every op.

#include <boost/hana/append.hpp>
#include <boost/hana/back.hpp>
#include <boost/hana/concat.hpp>
#include <boost/hana/drop_back.hpp>
#include <boost/hana/equal.hpp>
#include <boost/hana/flatten.hpp>
#include <boost/hana/fold_left.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/transform.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>
#include <array>
#include <concepts>
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "detail/fixed_string.hpp"
#include "diagnostics.hpp"

namespace shaped {

namespace hana = boost::hana;

/// Base of every axis kind; `Axis` checks for it.
struct axis_tag {};

/// The largest extent any axis may have: a tensor's element count must fit a signed index (xtensor, BLAS).
inline constexpr std::size_t max_extent = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());

namespace detail {

constexpr std::size_t saturating_mul(std::size_t a, std::size_t b) {
    return a != 0 && b > max_extent / a ? max_extent : a * b;
}
constexpr std::size_t saturating_add(std::size_t a, std::size_t b) {
    return a > max_extent - b ? max_extent : a + b;
}

// What every axis kind inherits: a static extent, or a bound and the number of run-time extents it carries
// (`dynamic_atoms`: 1 for a run-time axis, the sum of its factors' for a merged one) with the product of
// its static factors (`static_factor`) and each run-time atom's bound (`dynamic_bounds`).
template <std::size_t Extent>
struct static_extent {
    static constexpr std::size_t extent = Extent;
    static constexpr std::size_t bound = Extent;
    static constexpr std::size_t dynamic_atoms = 0;
    static constexpr std::size_t static_factor = Extent;
    static constexpr std::array<std::size_t, 0> dynamic_bounds{};
};
template <std::size_t Bound, std::size_t Atoms, std::size_t Factor, std::array<std::size_t, Atoms> Bounds>
struct run_time_extent {
    static constexpr std::size_t bound = Bound;
    static constexpr std::size_t dynamic_atoms = Atoms;
    static constexpr std::size_t static_factor = Factor;
    static constexpr std::array<std::size_t, Atoms> dynamic_bounds = Bounds;
};
template <std::size_t Bound>
using one_run_time_extent = run_time_extent<Bound, 1, 1, std::array<std::size_t, 1>{Bound}>;

}  // namespace detail

/// What any axis kind satisfies: a tag, a bound, and how many run-time extents it carries.
template <class A>
concept Axis = std::derived_from<A, axis_tag> && requires {
    { A::bound } -> std::convertible_to<std::size_t>;
    { A::dynamic_atoms } -> std::convertible_to<std::size_t>;
};

/// An axis whose extent is fixed at compile time (`A::extent`).
template <class A>
concept StaticAxis = Axis<A> && A::dynamic_atoms == 0;

/// An axis whose extent is fixed at run time, below a compile-time bound (`A::bound`).
template <class A>
concept DynamicAxis = Axis<A> && A::dynamic_atoms != 0;

/// The bound of a run-time axis: its extent is at most `B::extent`, and it is declared as a prefix of
/// `B` (a mask over `B` may be sliced to it).
///
/// Shapes: none of its own; `B` must be a static axis.
/// Errors: compile time, a run-time `B` (a bound is a number the compiler knows).
/// Source: torch.export's `Dim("num_tokens", max=context_length)`; the book's `context_length`.
/// Example: `struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};`
template <Axis B>
struct at_most {
    static_assert(StaticAxis<B>,
                  "shaped::at_most<B>: the bound must be a static axis (e.g. context_length), whose extent the "
                  "compiler knows");
    /// The bounding axis `B`.
    using axis = B;
};

/// No bound: a run-time axis of any extent (up to `shaped::max_extent`), e.g. a batch.
struct unbounded {};

namespace detail {
template <class Within>
struct within_of {
    static_assert(std::is_void_v<Within>, "shaped::axis: the third argument must be shaped::at_most<B>");
    using type = void;
};
template <class B>
struct within_of<at_most<B>> {
    using type = B;
};
template <class B>
constexpr std::size_t bound_of() {
    if constexpr (std::is_same_v<B, unbounded> || std::is_void_v<B>)
        return max_extent;
    else
        return B::axis::extent;
}
template <class B>
struct within_of_bound {
    using type = typename within_of<B>::type;
};
template <>
struct within_of_bound<unbounded> {
    using type = void;
};
}  // namespace detail

/// An atomic axis with a name and a compile-time extent.
///
/// Shapes: extent `Extent` (≥ 1). With `Within = at_most<B>` the axis is declared as a prefix of `B` (so
/// `mask.slice<A>()` of a `B` mask compiles, and a module of `context_length` B accepts it as its tokens).
/// Errors: compile time, `Extent == 0` ("an axis has at least one element"), `Extent > B::extent`.
/// Source: the sizes of the book's listings (`batch`, `num_tokens`, `d_in`, `d_out`, `num_heads`, ...).
/// Example: `struct d_out : shaped::axis<"d_out", 6> {};`
///          `struct num_tokens : shaped::axis<"num_tokens", 6, shaped::at_most<context_length>> {};`
template <detail::fixed_string Name, std::size_t Extent, class Within = void>
struct axis : axis_tag, detail::static_extent<Extent> {
    static_assert(Extent > 0, "shaped::axis: an axis has at least one element");
    static_assert(Extent <= max_extent, "shaped::axis: the extent exceeds what a signed index holds");
    /// The axis this one is declared a prefix of (`B` of `at_most<B>`), or `void`.
    using within = typename detail::within_of<Within>::type;
    static_assert(diag::expect<std::is_void_v<within> || Extent <= detail::bound_of<Within>(),
                               diag::numbers<Extent, detail::bound_of<Within>()>>,
                  "shaped::axis<Name, Extent, at_most<B>>: the extent exceeds B's; an axis declared within B is at "
                  "most as long as B");
    /// The axis's name, as printed in messages and by `axis_name`.
    static constexpr std::string_view name = Name.view();
};

/// An atomic axis with a name fixed at compile time and an extent fixed at run time, at most `Bound`'s.
///
/// Shapes: extent `n` with `1 <= n <= bound`, where `bound` is `B::extent` for `at_most<B>` and
/// `shaped::max_extent` for `unbounded`. A tensor stores this number; its name is part of the type as any
/// other axis's. With `at_most<B>` the axis is declared as a prefix of `B`.
/// Errors: compile time, a run-time `B`. Thrown (`shape_error`), where the extent enters (`extents`,
/// `torch::rand`, `from_buffer`, a tensor from an xtensor or from nested braces): `n == 0` or `n > bound`.
/// Source: a prompt's length, `x.shape[1]` of the book's `forward`; torch.export's `Dim(name, max=...)`.
/// Example: `struct num_tokens : shaped::dynamic_axis<"num_tokens", shaped::at_most<context_length>> {};`
///          `struct batch : shaped::dynamic_axis<"batch"> {};`
template <detail::fixed_string Name, class Bound = unbounded>
struct dynamic_axis : axis_tag, detail::one_run_time_extent<detail::bound_of<Bound>()> {
    /// The axis this one is declared a prefix of (`B` of `at_most<B>`), or `void` when `unbounded`.
    using within = typename detail::within_of_bound<Bound>::type;
    /// The axis's name, as printed in messages and by `axis_name`.
    static constexpr std::string_view name = Name.view();
};

namespace detail {
template <class Dividend, class Divisor>
constexpr bool divides() {
    if constexpr (StaticAxis<Dividend> && StaticAxis<Divisor>)
        return Dividend::extent % Divisor::extent == 0;
    else
        return true;
}
/// How a diagnostic prints one axis: `sized<d_out, 768>`, `run_time<num_tokens, 1024>` or `run_time<batch>`.
template <class A>
struct describe {
    using type = diag::sized<A, A::bound>;
};
template <DynamicAxis A>
    requires(A::bound < max_extent)
struct describe<A> {
    using type = diag::run_time<A, A::bound>;
};
template <DynamicAxis A>
    requires(A::bound >= max_extent)
struct describe<A> {
    using type = diag::run_time<A>;
};
// A quotient of a run-time axis does not compile; as the error's only consequence, it is a run-time axis.
template <class Dividend, class Divisor>
using quotient_extent =
    std::conditional_t<StaticAxis<Dividend> && StaticAxis<Divisor>, static_extent<Dividend::bound / Divisor::bound>,
                       one_run_time_extent<Dividend::bound / Divisor::bound>>;
}  // namespace detail

/// An axis declared as `Dividend / Divisor`, e.g. `head_dim = d_out / num_heads`.
///
/// Shapes: extent `Dividend::extent / Divisor::extent`. Splitting `Dividend` into `(Divisor, quotient)` with
/// `view` or `split`, and merging them back with `view` or `cat`, gives back `Dividend`.
/// Errors: compile time, where the axis is declared, when `Dividend::extent % Divisor::extent != 0`
/// ("d_out must be divisible by num_heads", the book's `assert d_out % num_heads == 0`), or when either is
/// a run-time axis (divisibility could only be checked late).
/// Source: `self.head_dim = d_out // num_heads` in the book's `MultiHeadAttention` (listing 3.5).
/// Example: `struct head_dim : shaped::quotient<"head_dim", d_out, num_heads> {};`
template <detail::fixed_string Name, Axis Dividend, Axis Divisor>
struct quotient : axis_tag, detail::quotient_extent<Dividend, Divisor> {
    static_assert(diag::expect<StaticAxis<Dividend> && StaticAxis<Divisor>, typename detail::describe<Dividend>::type,
                               typename detail::describe<Divisor>::type>,
                  "shaped::quotient: a run-time axis cannot be divided (divisibility could only be checked at run "
                  "time); split a static axis, or keep the run-time axis whole");
    static_assert(
        diag::expect<detail::divides<Dividend, Divisor>(), diag::dividend<typename detail::describe<Dividend>::type>,
                     diag::divisor<typename detail::describe<Divisor>::type>>,
        "shaped::quotient: the dividend axis must be divisible by the divisor axis (d_out must be "
        "divisible by num_heads); choose num_heads among the divisors of d_out");
    /// The axis's name, as printed in messages and by `axis_name`.
    static constexpr std::string_view name = Name.view();
    /// The axis divided, e.g. `d_out`.
    using dividend = Dividend;
    /// The axis it is divided by, e.g. `num_heads`; `(divisor, quotient)` merges back into `dividend`.
    using divisor = Divisor;
};

namespace detail {
// The extent of an ordered product: static when every factor is, else run-time with its factors' atoms.
template <class... Factors>
constexpr auto product_bounds() {
    std::array<std::size_t, (std::size_t{0} + ... + Factors::dynamic_atoms)> out{};
    std::size_t k = 0;
    (
        [&] {
            for (std::size_t b : Factors::dynamic_bounds) out[k++] = b;
        }(),
        ...);
    return out;
}
template <class... Factors>
constexpr std::size_t product_bound() {
    std::size_t p = 1;
    ((p = saturating_mul(p, Factors::bound)), ...);
    return p;
}
template <class... Factors>
using product_extent = std::conditional_t<
    (StaticAxis<Factors> && ...), static_extent<product_bound<Factors...>()>,
    run_time_extent<product_bound<Factors...>(), (std::size_t{0} + ... + Factors::dynamic_atoms),
                    (std::size_t{1} * ... * Factors::static_factor), product_bounds<Factors...>()>>;
template <class... Parts>
constexpr std::size_t sum_bound() {
    std::size_t s = 0;
    ((s = saturating_add(s, Parts::bound)), ...);
    return s;
}
template <class... Parts>
using sum_extent = std::conditional_t<(StaticAxis<Parts> && ...), static_extent<sum_bound<Parts...>()>,
                                      one_run_time_extent<sum_bound<Parts...>()>>;
template <class A>
using same_extent_as = std::conditional_t<StaticAxis<A>, static_extent<A::bound>, one_run_time_extent<A::bound>>;
}  // namespace detail

/// The ordered product of `Factors...`, outermost first: what `view` makes of adjacent axes it merges.
///
/// Shapes: extent is the product of the factors' extents; a run-time axis when any factor is one (it then
/// carries each run-time factor's extent, so that `view` can split it back).
/// Errors: none of its own.
/// Source: the merged dimension of `x.view(b, t, num_heads * head_dim)`; einops' `(h d)`.
/// Example: `x.view<batch, num_tokens, shaped::merged<num_heads, head_dim>>()`.
template <Axis... Factors>
struct merged : axis_tag, detail::product_extent<Factors...> {
    static_assert(sizeof...(Factors) >= 1, "shaped::merged: needs at least one factor");
    /// The factors, outermost first, as a `hana::tuple_t`.
    static constexpr auto factors = hana::tuple_t<Factors...>;
};

/// A named ordered product: `struct d_out : shaped::product<"d_out", num_heads, head_dim> {};` declares
/// `d_out` as the same axis as `merged<num_heads, head_dim>`.
///
/// Shapes: extent is the product of the factors' extents. Errors: none of its own.
/// Source: `d_out = num_heads * head_dim`, the book's `MultiHeadAttentionWrapper` sizes.
template <detail::fixed_string Name, Axis... Factors>
struct product : axis_tag, detail::product_extent<Factors...> {
    static_assert(sizeof...(Factors) >= 1, "shaped::product: needs at least one factor");
    /// The axis's name, as printed in messages and by `axis_name`.
    static constexpr std::string_view name = Name.view();
    /// The factors, outermost first, as a `hana::tuple_t`.
    static constexpr auto factors = hana::tuple_t<Factors...>;
};

/// The axis `cat` makes when it joins parts that do not merge back into a declared axis, e.g. three
/// full-width `d_out` heads: `concat<d_out, d_out, d_out>` (extent 18), which is not `d_out` and is no
/// other axis either; a `linear<d_out, d_out>` rejects it.
///
/// Shapes: extent is the sum of the parts' extents; a run-time axis when any part is one.
/// Errors: none of its own.
/// Source: `torch.cat(tensors, dim)`.
template <Axis... Parts>
struct concat : axis_tag, detail::sum_extent<Parts...> {
    static_assert(sizeof...(Parts) >= 1, "shaped::concat: needs at least one part");
    /// The parts, in the order `cat` joined them, as a `hana::tuple_t`.
    static constexpr auto parts = hana::tuple_t<Parts...>;
};

/// The axis of extent 1 that `unsqueeze` inserts: it broadcasts against any axis, as PyTorch's size-1
/// dimensions do. Every other axis broadcasts only against itself.
///
/// Shapes: extent 1. Errors: none of its own.
/// Source: `torch.Tensor.unsqueeze(dim)`, `x[:, None, :]`.
/// Example: `auto m = mask.unsqueeze<1>();   // (batch, one, num_tokens, key<num_tokens>)`
struct one : axis_tag, detail::static_extent<1> {
    /// `"one"`, as printed in messages.
    static constexpr std::string_view name = "one";
};

namespace detail {
/// The divisor of a module's `head_dim`: `Divisor` when it divides `Dividend`, else `one`. A module that
/// reports "d_out must be divisible by num_heads" itself declares `quotient<"head_dim", d_out,
/// reported_divisor_t<d_out, num_heads>>`, so that the quotient's own check does not report the same mistake
/// a second time; when it divides, the type is `quotient<"head_dim", d_out, num_heads>` exactly.
template <class Dividend, class Divisor>
using reported_divisor_t = std::conditional_t<divides<Dividend, Divisor>(), Divisor, one>;
}  // namespace detail

/// The axis of extent 1 that a reduction over `A` leaves with `keepdim`: `x.mean<emb_dim>(shaped::keepdim)` is
/// `(batch, num_tokens, reduced<emb_dim>)`. It broadcasts back against `A` and against nothing else, so
/// `x - x.mean<emb_dim>(keepdim)` compiles and a mean taken over another axis does not.
///
/// Shapes: extent 1. Errors: none of its own.
/// Source: `x.mean(dim=-1, keepdim=True)` (the book's `LayerNorm`, chapter 4).
template <Axis A>
struct reduced : axis_tag, detail::static_extent<1> {
    /// The axis reduced over, the only axis this one broadcasts against.
    using of = A;
};

/// The key-token axis that goes with the query-token axis `A`: same extent, another axis. Attention
/// scores are `(..., num_tokens, key<num_tokens>)`, so a softmax over the queries, a mask over the
/// wrong token axis or a product with the queries where the values were meant fails to compile.
///
/// Shapes: extent `A::extent`, or for a run-time `A` a run-time extent of its own with `A`'s bound (the
/// keys may be bound to another length than the queries, as in a KV cache). A prefix of whatever `A` is a
/// prefix of (`mask.slice<num_tokens, key<num_tokens>>(...)` of a `context_length` mask).
/// Errors: none of its own.
/// Source: the query and key positions of `queries @ keys.transpose(1, 2)` (the book's listing 3.3).
/// Example: `auto k = keys.rename<batch, shaped::key<num_tokens>, d_out>();`
template <Axis A>
struct key : axis_tag, detail::same_extent_as<A> {
    /// The query-token axis these keys go with.
    using query = A;
};

namespace detail {
// The bound of a cache's keys for queries along `A`: the context `A` is declared within, whose every token
// the cache may hold (a static one-token axis `A` of decoding steps included), else `A`'s own bound.
template <class A>
constexpr std::size_t cache_bound() {
    if constexpr (requires { typename A::within; }) {
        if constexpr (!std::is_void_v<typename A::within>) return A::within::extent;
        else return A::bound;
    } else {
        return A::bound;
    }
}
}  // namespace detail

/// The key-token axis of a KV cache whose queries lie along `A`: every token the cache holds, those of
/// earlier calls and the new ones, so its extent is its own (the new tokens' `A` is shorter). Scores of new
/// queries against cached keys are `(..., num_tokens, cached<num_tokens>)`; a mask built for the new tokens
/// alone, `(num_tokens, key<num_tokens>)`, does not apply to them.
///
/// Shapes: a run-time extent bounded by the context `A` is declared within (`A`'s own bound if none), so that
/// a static one-token `A` of decoding steps meets every cached token. A prefix of whatever `A` is a prefix of,
/// so a causal mask of `context_length` may be cut to it. Errors: none of its own.
/// Source: the cached keys of the book's KV cache (`self.cache_k`, ch04/03_kv-cache).
/// Example: `auto mask_rows = shaped::narrow<0, num_tokens>(mask, cached_before, n).slice<num_tokens, shaped::cached<num_tokens>>(n, cached_before + n);`
template <Axis A>
struct cached : axis_tag, detail::one_run_time_extent<detail::cache_bound<A>()> {
    /// The query-token axis these cached keys go with (so a `cached` axis is also a key axis).
    using query = A;
    /// The same `A`: marks the axis as a cache's, apart from a plain `key<A>`.
    using cache_of = A;
};

/// The key-token axis of a sliding-window KV cache (`nn::sliding_window_cache`) of `Window::extent` tokens,
/// whose queries lie along `A`: the cached tokens the window still reaches and the new ones (at most
/// `Window::extent - 1 + ` the new tokens). Such keys are right only for causal attention within that very
/// window: `scaled_dot_product_attention` without `sliding_window<Window>`, or with another window, fails to
/// compile (the tokens a wider window needs were dropped).
///
/// Shapes: a run-time extent bounded as `cached<A>`'s; a key axis of `A` (`key<A>`'s relations hold) and a
/// cache's axis as `cached<A>` is. Errors: none of its own.
/// Source: the keys of the book's sliding-window cache, `keys[:, -attn_keep:]` (ch04/06_swa,
/// `gpt_with_kv_swa.py`); Gemma 3's local layers.
/// Example: `auto [k, v] = cache.append(keys_new, values_new);  // (b, heads, shaped::windowed<num_tokens, window>, head_dim)`
template <Axis A, Axis Window>
struct windowed : axis_tag, detail::one_run_time_extent<detail::cache_bound<A>()> {
    /// The query-token axis these keys go with.
    using query = A;
    /// The same `A`: a cache's axis.
    using cache_of = A;
    /// The window of the cache the keys come from.
    using window = Window;
};

/// The axis of `topk`'s results: the `k` largest elements along `A`, largest first, `k` chosen at run time.
/// It is not `A` (position `j` along it is the `j`-th largest, not vocabulary entry `j`), so the values of
/// `topk` do not add to or mask the tensor they came from without saying which element goes where (`gather`
/// by the indices, or compare with one of them, `select<top_k<A>>(-1)`).
///
/// Shapes: a run-time extent `k`, `1 <= k <= A`'s bound. Errors: none of its own.
/// Source: the `k`-sized last dimension of `torch.topk(logits, k)` (the book's top-k sampling, chapter 5).
/// Example: `auto [top_logits, top_pos] = shaped::topk<vocab>(logits, 3);   // (top_k<vocab>) twice`
template <Axis A>
struct top_k : axis_tag, detail::one_run_time_extent<A::bound> {
    /// The axis the largest elements were chosen along.
    using top_of = A;
};

/// How rotary position embeddings pair the elements of a head: `split_halves` pairs element `i` with `i +
/// head_dim/2` (Hugging Face's checkpoints and the book's `apply_rope`), `interleaved` pairs `2i` with `2i + 1`
/// (the RoPE paper and Meta's original Llama checkpoints). The two give the same attention only when the
/// projection weights were laid out for the same pairing.
enum class rope_layout { split_halves, interleaved };

/// The head axis `A` after rotary position embeddings of pair layout `Layout`: same extent, another axis.
/// Queries and keys are rotated alike before their product, so `matmul(queries, keys.T())` over a rotated and
/// an unrotated `head_dim`, or over two layouts, fails to compile: RoPE applied to the queries alone, or with
/// a checkpoint's pairing on one side and the other on the other, is a shape error. The values are not
/// rotated: the context vectors come back on `A`.
///
/// Shapes: extent `A::extent`. Errors: none of its own.
/// Source: `apply_rope(queries, cos, sin)` and `apply_rope(keys, cos, sin)` in the book's Llama 3, Qwen3 and
/// Gemma 3 attention (rasbt/LLMs-from-scratch ch05/07_gpt_to_llama, ch05/11_qwen3, ch05/12_gemma3).
/// Example: `auto q = rope(queries);  // (batch, num_heads, num_tokens, shaped::rotated<head_dim>)`
template <Axis A, rope_layout Layout = rope_layout::split_halves>
struct rotated : axis_tag, detail::same_extent_as<A> {
    /// The axis before the rotation.
    using unrotated = A;
    /// The pair layout of the rotation.
    static constexpr rope_layout layout = Layout;
};

namespace detail {

template <class A>
concept is_key = requires { typename A::query; };

template <class A>
concept is_rotated = requires { typename A::unrotated; };

// The axis before a RoPE rotation: `A::unrotated` for a rotated axis, `A` itself otherwise.
template <class A>
struct unrotated_of {
    using type = A;
};
template <class A>
    requires is_rotated<A>
struct unrotated_of<A> {
    using type = typename A::unrotated;
};
template <class A>
using unrotated_t = typename unrotated_of<A>::type;

template <class A>
concept is_cached = requires { typename A::cache_of; };

template <class A>
concept is_reduced = requires { typename A::of; };

template <class A>
concept has_factors = requires {
    A::factors;
};

template <class A>
concept is_quotient = requires {
    typename A::dividend;
    typename A::divisor;
};

/// The atoms of an axis: itself, or for a product its factors' atoms in order.
template <class A>
constexpr auto atoms(hana::basic_type<A>) {
    if constexpr (has_factors<A>)
        return hana::flatten(hana::transform(A::factors, [](auto f) {
            return atoms(f);
        }));
    else
        return hana::make_tuple(hana::type_c<A>);
}

// Appends one atom to a normal form, folding `(divisor, quotient)` back into the dividend; the
// dividend's atoms are appended the same way, so nested quotients fold all the way
// (`[num_heads, two, half]` with `half = head_dim / two` becomes `[d_out]`).
struct push_atom_fn {
    template <class Acc, class X>
    constexpr auto operator()(Acc acc, X x) const {
        using A = typename X::type;
        if constexpr (is_quotient<A> && decltype(hana::length(acc))::value > 0) {
            if constexpr (decltype(hana::back(acc) == hana::type_c<typename A::divisor>)::value)
                return hana::fold_left(atoms(hana::type_c<typename A::dividend>), hana::drop_back(acc), *this);
            else
                return hana::append(acc, x);
        } else {
            return hana::append(acc, x);
        }
    }
};

/// Atoms of a list of axes, with every `(divisor, divisor-quotient)` pair folded back into its
/// dividend: `[num_heads, head_dim]` becomes `[d_out]` when `head_dim = d_out / num_heads`.
template <class AxesTuple>
constexpr auto normal_form(AxesTuple axes) {
    auto flat = hana::flatten(hana::transform(axes, [](auto a) {
        return atoms(a);
    }));
    return hana::fold_left(flat, hana::make_tuple(), push_atom_fn{});
}

}  // namespace detail

namespace detail {
// Two axes without factors are the same axis only when they are the same type: their normal forms are
// themselves. Only products need the (costlier) comparison of normal forms.
template <class A, class B>
constexpr bool same_axis() {
    if constexpr (std::is_same_v<A, B>)
        return true;
    else if constexpr (!has_factors<A> && !has_factors<B>)
        return false;
    else
        return decltype(normal_form(hana::tuple_t<A>) == normal_form(hana::tuple_t<B>))::value;
}
}  // namespace detail

/// True when `A` and `B` are the same axis: the same type, or the same ordered product of atoms.
template <class A, class B>
inline constexpr bool same_axis_v = detail::same_axis<A, B>();

/// The name of an axis for run-time messages and printing: `d_out`, `(num_heads*head_dim)`,
/// `cat(d_out, d_out, d_out)`.
template <Axis A>
std::string axis_name() {
    if constexpr (requires { A::name; }) {
        return std::string(A::name);
    } else if constexpr (requires { typename A::window; }) {
        return "windowed<" + axis_name<typename A::query>() + ", " + axis_name<typename A::window>() + ">";
    } else if constexpr (requires { typename A::top_of; }) {
        return "top_k<" + axis_name<typename A::top_of>() + ">";
    } else if constexpr (detail::is_cached<A>) {
        return "cached<" + axis_name<typename A::query>() + ">";
    } else if constexpr (detail::is_key<A>) {
        return "key<" + axis_name<typename A::query>() + ">";
    } else if constexpr (detail::is_rotated<A>) {
        return "rotated<" + axis_name<typename A::unrotated>() +
               (A::layout == rope_layout::interleaved ? ", interleaved>" : ">");
    } else if constexpr (detail::is_reduced<A>) {
        return "reduced<" + axis_name<typename A::of>() + ">";
    } else if constexpr (detail::has_factors<A>) {
        std::string s = "(";
        hana::for_each(A::factors, [&](auto f) {
            if (s.size() > 1)
                s += '*';
            s += axis_name<typename decltype(f)::type>();
        });
        return s + ")";
    } else {
        static_assert(
            requires { A::parts; }, "shaped::axis_name: unknown kind of axis");
        std::string s = "cat(";
        hana::for_each(A::parts, [&](auto p) {
            if (s.size() > 4)
                s += ", ";
            s += axis_name<typename decltype(p)::type>();
        });
        return s + ")";
    }
}

namespace detail {
/// Whether `A` is declared as a prefix of `B`: `B` itself, an axis declared `at_most<B>` (or at most an axis
/// that is), or `key<A'>` of such an `A'`. This is what `slice` and the modules' `context_length` rely on.
template <class A, class B>
constexpr bool prefix_of() {
    if constexpr (std::is_same_v<A, B>) {
        return true;
    } else if constexpr (is_key<A>) {
        if constexpr (is_key<B>)
            return prefix_of<typename A::query, typename B::query>();
        else
            return prefix_of<typename A::query, B>();
    } else if constexpr (requires { typename A::within; }) {
        if constexpr (std::is_void_v<typename A::within>)
            return false;
        else
            return prefix_of<typename A::within, B>();
    } else {
        return false;
    }
}

/// What `leaf` says of the atomic axis that holds run-time atom `k` of `A` (`A` itself, or for a merged
/// axis the factor that holds it): for messages, off the hot path.
template <Axis A, class Leaf>
std::string at_dynamic_atom(std::size_t k, Leaf leaf) {
    if constexpr (has_factors<A>) {
        std::string r;
        std::size_t base = 0;
        hana::for_each(A::factors, [&](auto f) {
            using F = typename decltype(f)::type;
            if (k >= base && k < base + F::dynamic_atoms) r = at_dynamic_atom<F>(k - base, leaf);
            base += F::dynamic_atoms;
        });
        return r;
    } else {
        return leaf(hana::type_c<A>);
    }
}

/// The name of run-time atom `k` of `A`, for messages.
template <Axis A>
std::string dynamic_atom_name(std::size_t k) {
    return at_dynamic_atom<A>(k, [](auto t) { return axis_name<typename decltype(t)::type>(); });
}

// The axis an atomic run-time axis is declared within, or "" when it has no bound.
template <class A>
std::string bound_name() {
    if constexpr (is_key<A>) {
        return bound_name<typename A::query>();
    } else if constexpr (requires { typename A::within; }) {
        if constexpr (std::is_void_v<typename A::within>)
            return "";
        else
            return axis_name<typename A::within>();
    } else {
        return "";
    }
}

/// The name of the axis run-time atom `k` of `A` is declared within (`context_length`), or "" when unbounded.
template <Axis A>
std::string dynamic_atom_bound_name(std::size_t k) {
    return at_dynamic_atom<A>(k, [](auto t) { return bound_name<typename decltype(t)::type>(); });
}
}  // namespace detail

}  // namespace shaped

#endif
