#ifndef SHAPED_TORCH_PRINT_HPP
#define SHAPED_TORCH_PRINT_HPP

/// \file
/// `shaped::torch::repr`: the text PyTorch 1.13 prints for `repr(t)` of a CPU tensor without grad, with the
/// default print options (precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None), for
/// float32, float64, int64 (`torch.long`) and bool elements. Standard library only.

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

namespace shaped::torch {

namespace detail {

/// PyTorch's default `PRINT_OPTS` (torch/_tensor_str.py `__PrinterOptions`).
inline constexpr int print_precision = 4;
inline constexpr std::size_t print_threshold = 1000;
inline constexpr std::size_t print_edgeitems = 3;
inline constexpr std::size_t print_linewidth = 80;

/// Largest rank `repr` accepts.
inline constexpr std::size_t print_max_rank = 8;

/// `len("tensor(")`: the indent of a plain tensor's contents.
inline constexpr std::size_t print_indent = 7;

/// Element types `repr` formats.
template <class T>
concept printable_element =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t>;

/// Python's `format(value, ".{precision}f")` (`fmt` fixed) or `format(value, ".{precision}e")` (`fmt`
/// scientific): exact binary value rounded half-even; non-finite values print as `nan`, `inf`, `-inf` (Python
/// drops the sign of a NaN).
inline std::string format_double(double value, std::chars_format fmt, int precision) {
    if (std::isnan(value)) {
        return "nan";
    }
    if (std::isinf(value)) {
        return value < 0 ? "-inf" : "inf";
    }
    // Largest output: "-" + 309 integer digits + "." + precision digits, or a short scientific form.
    std::array<char, 400> buffer{};
    const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, fmt, precision);
    if (result.ec != std::errc{}) {
        throw std::runtime_error("shaped::torch::repr: number formatting failed");
    }
    return std::string(buffer.data(), result.ptr);
}

/// Left-pads `text` with spaces to `width` characters (never truncates), as `_Formatter.format` does.
inline std::string pad_left(std::string text, std::size_t width) {
    if (text.size() < width) {
        text.insert(0, width - text.size(), ' ');
    }
    return text;
}

/// Mirror of torch/_tensor_str.py `_Formatter`: the mode (int, scientific, fixed) and the common element width,
/// decided from the elements that are printed.
struct formatter {
    bool floating_dtype = true;
    bool int_mode = true;
    bool sci_mode = false;
    std::size_t max_width = 1;

    /// `_Formatter.format` for a floating element (given as the double Python sees).
    [[nodiscard]] std::string format(double value) const {
        std::string text;
        if (sci_mode) {
            text = format_double(value, std::chars_format::scientific, print_precision);
        } else if (int_mode) {
            text = format_double(value, std::chars_format::fixed, 0);
            if (std::isfinite(value)) {
                text += '.';
            }
        } else {
            text = format_double(value, std::chars_format::fixed, print_precision);
        }
        return pad_left(std::move(text), max_width);
    }

    /// `_Formatter.format` for a bool element (`"{}".format(value)`).
    [[nodiscard]] std::string format(bool value) const { return pad_left(value ? "True" : "False", max_width); }

