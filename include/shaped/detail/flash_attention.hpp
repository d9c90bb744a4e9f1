#ifndef SHAPED_DETAIL_FLASH_ATTENTION_HPP
#define SHAPED_DETAIL_FLASH_ATTENTION_HPP

/// \file
/// The kernel behind `scaled_dot_product_attention`: softmax(q kᵀ · scale, causal) v without the
/// (num_tokens × num_tokens) scores. Flash attention's scheme (Dao et al., 2022): a tile of queries meets
/// the keys a tile at a time, keeping per row a running maximum and sum (the online softmax), so the scores
/// of one tile pair are all that is ever stored; tiles wholly above the causal diagonal are never computed.
/// The tile products run on an AVX2/FMA micro-kernel where the CPU has one (checked at run time, so the
/// program's own flags do not matter) and on plain loops elsewhere. Types and extents have been checked by
/// the caller; this file sees pointers, strides and sizes.

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <limits>
#include <thread>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SHAPED_FLASH_AVX2 1
#endif

extern "C" int openblas_get_num_threads(void);

namespace shaped::detail::flash {

/// Queries per tile, keys per tile, and the width of the micro-kernel's column panel.
inline constexpr std::size_t block_q = 64, block_k = 128, panel = 16;

/// One operand: where batch `j`'s matrix starts (strides of the batch axes) and the distance between its
/// rows (tokens); elements along a row (head_dim) are adjacent.
template <std::size_t NB, class T = const float>
struct matrix_ref {
    T* data = nullptr;
    std::array<std::size_t, NB> batch_stride{};
    std::size_t row_stride = 0;

