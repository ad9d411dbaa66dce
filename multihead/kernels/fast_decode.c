/* Fused decode attention for x86-64 CPUs with AVX2 + FMA (+ F16C for fp16).
 *
 * Why a C kernel: one decode step does only 2*G FLOPs per cached element (G = H / H_kv query
 * heads share each K/V row), too few for a matmul library to run efficiently on a [C, d] x [d, G]
 * product, and torch has no fused "convert bf16 -> fp32, dot, exp, accumulate" step. This file
 * reads every K and V row exactly once, converts it to fp32 in registers, and does the scores,
 * the online softmax and the P V update while the row is in L1.
 *
 * Work item = (KV head n, key split s). For its key range it returns, per query row r:
 *     M[r] = max_j s_rj,  L[r] = sum_j exp(s_rj - M[r]),  O[r] = sum_j exp(s_rj - M[r]) v_j
 * which mh_decode then merges across splits by log-sum-exp. Row r sees keys j < lim[r] (causal),
 * so a row with lim[r] <= start of the split gets M = -inf, L = 0, O = 0.
 *
 * Layout (of item): q is fp32 [NH, R, d], already scaled, contiguous. k, v element (n, j, i) is at
 * base + b*sb + h*sh + j*st + i with n = b * H_kv + h (strides in elements; last dim contiguous).
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <stdatomic.h>

#include "mh_pool.h"
#include "simd_math.h"

#define BK 32          /* keys per block: a block of fp32 V rows (32 x 128 x 4 B = 16 KiB) stays in L1 */
#define LINE 64        /* bytes per cache line */
#ifndef AHEAD
#define AHEAD BK       /* keys ahead whose K and V rows are requested into L2 (see prefetch_rows) */
#endif
#ifndef AHEAD_ITEM
#define AHEAD_ITEM (2 * BK)   /* the same for the AVX2 path's long items (item(), item_bf16_pairs), with PF_V_SPREAD */
#endif
#define SPREAD_MIN_KEYS 1024   /* items at least this long use PF_V_SPREAD (the AVX2 path at AHEAD_ITEM, 512-bit at AHEAD) */
#ifndef PF_V_SPREAD
#define PF_V_SPREAD 1  /* the next block's V rows requested from the P V loop (prefetch_cols); 0: with its K */
#endif
/* Scratch of a call (scaled q; the splits' M, L, O) that fits in SMALL_FLOATS floats, for at most
 * SMALL_HEADS KV heads, lives in per-thread buffers (2 x 16 KiB, small_q / small_m) instead of three malloc / free
 * pairs: SmolLM2's 128-key call (9/3 heads, d 64), the C call alone, one thread, alternating
 * builds: 0.93-0.98x the time (native and AVX2 paths, two runs each, 16 rounds). */
#define SMALL_FLOATS 4096
#define SMALL_HEADS 64
/* Per calling thread, not on its stack: 32 KiB of stack arrays overflowed a Python thread started
 * with threading.stack_size(65536) (a segmentation fault where the malloc'd scratch ran). mh_decode
 * is not re-entered on one thread (the pool's workers never call it), so one set per thread does. */
static _Thread_local float small_q[SMALL_FLOATS] __attribute__((aligned(64)));
static _Thread_local float small_m[SMALL_FLOATS] __attribute__((aligned(64)));
static _Thread_local _Atomic int64_t small_done[SMALL_HEADS];
#define PREFETCH_MIN_BYTES (1 << 20)   /* K+V bytes of a call below which nothing is requested ahead */
#define MAXD 512
#define MAXR 64

enum { F32 = 0, BF16 = 1, F16 = 2 };

/* 8 elements of any supported dtype -> 8 fp32 lanes. */
static inline __m256 load8(const void *base, int64_t idx, int dtype) {
    if (dtype == F32) return _mm256_loadu_ps((const float *)base + idx);
    __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)base + idx));
    if (dtype == BF16)   /* bf16 is the top half of an fp32: widen and shift left by 16 */
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    return _mm256_cvtph_ps(h);
}

