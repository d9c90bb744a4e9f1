#ifndef SHAPED_DETAIL_CPU_HPP
#define SHAPED_DETAIL_CPU_HPP

/// \file
/// The SIMD paths of shaped's own kernels (the fused attention, the BF16-weight products) and the one place
/// where the CPU is asked which it has: each SIMD function carries its own target attribute, so that a
/// program compiled without -march runs the widest path its CPU has and never an instruction it lacks.

#include <algorithm>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SHAPED_X86_SIMD 1
// The features of the AVX-512 functions' target attribute: those of Skylake-X, Zen 4 and later.
#define SHAPED_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))
#define SHAPED_AVX2_TARGET __attribute__((target("avx2,fma")))
#endif

namespace shaped::detail {

/// A kernel's code paths, narrowest first: plain loops, AVX2/FMA, AVX-512. `best` is the widest the CPU
/// has; a problem asking for a path the CPU lacks gets the widest it has below it (`resolve`).
enum class isa { portable, avx2, avx512, best };

#ifdef SHAPED_X86_SIMD
/// Whether the CPU has AVX2 and FMA, the AVX2 functions' target; asked once.
inline bool has_avx2() {
    static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return yes;
}

/// Whether the CPU (and the OS, which must save the 512-bit registers) has the AVX-512 subsets the AVX-512
/// functions are compiled for; asked once.
inline bool has_avx512() {
    static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                            __builtin_cpu_supports("fma");
    return yes;
}
#else
inline bool has_avx2() { return false; }
inline bool has_avx512() { return false; }
#endif

/// The path a problem asking for `wanted` runs on: the widest the CPU has, capped at `wanted`, so that no
/// request executes an instruction the CPU lacks.
inline isa resolve(isa wanted) {
    const isa widest = has_avx512() ? isa::avx512 : has_avx2() ? isa::avx2 : isa::portable;
    return std::min(wanted, widest);
}

}  // namespace shaped::detail

#endif