    T* at(const std::array<std::size_t, NB>& extent, std::size_t j) const noexcept {
        std::size_t offset = 0;
        for (std::size_t a = NB; a-- > 0;) {
            offset += (j % extent[a]) * batch_stride[a];
            j /= extent[a];
        }
        return data + offset;
    }
};

template <std::size_t NB>
struct problem {
    matrix_ref<NB> q, k, v;
    matrix_ref<NB, float> out;
    std::array<std::size_t, NB> batch{};  // extents of the batch axes
    std::size_t lq = 0, lk = 0, d = 0, dv = 0;
    float scale = 1;
    bool causal = false;
    std::size_t offset = 0;  // causal: query i sits at key position offset + i, and sees keys 0..offset + i
    bool portable = false;   // the plain loops even where AVX2 is there (tests compare the two)
    std::size_t threads = 0; // 0: as threads_for decides; else this many (tests)
};

constexpr std::size_t round_up(std::size_t n, std::size_t m) noexcept { return (n + m - 1) / m * m; }

/// Below this, expf leaves the normal floats (ln FLT_MIN): both paths take exp as 0 there, so that -inf gives
/// exactly 0 and a weight is 0 or the same number on either path.
inline constexpr float exp_min_arg = -87.3365447504f;

/// One thread's tiles, allocated before any thread starts: the queries transposed (head_dim × block_q),
/// the scores transposed (block_k × block_q), the output accumulator (block_q × head_dim rounded up to 16),
/// a block of values when head_dim is not a multiple of 16, and per query a running maximum and sum:
/// about 100 KB at head_dim 64, whatever the number of tokens.
struct scratch {
    std::vector<float> qt, st, acc, vp, m, l, alpha;
    std::size_t dp = 0;
    scratch(std::size_t d, std::size_t dv)
        : qt(d * block_q), st(block_k * block_q), acc(block_q * round_up(dv, panel)),
          vp(dv % panel ? block_k * round_up(dv, panel) : 0), m(block_q), l(block_q), alpha(block_q),
          dp(round_up(dv, panel)) {}
};

// C[R × panel] (+)= A[R × K] · B[K × panel]: A(r, p) at a[r·ars + p·acs], B's rows ldb apart, C's ldc apart.
template <int R>
inline void tile_portable(const float* a, std::size_t ars, std::size_t acs, const float* b, std::size_t ldb, float* c,
                          std::size_t ldc, std::size_t kdim, bool accumulate) {
    float t[R][panel];
    for (int r = 0; r < R; ++r)
        for (std::size_t j = 0; j < panel; ++j) t[r][j] = accumulate ? c[r * ldc + j] : 0.0f;
    for (std::size_t p = 0; p < kdim; ++p)
        for (int r = 0; r < R; ++r) {
            const float x = a[r * ars + p * acs];
            for (std::size_t j = 0; j < panel; ++j) t[r][j] += x * b[p * ldb + j];
        }
    for (int r = 0; r < R; ++r)
        for (std::size_t j = 0; j < panel; ++j) c[r * ldc + j] = t[r][j];
}

#ifdef SHAPED_FLASH_AVX2
// The same tile in 2·R AVX2 registers: per step of K, two loads of B, R broadcasts of A, 2·R fused
// multiply-adds. R = 6 keeps 12 accumulators, enough to cover the FMA units' latency.
template <int R>
__attribute__((target("avx2,fma"))) inline void tile_avx2(const float* a, std::size_t ars, std::size_t acs,
                                                          const float* b, std::size_t ldb, float* c, std::size_t ldc,
                                                          std::size_t kdim, bool accumulate) {
    __m256 c0[R], c1[R];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
        c0[r] = accumulate ? _mm256_loadu_ps(c + r * ldc) : _mm256_setzero_ps();
        c1[r] = accumulate ? _mm256_loadu_ps(c + r * ldc + 8) : _mm256_setzero_ps();
    }
    for (std::size_t p = 0; p < kdim; ++p) {
        const __m256 b0 = _mm256_loadu_ps(b + p * ldb), b1 = _mm256_loadu_ps(b + p * ldb + 8);
        const float* ap = a + p * acs;
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
            const __m256 x = _mm256_broadcast_ss(ap + r * ars);
            c0[r] = _mm256_fmadd_ps(x, b0, c0[r]);
            c1[r] = _mm256_fmadd_ps(x, b1, c1[r]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
        _mm256_storeu_ps(c + r * ldc, c0[r]);
        _mm256_storeu_ps(c + r * ldc + 8, c1[r]);
    }
}

// expf on 8 lanes: Cephes' polynomial as in xsimd and Pommier's avx_mathfun, about 1 ulp. 0 below exp_min_arg
// (-inf included); NaN stays NaN: minps and maxps return their second operand when either is NaN, so the
// clamps take x second.
__attribute__((target("avx2,fma"))) inline __m256 exp8(__m256 x) {
    const __m256 lo = _mm256_set1_ps(exp_min_arg);
    const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);  // false for NaN
    x = _mm256_min_ps(_mm256_set1_ps(88.3762626647949f), x);
    x = _mm256_max_ps(lo, x);
    __m256 fx = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f));
    fx = _mm256_floor_ps(fx);
    x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
    x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
    __m256 y = _mm256_set1_ps(1.9875691500E-4f);
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507E-3f));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073E-3f));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894E-2f));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459E-1f));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201E-1f));
    y = _mm256_fmadd_ps(y, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
    const __m256i n = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(fx), _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(under, _mm256_mul_ps(y, _mm256_castsi256_ps(n)));
}

