/* multihead's own worker-thread pool for the C kernels (replaces OpenMP; see mh_pool.c). */
#ifndef MULTIHEAD_POOL_H
#define MULTIHEAD_POOL_H
#include <stdint.h>

typedef void (*mh_task)(void *ctx, int64_t item);

/* Run task(ctx, i) for every i in [0, n) on up to nthreads threads, the caller being one of
 * them; items are handed out one at a time (dynamic schedule). Returns when all are done. */
void mh_pool_run(mh_task task, void *ctx, int64_t n, int nthreads);

#endif
