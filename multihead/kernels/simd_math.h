/* Vectorized exponentials shared by the C kernels (AVX2 + FMA), 8 fp32 lanes, for x <= 0. */
#ifndef MULTIHEAD_SIMD_MATH_H
#define MULTIHEAD_SIMD_MATH_H
#include <immintrin.h>

/* e^r for |r| <= ln2/2 by a degree-7 polynomial (Taylor-like coefficients refit for fp32), in
 * Horner form, written once for every vector width: SET1, FMADD, MUL and ADD name that width's
 * intrinsics (softmax_block.c uses it with AVX-512's). */
#define MH_EXP_POLY(r, SET1, FMADD, MUL, ADD)                                                     \
    FMADD(FMADD(FMADD(FMADD(FMADD(FMADD(SET1(1.9875691500e-4f), r, SET1(1.3981999507e-3f)),      \
                                   r, SET1(8.3334519073e-3f)), r, SET1(4.1665795894e-2f)),       \
                      r, SET1(1.6666665459e-1f)), r, SET1(5.0000001201e-1f)),                    \
          MUL(r, r), ADD(r, SET1(1.0f)))

/* e^r * 2^n for |r| <= ln2/2 and integral n in [-126, 127]: e^r by MH_EXP_POLY, 2^n by building
 * the exponent bits. */
static inline __m256 mh_exp_scaled(__m256 r, __m256 n) {
    __m256 p = MH_EXP_POLY(r, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_mul_ps, _mm256_add_ps);
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

/* exp(x): x = n ln2 + r, with ln2 split in two parts so that n ln2 is exact. Lanes below -87
 * (including -inf) return exactly 0, so masked keys contribute nothing; NaN lanes return NaN
 * (a NaN score must reach the output, never be hidden): keep is "not below lo", true for NaN,
 * and max(lo, x) returns its second operand, x, when x is NaN. */
static inline __m256 exp8(__m256 x) {
    const __m256 lo = _mm256_set1_ps(-87.0f);
    __m256 keep = _mm256_cmp_ps(x, lo, _CMP_NLT_UQ);
    x = _mm256_max_ps(lo, x);
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    return _mm256_and_ps(mh_exp_scaled(r, n), keep);
}

/* 2^x: x = n + f, |f| <= 1/2, 2^f = e^(f ln2). Lanes below -126 (and -inf) return 0, NaN
 * lanes NaN (as in exp8). */
static inline __m256 exp2_8(__m256 x) {
    const __m256 lo = _mm256_set1_ps(-126.0f);
    __m256 keep = _mm256_cmp_ps(x, lo, _CMP_NLT_UQ);
    x = _mm256_max_ps(lo, x);
    __m256 n = _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_mul_ps(_mm256_sub_ps(x, n), _mm256_set1_ps(0.693147180559945309f));
    return _mm256_and_ps(mh_exp_scaled(r, n), keep);
}

#endif