// The online softmax of one tile of transposed scores, 8 queries at a time: for keys j < width and queries
// c < cols, st(j, c) becomes exp(st(j, c) - m_new(c)), 0 where query c may not see key j (causal: key j0 + j
// beyond position `first + c`); m and l are updated and alpha(c) = exp(m_old(c) - m_new(c)) returned.
// NaN and infinities, on both paths alike (PyTorch's softmax): the maximum skips NaN (maxps with the running
// maximum second, as std::max(mx, x)), a NaN score carries itself through exp(NaN - m), NaN, into l and acc;
// m = -inf (every score seen so far -inf) subtracts 0 instead, so exp gives 0 where -inf - -inf would give NaN,
// and the row ends with l = 0, acc / l NaN; m = +inf gives exp(inf - inf), NaN.
__attribute__((target("avx2,fma"))) inline void softmax_tile_avx2(float* st, std::size_t ld, std::size_t width,
                                                                  std::size_t cols, bool causal, std::ptrdiff_t first,
                                                                  float* m, float* l, float* alpha) {
    const __m256 neg_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    const __m256 lane = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
    for (std::size_t c = 0; c < cols; c += 8) {
        // Query c + lane sees keys j with j <= first + c + lane.
        const __m256 last = _mm256_add_ps(lane, _mm256_set1_ps(static_cast<float>(first + static_cast<std::ptrdiff_t>(c))));
        const bool masked_tile = causal && first + static_cast<std::ptrdiff_t>(c) < static_cast<std::ptrdiff_t>(width) - 1;
        __m256 mx = neg_inf;
        for (std::size_t j = 0; j < width; ++j) {
            __m256 x = _mm256_loadu_ps(st + j * ld + c);
            if (masked_tile) x = _mm256_blendv_ps(x, neg_inf, _mm256_cmp_ps(_mm256_set1_ps(static_cast<float>(j)), last, _CMP_GT_OQ));
            mx = _mm256_max_ps(x, mx);
        }
        const __m256 m_old = _mm256_loadu_ps(m + c);
        const __m256 m_new = _mm256_max_ps(m_old, mx);
        const __m256 base = _mm256_blendv_ps(m_new, _mm256_setzero_ps(), _mm256_cmp_ps(m_new, neg_inf, _CMP_EQ_OQ));
        const __m256 a = exp8(_mm256_sub_ps(m_old, base));  // m_old = -inf: 0
        __m256 sum = _mm256_setzero_ps();
        for (std::size_t j = 0; j < width; ++j) {
            __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(st + j * ld + c), base));
            if (masked_tile) e = _mm256_andnot_ps(_mm256_cmp_ps(_mm256_set1_ps(static_cast<float>(j)), last, _CMP_GT_OQ), e);
            _mm256_storeu_ps(st + j * ld + c, e);
            sum = _mm256_add_ps(sum, e);
        }
        _mm256_storeu_ps(m + c, m_new);
        _mm256_storeu_ps(l + c, _mm256_fmadd_ps(_mm256_loadu_ps(l + c), a, sum));
        _mm256_storeu_ps(alpha + c, a);
    }
}

__attribute__((target("avx2,fma"))) inline void scale_row_avx2(float* x, std::size_t n, float f) {
    const __m256 fb = _mm256_set1_ps(f);
    for (std::size_t j = 0; j < n; j += 8) _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_loadu_ps(x + j), fb));
}

inline bool has_avx2() {
    static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return yes;
}
#else
inline bool has_avx2() { return false; }
#endif

inline float exp_portable(float x) { return x < exp_min_arg ? 0.0f : std::exp(x); }  // as exp8

inline void softmax_tile_portable(float* st, std::size_t ld, std::size_t width, std::size_t cols, bool causal,
                                  std::ptrdiff_t first, float* m, float* l, float* alpha) {
    const float neg_inf = -std::numeric_limits<float>::infinity();
    for (std::size_t c = 0; c < cols; ++c) {
        const std::ptrdiff_t last = first + static_cast<std::ptrdiff_t>(c);
        auto sees = [&](std::size_t j) { return !causal || static_cast<std::ptrdiff_t>(j) <= last; };
        float mx = neg_inf;
        for (std::size_t j = 0; j < width; ++j)
            if (sees(j)) mx = std::max(mx, st[j * ld + c]);
        const float m_new = std::max(m[c], mx), base = m_new == neg_inf ? 0.0f : m_new;
        const float a = exp_portable(m[c] - base);
        float sum = 0;
        for (std::size_t j = 0; j < width; ++j) {
            float& x = st[j * ld + c];
            x = sees(j) ? exp_portable(x - base) : 0.0f;
            sum += x;
        }
        m[c] = m_new;
        l[c] = l[c] * a + sum;
        alpha[c] = a;
    }
}

// C[rows × cols] (+)= A[rows × K] · B[K × cols], cols a multiple of `panel`, in tiles of at most 6 rows.
template <bool Avx2>
void gemm_tiles(const float* a, std::size_t ars, std::size_t acs, const float* b, std::size_t ldb, float* c,
                std::size_t ldc, std::size_t rows, std::size_t cols, std::size_t kdim, bool accumulate) {
    for (std::size_t j = 0; j < cols; j += panel)
        for (std::size_t i = 0; i < rows; i += 6) {
            const float* ai = a + i * ars;
            float* ci = c + i * ldc + j;
            const float* bj = b + j;
            auto run = [&]<int R>() {
#ifdef SHAPED_FLASH_AVX2
                if constexpr (Avx2) {
                    tile_avx2<R>(ai, ars, acs, bj, ldb, ci, ldc, kdim, accumulate);
                    return;
                }
#endif
                tile_portable<R>(ai, ars, acs, bj, ldb, ci, ldc, kdim, accumulate);
            };
            switch (std::min<std::size_t>(6, rows - i)) {
                case 6: run.template operator()<6>(); break;
                case 5: run.template operator()<5>(); break;
                case 4: run.template operator()<4>(); break;
                case 3: run.template operator()<3>(); break;
                case 2: run.template operator()<2>(); break;
                default: run.template operator()<1>(); break;
            }
        }
}