static inline float hsum8(__m256 a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

/* The 8 horizontal sums of rows 0-3 x keys (a: key j, c: key j + 1), stored as the pairs
 * (s_rj, s_r,j+1) at o0..o3: one hadd tree instead of eight separate hsum8 (6 ops each). */
static inline void store_sums_4x2(__m256 a0, __m256 a1, __m256 a2, __m256 a3,
                                  __m256 c0, __m256 c1, __m256 c2, __m256 c3,
                                  float *o0, float *o1, float *o2, float *o3) {
    __m256 u0 = _mm256_hadd_ps(_mm256_hadd_ps(a0, c0), _mm256_hadd_ps(a1, c1));  /* per 128-bit half: a0 c0 a1 c1 */
    __m256 u1 = _mm256_hadd_ps(_mm256_hadd_ps(a2, c2), _mm256_hadd_ps(a3, c3));  /*                    a2 c2 a3 c3 */
    __m256 t = _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
    __m128 lo = _mm256_castps256_ps128(t), hi = _mm256_extractf128_ps(t, 1);
    _mm_storel_pi((__m64 *)o0, lo); _mm_storeh_pi((__m64 *)o1, lo);
    _mm_storel_pi((__m64 *)o2, hi); _mm_storeh_pi((__m64 *)o3, hi);
}

static inline float hmax8(__m256 a) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

/* Request the cache lines of rows [j, j + n) of a K or V head (row bytes rb, stride st elements).
 * Why: without it the core computed, then waited for memory, in turn (measured: 8.8 GB/s per
 * core vs 17.5 GB/s for a plain sum over the same rows). The kernel asks for this block's V rows
 * into L1 while it computes the block's scores (now only in items shorter than SPREAD_MIN_KEYS,
 * and never in item()'s: see prefetch_cols), and for the next
 * block's K and V rows (AHEAD keys on) into L2. Measured on the 2-core Intel Xeon (KVM) of
 * 2026-11-30, fp32, 32/8 heads, d=128, helpers paused: one thread 10.3-10.6 -> 11.6-12.2 GB/s at
 * 100,000, 120,000, 131,040 and 131,072 keys alike; two threads 72-76% -> 83% of the streaming
 * read rate (G=4) and 55% -> 70% (G=8); 16 or 48 keys ahead, or into L1, were no better. (On the
 * AMD EPYC of 2026-11-29 a 1-4-blocks-ahead prefetch had helped at power-of-two lengths only,
 * within that day's noise.) A macro, not a function: GCC deems a function holding only
 * prefetches free of side effects and deletes the calls. */
#define prefetch_rows(base, esize, off, st, j, n, rb, hint)                                   \
    for (int64_t t_ = 0; t_ < (n); t_++) {                                                   \
        const char *row_ = (const char *)(base) + ((off) + ((j) + t_) * (st)) * (esize);      \
        for (int64_t c_ = 0; c_ < (rb); c_ += LINE) _mm_prefetch(row_ + c_, hint);           \
    }

/* Request, for the rows j .. min(j + BK, j1) - 1 of a V head, the cache lines that start in bytes
 * [c0, c1) of each row (elements [e0, e1), clipped at the row's ev elements): called from the P V
 * loop with that loop's output columns, so that the next block's V rows are requested while this
 * block's P V runs, one column of lines at a time, and its K rows (prefetch_rows) while its scores
 * run. Issued all in the scores loop, as before, the next block's 512 lines (fp32, d 128) came in
 * one burst that filled the core's miss buffers and held up the loop's own loads. One thread,
 * 32/8 heads, fp32, the AVX2 path, alternating builds in one process (medians of 10-16 rounds, the
 * machine shared): 131,072 keys 18.4 -> 20.3-21.2 GB/s in three runs but 19.2 -> 18.1 in a fourth;
 * with the distance doubled to 64 keys (AHEAD_ITEM), whose requests have a block more to arrive,
 * 19.8 -> 21.2 GB/s (0.94x the time; best 20.4 -> 22.6), and 100,000 keys 18.9 -> 19.9 (0.95x;
 * best 20.8 -> 22.5), where 64 keys without the spread changed nothing (19.7). Issuing the next
 * block's K from the P V loop too was slower (14.9 vs 18.4). Items of 256 keys (a paged cache's
 * pages: 512 x 8 heads x 256 keys) ran 1.13x slower this way, 1.10x at 32 keys ahead, since an
 * item's first blocks are never requested ahead: items under SPREAD_MIN_KEYS keep the old way.
 * Used (until the third round below) by
 * item() (the AVX2 path's fp32 and fp16, and bf16 where d or d_v is not a multiple of 16) only: in
 * the same runs it changed nothing for the bf16 pair loops (12.35 vs 12.22 GB/s, compute-bound)
 * and slowed the 512-bit loops by 7-9% (fp32 19.5 -> 18.2, bf16 19.1 -> 17.6 GB/s).
 * Nothing into L1 (issue 32, third round): item() no longer requests a block's V rows into L1
 * (prefetcht0, prefetch_rows above) while the block's scores run, and item_bf16_pairs' items of
 * SPREAD_MIN_KEYS or more now take the spread too (K rows AHEAD_ITEM keys on, V rows from its P V
 * loop), so long items request only into L2 and leave L1 to the loops' own loads. The 2-core AMD
 * EPYC (KVM, an AVX-512 CPU running the AVX2 path by MULTIHEAD_CPU_PATH=avx2, ATen held to AVX2),
 * 2026-12-05, 32/8 heads, d 128, batch 1, two threads, old and new builds alternating in one
 * process in random order (30 rounds, medians; load 1.3-1.6; a 1 GiB fp32 sum in the same rounds
 * read 30-54 GB/s): fp32 131,072 keys 47.5 -> 36.8, 50.5 -> 37.1, 50.0 -> 37.6 ms (0.74-0.78x the
 * time, 21-23 -> 29 GB/s); bf16 262,144 keys 43.0 -> 38.2, 43.1 -> 38.5, 43.8 -> 38.8 ms (0.89x,
 * of which the pairs' q loads below are ~5%). Requests into L1 were what cost: prefetcht0 or
 * prefetchnta instead of prefetcht1 for the later blocks 1.7x the time, prefetcht2 the same as
 * prefetcht1, 32, 96 or 128 keys ahead within 4% of 64, every other line only 1.4x. Paged items of
 * 256 keys (512 x 8 heads, fp32, no spread) without the L1 request: 0.89, 0.98, 0.90x; SmolLM2's
 * 128-key call (below PREFETCH_MIN_BYTES: no requests): unchanged. The 512-bit paths (decode_512.h)
 * then took the spread too, without the L1 request, at AHEAD keys: the same machine and shapes,
 * native (no override), 24 rounds, load 2.3-4: avx512bf16 fp32 0.84, 0.94, 0.85x the time, bf16
 * 0.95, 0.90, 1.02x; avx512 fp32 0.91, 0.83, 0.81x, bf16 0.86, 0.94, 0.98x (64 keys ahead: bf16
 * 0.96-1.04x; the spread with the L1 request kept: 1.04x fp32). */
#define prefetch_cols(base, esize, off, st, j, j1, e0, e1, ev)                                  \
    do {                                                                                         \
        int64_t c0_ = (e0) * (esize), c1_ = ((e1) < (ev) ? (e1) : (ev)) * (esize);               \
        c0_ = (c0_ + LINE - 1) / LINE * LINE;                                                    \
        for (int64_t t_ = (j); t_ < (j) + BK && t_ < (j1); t_++) {                               \
            const char *row_ = (const char *)(base) + ((off) + t_ * (st)) * (esize);             \
            for (int64_t c_ = c0_; c_ < c1_; c_ += LINE) _mm_prefetch(row_ + c_, _MM_HINT_T1);   \
        }                                                                                        \
    } while (0)

/* Scores of NR (3 or 4) query rows q0 x the two keys at kr, kr1 into srow[x][jj], srow[x][jj+1]:
 * 2 * NR independent FMA chains (the FMA latency is ~4 cycles, so fewer chains would leave the two
 * FMA units idle); each K load serves NR rows. NR is a constant after inlining: the loops over x
 * unroll and a[], c[] live in registers. */
static inline __attribute__((always_inline)) void scores_rows(const int NR, const float *q0, int64_t d,
        const void *k, int64_t kr, int64_t kr1, int dtype, float (*srow)[BK], int64_t jj) {
    __m256 a[4], c[4];
    for (int x = 0; x < 4; x++) a[x] = c[x] = _mm256_setzero_ps();
    for (int64_t i = 0; i < d; i += 8) {
        __m256 kx = load8(k, kr + i, dtype), ky = load8(k, kr1 + i, dtype);
        for (int x = 0; x < NR; x++) {
            __m256 w = _mm256_loadu_ps(q0 + x * d + i);
            a[x] = _mm256_fmadd_ps(w, kx, a[x]);
            c[x] = _mm256_fmadd_ps(w, ky, c[x]);
        }
    }
    float unused[2];
    store_sums_4x2(a[0], a[1], a[2], a[3], c[0], c[1], c[2], c[3], srow[0] + jj, srow[1] + jj,
                   srow[2] + jj, NR == 4 ? srow[3] + jj : unused);
}

/* O[x] += P[x] V for NR (3 or 4) rows and output dims i..i+15 (o = O + r * dv + i): 2 * NR FMA
 * chains in registers over the block's nb keys. */
static inline __attribute__((always_inline)) void pv_rows(const int NR, float *o, int64_t dv,
        const void *v, int64_t vrow, int64_t vst, int64_t nb, int dtype, float (*srow)[BK]) {
    __m256 a[4], c[4];
    for (int x = 0; x < NR; x++) { a[x] = _mm256_loadu_ps(o + x * dv); c[x] = _mm256_loadu_ps(o + x * dv + 8); }
    for (int64_t jj = 0; jj < nb; jj++) {
        int64_t vr = vrow + jj * vst;
        __m256 vx = load8(v, vr, dtype), vy = load8(v, vr + 8, dtype);
        for (int x = 0; x < NR; x++) {
            __m256 p = _mm256_broadcast_ss(&srow[x][jj]);
            a[x] = _mm256_fmadd_ps(p, vx, a[x]);
            c[x] = _mm256_fmadd_ps(p, vy, c[x]);
        }
    }
    for (int x = 0; x < NR; x++) { _mm256_storeu_ps(o + x * dv, a[x]); _mm256_storeu_ps(o + x * dv + 8, c[x]); }
}

/* Online softmax per row of a block's scores s (keys b0 .. b0 + nb - 1): mask, new max, rescale of
 * O, P = exp(S - m) in place. Shared by every variant of the work item (8 lanes: BK = 32 keys). */
static inline __attribute__((always_inline)) void softmax_rows(int64_t R, int64_t b0, int64_t nb,
        const int32_t *lim, float (*s)[BK], float *M, float *L, float *O, int64_t dv) {
    for (int64_t r = 0; r < R; r++) {
        int64_t visible = lim[r] - b0;            /* keys of this block row r may see */
        if (visible <= 0) { for (int jj = 0; jj < BK; jj++) s[r][jj] = 0.0f; continue; }
        for (int64_t jj = visible < nb ? visible : nb; jj < BK; jj++) s[r][jj] = -INFINITY;
        __m256 mx = _mm256_loadu_ps(s[r]);
        for (int jj = 8; jj < BK; jj += 8) mx = _mm256_max_ps(mx, _mm256_loadu_ps(s[r] + jj));
        float m_new = fmaxf(M[r], hmax8(mx));
        /* Scores all -inf so far: subtract 0, not -inf (exp(-inf - -inf) would be NaN), so
         * they give p = 0 while a NaN score still gives p = NaN (exp8 keeps NaN). */
        float m_use = m_new == -INFINITY ? 0.0f : m_new;
        float alpha = expf(M[r] - m_use);          /* 0 for the first visible block (M = -inf) */
        __m256 mm = _mm256_set1_ps(m_use), acc = _mm256_setzero_ps();
        for (int jj = 0; jj < BK; jj += 8) {
            __m256 p = exp8(_mm256_sub_ps(_mm256_loadu_ps(s[r] + jj), mm));
            _mm256_storeu_ps(s[r] + jj, p);
            acc = _mm256_add_ps(acc, p);
        }
        L[r] = L[r] * alpha + hsum8(acc);
        M[r] = m_new;
        if (alpha != 1.0f) {
            __m256 al = _mm256_set1_ps(alpha);
            for (int64_t i = 0; i < dv; i += 8)
                _mm256_storeu_ps(O + r * dv + i, _mm256_mul_ps(al, _mm256_loadu_ps(O + r * dv + i)));
        }
    }
}

/* One work item: rows 0..R-1 of head n against keys [j0, j1). Inlined per dtype (see below) so
 * that load8's dtype test is resolved at compile time in the inner loops. */
static inline __attribute__((always_inline)) void item(const float *q, const void *k, const void *v, int dtype, int prefetch, int64_t R, int64_t d,
                 int64_t dv, int64_t j0, int64_t j1, const int32_t *lim,
                 int64_t koff, int64_t kst, int64_t voff, int64_t vst,
                 float *M, float *L, float *O) {
    float s[MAXR][BK] __attribute__((aligned(32)));
    const int64_t esize = dtype == F32 ? 4 : 2;
    /* Items of under SPREAD_MIN_KEYS (a paged cache's pages): the first blocks are never requested
     * ahead, so a longer distance leaves more of a short item cold (prefetch_cols). */
    const int spread = PF_V_SPREAD && prefetch && j1 - j0 >= SPREAD_MIN_KEYS;
    const int64_t ahead = spread ? AHEAD_ITEM : AHEAD;
    for (int64_t r = 0; r < R; r++) { M[r] = -INFINITY; L[r] = 0.0f; }
    memset(O, 0, sizeof(float) * R * dv);

    for (int64_t b0 = j0; b0 < j1; b0 += BK) {
        int64_t nb = j1 - b0 < BK ? j1 - b0 : BK;
        /* Scores: query rows 4 (or 3) at a time x 2 keys (scores_rows); leftover rows one by one. */
        int64_t jj = 0;
        for (; jj + 2 <= nb; jj += 2) {
            int64_t kr = koff + (b0 + jj) * kst, kr1 = kr + kst;
            if (prefetch && b0 + jj + ahead + 2 <= j1) {          /* a later block, into L2 (no L1 request: see above) */
                prefetch_rows(k, esize, koff, kst, b0 + jj + ahead, 2, d * esize, _MM_HINT_T1);
                if (!spread) prefetch_rows(v, esize, voff, vst, b0 + jj + ahead, 2, dv * esize, _MM_HINT_T1);
            }
            int64_t r = 0;
            for (; r + 4 <= R; r += 4) scores_rows(4, q + r * d, d, k, kr, kr1, dtype, s + r, jj);
            if (R - r == 3) { scores_rows(3, q + r * d, d, k, kr, kr1, dtype, s + r, jj); r += 3; }
            for (; r < R; r++) {
                __m256 a0 = _mm256_setzero_ps(), c0 = a0;
                for (int64_t i = 0; i < d; i += 8) {
                    __m256 w = _mm256_loadu_ps(q + r * d + i);
                    a0 = _mm256_fmadd_ps(w, load8(k, kr + i, dtype), a0);
                    c0 = _mm256_fmadd_ps(w, load8(k, kr1 + i, dtype), c0);
                }
                s[r][jj] = hsum8(a0); s[r][jj + 1] = hsum8(c0);
            }
        }
        for (; jj < nb; jj++) {                      /* an odd last key */
            int64_t kr = koff + (b0 + jj) * kst;
            for (int64_t r = 0; r < R; r++) {
                __m256 a0 = _mm256_setzero_ps();
                for (int64_t i = 0; i < d; i += 8)
                    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + r * d + i), load8(k, kr + i, dtype), a0);
                s[r][jj] = hsum8(a0);
            }
        }
        softmax_rows(R, b0, nb, lim, s, M, L, O, dv);
        /* O += P V: rows 4 (or 3) at a time x 16 output dims (pv_rows); leftover rows one by one. */
        int64_t i = 0;
        for (; i + 16 <= dv; i += 16) {
            int64_t r = 0, vrow = voff + b0 * vst + i;
            if (spread) prefetch_cols(v, esize, voff, vst, b0 + ahead, j1, i, i + 16, dv);
            for (; r + 4 <= R; r += 4) pv_rows(4, O + r * dv + i, dv, v, vrow, vst, nb, dtype, s + r);
            if (R - r == 3) { pv_rows(3, O + r * dv + i, dv, v, vrow, vst, nb, dtype, s + r); r += 3; }
            for (; r < R; r++) {
                float *o = O + r * dv + i;
                __m256 a0 = _mm256_loadu_ps(o), c0 = _mm256_loadu_ps(o + 8);
                for (int64_t jj = 0; jj < nb; jj++) {
                    int64_t vr = voff + (b0 + jj) * vst + i;
                    __m256 p = _mm256_broadcast_ss(&s[r][jj]);
                    a0 = _mm256_fmadd_ps(p, load8(v, vr, dtype), a0);
                    c0 = _mm256_fmadd_ps(p, load8(v, vr + 8, dtype), c0);
                }
                _mm256_storeu_ps(o, a0); _mm256_storeu_ps(o + 8, c0);
            }
        }
        for (; i < dv; i += 8) {                     /* d_v = 8 (mod 16): the last 8 dims */
            if (spread) prefetch_cols(v, esize, voff, vst, b0 + ahead, j1, i, i + 8, dv);
            for (int64_t r = 0; r < R; r++) {
                float *o = O + r * dv + i;
                __m256 a0 = _mm256_loadu_ps(o);
                for (int64_t jj = 0; jj < nb; jj++)
                    a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(&s[r][jj]), load8(v, voff + (b0 + jj) * vst + i, dtype), a0);
                _mm256_storeu_ps(o, a0);
            }
        }
    }
}

