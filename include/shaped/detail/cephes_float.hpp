#ifndef SHAPED_DETAIL_CEPHES_FLOAT_HPP
#define SHAPED_DETAIL_CEPHES_FLOAT_HPP

/// \file
/// The single-precision logarithm and sine/cosine that PyTorch 1.13's AVX2 CPU kernels compute for
/// `normal_` (Cephes polynomials, as Julien Pommier's SSE/AVX "mathfun" evaluates them), one element at a
/// time, with the multiply-adds fused exactly where g++ fuses them in that kernel: the results are the
/// same bits. Every multiply-add here is written as `std::fma` or kept apart, so the compiler flags of
/// the program that includes it do not change a bit.

#include <cmath>
#include <cstdint>
#include <cstring>

namespace shaped::detail::cephes {

inline float from_bits(std::uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}
inline std::uint32_t to_bits(float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

/// ln(x) for x in (0, 1]; NaN for x <= 0 (the normal kernel never passes one).
inline float log(float x) {
    const bool invalid = x <= 0.0f;
    const float min_normal = from_bits(0x00800000u);
    if (x < min_normal) x = min_normal;  // no subnormals
    // Split x into a mantissa in [0.5, 1) and an exponent.
    float e = static_cast<float>(static_cast<std::int32_t>(to_bits(x) >> 23) - 0x7f) + 1.0f;
    x = from_bits((to_bits(x) & ~0x7f800000u) | to_bits(0.5f));
    const bool below = x < 0.707106781186547524f;  // sqrt(1/2)
    const float shift = below ? x : 0.0f;
    x = x - 1.0f;
    e = e - (below ? 1.0f : 0.0f);
    x = x + shift;
    const float z = x * x;
    constexpr float p[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                            -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                            2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
    float y = p[0];
    for (int k = 1; k < 9; ++k) y = std::fma(y, x, p[k]);
    y = y * x;
    y = std::fma(y, z, e * -2.12194440e-4f);
    y = std::fma(-z, 0.5f, y);
    x = x + y;
    x = std::fma(e, 0.693359375f, x);
    return invalid ? from_bits(0xffffffffu) : x;
}

/// sin(x) and cos(x), for the angles 2*pi*u with u in [0, 1) that the normal kernel passes.
inline void sincos(float x, float& s, float& c) {
    std::uint32_t sign_sin = to_bits(x) & 0x80000000u;
    x = from_bits(to_bits(x) & 0x7fffffffu);
    // The octant j (even), and x reduced by j * pi/4 in three parts ("extended precision modular arithmetic").
    float y = x * 1.27323954473516f;  // 4 / pi
    std::int32_t j = (static_cast<std::int32_t>(y) + 1) & ~1;
    y = static_cast<float>(j);
    const std::uint32_t swap_sign_sin = static_cast<std::uint32_t>(j & 4) << 29;
    const bool cos_polynomial_is_sine = (j & 2) == 0;
    const std::uint32_t sign_cos = static_cast<std::uint32_t>(~(j - 2) & 4) << 29;
    sign_sin ^= swap_sign_sin;
    x = std::fma(y, -0.78515625f, x);
    x = std::fma(y, -2.4187564849853515625e-4f, x);
    x = std::fma(y, -3.77489497744594108e-8f, x);
    const float z = x * x;
    // Cosine polynomial on [0, pi/4].
    float yc = 2.443315711809948E-005f;
    yc = std::fma(yc, z, -1.388731625493765E-003f);
    yc = std::fma(yc, z, 4.166664568298827E-002f);
    yc = yc * z;
    yc = std::fma(yc, z, -(z * 0.5f));
    yc = yc + 1.0f;
    // Sine polynomial on [0, pi/4].
    float ys = -1.9515295891E-4f;
    ys = std::fma(ys, z, 8.3321608736E-3f);
    ys = std::fma(ys, z, -1.6666654611E-1f);
    ys = ys * z;
    ys = std::fma(ys, x, x);
    // Each result takes the polynomial of its octant.
    const float sine = cos_polynomial_is_sine ? ys : yc;
    const float cosine = cos_polynomial_is_sine ? yc : ys;
    s = from_bits(to_bits(sine) ^ sign_sin);
    c = from_bits(to_bits(cosine) ^ sign_cos);
}

}  // namespace shaped::detail::cephes

#endif
