/* One online-softmax step of the prefill kernel on a score block, fused (AVX2 + FMA).
 *
 * Why a C routine: in torch the step is five passes over the block (rowmax, subtract, exp2,
 * rowsum, and the masking of the diagonal block), each reading a block that lives in L3, not L1.
 * Here each row is read once, exponentiated while it is in L1 and written once.
 *
 * s is a [rows, c] fp32 block of base-2 scores (row stride ld). For each row r with vis[r]
 * visible leading columns (the others are causally masked; vis = NULL: all c):
 *     m' = max(m[r], lowest, max_{j < vis} s_rj)      p_rj = 2^(s_rj - m')  (0 for j >= vis)
 *     alpha[r] = 2^(m[r] - m'),   l[r] = alpha[r] * l[r] + sum_j p_rj,   m[r] = m'
 * P overwrites S. Scores of -inf (a user mask) give p = 0; a row with nothing visible keeps
 * m' = lowest, so 2^(-inf - lowest) = 0 and never NaN.
 */
#include <immintrin.h>
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "simd_math.h"

/* ---- AVX-512 (16 lanes), used when the CPU has it: on the 2-core Xeon of 2026-11-30 this step
 * was 15-17% of a prefill's time with 8 lanes (the GEMMs ran at the core's peak), and torch's
 * SDPA, whose step is AVX-512, was 8-13% faster there. Same arithmetic and special values as
 * exp2_8 (simd_math.h): below -126 and -inf give 0, NaN gives NaN. ---- */
#define AVX512 __attribute__((target("avx512f")))

static inline AVX512 __m512 exp2_16(__m512 x) {
    const __m512 lo = _mm512_set1_ps(-126.0f);
    __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ);
    x = _mm512_max_ps(lo, x);
    __m512 n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_mul_ps(_mm512_sub_ps(x, n), _mm512_set1_ps(0.693147180559945309f));
    __m512 p = MH_EXP_POLY(r, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_mul_ps, _mm512_add_ps);
    __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_maskz_mov_ps(keep, _mm512_mul_ps(p, _mm512_castsi512_ps(e)));
}

static AVX512 void softmax_block_512(float *s, int64_t rows, int64_t c, int64_t ld, const int32_t *vis,
                                     float *m, float *l, float *alpha) {
    for (int64_t r = 0; r < rows; r++) {
        float *row = s + r * ld;
        int64_t nv = vis ? (vis[r] < 0 ? 0 : (vis[r] > c ? c : vis[r])) : c;
        __m512 mx = _mm512_set1_ps(-FLT_MAX);
        for (int64_t j = 0; j < nv; j += 16) {               /* the tail: masked loads */
            __mmask16 k = nv - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (nv - j)) - 1);
            mx = _mm512_max_ps(mx, _mm512_mask_loadu_ps(_mm512_set1_ps(-FLT_MAX), k, row + j));
        }
        float m_new = _mm512_reduce_max_ps(mx);
        m_new = m[r] > m_new ? m[r] : m_new;             /* also >= -FLT_MAX (the lowest float) */
        __m512 mm = _mm512_set1_ps(m_new), acc = _mm512_setzero_ps();
        for (int64_t j = 0; j < nv; j += 16) {
            __mmask16 k = nv - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (nv - j)) - 1);
            __m512 p = _mm512_maskz_mov_ps(k, exp2_16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, row + j), mm)));
            _mm512_mask_storeu_ps(row + j, k, p);
            acc = _mm512_add_ps(acc, p);
        }
        for (int64_t j = nv; j < c; j++) row[j] = 0.0f;
        float a = exp2f(m[r] - m_new);
        alpha[r] = a;
        l[r] = a * l[r] + _mm512_reduce_add_ps(acc);
        m[r] = m_new;
    }
}

/* The instruction set chosen once per process for all the C kernels (fast_decode.c): 0 AVX2,
 * 1 AVX-512, 2 AVX-512 + BF16 (this step has no bf16 arithmetic: both AVX-512 paths take the
 * 16-lane loop). */
int mh_get_isa(void);

static void softmax_block_256(float *s, int64_t rows, int64_t c, int64_t ld, const int32_t *vis,
                              float *m, float *l, float *alpha);

void mh_softmax_block(float *s, int64_t rows, int64_t c, int64_t ld, const int32_t *vis,
                      float *m, float *l, float *alpha) {
    if (mh_get_isa() != 0) softmax_block_512(s, rows, c, ld, vis, m, l, alpha);
    else softmax_block_256(s, rows, c, ld, vis, m, l, alpha);
}

/* ---- AVX2 (8 lanes): every x86-64 CPU the kernels build for. ---- */
static void softmax_block_256(float *s, int64_t rows, int64_t c, int64_t ld, const int32_t *vis,
                              float *m, float *l, float *alpha) {
    for (int64_t r = 0; r < rows; r++) {
        float *row = s + r * ld;
        int64_t nv = vis ? (vis[r] < 0 ? 0 : (vis[r] > c ? c : vis[r])) : c;
        int64_t nv8 = nv & ~(int64_t)7;
        __m256 mx = _mm256_set1_ps(-FLT_MAX);
        for (int64_t j = 0; j < nv8; j += 8) mx = _mm256_max_ps(mx, _mm256_loadu_ps(row + j));
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
        float m_new = _mm_cvtss_f32(h);
        for (int64_t j = nv8; j < nv; j++) m_new = row[j] > m_new ? row[j] : m_new;
        m_new = m[r] > m_new ? m[r] : m_new;             /* also >= -FLT_MAX (the lowest float) */
        __m256 mm = _mm256_set1_ps(m_new), acc = _mm256_setzero_ps();
        for (int64_t j = 0; j < nv8; j += 8) {
            __m256 p = exp2_8(_mm256_sub_ps(_mm256_loadu_ps(row + j), mm));
            _mm256_storeu_ps(row + j, p);
            acc = _mm256_add_ps(acc, p);
        }
        __m128 t = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
        t = _mm_add_ps(t, _mm_movehl_ps(t, t));
        t = _mm_add_ss(t, _mm_shuffle_ps(t, t, 1));
        float sum = _mm_cvtss_f32(t);
        for (int64_t j = nv8; j < nv; j++) { row[j] = exp2f(row[j] - m_new); sum += row[j]; }
        for (int64_t j = nv; j < c; j++) row[j] = 0.0f;
        float a = exp2f(m[r] - m_new);
        alpha[r] = a;
        l[r] = a * l[r] + sum;
        m[r] = m_new;
    }
}
