#ifndef SHAPED_DETAIL_PATTERN_HPP
#define SHAPED_DETAIL_PATTERN_HPP

// The grammar of rearrange/reduce/einsum patterns, parsed by constexpr functions (no type recursion):
//
//   pattern := side "->" side              (rearrange, reduce)
//            | side "," side "->" side    (einsum: two operands)
//   side    := term*                      (terms separated by spaces)
//   term    := name | "(" name+ ")" | "..."
//            | "()"                       (reduce's right side only: a reduced axis kept, of extent 1)
//   name    := [A-Za-z_][A-Za-z0-9_]*
//
// e.g. "batch num_tokens (num_heads head_dim) -> batch num_heads num_tokens head_dim". The parser checks the
// grammar only (what einops checks before it sees a tensor); which names are axes of the tensor, and whether
// a group's product is the axis it stands for, are the ops' checks against the types. A malformed pattern
// gives `parsed::err` and the byte offset where it was found, so that the op's static_assert can name both.

#include <array>
#include <cstddef>
#include <string_view>

namespace shaped::detail::pattern {

/// At most this many names, and this many terms on a side, in one pattern.
inline constexpr std::size_t max_names = 48;
inline constexpr std::size_t max_terms = 24;

/// A name in the pattern: its bytes are `text.substr(begin, size)`.
struct name_ref {
    std::size_t begin = 0;
    std::size_t size = 0;
};

enum class term_kind : unsigned char { name, group, ellipsis, unit };

/// One position of a side: a name (`count == 1`), a parenthesized group of `count` names, `...`, or `()` (a
/// unit, `count == 0`, where the parse allows it); its names
/// are `names[first]` to `names[first + count - 1]`.
struct term {
    term_kind kind = term_kind::name;
    std::size_t first = 0;
    std::size_t count = 0;
};

struct side {
    std::array<term, max_terms> terms{};
    std::size_t size = 0;
    /// The index of the `...` term, or `size` when there is none.
    std::size_t ellipsis = 0;
};

/// What is wrong with a pattern's grammar (`none` when nothing is).
enum class mistake : unsigned char {
    none,
    no_arrow,            // no "->"
    two_arrows,          // "->" twice
    bad_character,       // a byte that starts no name, group or "..."
    lone_dot,            // "." or ".." where "..." was meant
    unbalanced_open,     // "(" without ")"
    unbalanced_close,    // ")" without "("
    nested_group,        // "(" inside a group
    empty_group,         // "()" (outside reduce's right side)
    ellipsis_in_group,   // "(... x)"
    two_ellipses,        // "..." twice on one side
    repeated_name,       // a name twice on one side
    too_many_names,      // more than max_names
    too_many_terms,      // more than max_terms on a side
    no_comma,            // einsum: the left side is not two operands separated by ","
    two_commas,          // einsum: "," twice
};

struct parsed {
    std::array<name_ref, max_names> names{};
    std::size_t name_count = 0;
    side lhs{};
    /// The second operand's side (einsum only).
    side lhs2{};
    side rhs{};
    mistake err = mistake::none;
    /// The byte offset of the error in the pattern (its length for `no_arrow`).
    std::size_t where = 0;
};

constexpr bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
constexpr bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }
constexpr bool space(char c) { return c == ' ' || c == '\t' || c == '\n'; }

constexpr std::string_view name_of(std::string_view text, name_ref r) { return text.substr(r.begin, r.size); }

// Byte loops instead of string_view's == and find: g++ 12 with -fsanitize=undefined does not evaluate those
// at compile time over a template argument's bytes, and every pattern is one.
constexpr bool same(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) return false;
    return true;
}
/// Where `what` first occurs in `text` at or after `from`, or `std::string_view::npos`.
constexpr std::size_t find(std::string_view text, std::string_view what, std::size_t from = 0) {
    for (std::size_t i = from; i + what.size() <= text.size(); ++i)
        if (same(text.substr(i, what.size()), what)) return i;
    return std::string_view::npos;
}