/* ---- bf16 on AVX2 without bf16 arithmetic: the widening where it costs least. ----
 * Widening 8 bf16 to fp32 takes a 128-bit load, a zero-extension and a shift (load8), for K in the
 * scores and V in P V: on a CPU without bf16 units that is what bounds bf16 decode (4 FLOPs per
 * byte at G = 4). Sixteen bf16 in one 256-bit register widen in two operations instead: a shift
 * left by 16 gives the even elements as fp32, a mask of the high halves the odd ones. A dot
 * product does not care about the order of its terms, so q is stored in the same order (per 16
 * dims: the 8 even ones, then the 8 odd ones: pair_order), and P V accumulates the output dims in
 * that order too; merge_row puts them back. Used when d and d_v are multiples of 16.
 * Measured on the AVX2 path of a shared AVX-512 AMD EPYC (load 10-11), 32/8 heads, d 128, 262,144
 * keys, two threads, interleaved in one process: 1.18x, 1.13x (medians), 1.14x, 1.17x (best) over
 * load8's widening; 8,192 keys on one thread: no change (8.2 vs 8.4 ms best of 40). */
static inline __m256 bf16_even(__m256i x) { return _mm256_castsi256_ps(_mm256_slli_epi32(x, 16)); }
static inline __m256 bf16_odd(__m256i x) {
    return _mm256_castsi256_ps(_mm256_and_si256(x, _mm256_set1_epi32((int)0xFFFF0000u)));
}
static inline __m256i load16_raw(const void *base, int64_t idx) {
    return _mm256_loadu_si256((const __m256i *)((const uint16_t *)base + idx));
}