    /// `_Formatter.format` for an integer element (`"{}".format(value)`).
    [[nodiscard]] std::string format(std::int64_t value) const { return pad_left(std::to_string(value), max_width); }
};

/// `_Formatter.__init__` for floating elements; `values` are the (possibly summarized) elements as doubles.
inline formatter make_float_formatter(const std::vector<double>& values) {
    formatter result;
    result.floating_dtype = true;

    std::vector<double> nonzero_finite;
    nonzero_finite.reserve(values.size());
    for (const double value : values) {
        if (std::isfinite(value) && value != 0.0) {
            nonzero_finite.push_back(value);
        }
    }
    if (nonzero_finite.empty()) {
        return result;
    }

    double abs_min = std::numeric_limits<double>::infinity();
    double abs_max = 0.0;
    for (const double value : nonzero_finite) {
        abs_min = std::min(abs_min, std::fabs(value));
        abs_max = std::max(abs_max, std::fabs(value));
    }

    for (const double value : nonzero_finite) {
        if (value != std::ceil(value)) {
            result.int_mode = false;
            break;
        }
    }

    const bool wide_range = abs_max / abs_min > 1000.0 || abs_max > 1.0e8;
    if (result.int_mode) {
        if (wide_range) {
            result.sci_mode = true;
            for (const double value : nonzero_finite) {
                result.max_width = std::max(
                    result.max_width, format_double(value, std::chars_format::scientific, print_precision).size());
            }
        } else {
            for (const double value : nonzero_finite) {
                result.max_width =
                    std::max(result.max_width, format_double(value, std::chars_format::fixed, 0).size() + 1);
            }
        }
    } else {
        if (wide_range || abs_min < 1.0e-4) {
            result.sci_mode = true;
            for (const double value : nonzero_finite) {
                result.max_width = std::max(
                    result.max_width, format_double(value, std::chars_format::scientific, print_precision).size());
            }
        } else {
            for (const double value : nonzero_finite) {
                result.max_width =
                    std::max(result.max_width, format_double(value, std::chars_format::fixed, print_precision).size());
            }
        }
    }
    return result;
}

/// `_Formatter.__init__` for bool elements: the width of the longest of `True` / `False` present.
inline formatter make_bool_formatter(const std::vector<bool>& values) {
    formatter result;
    result.floating_dtype = false;
    result.int_mode = false;
    for (const bool value : values) {
        result.max_width = std::max(result.max_width, value ? std::size_t{4} : std::size_t{5});
    }
    return result;
}

/// `_Formatter.__init__` for integer elements: the width of the longest decimal form.
inline formatter make_int_formatter(const std::vector<std::int64_t>& values) {
    formatter result;
    result.floating_dtype = false;
    for (const std::int64_t value : values) result.max_width = std::max(result.max_width, std::to_string(value).size());
    return result;
}

/// The view of a row-major tensor that the printing recursion walks.
template <class T>
struct print_view {
    const T* data;
    std::span<const std::size_t> shape;
    std::span<const std::size_t> strides;
};

/// Indices along an axis of extent `size` that are printed: all of them, or with `summarize` and
/// `size > 2 * edgeitems` the first and last `edgeitems` (torch/_tensor_str.py `get_summarized_data`).
inline std::vector<std::size_t> printed_indices(std::size_t size, bool summarize) {
    std::vector<std::size_t> indices;
    if (summarize && size > 2 * print_edgeitems) {
        for (std::size_t i = 0; i < print_edgeitems; ++i) {
            indices.push_back(i);
        }
        for (std::size_t i = size - print_edgeitems; i < size; ++i) {
            indices.push_back(i);
        }
    } else {
        for (std::size_t i = 0; i < size; ++i) {
            indices.push_back(i);
        }
    }
    return indices;
}

/// Appends to `out` the elements `get_summarized_data` keeps (all of them when not summarizing).
template <class T, class Out>
void gather_printed(const print_view<T>& view, std::size_t dim, std::size_t offset, bool summarize, Out& out) {
    if (dim == view.shape.size()) {
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t>) {
            out.push_back(view.data[offset]);
        } else {
            out.push_back(static_cast<double>(view.data[offset]));
        }
        return;
    }
    for (const std::size_t i : printed_indices(view.shape[dim], summarize)) {
        gather_printed(view, dim + 1, offset + i * view.strides[dim], summarize, out);
    }
}

/// `_Formatter.format` of one element.
template <class T>
std::string format_element(const formatter& fmt, T value) {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t>) {
        return fmt.format(value);
    } else {
        return fmt.format(static_cast<double>(value));
    }
}

/// torch/_tensor_str.py `_vector_str`: a 1-d slice, wrapped to the line width with continuation lines indented
/// by `indent + 1`.
template <class T>
std::string vector_str(const print_view<T>& view, std::size_t dim, std::size_t offset, std::size_t indent,
                       bool summarize, const formatter& fmt) {
    const std::size_t element_length = fmt.max_width + 2;
    std::size_t elements_per_line = 1;
    if (print_linewidth > indent) {
        elements_per_line = std::max<std::size_t>(1, (print_linewidth - indent) / element_length);
    }

    const std::size_t size = view.shape[dim];
    const std::size_t stride = view.strides[dim];
    std::vector<std::string> data;
    if (summarize && size > 2 * print_edgeitems) {
        for (std::size_t i = 0; i < print_edgeitems; ++i) {
            data.push_back(format_element(fmt, view.data[offset + i * stride]));
        }
        data.emplace_back(" ...");
        for (std::size_t i = size - print_edgeitems; i < size; ++i) {
            data.push_back(format_element(fmt, view.data[offset + i * stride]));
        }
    } else {
        for (std::size_t i = 0; i < size; ++i) {
            data.push_back(format_element(fmt, view.data[offset + i * stride]));
        }
    }

    const std::string line_separator = ",\n" + std::string(indent + 1, ' ');
    std::string result = "[";
    for (std::size_t i = 0; i < data.size(); ++i) {
        if (i > 0) {
            result += (i % elements_per_line == 0) ? line_separator : std::string(", ");
        }
        result += data[i];
    }
    result += ']';
    return result;
}