// Whether a block of values (rows ld apart) holds no NaN and no infinity.
inline bool all_finite(const float* x, std::size_t ld, std::size_t rows, std::size_t cols) {
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c)
            if (!std::isfinite(x[r * ld + c])) return false;
    return true;
}

// acc(r, ·) += P(r, ·) · V over the keys query r sees only (j <= first + r), P read from the transposed
// scores st: the product of a tile that the causal mask cuts when its values are not all finite.
inline void add_seen_values(const float* st, std::size_t ld, const float* v, std::size_t ldv, float* acc,
                            std::size_t lda, std::size_t rows, std::size_t width, std::size_t dv, std::ptrdiff_t first) {
    for (std::size_t r = 0; r < rows; ++r) {
        const std::ptrdiff_t last = first + static_cast<std::ptrdiff_t>(r);
        const std::size_t seen = last < 0 ? 0 : std::min(width, static_cast<std::size_t>(last) + 1);
        for (std::size_t j = 0; j < seen; ++j) {
            const float p = st[j * ld + r];
            for (std::size_t c = 0; c < dv; ++c) acc[r * lda + c] += p * v[j * ldv + c];
        }
    }
}

// One tile of queries (rows i0 .. i0 + rows - 1 of batch matrix j) against every key it may see. The scores
// are computed transposed, keys × queries, so that the keys are read in place and the softmax runs across
// eight queries at once.
template <bool Avx2, std::size_t NB>
void query_tile(const problem<NB>& pb, scratch& w, std::size_t j, std::size_t i0) {
    constexpr std::size_t bq = block_q;
    const std::size_t rows = std::min(bq, pb.lq - i0), d = pb.d, dv = pb.dv, dp = w.dp;
    const float* q = pb.q.at(pb.batch, j) + i0 * pb.q.row_stride;
    const float* k = pb.k.at(pb.batch, j);
    const float* v = pb.v.at(pb.batch, j);
    float* out = pb.out.at(pb.batch, j) + i0 * pb.out.row_stride;
    // The queries, scaled once (PyTorch's math path scales the scores: the same to rounding), transposed
    // into (d × block_q), the columns past `rows` zero.
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t p = 0; p < d; ++p) w.qt[p * bq + r] = q[r * pb.q.row_stride + p] * pb.scale;
    for (std::size_t p = 0; p < d; ++p) std::fill_n(w.qt.data() + p * bq + rows, bq - rows, 0.0f);
    std::fill(w.m.begin(), w.m.end(), -std::numeric_limits<float>::infinity());
    std::fill(w.l.begin(), w.l.end(), 0.0f);
    std::fill(w.acc.begin(), w.acc.end(), 0.0f);
    const std::size_t cols = round_up(rows, panel);
    // Keys 0 .. kend - 1 are seen by some query of the tile; tiles of keys beyond are never touched.
    const std::size_t kend = pb.causal ? std::min(pb.lk, pb.offset + i0 + rows) : pb.lk;
    const bool pack_v = dv % panel != 0;
    for (std::size_t j0 = 0; j0 < kend; j0 += block_k) {
        const std::size_t width = std::min(block_k, kend - j0);
        gemm_tiles<Avx2>(k + j0 * pb.k.row_stride, pb.k.row_stride, 1, w.qt.data(), bq, w.st.data(), bq, width, cols,
                         d, false);
        // Query c of the tile sees this tile's keys 0 .. offset + i0 + c - j0.
        const std::ptrdiff_t first = static_cast<std::ptrdiff_t>(pb.offset + i0) - static_cast<std::ptrdiff_t>(j0);
#ifdef SHAPED_FLASH_AVX2
        if constexpr (Avx2)
            softmax_tile_avx2(w.st.data(), bq, width, cols, pb.causal, first, w.m.data(), w.l.data(), w.alpha.data());
        else
#endif
            softmax_tile_portable(w.st.data(), bq, width, cols, pb.causal, first, w.m.data(), w.l.data(),
                                  w.alpha.data());
        if (j0 > 0)
            for (std::size_t r = 0; r < rows; ++r) {
                float* a = w.acc.data() + r * dp;
#ifdef SHAPED_FLASH_AVX2
                if constexpr (Avx2)
                    scale_row_avx2(a, dp, w.alpha[r]);
                else
#endif
                    for (std::size_t c = 0; c < dp; ++c) a[c] *= w.alpha[r];
            }
        const float* vb = v + j0 * pb.v.row_stride;
        std::size_t ldv = pb.v.row_stride;
        if (pack_v) {  // values into (width × dp), zero-padded, when head_dim is not a multiple of 16
            for (std::size_t c = 0; c < width; ++c) {
                std::copy_n(vb + c * pb.v.row_stride, dv, w.vp.data() + c * dp);
                std::fill_n(w.vp.data() + c * dp + dv, dp - dv, 0.0f);
            }
            vb = w.vp.data();
            ldv = dp;
        }
        // acc (rows × dp) += P (rows × width) · V (width × dp), P read from the transposed scores. A query reads
        // the values of the keys it sees only: where the causal mask cuts the tile, a NaN or inf among the values
        // would reach the queries before its key through their weight 0 (0 · inf is NaN), so such a tile (one
        // check of its values; rare) adds key by key.
        const bool cut = pb.causal && first < static_cast<std::ptrdiff_t>(width) - 1;
        if (cut && !all_finite(vb, ldv, width, dv))
            add_seen_values(w.st.data(), bq, vb, ldv, w.acc.data(), dp, rows, width, dv, first);
        else
            gemm_tiles<Avx2>(w.st.data(), 1, bq, vb, ldv, w.acc.data(), dp, rows, dp, width, true);
    }
    // A query that saw no key has l = 0 and gives 0 · inf, NaN, as softmax over a row of -inf does.
    for (std::size_t r = 0; r < rows; ++r) {
        const float inv = 1.0f / w.l[r];
        for (std::size_t c = 0; c < dv; ++c) out[r * pb.out.row_stride + c] = w.acc[r * dp + c] * inv;
    }
}

