/* The decode work item in 512-bit registers (AVX-512F/BW/VL/DQ), included by fast_decode.c once per
 * variant. Before each #include the includer defines:
 *     D5(name)    the variant's name for a function (name##_512, name##_bf16)
 *     D5_TARGET   the GCC target string the variant's functions are compiled for
 *     D5_BF16DOT  1: bf16 scores by VDPBF16PS (AVX512-BF16) on the unscaled bf16 query rows, the
 *                 dot product times the scale after; 0: K widened to fp32 and fp32 FMAs, as on AVX2
 * Only the variant the CPU supports is ever called (fast_decode.c's mh_set_isa); each is compiled
 * with its own target attribute, so the file builds on any x86-64 GCC or Clang, with or without
 * AVX-512 in the machine that compiles it.
 *
 * Same arithmetic as item() of fast_decode.c (fp32 accumulation, the same online softmax, P V in
 * fp32 with V widened in registers); what differs is the width (16 lanes), masked loads for the
 * tails (d and d_v any multiple of 8), and for bf16 on D5_BF16DOT the score products, which are
 * exact in fp32 either way (bf16 x bf16 has 16 significant bits): only the summation order and
 * the rounding of q * scale differ, as between any two fp32 dot products. */

#define D5_FN static inline __attribute__((always_inline, target(D5_TARGET)))

/* 16 elements (or the first lanes of mask m) of any supported dtype -> 16 fp32 lanes. */
D5_FN __m512 D5(load16)(const void *base, int64_t idx, int dtype) {
    if (dtype == F32) return _mm512_loadu_ps((const float *)base + idx);
    __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)base + idx));
    if (dtype == BF16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
}