/* x [d] in natural order -> per 16: even elements, then odd ones (and back: pair_unorder). */
static void pair_order(float *x, int64_t d) {
    float t[16];
    for (int64_t i = 0; i < d; i += 16) {
        for (int j = 0; j < 8; j++) { t[j] = x[i + 2 * j]; t[8 + j] = x[i + 2 * j + 1]; }
        memcpy(x + i, t, sizeof t);
    }
}
static void pair_unorder(float *x, int64_t d) {
    float t[16];
    for (int64_t i = 0; i < d; i += 16) {
        for (int j = 0; j < 8; j++) { t[2 * j] = x[i + j]; t[2 * j + 1] = x[i + 8 + j]; }
        memcpy(x + i, t, sizeof t);
    }
}

/* scores_rows for bf16 K and pair-ordered q (NR 1-4 rows x keys kr, kr1). */
static inline __attribute__((always_inline)) void scores_rows_pairs(const int NR, const float *q0, int64_t d,
        const void *k, int64_t kr, int64_t kr1, float (*srow)[BK], int64_t jj) {
    __m256 a[4], c[4];
    for (int x = 0; x < 4; x++) a[x] = c[x] = _mm256_setzero_ps();
    for (int64_t i = 0; i < d; i += 16) {
        __m256i kx = load16_raw(k, kr + i), ky = load16_raw(k, kr1 + i);
        __m256 kxe = bf16_even(kx), kxo = bf16_odd(kx), kye = bf16_even(ky), kyo = bf16_odd(ky);
        /* The even halves of all NR rows, then the odd ones, each q vector loaded once into a
         * register (the empty asm keeps it there): written as two dependent FMAs per row, GCC ran
         * out of the 16 registers and loaded each q vector twice as a memory operand of the FMAs
         * (20 loads per 16 FMAs). Same products, same order per accumulator: the same bits.
         * One thread, 1,024 keys (in L2), 32/8 heads' one KV head, d 128: 0.92-0.93x the time;
         * at 262,144 keys on two threads, with the spread, 0.94, 0.96, 0.95x (three runs). */
        for (int x = 0; x < NR; x++) {
            __m256 we = _mm256_loadu_ps(q0 + x * d + i);
            __asm__("" : "+x"(we));
            a[x] = _mm256_fmadd_ps(we, kxe, a[x]);
            c[x] = _mm256_fmadd_ps(we, kye, c[x]);
        }
        for (int x = 0; x < NR; x++) {
            __m256 wo = _mm256_loadu_ps(q0 + x * d + i + 8);
            __asm__("" : "+x"(wo));
            a[x] = _mm256_fmadd_ps(wo, kxo, a[x]);
            c[x] = _mm256_fmadd_ps(wo, kyo, c[x]);
        }
    }
    float unused[4][2];
    float *o[4];
    for (int x = 0; x < 4; x++) o[x] = x < NR ? srow[x] + jj : unused[x];
    store_sums_4x2(a[0], a[1], a[2], a[3], c[0], c[1], c[2], c[3], o[0], o[1], o[2], o[3]);
}

