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

void mh_softmax_block(float *s, int64_t rows, int64_t c, int64_t ld, const int32_t *vis,
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
