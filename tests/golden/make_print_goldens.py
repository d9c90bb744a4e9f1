"""Writes tests/golden/print_goldens.hpp: PyTorch's repr() of a set of tensors, for shaped::torch::repr.

Run with an interpreter that has PyTorch 1.13 (Debian: /usr/bin/python3):

    /usr/bin/python3 tests/golden/make_print_goldens.py

Every case is seeded, so the output is the same on every run.
"""

import math
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "print_goldens.hpp")


def seeded(seed, fn):
    torch.manual_seed(seed)
    with torch.no_grad():
        return fn()


def linear_out(seed, batch_shape, in_features, out_features):
    """Output of a freshly initialised nn.Linear on randn input: values of mixed sign."""

    def make():
        layer = torch.nn.Linear(in_features, out_features)
        x = torch.randn(*batch_shape, in_features)
        return layer(x)

    return seeded(seed, make)


def cases():
    f32 = torch.float32
    f64 = torch.float64
    nan = float("nan")
    inf = float("inf")
    c = []

    def add(name, t):
        c.append((name, t.detach().contiguous()))

    # Scalars (0-d).
    add("scalar_float", torch.tensor(0.7713))
    add("scalar_negative", torch.tensor(-3.25))
    add("scalar_integer_valued", torch.tensor(42.0))
    add("scalar_zero", torch.tensor(0.0))
    add("scalar_nan", torch.tensor(nan))
    add("scalar_sci", torch.tensor(1.5e-7))
    add("scalar_float64", torch.tensor(2.5, dtype=f64))
    add("scalar_bool", torch.tensor(True))

    # Empty tensors.
    add("empty_0", torch.zeros(0))
    add("empty_0x3", torch.zeros(0, 3))
    add("empty_2x0x3", torch.zeros(2, 0, 3))
    add("empty_0_float64", torch.zeros(0, dtype=f64))
    add("empty_0x3_float64", torch.zeros(0, 3, dtype=f64))
    add("empty_0_bool", torch.zeros(0, dtype=torch.bool))
    add("empty_3x0_bool", torch.zeros(3, 0, dtype=torch.bool))

    # Vectors.
    add("rand_3", seeded(1, lambda: torch.rand(3)))
    add("randn_7", seeded(2, lambda: torch.randn(7)))
    add("randn_30_wraps", seeded(3, lambda: torch.randn(30)))
    add("mixed_widths", torch.tensor([-123.4567, 0.5, 5.0, 99.5]))
    add("mixed_widths_sci", torch.tensor([-123.4567, 0.001, 5.0, 99.5]))
    add("wide_fixed", torch.tensor([-1234.5678, 3.25, 12.0]))
    add("round_half_even", torch.tensor([1.03125, 2.5, -0.03125, 0.12345, 1.00005]))
    add("round_half_even_sci", torch.tensor([1.03125e-5, 2.5, -0.00005, 0.12345]))
    add("negative_zero", torch.tensor([-0.0, 0.5, -1.25]))
    add("all_zeros", torch.zeros(4))

    # Integer-valued floats.
    add("int_valued", torch.tensor([1.0, 2.0, -3.0, 0.0]))
    add("int_valued_2x3", seeded(4, lambda: torch.randint(-50, 50, (2, 3)).float()))
    add("int_valued_wide_range_sci", torch.tensor([1.0, 2.0, 50000.0]))
    add("int_valued_above_1e8_sci", torch.tensor([3.0e8, 2.0]))
    add("int_valued_with_nonfinite", torch.tensor([1.0, inf, -inf, nan, 10.0]))
    add("int_valued_long_wraps", seeded(5, lambda: torch.randint(-999, 999, (40,)).float()))

    # Scientific mode.
    add("sci_small_min", torch.tensor([1.0e-5, 0.5, 0.25]))
    add("sci_ratio", torch.tensor([0.001, 2.0]))
    add("sci_large", torch.tensor([1.5e9, -2.25, 3.0]))
    add("sci_mixed_sign_wraps", seeded(6, lambda: torch.randn(16) * torch.logspace(-6, 6, 16)))
    add("sci_2x3", seeded(7, lambda: torch.randn(2, 3) * 1e-6))
    add("sci_denormal", torch.tensor([1.0e-40, 1.0]))

    # nan / inf.
    add("nan_inf_fixed", torch.tensor([nan, inf, -inf, 1.5, -0.25]))
    add("nan_inf_sci", torch.tensor([nan, inf, 1.0e-6, 2.0]))
    add("nonfinite_only", torch.tensor([nan, inf, -inf]))
    add("nan_from_zero_div", torch.tensor([0.0, 1.0]) / torch.tensor([0.0, 3.0]))

    # Nested dims and alignment.
    add("shape_1x2x2", torch.tensor([[[0.7713, 1.1682], [0.3327, 0.6094]]]))
    add("linear_1x2x6", linear_out(8, (1, 2), 6, 6))
    add("linear_1x2x18", linear_out(9, (1, 2), 12, 18))
    add("randn_2x3x4x5", seeded(10, lambda: torch.randn(2, 3, 4, 5)))
    add("randn_1x1x2x2", seeded(11, lambda: torch.randn(1, 1, 2, 2)))
    add("randn_2x1x1x1x3", seeded(12, lambda: torch.randn(2, 1, 1, 1, 3)))
    add("randn_4x20_wraps", seeded(13, lambda: torch.randn(4, 20) * 10))
    add("rank8", seeded(14, lambda: torch.randn(1, 2, 1, 2, 1, 2, 1, 3)))

    # Summarization (> 1000 elements).
    add("rand_1100_summarized", seeded(15, lambda: torch.rand(1100)))
    add("randn_40x40_summarized", seeded(16, lambda: torch.randn(40, 40)))
    add("randn_1x1100_summarized", seeded(17, lambda: torch.randn(1, 1100)))
    add("randn_1100x1_summarized", seeded(18, lambda: torch.randn(1100, 1)))
    add("randn_10x10x10_not_summarized", seeded(19, lambda: torch.randn(10, 10, 10)))
    add("randn_11x10x10_summarized", seeded(20, lambda: torch.randn(11, 10, 10)))
    add("summarized_hidden_outlier", seeded(21, lambda: torch.cat([torch.rand(3), torch.tensor([1.0e-9]), torch.rand(1200)])))

    # float64.
    add("float64_randn_3x4", seeded(22, lambda: torch.randn(3, 4, dtype=f64)))
    add("float64_int_valued", torch.tensor([1.0, 2.0, 3.0], dtype=f64))
    add("float64_sci", torch.tensor([1.0e-5, 1.0, 1.0e300], dtype=f64))
    add("float64_suffix_wraps", seeded(23, lambda: torch.randn(9, dtype=f64)))
    add("float64_summarized", seeded(24, lambda: torch.randn(1200, dtype=f64)))
    add("float64_nan_inf", torch.tensor([nan, -inf, 0.125], dtype=f64))

    # bool.
    add("bool_mixed", torch.tensor([True, False, True]))
    add("bool_all_true", torch.tensor([True, True]))
    add("bool_2x3", seeded(25, lambda: torch.rand(2, 3) > 0.5))
    add("bool_wraps", seeded(26, lambda: torch.rand(30) > 0.5))
    add("bool_summarized", seeded(27, lambda: torch.rand(1100) > 0.5))
    return c