/* pv_rows for bf16 V, output dims i..i+15 in pair order (o = O + r * dv + i). */
static inline __attribute__((always_inline)) void pv_rows_pairs(const int NR, float *o, int64_t dv,
        const void *v, int64_t vrow, int64_t vst, int64_t nb, float (*srow)[BK]) {
    __m256 a[4], c[4];
    for (int x = 0; x < NR; x++) { a[x] = _mm256_loadu_ps(o + x * dv); c[x] = _mm256_loadu_ps(o + x * dv + 8); }
    for (int64_t jj = 0; jj < nb; jj++) {
        __m256i raw = load16_raw(v, vrow + jj * vst);
        __m256 ve = bf16_even(raw), vo = bf16_odd(raw);
        for (int x = 0; x < NR; x++) {
            __m256 p = _mm256_broadcast_ss(&srow[x][jj]);
            a[x] = _mm256_fmadd_ps(p, ve, a[x]);
            c[x] = _mm256_fmadd_ps(p, vo, c[x]);
        }
    }
    for (int x = 0; x < NR; x++) { _mm256_storeu_ps(o + x * dv, a[x]); _mm256_storeu_ps(o + x * dv + 8, c[x]); }
}

#define PAIR_ROWS(CALL4, CALLN)                                                    \
    do {                                                                           \
        int64_t r = 0;                                                             \
        for (; r + 4 <= R; r += 4) CALL4;                                          \
        switch (R - r) { case 3: CALLN(3); break; case 2: CALLN(2); break;         \
                         case 1: CALLN(1); break; default: break; }                \
    } while (0)

