#ifndef SHAPED_BFLOAT16_HPP
#define SHAPED_BFLOAT16_HPP

/// \file
/// `shaped::bfloat16`: the element type of weights kept in BF16, as Hugging Face checkpoints store them.

#include <bit>
#include <cstddef>
#include <cstdint>

namespace shaped {

/// A bfloat16 number: the upper half of a float's bits (sign, the 8 exponent bits, 7 of the 23 mantissa
/// bits), so every bfloat16 is a float exactly and a float rounds to the nearest bfloat16 (ties to even,
/// NaN kept a NaN). A storage type: tensors of it hold weights (`nn::linear<In, Out, float, bfloat16>`,
/// `nn::embedding<Vocab, Emb, bfloat16>`), half the bytes of float ones, and the kernels that read them
/// convert each element to float and compute in float; there is no bfloat16 arithmetic.
///
/// Shapes: none (an element type). Element type: 16 bits. Errors: none at compile time beyond the
/// conversions being explicit; nothing is thrown.
/// Source: PyTorch's `torch.bfloat16` (c10::BFloat16, whose float conversion rounds as this one does) and
/// safetensors' `BF16`.
/// Example: `shaped::bfloat16 b(0.1f);  float f = static_cast<float>(b);  // 0.10009765625`
struct bfloat16 {
    /// The 16 bits as stored (the upper half of the float's).
    std::uint16_t bits;

    /// Uninitialised, as a float is (a tensor of them allocated with `uninitialized` is not written);
    /// `bfloat16{}` is +0.
    bfloat16() = default;
    /// `f` rounded to the nearest bfloat16, ties to even; a NaN gives a quiet NaN of the same sign.
    constexpr explicit bfloat16(float f) noexcept : bits(round(f)) {}
    /// The bfloat16 whose bits are `b` (a BF16 file's bytes).
    static constexpr bfloat16 from_bits(std::uint16_t b) noexcept {
        bfloat16 x{};
        x.bits = b;
        return x;
    }
    /// The float it is, exactly.
    constexpr explicit operator float() const noexcept {
        return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
    }
    /// Equal bits (so +0 and -0 differ, and a NaN equals itself): storage equality, not arithmetic.
    friend constexpr bool operator==(bfloat16, bfloat16) noexcept = default;

private:
    static constexpr std::uint16_t round(float f) noexcept {
        const auto u = std::bit_cast<std::uint32_t>(f);
        if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);  // NaN
        return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
};

static_assert(sizeof(bfloat16) == 2, "shaped::bfloat16 is two bytes, as a file stores it");

/// `n` floats from `in` rounded to bfloat16 into `out`, as `bfloat16(float)` rounds each.
/// Shapes: `n` elements each side, any layout the caller gives. Element type: float to bfloat16. Errors:
/// none; nothing is thrown. Source: `tensor.to(torch.bfloat16)`.
inline void to_bfloat16(const float* in, bfloat16* out, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) out[i] = bfloat16(in[i]);
}

/// `n` bfloat16s from `in` as floats into `out`, exactly.
/// Shapes: `n` elements each side. Element type: bfloat16 to float. Errors: none; nothing is thrown.
/// Source: `tensor.to(torch.float32)` of a bfloat16 tensor.
inline void to_float(const bfloat16* in, float* out, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
}

}  // namespace shaped

#endif