def hex_literal(value, suffix):
    """A lossless C++ hexadecimal floating literal for a finite double (float32 values are exact doubles)."""
    if math.isnan(value):
        return ("-" if math.copysign(1.0, value) < 0 else "") + "golden_nan<%s>" % suffix
    if math.isinf(value):
        return ("-" if value < 0 else "") + "golden_inf<%s>" % suffix
    text = value.hex()  # e.g. -0x1.8000000000000p+1
    mantissa, exponent = text.split("p")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return mantissa + "p" + exponent + ("f" if suffix == "float" else "")


def cpp_values(t):
    flat = t.reshape(-1).tolist()
    if t.dtype == torch.bool:
        items = ["true" if v else "false" for v in flat]
    elif t.dtype == torch.float32:
        items = [hex_literal(v, "float") for v in flat]
    elif t.dtype == torch.float64:
        items = [hex_literal(v, "double") for v in flat]
    else:
        raise ValueError(t.dtype)
    lines = []
    for i in range(0, len(items), 6):
        lines.append("    " + ", ".join(items[i : i + 6]) + ",")
    return "\n".join(lines)


def main():
    kinds = {torch.float32: ("float", "float32"), torch.float64: ("double", "float64"), torch.bool: ("bool", "boolean")}
    out = []
    out.append("// Generated by tests/golden/make_print_goldens.py with PyTorch %s; do not edit." % torch.__version__.split("a")[0])
    out.append("// Each case: dtype, shape, row-major values and the expected repr(t) with default print options.")
    out.append("#ifndef SHAPED_TESTS_GOLDEN_PRINT_GOLDENS_HPP")
    out.append("#define SHAPED_TESTS_GOLDEN_PRINT_GOLDENS_HPP")
    out.append("")
    out.append("#include <array>")
    out.append("#include <cstddef>")
    out.append("#include <limits>")
    out.append("")
    out.append("namespace shaped::golden::print {")
    out.append("")
    out.append("enum class dtype { float32, float64, boolean };")
    out.append("")
    out.append("template <class T>")
    out.append("inline constexpr T golden_nan = std::numeric_limits<T>::quiet_NaN();")
    out.append("template <class T>")
    out.append("inline constexpr T golden_inf = std::numeric_limits<T>::infinity();")
    out.append("")
    out.append("struct print_case {")
    out.append("    const char* name;")
    out.append("    dtype type;")
    out.append("    std::size_t rank;")
    out.append("    std::array<std::size_t, 8> shape;")
    out.append("    std::size_t numel;")
    out.append("    const float* f32;   // type == float32, else null (null too when numel == 0)")
    out.append("    const double* f64;  // type == float64, else null (null too when numel == 0)")
    out.append("    const bool* b8;     // type == boolean, else null (null too when numel == 0)")
    out.append("    const char* expected;")
    out.append("};")
    out.append("")

    table = []
    for name, t in cases():
        ctype, kind = kinds[t.dtype]
        expected = repr(t)
        assert ")repr\"" not in expected
        shape = list(t.shape)
        assert len(shape) <= 8
        pointers = {"float": "nullptr", "double": "nullptr", "bool": "nullptr"}
        if t.numel() > 0:
            array = "%s_values" % name
            out.append("inline constexpr %s %s[] = {" % (ctype, array))
            out.append(cpp_values(t))
            out.append("};")
            out.append("")
            pointers[ctype] = array
        shape_text = "{" + ", ".join(str(s) for s in shape) + "}"
        table.append(
            "    {\"%s\", dtype::%s, %d, %s, %d, %s, %s, %s,\n     R\"repr(%s)repr\"},"
            % (name, kind, len(shape), shape_text, t.numel(), pointers["float"], pointers["double"], pointers["bool"], expected)
        )

    out.append("inline constexpr print_case print_cases[] = {")
    out.extend(table)
    out.append("};")
    out.append("")
    out.append("}  // namespace shaped::golden::print")
    out.append("")
    out.append("#endif  // SHAPED_TESTS_GOLDEN_PRINT_GOLDENS_HPP")
    with open(OUT, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(out) + "\n")
    print("wrote %d cases to %s" % (len(table), OUT))


if __name__ == "__main__":
    main()