namespace parse_detail {

constexpr bool fail(parsed& p, mistake e, std::size_t where) {
    p.err = e;
    p.where = where;
    return false;
}

// Parses text[begin, end) as one side into s; the names it reads are appended to p.names.
// `units`: "()" is a term of its own (reduce's right side) instead of an error.
constexpr bool parse_side(std::string_view text, std::size_t begin, std::size_t end, parsed& p, side& s,
                          bool units = false) {
    s.ellipsis = max_terms;
    bool in_group = false;
    std::size_t group_at = 0;
    std::size_t i = begin;
    while (i < end) {
        const char c = text[i];
        if (space(c)) {
            ++i;
        } else if (c == '(') {
            if (in_group) return fail(p, mistake::nested_group, i);
            if (s.size == max_terms) return fail(p, mistake::too_many_terms, i);
            in_group = true;
            group_at = i;
            s.terms[s.size] = term{term_kind::group, p.name_count, 0};
            ++i;
        } else if (c == ')') {
            if (!in_group) return fail(p, mistake::unbalanced_close, i);
            if (s.terms[s.size].count == 0) {
                if (!units) return fail(p, mistake::empty_group, group_at);
                s.terms[s.size].kind = term_kind::unit;
            }
            in_group = false;
            ++s.size;
            ++i;
        } else if (c == '.') {
            if (end - i < 3 || text[i + 1] != '.' || text[i + 2] != '.') return fail(p, mistake::lone_dot, i);
            if (in_group) return fail(p, mistake::ellipsis_in_group, i);
            if (s.ellipsis != max_terms) return fail(p, mistake::two_ellipses, i);
            if (s.size == max_terms) return fail(p, mistake::too_many_terms, i);
            s.ellipsis = s.size;
            s.terms[s.size++] = term{term_kind::ellipsis, p.name_count, 0};
            i += 3;
        } else if (name_start(c)) {
            std::size_t j = i;
            while (j < end && name_char(text[j])) ++j;
            const name_ref r{i, j - i};
            for (std::size_t k = 0; k < s.size; ++k)  // a repeat among this side's earlier terms
                for (std::size_t n = 0; n < s.terms[k].count; ++n)
                    if (same(name_of(text, p.names[s.terms[k].first + n]), name_of(text, r)))
                        return fail(p, mistake::repeated_name, i);
            if (in_group)  // or earlier in the open group
                for (std::size_t n = 0; n < s.terms[s.size].count; ++n)
                    if (same(name_of(text, p.names[s.terms[s.size].first + n]), name_of(text, r)))
                        return fail(p, mistake::repeated_name, i);
            if (p.name_count == max_names) return fail(p, mistake::too_many_names, i);
            p.names[p.name_count++] = r;
            if (in_group) {
                ++s.terms[s.size].count;
            } else {
                if (s.size == max_terms) return fail(p, mistake::too_many_terms, i);
                s.terms[s.size++] = term{term_kind::name, p.name_count - 1, 1};
            }
            i = j;
        } else {
            return fail(p, mistake::bad_character, i);
        }
    }
    if (in_group) return fail(p, mistake::unbalanced_open, group_at);
    if (s.ellipsis == max_terms) s.ellipsis = s.size;
    return true;
}

}  // namespace parse_detail

/// Parses `text` ("lhs -> rhs", or "lhs, lhs2 -> rhs" with `operands == 2`; with `units`, "()" may stand on
/// the right); on a grammar error, `err` and `where` say what and where.
constexpr parsed parse(std::string_view text, std::size_t operands = 1, bool units = false) {
    parsed p{};
    const std::size_t arrow = find(text, "->");
    if (arrow == std::string_view::npos) {
        p.err = mistake::no_arrow;
        p.where = text.size();
        return p;
    }
    if (const std::size_t again = find(text, "->", arrow + 2); again != std::string_view::npos) {
        p.err = mistake::two_arrows;
        p.where = again;
        return p;
    }
    std::size_t lhs_end = arrow;
    if (operands == 2) {
        lhs_end = find(text, ",");
        if (lhs_end > arrow) {
            p.err = mistake::no_comma;
            p.where = arrow;
            return p;
        }
        if (const std::size_t again = find(text, ",", lhs_end + 1); again != std::string_view::npos) {
            p.err = mistake::two_commas;
            p.where = again;
            return p;
        }
    }
    if (!parse_detail::parse_side(text, 0, lhs_end, p, p.lhs)) return p;
    if (operands == 2 && !parse_detail::parse_side(text, lhs_end + 1, arrow, p, p.lhs2)) return p;
    parse_detail::parse_side(text, arrow + 2, text.size(), p, p.rhs, units);
    return p;
}

}  // namespace shaped::detail::pattern

#endif