/* item() for bf16 with pair-ordered q and output (d, d_v multiples of 16). */
static void item_bf16_pairs(const float *q, const void *k, const void *v, int prefetch, int64_t R, int64_t d,
                            int64_t dv, int64_t j0, int64_t j1, const int32_t *lim, int64_t koff, int64_t kst,
                            int64_t voff, int64_t vst, float *M, float *L, float *O) {
    float s[MAXR][BK] __attribute__((aligned(32)));
    const int64_t esize = 2;
    /* Long items as item()'s: K rows AHEAD_ITEM keys on into L2, V rows from the P V loop
     * (prefetch_cols), nothing into L1; short ones (a paged cache's pages) as before. */
    const int spread = PF_V_SPREAD && prefetch && j1 - j0 >= SPREAD_MIN_KEYS;
    const int64_t ahead = spread ? AHEAD_ITEM : AHEAD;
    for (int64_t r = 0; r < R; r++) { M[r] = -INFINITY; L[r] = 0.0f; }
    memset(O, 0, sizeof(float) * R * dv);
    for (int64_t b0 = j0; b0 < j1; b0 += BK) {
        int64_t nb = j1 - b0 < BK ? j1 - b0 : BK;
        int64_t jj = 0;
        for (; jj + 2 <= nb; jj += 2) {
            int64_t kr = koff + (b0 + jj) * kst, kr1 = kr + kst;
            if (prefetch && !spread) prefetch_rows(v, esize, voff, vst, b0 + jj, 2, dv * esize, _MM_HINT_T0);
            if (prefetch && b0 + jj + ahead + 2 <= j1) {
                prefetch_rows(k, esize, koff, kst, b0 + jj + ahead, 2, d * esize, _MM_HINT_T1);
                if (!spread) prefetch_rows(v, esize, voff, vst, b0 + jj + ahead, 2, dv * esize, _MM_HINT_T1);
            }
#define P_S4 scores_rows_pairs(4, q + r * d, d, k, kr, kr1, s + r, jj)
#define P_SN(N) scores_rows_pairs(N, q + r * d, d, k, kr, kr1, s + r, jj)
            PAIR_ROWS(P_S4, P_SN);
        }
        if (jj < nb) {                               /* an odd last key: scored against itself */
            int64_t kr = koff + (b0 + jj) * kst;
            float pair[MAXR][BK] __attribute__((aligned(32)));
#define P_O4 scores_rows_pairs(4, q + r * d, d, k, kr, kr, pair + r, 0)
#define P_ON(N) scores_rows_pairs(N, q + r * d, d, k, kr, kr, pair + r, 0)
            PAIR_ROWS(P_O4, P_ON);
            for (int64_t r = 0; r < R; r++) s[r][jj] = pair[r][0];
        }
        softmax_rows(R, b0, nb, lim, s, M, L, O, dv);
        for (int64_t i = 0; i < dv; i += 16) {
            int64_t vrow = voff + b0 * vst + i;
            if (spread) prefetch_cols(v, esize, voff, vst, b0 + ahead, j1, i, i + 16, dv);
#define P_P4 pv_rows_pairs(4, O + r * dv + i, dv, v, vrow, vst, nb, s + r)
#define P_PN(N) pv_rows_pairs(N, O + r * dv + i, dv, v, vrow, vst, nb, s + r)
            PAIR_ROWS(P_P4, P_PN);
        }
#undef P_S4
#undef P_SN
#undef P_O4
#undef P_ON
#undef P_P4
#undef P_PN
    }
}
#undef PAIR_ROWS

/* The 512-bit variants of item(): AVX-512 (fp32 FMAs, any dtype widened in registers) and
 * AVX-512 + AVX512-BF16 (bf16 scores by VDPBF16PS). See decode_512.h. */
#define D5(name) name##_512
#define D5_TARGET "avx512f,avx512bw,avx512vl,avx512dq"
#define D5_BF16DOT 0
#include "decode_512.h"
#undef D5
#undef D5_TARGET
#undef D5_BF16DOT
#define D5(name) name##_bf16
#define D5_TARGET "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16"
#define D5_BF16DOT 1
#include "decode_512.h"
#undef D5
#undef D5_TARGET
#undef D5_BF16DOT

/* The instruction sets the kernels' inner loops are chosen by, decided once per process (the
 * first call of mh_set_isa or of a kernel) and changed only by mh_set_isa (tests and benchmarks
 * run every path a CPU has through one library). The values are fast_native.CPU_PATHS' order. */
enum { ISA_AVX2 = 0, ISA_AVX512 = 1, ISA_AVX512BF16 = 2, ISA_COUNT };
static _Atomic int isa = -1;

/* Whether this CPU (and its OS, which __builtin_cpu_supports also checks for AVX-512 state)
 * runs the variant. */
static int isa_supported(int which) {
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
                 && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    switch (which) {
    case ISA_AVX2: return avx2;
    case ISA_AVX512: return avx512;
    case ISA_AVX512BF16: return avx512 && __builtin_cpu_supports("avx512bf16");
    default: return 0;
    }
}

/* Select variant `which` (-1: the best this CPU runs). Returns the variant now in use, or -1
 * (nothing changed) if this CPU cannot run it. */
int mh_set_isa(int which) {
    if (which < 0) {
        for (which = ISA_COUNT - 1; which > 0 && !isa_supported(which); which--) {}
    }
    if (!isa_supported(which)) return -1;
    atomic_store(&isa, which);
    return which;
}

/* item_bf16_pairs on (1, the default) or off (0: load8's widening), for A/B measurements. */
static int pairs_enabled = 1;
int mh_set_bf16_pairs(int on) { int was = pairs_enabled; pairs_enabled = on; return was; }

int mh_get_isa(void) {
    if (atomic_load(&isa) < 0) mh_set_isa(-1);
    return atomic_load(&isa);
}

/* Merge the splits of one (KV head n, row r) by log-sum-exp into its output row and lse:
 *     m = max_s M_s,  l = sum_s e^(M_s - m) L_s,  out = sum_s e^(M_s - m) O_s / l,  lse = m + ln l
 * A row that saw no key (m = -inf) gets out = 0 and lse = -inf. */
static void merge_row(const float *M, const float *L, const float *O, int64_t nsplit, int64_t R,
                      int64_t dv, float *out, float *lse) {
    float m = -INFINITY;
    for (int64_t sp = 0; sp < nsplit; sp++) m = M[sp * R] > m ? M[sp * R] : m;
    float ms = m == -INFINITY ? 0.0f : m;         /* no finite score anywhere: weights e^-inf = 0 */
    float l = 0.0f;
    for (int64_t i = 0; i < dv; i++) out[i] = 0.0f;
    for (int64_t sp = 0; sp < nsplit; sp++) {
        /* Every split is added, even at weight 0: 0 * NaN = NaN keeps a NaN partial visible. */
        float w = expf(M[sp * R] - ms);           /* 0 for an empty split (M = -inf) */
        l += w * L[sp * R];
        const float *o = O + sp * R * dv;
        for (int64_t i = 0; i < dv; i++) out[i] += w * o[i];
    }
    if (l == 0.0f) {                              /* the row saw no key: 0 and lse = -inf */
        memset(out, 0, sizeof(float) * dv);
        if (lse) *lse = -INFINITY;
        return;
    }
    for (int64_t i = 0; i < dv; i++) out[i] /= l;
    if (lse) *lse = m + logf(l);
}