/// torch/_tensor_str.py `_tensor_str_with_formatter`: the slice starting at axis `dim`, nested rows joined by
/// `,` plus one newline per remaining inner axis and `indent + 1` spaces.
template <class T>
std::string tensor_str_with_formatter(const print_view<T>& view, std::size_t dim, std::size_t offset,
                                      std::size_t indent, bool summarize, const formatter& fmt) {
    const std::size_t remaining = view.shape.size() - dim;
    if (remaining == 0) {
        return format_element(fmt, view.data[offset]);
    }
    if (remaining == 1) {
        return vector_str(view, dim, offset, indent, summarize, fmt);
    }

    const std::size_t size = view.shape[dim];
    const std::size_t stride = view.strides[dim];
    std::vector<std::string> slices;
    if (summarize && size > 2 * print_edgeitems) {
        for (std::size_t i = 0; i < print_edgeitems; ++i) {
            slices.push_back(tensor_str_with_formatter(view, dim + 1, offset + i * stride, indent + 1, summarize, fmt));
        }
        slices.emplace_back("...");
        for (std::size_t i = size - print_edgeitems; i < size; ++i) {
            slices.push_back(tensor_str_with_formatter(view, dim + 1, offset + i * stride, indent + 1, summarize, fmt));
        }
    } else {
        for (std::size_t i = 0; i < size; ++i) {
            slices.push_back(tensor_str_with_formatter(view, dim + 1, offset + i * stride, indent + 1, summarize, fmt));
        }
    }

    const std::string separator = "," + std::string(remaining - 1, '\n') + std::string(indent + 1, ' ');
    std::string result = "[";
    for (std::size_t i = 0; i < slices.size(); ++i) {
        if (i > 0) {
            result += separator;
        }
        result += slices[i];
    }
    result += ']';
    return result;
}

/// torch/_tensor_str.py `_tensor_str` for a tensor with at least one element.
template <class T>
std::string tensor_str(const print_view<T>& view, std::size_t numel, std::size_t indent) {
    const bool summarize = numel > print_threshold;
    formatter fmt;
    if constexpr (std::is_same_v<T, bool>) {
        std::vector<bool> printed;
        gather_printed(view, 0, 0, summarize, printed);
        fmt = make_bool_formatter(printed);
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
        std::vector<std::int64_t> printed;
        gather_printed(view, 0, 0, summarize, printed);
        fmt = make_int_formatter(printed);
    } else {
        std::vector<double> printed;
        gather_printed(view, 0, 0, summarize, printed);
        fmt = make_float_formatter(printed);
    }
    return tensor_str_with_formatter(view, 0, 0, indent, summarize, fmt);
}

/// Python's `str(tuple(shape))`: `(0, 3)`, `(0,)`, `()`.
inline std::string shape_tuple_str(std::span<const std::size_t> shape) {
    std::string result = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0) {
            result += ", ";
        }
        result += std::to_string(shape[i]);
    }
    if (shape.size() == 1) {
        result += ',';
    }
    result += ')';
    return result;
}

/// torch/_tensor_str.py `_add_suffixes` (without forced newline): each suffix goes after `, ` on the last line,
/// or on a new line indented by `indent` when the line would pass the line width.
inline std::string add_suffixes(std::string text, const std::vector<std::string>& suffixes, std::size_t indent) {
    const std::size_t newline = text.rfind('\n');
    // Python: len(s) - s.rfind("\n") + 1, with rfind() == -1 when there is no newline.
    std::size_t last_line_len = newline == std::string::npos ? text.size() + 2 : text.size() - newline + 1;
    for (const std::string& suffix : suffixes) {
        if (last_line_len + suffix.size() + 2 > print_linewidth) {
            text += ",\n" + std::string(indent, ' ') + suffix;
            last_line_len = indent + suffix.size();
        } else {
            text += ", " + suffix;
            last_line_len += suffix.size() + 2;
        }
    }
    text += ')';
    return text;
}

