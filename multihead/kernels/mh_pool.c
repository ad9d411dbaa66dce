/* A small worker-thread pool for the C kernels, safe across fork().
 *
 * Why not OpenMP: libgomp does not survive fork(). A process that ran a parallel region and then
 * forked (multiprocessing's default start method on Linux, a web server's workers) hangs in the
 * child at its next parallel region, waiting for threads that only exist in the parent. This
 * pool registers a pthread_atfork child handler that forgets the parent's workers, so the child
 * starts its own on first use.
 *
 * Jobs: mh_pool_run publishes (task, ctx, n) and bumps `generation`; workers claim items with an
 * atomic counter, the caller works too, and it returns once every worker has acknowledged the
 * job. One job runs at a time; a second caller meanwhile (another Python thread: ctypes releases
 * the GIL) runs its items itself, single-threaded, rather than wait. Idle workers spin briefly
 * (decode calls arrive back to back, one per layer) and then sleep on a condition variable.
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "mh_pool.h"

#define MAXT 256          /* threads at most (the caller included) */
#define SPIN 20000        /* pause loops (~0.5 ms) a thread polls before sleeping */

static pthread_mutex_t run_mu = PTHREAD_MUTEX_INITIALIZER;   /* one job at a time */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;       /* guards the sleeps below */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;       /* workers: a new job */
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;       /* caller: all workers done */
static int nworkers;                        /* started worker threads, the caller excluded */
static uint64_t start_gen[MAXT];            /* the generation each worker starts from */
static _Atomic uint64_t generation;         /* bumped once per job */
static _Atomic int64_t next_item;
static _Atomic int running;                 /* workers that have not finished the current job */
static mh_task job_task;
static void *job_ctx;
static int64_t job_n;
static int job_workers;                     /* workers with id < this take part */

static void work(void) {
    for (int64_t i; (i = atomic_fetch_add(&next_item, 1)) < job_n;) job_task(job_ctx, i);
}

static void *worker(void *arg) {
    int id = (int)(intptr_t)arg;
    uint64_t seen = start_gen[id], g;
    for (;;) {
        for (int s = 0; (g = atomic_load(&generation)) == seen && s < SPIN; s++) _mm_pause();
        if (g == seen) {
            pthread_mutex_lock(&mu);
            while ((g = atomic_load(&generation)) == seen) pthread_cond_wait(&wake, &mu);
            pthread_mutex_unlock(&mu);
        }
        seen = g;
        if (id < job_workers) work();
        if (atomic_fetch_sub(&running, 1) == 1) {
            pthread_mutex_lock(&mu);
            pthread_cond_signal(&idle);
            pthread_mutex_unlock(&mu);
        }
    }
    return NULL;
}

void mh_pool_run(mh_task task, void *ctx, int64_t n, int nthreads) {
    if (nthreads > MAXT) nthreads = MAXT;
    if (nthreads <= 1 || n <= 1 || pthread_mutex_trylock(&run_mu) != 0) {
        for (int64_t i = 0; i < n; i++) task(ctx, i);
        return;
    }
    pthread_mutex_lock(&mu);
    while (nworkers < nthreads - 1) {
        pthread_t t;
        start_gen[nworkers] = atomic_load(&generation);
        if (pthread_create(&t, NULL, worker, (void *)(intptr_t)nworkers) != 0) break;
        pthread_detach(t);
        nworkers++;
    }
    job_task = task; job_ctx = ctx; job_n = n;
    job_workers = nthreads - 1;
    atomic_store(&next_item, 0);
    atomic_store(&running, nworkers);
    atomic_fetch_add(&generation, 1);               /* publishes the job (seq_cst) */
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&mu);
    work();
    for (int s = 0; atomic_load(&running) != 0 && s < SPIN; s++) _mm_pause();
    pthread_mutex_lock(&mu);
    while (atomic_load(&running) != 0) pthread_cond_wait(&idle, &mu);
    pthread_mutex_unlock(&mu);
    pthread_mutex_unlock(&run_mu);
}

/* In a forked child only the forking thread exists: forget the parent's workers and reset the
 * locks (a parent thread may have held one at the fork). The next job starts new workers. */
static void after_fork_child(void) {
    static const pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
    static const pthread_cond_t c0 = PTHREAD_COND_INITIALIZER;
    memcpy(&run_mu, &m0, sizeof m0); memcpy(&mu, &m0, sizeof m0);
    memcpy(&wake, &c0, sizeof c0); memcpy(&idle, &c0, sizeof c0);
    nworkers = 0;
    atomic_store(&running, 0);
}

__attribute__((constructor)) static void register_fork_handler(void) {
    pthread_atfork(NULL, NULL, after_fork_child);
}