/* The arguments of one mh_decode call, shared by its work items (mh_pool tasks). */
struct decode_job {
    const float *q; const void *k, *v; int dtype;
    int isa;                    /* the variant of item() (ISA_*) */
    const uint16_t *qh; float sc;   /* ISA_AVX512BF16 and bf16: q unscaled in bf16, and the scale */
    int pairs;                  /* ISA_AVX2, bf16, d and d_v multiples of 16: item_bf16_pairs */
    int64_t H_kv, R, d, dv, Tk, ksb, ksh, kst, vsb, vsh, vst, nsplit, per;
    int prefetch;               /* request rows ahead (item): off for calls of under PREFETCH_MIN_BYTES */
    const int32_t *lim;
    float *M, *L, *O, *out, *lse;
    _Atomic int64_t *done;      /* per KV head: splits finished; the last one merges the head */
};

/* Work item w = (KV head n, key split sp): its partials, then, if it is the head's last split
 * to finish, the merge of that head's rows (no second barrier over all threads). */
static void decode_item(void *ctx, int64_t w) {
    const struct decode_job *J = ctx;
    int64_t R = J->R, dv = J->dv, nsplit = J->nsplit;
    int64_t n = w / nsplit, sp = w % nsplit;
    int64_t b = n / J->H_kv, h = n % J->H_kv;
    int64_t j0 = sp * J->per, j1 = j0 + J->per < J->Tk ? j0 + J->per : J->Tk;
    int64_t row = n * nsplit + sp;
    float *M = J->M, *L = J->L, *O = J->O;
    if (j0 >= j1) {
        for (int64_t r = 0; r < R; r++) { M[row * R + r] = -INFINITY; L[row * R + r] = 0.0f; }
        memset(O + row * R * dv, 0, sizeof(float) * R * dv);
    } else {
        if (J->isa != ISA_AVX2) {
            int64_t qo = n * R * J->d;
            (J->isa == ISA_AVX512BF16 ? item_any_bf16 : item_any_512)(
                J->q + qo, J->qh ? J->qh + qo : NULL, J->sc, J->k, J->v, J->dtype, J->prefetch, R, J->d, dv,
                j0, j1, J->lim, b * J->ksb + h * J->ksh, J->kst, b * J->vsb + h * J->vsh, J->vst,
                M + row * R, L + row * R, O + row * R * dv);
        } else if (J->pairs) {
            item_bf16_pairs(J->q + n * R * J->d, J->k, J->v, J->prefetch, R, J->d, dv, j0, j1, J->lim,
                            b * J->ksb + h * J->ksh, J->kst, b * J->vsb + h * J->vsh, J->vst,
                            M + row * R, L + row * R, O + row * R * dv);
        } else {
#define ITEM(DT) item(J->q + n * R * J->d, J->k, J->v, DT, J->prefetch, R, J->d, dv, j0, j1, J->lim, \
                      b * J->ksb + h * J->ksh, J->kst, b * J->vsb + h * J->vsh, J->vst, \
                      M + row * R, L + row * R, O + row * R * dv)
        if (J->dtype == F32) ITEM(F32); else if (J->dtype == BF16) ITEM(BF16); else ITEM(F16);
#undef ITEM
        }
    }
    if (atomic_fetch_add(&J->done[n], 1) != nsplit - 1) return;
    for (int64_t r = 0; r < R; r++) {
        merge_row(M + n * nsplit * R + r, L + n * nsplit * R + r, O + (n * nsplit * R + r) * dv,
                  nsplit, R, dv, J->out + (n * R + r) * dv, J->lse ? J->lse + n * R + r : NULL);
        if (J->pairs) pair_unorder(J->out + (n * R + r) * dv, dv);
    }
}

/* Decode attention, whole: q is fp32 [NH, R, d], scaled, rows ordered (g, t) with t = r % Tq;
 * row r sees keys j < Tk - Tq + t + 1 if causal, else all Tk. The keys are cut into nsplit
 * ranges; (KV head, range) work items run on nthreads threads of mh_pool, and each head's ranges
 * are merged into out [NH, R, dv] and lse [NH, R] (natural log; lse may be NULL). Returns 0, -1
 * for unsupported sizes, -2 if the scratch for the splits cannot be allocated. */