/// `str(dtype)` for the element types `repr` formats.
template <class T>
constexpr const char* dtype_name() {
    if constexpr (std::is_same_v<T, float>) {
        return "torch.float32";
    } else if constexpr (std::is_same_v<T, double>) {
        return "torch.float64";
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
        return "torch.int64";
    } else {
        return "torch.bool";
    }
}

}  // namespace detail

/// PyTorch 1.13's `repr(t)` of a CPU tensor without grad, with the default print options (precision=4,
/// threshold=1000, edgeitems=3, linewidth=80, sci_mode=None): the `tensor(` prefix, the nested, aligned and
/// line-wrapped elements (summarized with `...` past 1000 elements), and the suffixes `size=(...)` (empty
/// tensors of rank other than 1) and `dtype=torch.float64` / `dtype=torch.bool` where PyTorch prints them
/// (float32 is the default dtype; bool shows its dtype only when empty).
///
/// Shapes: `shape` holds the extents, rank 0 to 8 (rank 0 is a scalar with one element); `data` holds the
/// product of the extents elements in row-major (C-contiguous) order and may be null when that product is 0.
///
/// Errors: throws `std::invalid_argument` when the rank is above 8, when the product of the extents overflows
/// `std::size_t`, or when `data` is null and the tensor has elements.
///
/// Source: torch/_tensor_str.py `_str_intern` (prefix, empty tensors, suffixes via `_add_suffixes`),
/// `_tensor_str`, `_tensor_str_with_formatter`, `_vector_str`, `get_summarized_data` and `_Formatter` (int mode,
/// scientific mode, common width).
///
/// Example:
/// \code
/// const float values[] = {0.7713f, 1.1682f, 0.3327f, 0.6094f};
/// const std::size_t shape[] = {1, 2, 2};
/// shaped::torch::repr(values, std::span<const std::size_t>(shape));
/// // tensor([[[0.7713, 1.1682],
/// //          [0.3327, 0.6094]]])
/// const double wide[] = {1e-5, 1.0};
/// const std::size_t two[] = {2};
/// shaped::torch::repr(wide, std::span<const std::size_t>(two));
/// // tensor([1.0000e-05, 1.0000e+00], dtype=torch.float64)
/// \endcode
template <class T>
requires detail::printable_element<T> std::string repr(const T* data, std::span<const std::size_t> shape) {
    if (shape.size() > detail::print_max_rank) {
        throw std::invalid_argument("shaped::torch::repr: rank " + std::to_string(shape.size()) +
                                    " is above the supported maximum of 8");
    }

    std::size_t numel = 1;
    bool empty = false;
    for (const std::size_t extent : shape) {
        empty = empty || extent == 0;
    }
    if (empty) {
        numel = 0;
    } else {
        for (const std::size_t extent : shape) {
            if (numel > std::numeric_limits<std::size_t>::max() / extent) {
                throw std::invalid_argument("shaped::torch::repr: element count of shape " +
                                            detail::shape_tuple_str(shape) + " overflows std::size_t");
            }
            numel *= extent;
        }
    }
    if (numel > 0 && data == nullptr) {
        throw std::invalid_argument("shaped::torch::repr: null data for shape " + detail::shape_tuple_str(shape));
    }

    const std::string prefix = "tensor(";
    std::vector<std::string> suffixes;
    std::string contents;
    if (numel == 0) {
        if (shape.size() != 1) {
            suffixes.push_back("size=" + detail::shape_tuple_str(shape));
        }
        if constexpr (!std::is_same_v<T, float>) {
            suffixes.push_back(std::string("dtype=") + detail::dtype_name<T>());
        }
        contents = "[]";
    } else {
        if constexpr (std::is_same_v<T, double>) {
            suffixes.push_back(std::string("dtype=") + detail::dtype_name<T>());
        }
        std::array<std::size_t, detail::print_max_rank> strides{};
        std::size_t stride = 1;
        for (std::size_t i = shape.size(); i-- > 0;) {
            strides[i] = stride;
            stride *= shape[i];
        }
        const detail::print_view<T> view{data, shape, std::span<const std::size_t>(strides.data(), shape.size())};
        contents = detail::tensor_str(view, numel, detail::print_indent);
    }
    return detail::add_suffixes(prefix + contents, suffixes, detail::print_indent);
}

}  // namespace shaped::torch

#endif  // SHAPED_TORCH_PRINT_HPP