/// How many threads the kernel runs: OpenBLAS's setting (`OPENBLAS_NUM_THREADS`,
/// `openblas_set_num_threads`), so that one knob sets the threads of the projections and of attention,
/// which never run at once; one thread for problems too small to pay for starting another.
inline std::size_t threads_for(double flops, std::size_t items) {
    const int blas = openblas_get_num_threads();
    std::size_t n = blas > 1 ? static_cast<std::size_t>(blas) : 1;
    if (flops < 4e6) n = 1;
    return std::max<std::size_t>(1, std::min(n, items));
}

/// Runs the problem: work items are (batch matrix, query tile), the costliest (last) tiles first, handed out
/// by an atomic counter to the calling thread and `threads_for(...) - 1` others.
template <std::size_t NB>
void run(const problem<NB>& pb) {
    std::size_t nbatch = 1;
    for (std::size_t e : pb.batch) nbatch *= e;
    const std::size_t tiles = (pb.lq + block_q - 1) / block_q, items = nbatch * tiles;
    const double keys = pb.causal ? static_cast<double>(pb.offset) + static_cast<double>(pb.lq + 1) / 2
                                  : static_cast<double>(pb.lk);
    const double flops = 2.0 * static_cast<double>(nbatch) * static_cast<double>(pb.lq) * keys *
                         static_cast<double>(pb.d + pb.dv);
    const std::size_t n = pb.threads ? std::min(pb.threads, items) : threads_for(flops, items);
    std::vector<scratch> work;
    work.reserve(n);
    for (std::size_t t = 0; t < n; ++t) work.emplace_back(pb.d, pb.dv);
    std::atomic<std::size_t> next{0};
    const bool avx2 = !pb.portable && has_avx2();
    auto worker = [&](scratch& w) {
        for (std::size_t item; (item = next.fetch_add(1, std::memory_order_relaxed)) < items;) {
            const std::size_t tile = tiles - 1 - item / nbatch, j = item % nbatch;
            if (avx2)
                query_tile<true>(pb, w, j, tile * block_q);
            else
                query_tile<false>(pb, w, j, tile * block_q);
        }
    };
    {
        std::vector<std::jthread> others;
        others.reserve(n - 1);
        for (std::size_t t = 1; t < n; ++t) others.emplace_back(worker, std::ref(work[t]));
        worker(work[0]);
    }  // the jthreads join here
}

}  // namespace shaped::detail::flash

#endif