static int decode_scaled(const float *q, const uint16_t *qh, float sc, int which, int pairs, const void *k, const void *v, int dtype,
                         int64_t NH, int64_t H_kv, int64_t R, int64_t Tq, int causal, int64_t d,
                         int64_t dv, int64_t Tk, int64_t ksb, int64_t ksh, int64_t kst, int64_t vsb, int64_t vsh,
                         int64_t vst, int64_t nsplit, float *out, float *lse, int nthreads) {
    if (d % 8 || dv % 8 || d > MAXD || R > MAXR || R < 1 || Tq < 1 || R % Tq || nsplit < 1) return -1;
    int32_t lim[MAXR];
    for (int64_t r = 0; r < R; r++) {
        int64_t t = r % Tq, n_seen = causal ? Tk - Tq + t + 1 : Tk;
        lim[r] = (int32_t)(n_seen < 0 ? 0 : n_seen > Tk ? Tk : n_seen);
    }
    /* A small call's scratch in the thread's buffers (see SMALL_FLOATS), a large one's from malloc. */
    size_t mbytes = sizeof(float) * NH * nsplit * R * (2 + dv);
    int small = mbytes <= sizeof small_m && NH <= SMALL_HEADS;
    float *M = small ? small_m : malloc(mbytes);
    _Atomic int64_t *done = small ? small_done : calloc((size_t)NH, sizeof *done);
    if (small)
        for (int64_t n = 0; n < NH; n++) atomic_store_explicit(&small_done[n], 0, memory_order_relaxed);
    if (!M || !done) { free(M); free(done); return -2; }      /* only reached with malloc's */
    struct decode_job J = {q, k, v, dtype, which, qh, sc, pairs, H_kv, R, d, dv, Tk, ksb, ksh, kst, vsb, vsh, vst, nsplit,
                           (Tk + nsplit - 1) / nsplit,
                           /* A small call (a decode step over a few hundred cached tokens) reads
                            * rows that are in cache or within a few pages that the hardware
                            * prefetcher follows; there the requests only took load slots from
                            * the FMA loops (SmolLM2's 128-key call 9.8 -> 7.8 us without). A
                            * paged cache's items are short too but come from memory: the test
                            * is on the call's bytes, not an item's length. */
                           Tk * NH * (d + dv) * (dtype == F32 ? 4 : 2) >= PREFETCH_MIN_BYTES,
                           lim, M, M + NH * nsplit * R,
                           M + 2 * NH * nsplit * R, out, lse, done};
    mh_pool_run(decode_item, &J, NH * nsplit, nthreads);
    if (!small) { free(M); free(done); }
    return 0;
}

/* Every argument of mh_decode, one int64 array: the integers, then the data pointers and the
 * scale (a double's bits). ctypes converts one pointer instead of 26 values: the per-call cost
 * matters at short caches, where the kernel takes microseconds (8 ctypes arguments took ~1 us
 * of a 12 us call, the packed array 0.35 us). Strides are in elements; the last dim of q, k and
 * v is contiguous. */
enum { A_DTYPE, A_B, A_HKV, A_G, A_TQ, A_CAUSAL, A_D, A_DV, A_TK,
       A_QSB, A_QSH, A_QST, A_KSB, A_KSH, A_KST, A_VSB, A_VSH, A_VST, A_NSPLIT, A_NTHREADS,
       A_Q, A_K, A_V, A_OUT, A_LSE, A_SCALE, A_COUNT };

/* Decode attention from the caller's tensors: q [B, H, Tq, d] (H = H_kv * G; dtype a[A_DTYPE], as
 * k and v) is widened to fp32 and multiplied by scale (as torch's q.float() * scale would round it)
 * into a scratch [B * H_kv, G * Tq, d] in the kernel's row order (g, t); then decode_scaled.
 * out [B, H, Tq, dv] and lse [B, H, Tq] (or 0: not computed) fp32 contiguous. Returns
 * decode_scaled's code, -3 for a wrong argument count. */
int mh_decode(const int64_t *a, int64_t na) {
    if (na != A_COUNT) return -3;
    const void *q = (const void *)(intptr_t)a[A_Q], *k = (const void *)(intptr_t)a[A_K];
    const void *v = (const void *)(intptr_t)a[A_V];
    float *out = (float *)(intptr_t)a[A_OUT], *lse = (float *)(intptr_t)a[A_LSE];
    double scale;
    memcpy(&scale, &a[A_SCALE], sizeof scale);
    int dtype = (int)a[A_DTYPE];
    int64_t B = a[A_B], H_kv = a[A_HKV], G = a[A_G], Tq = a[A_TQ], d = a[A_D], R = G * Tq, NH = B * H_kv;
    if (d % 8 || d > MAXD || R > MAXR || R < 1) return -1;
    int which = mh_get_isa();
    /* The bf16 variant scores bf16 caches from the unscaled bf16 query rows (exact inputs of
     * VDPBF16PS); the scale multiplies the fp32 dot products. */
    int bf16dot = which == ISA_AVX512BF16 && dtype == BF16;
    size_t qbytes = sizeof(float) * NH * R * d + (bf16dot ? sizeof(uint16_t) * NH * R * d : 0);
    int qsmall = qbytes <= sizeof small_q;
    float *qs = qsmall ? small_q : malloc(qbytes);
    if (!qs) return -2;
    uint16_t *qh = bf16dot ? (uint16_t *)(qs + NH * R * d) : NULL;
    int pairs = which == ISA_AVX2 && dtype == BF16 && d % 16 == 0 && a[A_DV] % 16 == 0 && pairs_enabled;
    const float sc = (float)scale;
    for (int64_t n = 0; n < NH; n++)
        for (int64_t g = 0; g < G; g++)
            for (int64_t t = 0; t < Tq; t++) {
                int64_t src = (n / H_kv) * a[A_QSB] + ((n % H_kv) * G + g) * a[A_QSH] + t * a[A_QST];
                float *dst = qs + (n * R + g * Tq + t) * d;
                if (qh) memcpy(qh + (n * R + g * Tq + t) * d, (const uint16_t *)q + src, sizeof(uint16_t) * d);
                for (int64_t i = 0; i < d; i += 8) {
                    __m256 x = dtype == F32 ? load8(q, src + i, F32) : dtype == BF16 ? load8(q, src + i, BF16)
                                                                                    : load8(q, src + i, F16);
                    _mm256_storeu_ps(dst + i, _mm256_mul_ps(x, _mm256_set1_ps(sc)));
                }
                if (pairs) pair_order(dst, d);
            }
    int rc = decode_scaled(qs, qh, sc, which, pairs, k, v, dtype, NH, H_kv, R, Tq, (int)a[A_CAUSAL], d, a[A_DV], a[A_TK],
                           a[A_KSB], a[A_KSH], a[A_KST], a[A_VSB], a[A_VSH], a[A_VST], a[A_NSPLIT],
                           out, lse, (int)a[A_NTHREADS]);
    if (!qsmall) free(qs);
    return rc;
}
