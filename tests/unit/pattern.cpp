// The pattern grammar of rearrange/reduce/einsum (detail/pattern.hpp): what a well-formed pattern parses to,
// at compile time and at run time, and each grammar error with the offset it names.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include <shaped/detail/pattern.hpp>

namespace {

namespace pt = shaped::detail::pattern;

constexpr std::string_view heads = "batch num_tokens (num_heads head_dim) -> batch num_heads num_tokens head_dim";

// The whole parse runs in a constant expression: what rearrange<"..."> relies on.
constexpr pt::parsed heads_parsed = pt::parse(heads);
static_assert(heads_parsed.err == pt::mistake::none);
static_assert(heads_parsed.lhs.size == 3 && heads_parsed.rhs.size == 4);
static_assert(heads_parsed.lhs.terms[2].kind == pt::term_kind::group && heads_parsed.lhs.terms[2].count == 2);

std::string_view name(std::string_view text, const pt::parsed& p, const pt::side& s, std::size_t term,
                      std::size_t n = 0) {
    return pt::name_of(text, p.names[s.terms[term].first + n]);
}

pt::mistake error_of(std::string_view text) { return pt::parse(text).err; }
std::size_t where_of(std::string_view text) { return pt::parse(text).where; }

}  // namespace

TEST_CASE("pattern: the heads split parses to its names and group") {
    const pt::parsed p = pt::parse(heads);
    REQUIRE(p.err == pt::mistake::none);
    CHECK(p.name_count == 8);
    CHECK(name(heads, p, p.lhs, 0) == "batch");
    CHECK(name(heads, p, p.lhs, 1) == "num_tokens");
    CHECK(p.lhs.terms[1].kind == pt::term_kind::name);
    CHECK(name(heads, p, p.lhs, 2, 0) == "num_heads");
    CHECK(name(heads, p, p.lhs, 2, 1) == "head_dim");
    CHECK(name(heads, p, p.rhs, 1) == "num_heads");
    CHECK(name(heads, p, p.rhs, 3) == "head_dim");
    CHECK(p.lhs.ellipsis == p.lhs.size);  // no "..."
    CHECK(p.rhs.ellipsis == p.rhs.size);
}

TEST_CASE("pattern: ellipsis, spacing and a merge on the right") {
    constexpr std::string_view text = "...  num_heads\tnum_tokens head_dim->... num_tokens(num_heads head_dim)";
    const pt::parsed p = pt::parse(text);
    REQUIRE(p.err == pt::mistake::none);
    CHECK(p.lhs.size == 4);
    CHECK(p.lhs.ellipsis == 0);
    CHECK(p.lhs.terms[0].kind == pt::term_kind::ellipsis);
    CHECK(p.rhs.size == 3);
    CHECK(p.rhs.ellipsis == 0);
    CHECK(p.rhs.terms[2].kind == pt::term_kind::group);
    CHECK(name(text, p, p.rhs, 2, 1) == "head_dim");
    CHECK(name(text, p, p.rhs, 1) == "num_tokens");
}

TEST_CASE("pattern: a side may be empty (a full reduction), names may hold digits and capitals") {
    const pt::parsed p = pt::parse("W_query d2 ->");
    REQUIRE(p.err == pt::mistake::none);
    CHECK(p.lhs.size == 2);
    CHECK(p.rhs.size == 0);
    CHECK(name("W_query d2 ->", p, p.lhs, 1) == "d2");
}

TEST_CASE("pattern: each grammar error, and where it is") {
    CHECK(error_of("batch num_tokens") == pt::mistake::no_arrow);
    CHECK(where_of("batch num_tokens") == 16);
    CHECK(error_of("a -> b -> c") == pt::mistake::two_arrows);
    CHECK(where_of("a -> b -> c") == 7);
    CHECK(error_of("a - > b") == pt::mistake::no_arrow);
    CHECK(error_of("a b, c -> a") == pt::mistake::bad_character);
    CHECK(where_of("a b, c -> a") == 3);
    CHECK(error_of("a 2b -> a") == pt::mistake::bad_character);
    CHECK(error_of("a .. -> a") == pt::mistake::lone_dot);
    CHECK(where_of("a .. -> a") == 2);
    CHECK(error_of("a (b c -> a") == pt::mistake::unbalanced_open);
    CHECK(where_of("a (b c -> a") == 2);
    CHECK(error_of("a b) -> a") == pt::mistake::unbalanced_close);
    CHECK(error_of("(a (b c)) -> a") == pt::mistake::nested_group);
    CHECK(error_of("a () -> a") == pt::mistake::empty_group);
    CHECK(error_of("(... a) -> a") == pt::mistake::ellipsis_in_group);
    CHECK(error_of("... a ... -> a") == pt::mistake::two_ellipses);
    CHECK(where_of("... a ... -> a") == 6);
    CHECK(error_of("a b a -> a b") == pt::mistake::repeated_name);
    CHECK(where_of("a b a -> a b") == 4);
    CHECK(error_of("(a b) a -> a b") == pt::mistake::repeated_name);
    CHECK(error_of("(a a) -> a") == pt::mistake::repeated_name);
    CHECK(error_of("a -> b (c b)") == pt::mistake::repeated_name);
    CHECK(where_of("a -> b (c b)") == 10);
    // A name may appear once on each side: that is every pattern's point.
    CHECK(error_of("a b -> b a") == pt::mistake::none);
}

TEST_CASE("pattern: the limits are errors, not overflows") {
    std::string many_terms;
    for (std::size_t i = 0; i <= pt::max_terms; ++i) many_terms += "x" + std::to_string(i) + " ";
    CHECK(pt::parse(many_terms + "-> x0").err == pt::mistake::too_many_terms);
    std::string many_names = "(";
    for (std::size_t i = 0; i <= pt::max_names; ++i) many_names += "y" + std::to_string(i) + " ";
    CHECK(pt::parse(many_names + ") -> y0").err == pt::mistake::too_many_names);
}

TEST_CASE("pattern: () is a unit on reduce's right side only") {
    constexpr std::string_view text = "batch num_tokens emb_dim -> batch num_tokens ()";
    CHECK(error_of(text) == pt::mistake::empty_group);  // rearrange's and einsum's parse
    CHECK(where_of(text) == 45);
    const pt::parsed p = pt::parse(text, 1, true);
    REQUIRE(p.err == pt::mistake::none);
    CHECK(p.rhs.size == 3);
    CHECK(p.rhs.terms[2].kind == pt::term_kind::unit);
    CHECK(p.rhs.terms[2].count == 0);
    CHECK(pt::parse("batch () -> batch", 1, true).err == pt::mistake::empty_group);  // not on the left
    CHECK(pt::parse("batch d -> (batch ())", 1, true).err == pt::mistake::nested_group);
}
