#ifndef SHAPED_DETAIL_FIXED_STRING_HPP
#define SHAPED_DETAIL_FIXED_STRING_HPP

#include <cstddef>
#include <string_view>

namespace shaped::detail {

// A string usable as a template argument (C++20 class-type NTTP): carries an axis name into its type.
template <std::size_t N>
struct fixed_string {
    char data[N]{};
    constexpr fixed_string(const char (&s)[N]) noexcept {
        for (std::size_t i = 0; i < N; ++i) data[i] = s[i];
    }
    constexpr std::string_view view() const noexcept { return {data, N - 1}; }
};

}  // namespace shaped::detail

#endif