D5_FN __m512 D5(load16m)(const void *base, int64_t idx, int dtype, __mmask16 m) {
    if (dtype == F32) return _mm512_maskz_loadu_ps(m, (const float *)base + idx);
    __m256i h = _mm256_maskz_loadu_epi16(m, (const uint16_t *)base + idx);
    if (dtype == BF16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
}

D5_FN __m256 D5(half_sum)(__m512 a) {
    return _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
}

/* Scores of NR (1-4) query rows x the two keys at kr, kr1 into srow[x][jj], srow[x][jj + 1]: 2 NR
 * independent chains, each K load serving NR rows (as scores_rows of fast_decode.c). */
D5_FN void D5(scores_rows)(const int NR, const float *q0, const uint16_t *qh0, int64_t d, const void *k,
                           int64_t kr, int64_t kr1, int dtype, float (*srow)[BK], int64_t jj, float sc) {
    __m512 a[4], c[4];
    for (int x = 0; x < 4; x++) a[x] = c[x] = _mm512_setzero_ps();
    int scaled = 0;
#if D5_BF16DOT
    if (dtype == BF16) {          /* 32 bf16 per register: pairs summed into 16 fp32 lanes */
        const uint16_t *kh = (const uint16_t *)k;
        int64_t i = 0;
        for (; i + 32 <= d; i += 32) {
            __m512bh kx = (__m512bh)_mm512_loadu_si512(kh + kr + i), ky = (__m512bh)_mm512_loadu_si512(kh + kr1 + i);
            for (int x = 0; x < NR; x++) {
                __m512bh w = (__m512bh)_mm512_loadu_si512(qh0 + x * d + i);
                a[x] = _mm512_dpbf16_ps(a[x], w, kx);
                c[x] = _mm512_dpbf16_ps(c[x], w, ky);
            }
        }
        if (i < d) {              /* d = 8, 16 or 24 (mod 32): zeros in the masked lanes add 0 */
            __mmask32 m = (__mmask32)((1ull << (d - i)) - 1);
            __m512bh kx = (__m512bh)_mm512_maskz_loadu_epi16(m, kh + kr + i);
            __m512bh ky = (__m512bh)_mm512_maskz_loadu_epi16(m, kh + kr1 + i);
            for (int x = 0; x < NR; x++) {
                __m512bh w = (__m512bh)_mm512_maskz_loadu_epi16(m, qh0 + x * d + i);
                a[x] = _mm512_dpbf16_ps(a[x], w, kx);
                c[x] = _mm512_dpbf16_ps(c[x], w, ky);
            }
        }
        scaled = 1;
    } else
#endif
    {
        int64_t i = 0;
        for (; i + 16 <= d; i += 16) {
            __m512 kx = D5(load16)(k, kr + i, dtype), ky = D5(load16)(k, kr1 + i, dtype);
            for (int x = 0; x < NR; x++) {
                __m512 w = _mm512_loadu_ps(q0 + x * d + i);
                a[x] = _mm512_fmadd_ps(w, kx, a[x]);
                c[x] = _mm512_fmadd_ps(w, ky, c[x]);
            }
        }
        if (i < d) {              /* d = 8 (mod 16) */
            const __mmask16 m = 0xFF;
            __m512 kx = D5(load16m)(k, kr + i, dtype, m), ky = D5(load16m)(k, kr1 + i, dtype, m);
            for (int x = 0; x < NR; x++) {
                __m512 w = _mm512_maskz_loadu_ps(m, q0 + x * d + i);
                a[x] = _mm512_fmadd_ps(w, kx, a[x]);
                c[x] = _mm512_fmadd_ps(w, ky, c[x]);
            }
        }
    }
    float unused[4][2];
    float *o[4];
    for (int x = 0; x < 4; x++) o[x] = x < NR ? srow[x] + jj : unused[x];
    store_sums_4x2(D5(half_sum)(a[0]), D5(half_sum)(a[1]), D5(half_sum)(a[2]), D5(half_sum)(a[3]),
                   D5(half_sum)(c[0]), D5(half_sum)(c[1]), D5(half_sum)(c[2]), D5(half_sum)(c[3]),
                   o[0], o[1], o[2], o[3]);
    if (scaled)
        for (int x = 0; x < NR; x++) { srow[x][jj] *= sc; srow[x][jj + 1] *= sc; }
}

/* O[x] += P[x] V for NR (1-4) rows and output dims i..i+31 (o = O + r * dv + i); m0, m1 the lanes
 * of dims i..i+15 and i+16..i+31 that exist (all ones but at a d_v tail). */
D5_FN void D5(pv_rows)(const int NR, const int full, float *o, int64_t dv, const void *v, int64_t vrow,
                       int64_t vst, int64_t nb, int dtype, float (*srow)[BK], __mmask16 m0, __mmask16 m1) {
    __m512 a[4], c[4];
    for (int x = 0; x < NR; x++) {
        a[x] = full ? _mm512_loadu_ps(o + x * dv) : _mm512_maskz_loadu_ps(m0, o + x * dv);
        c[x] = full ? _mm512_loadu_ps(o + x * dv + 16) : _mm512_maskz_loadu_ps(m1, o + x * dv + 16);
    }
    for (int64_t jj = 0; jj < nb; jj++) {
        int64_t vr = vrow + jj * vst;
        __m512 vx = full ? D5(load16)(v, vr, dtype) : D5(load16m)(v, vr, dtype, m0);
        __m512 vy = full ? D5(load16)(v, vr + 16, dtype) : D5(load16m)(v, vr + 16, dtype, m1);
        for (int x = 0; x < NR; x++) {
            __m512 p = _mm512_set1_ps(srow[x][jj]);
            a[x] = _mm512_fmadd_ps(p, vx, a[x]);
            c[x] = _mm512_fmadd_ps(p, vy, c[x]);
        }
    }
    for (int x = 0; x < NR; x++) {
        if (full) { _mm512_storeu_ps(o + x * dv, a[x]); _mm512_storeu_ps(o + x * dv + 16, c[x]); }
        else { _mm512_mask_storeu_ps(o + x * dv, m0, a[x]); _mm512_mask_storeu_ps(o + x * dv + 16, m1, c[x]); }
    }
}

/* Rows r.. of the block, NR of them at a time with NR a constant after inlining. */
#define D5_ROWS(CALL4, CALLN)                                                      \
    do {                                                                           \
        int64_t r = 0;                                                             \
        for (; r + 4 <= R; r += 4) CALL4;                                          \
        switch (R - r) { case 3: CALLN(3); break; case 2: CALLN(2); break;         \
                         case 1: CALLN(1); break; default: break; }                \
    } while (0)

/* One work item (see item() in fast_decode.c): rows 0..R-1 of head n against keys [j0, j1).
 * qh: the same rows as unscaled bf16 (D5_BF16DOT and bf16 only, else unused); sc: the scale. */
D5_FN void D5(item)(const float *q, const uint16_t *qh, float sc, const void *k, const void *v, int dtype,
                    int prefetch, int64_t R, int64_t d, int64_t dv, int64_t j0, int64_t j1, const int32_t *lim,
                    int64_t koff, int64_t kst, int64_t voff, int64_t vst, float *M, float *L, float *O) {
    float s[MAXR][BK] __attribute__((aligned(64)));
    const int64_t esize = dtype == F32 ? 4 : 2;
    for (int64_t r = 0; r < R; r++) { M[r] = -INFINITY; L[r] = 0.0f; }
    memset(O, 0, sizeof(float) * R * dv);
    /* Items of SPREAD_MIN_KEYS or more: the next block's K rows into L2 from the scores loop and
     * its V rows from the P V loop (prefetch_cols), nothing into L1; with the V rows' request into
     * L1 kept, the spread had made these loops 7-9% slower; without it, 0.81-0.94x the time for
     * fp32 and 0.86-1.02x for bf16 at 128k / 256k keys (fast_decode.c, at prefetch_cols). Shorter
     * items (a paged cache's pages) as before. */
    const int spread = PF_V_SPREAD && prefetch && j1 - j0 >= SPREAD_MIN_KEYS;

    for (int64_t b0 = j0; b0 < j1; b0 += BK) {
        int64_t nb = j1 - b0 < BK ? j1 - b0 : BK;
        int64_t jj = 0;
        for (; jj + 2 <= nb; jj += 2) {
            int64_t kr = koff + (b0 + jj) * kst, kr1 = kr + kst;
            if (prefetch && !spread) prefetch_rows(v, esize, voff, vst, b0 + jj, 2, dv * esize, _MM_HINT_T0);
            if (prefetch && b0 + jj + AHEAD + 2 <= j1) {
                prefetch_rows(k, esize, koff, kst, b0 + jj + AHEAD, 2, d * esize, _MM_HINT_T1);
                if (!spread) prefetch_rows(v, esize, voff, vst, b0 + jj + AHEAD, 2, dv * esize, _MM_HINT_T1);
            }
#define D5_S4 D5(scores_rows)(4, q + r * d, qh + r * d, d, k, kr, kr1, dtype, s + r, jj, sc)
#define D5_SN(N) D5(scores_rows)(N, q + r * d, qh + r * d, d, k, kr, kr1, dtype, s + r, jj, sc)
            D5_ROWS(D5_S4, D5_SN);
        }
        if (jj < nb) {                               /* an odd last key: scored against itself */
            int64_t kr = koff + (b0 + jj) * kst;
            float pair[MAXR][BK] __attribute__((aligned(64)));
#define D5_O4 D5(scores_rows)(4, q + r * d, qh + r * d, d, k, kr, kr, dtype, pair + r, 0, sc)
#define D5_ON(N) D5(scores_rows)(N, q + r * d, qh + r * d, d, k, kr, kr, dtype, pair + r, 0, sc)
            D5_ROWS(D5_O4, D5_ON);
            for (int64_t r = 0; r < R; r++) s[r][jj] = pair[r][0];
        }
        softmax_rows(R, b0, nb, lim, s, M, L, O, dv);
        int64_t i = 0;
        for (; i + 32 <= dv; i += 32) {
            int64_t vrow = voff + b0 * vst + i;
            if (spread) prefetch_cols(v, esize, voff, vst, b0 + AHEAD, j1, i, i + 32, dv);
#define D5_P4 D5(pv_rows)(4, 1, O + r * dv + i, dv, v, vrow, vst, nb, dtype, s + r, 0xFFFF, 0xFFFF)
#define D5_PN(N) D5(pv_rows)(N, 1, O + r * dv + i, dv, v, vrow, vst, nb, dtype, s + r, 0xFFFF, 0xFFFF)
            D5_ROWS(D5_P4, D5_PN);
        }
        if (i < dv) {                                /* d_v = 8, 16 or 24 (mod 32) */
            int64_t vrow = voff + b0 * vst + i, rest = dv - i;
            __mmask16 m0 = rest >= 16 ? 0xFFFF : (__mmask16)((1u << rest) - 1);
            __mmask16 m1 = rest > 16 ? (__mmask16)((1u << (rest - 16)) - 1) : 0;
            if (spread) prefetch_cols(v, esize, voff, vst, b0 + AHEAD, j1, i, dv, dv);
#define D5_T4 D5(pv_rows)(4, 0, O + r * dv + i, dv, v, vrow, vst, nb, dtype, s + r, m0, m1)
#define D5_TN(N) D5(pv_rows)(N, 0, O + r * dv + i, dv, v, vrow, vst, nb, dtype, s + r, m0, m1)
            D5_ROWS(D5_T4, D5_TN);
        }
#undef D5_S4
#undef D5_SN
#undef D5_O4
#undef D5_ON
#undef D5_P4
#undef D5_PN
#undef D5_T4
#undef D5_TN
    }
}

/* The item for each dtype (load16's dtype test resolved at compile time in the inner loops). */
static __attribute__((target(D5_TARGET), noinline)) void D5(item_any)(
        const float *q, const uint16_t *qh, float sc, const void *k, const void *v, int dtype, int prefetch,
        int64_t R, int64_t d, int64_t dv, int64_t j0, int64_t j1, const int32_t *lim, int64_t koff,
        int64_t kst, int64_t voff, int64_t vst, float *M, float *L, float *O) {
    if (dtype == F32) D5(item)(q, qh, sc, k, v, F32, prefetch, R, d, dv, j0, j1, lim, koff, kst, voff, vst, M, L, O);
    else if (dtype == BF16) D5(item)(q, qh, sc, k, v, BF16, prefetch, R, d, dv, j0, j1, lim, koff, kst, voff, vst, M, L, O);
    else D5(item)(q, qh, sc, k, v, F16, prefetch, R, d, dv, j0, j1, lim, koff, kst, voff, vst, M, L, O);
}

#undef D5_FN
#undef D5_ROWS
