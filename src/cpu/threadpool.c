/* threadpool.c — parallel_for splits an operation into one share per thread; every
 * thread (the caller included) claims shares from a counter tagged with the operation's
 * generation until none is left, so a share whose worker is descheduled (other processes
 * on the cores) is run by whichever thread gets to it first. Waiting threads spin (a
 * decoder step issues dozens of short operations; longer while no other process
 * preempts them), then sleep. */
#define _POSIX_C_SOURCE 200809L
#include "threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CPU_RELAX() ((void)0)
#endif

/* Pause instructions before a worker sleeps (and the caller yields): a few microseconds.
 * 4000 pauses (on the Intel Xeon of 2026-12-05 a pause takes 10.6 ns) cost nothing on an
 * idle machine but, with the cores shared by other busy
 * processes, a worker spun away the time slices the thread that feeds it needed: tiny.en
 * q8_0 defaults on the 5-minute reading, 2 threads beside 2 busy loops on 2 cores, took
 * 16.6-22.2 s with 4000, 13.2-15.2 with 500, 9.7-10.9 with 50; idle, 4000 and 500 gave the
 * same (5.4-6.6 s, 4 runs each) and 50 woke the sleeping worker too often (6.0-7.0 s). */
enum { SPIN_ROUNDS = 500 };

/* On a machine no other process contends for, a worker then spins on until LONG_SPIN_NS
 * have passed since it began waiting: a decoder step's host work between two operations
 * often outlasts 500 pauses (5 us on a core whose pause takes 10 ns), and a worker woken
 * from its sleep for the next operation came late to it (base f16 with openai's
 * defaults on 60 s, avx2 set, 2 threads: 7.0-7.3 s with 500 pauses, 6.4-7.3 s so; on
 * the 5-minute reading 26.2-27.3 and 24.8-25.8 s, native 22.4-23.1 and 20.6-21.7 s). The
 * pool counts as contended, and its waits keep to the 500 pauses, for CALM_NS after a
 * waiting thread finds the process preempted: its involuntary context switches over
 * PREEMPTIONS_PER_S (a look at most each CHECK_NS; idle here: about 30 a second, beside
 * two busy loops 4700), or itself descheduled mid-spin (two looks at the clock over
 * PREEMPTED_NS apart). */
#define LONG_SPIN_NS 100000
#define PREEMPTED_NS 1000000
#define CHECK_NS 10000000
#define PREEMPTIONS_PER_S 300
#define CALM_NS 1000000000

struct sotto__pool {
    int n_threads;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    /* the operation: generation << 32 | the next unclaimed share (0..n_threads) */
    _Atomic uint64_t claim;
    atomic_int done; /* shares of the current generation finished */
    atomic_int sleepers;
    atomic_bool quit;
    _Atomic int64_t contended_until; /* CLOCK_MONOTONIC ns: no long spins before it */
    _Atomic int64_t checked_at;      /* the last look at the involuntary switches, */
    _Atomic long preemptions;        /* and their count then */
    sotto__task fn;
    void *arg;
};

typedef struct worker_arg {
    sotto__pool *pool;
    int tid;
} worker_arg;

static uint32_t generation_of(uint64_t c) { return (uint32_t)(c >> 32); }

/* Claims and runs shares of generation GEN until none is left. A share is claimed by
 * moving the counter on while it still carries GEN, so a thread that wakes late for a
 * finished operation claims nothing of the next one. fn and arg are read after a claim:
 * the caller cannot start another operation before the claimed share is done. */
static void run_shares(sotto__pool *pool, uint32_t gen)
{
    const int n = pool->n_threads;
    uint64_t c = atomic_load_explicit(&pool->claim, memory_order_acquire);
    for (;;) {
        if (generation_of(c) != gen || (int)(uint32_t)c >= n) return;
        if (!atomic_compare_exchange_weak_explicit(&pool->claim, &c, c + 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue;
        pool->fn(pool->arg, (int)(uint32_t)c, n);
        atomic_fetch_add_explicit(&pool->done, 1, memory_order_release);
        c = atomic_load_explicit(&pool->claim, memory_order_acquire);
    }
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Whether the pool counts as contended at T (see PREEMPTIONS_PER_S). */
static bool contended(sotto__pool *pool, int64_t t)
{
    if (t < atomic_load_explicit(&pool->contended_until, memory_order_relaxed)) return true;
    int64_t at = atomic_load_explicit(&pool->checked_at, memory_order_relaxed);
    struct rusage ru;
    if (t - at < CHECK_NS || !atomic_compare_exchange_strong(&pool->checked_at, &at, t) ||
        getrusage(RUSAGE_SELF, &ru) != 0)
        return false;
    long before = atomic_exchange_explicit(&pool->preemptions, ru.ru_nivcsw, memory_order_relaxed);
    if ((double)(ru.ru_nivcsw - before) * 1e9 <= (double)PREEMPTIONS_PER_S * (double)(t - at)) return false;
    atomic_store_explicit(&pool->contended_until, t + CALM_NS, memory_order_relaxed);
    return true;
}

/* After the short spin: spins on until LONG_SPIN_NS from START unless the pool is
 * contended, or this thread is found descheduled (then it is). Returns the generation
 * when it moved on from SEEN (or quit), else SEEN. */
static uint32_t long_spin(sotto__pool *pool, uint32_t seen, int64_t start)
{
    int64_t last = start;
    if (contended(pool, start)) return seen;
    for (;;) {
        for (int i = 0; i < 64; i++) {
            uint32_t g = generation_of(atomic_load_explicit(&pool->claim, memory_order_acquire));
            if (g != seen || atomic_load(&pool->quit)) return g;
            CPU_RELAX();
        }
        int64_t t = now_ns();
        if (t - last > PREEMPTED_NS) {
            atomic_store_explicit(&pool->contended_until, t + CALM_NS, memory_order_relaxed);
            return seen;
        }
        if (t - start > LONG_SPIN_NS) return seen;
        last = t;
    }
}

/* Waits until the generation differs from SEEN (or quit); returns the new generation. */
static uint32_t wait_for_work(sotto__pool *pool, uint32_t seen)
{
    int64_t start = now_ns();
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        uint32_t g = generation_of(atomic_load_explicit(&pool->claim, memory_order_acquire));
        if (g != seen || atomic_load(&pool->quit)) return g;
        CPU_RELAX();
    }
    uint32_t moved = long_spin(pool, seen, start);
    if (moved != seen || atomic_load(&pool->quit)) return moved;
    pthread_mutex_lock(&pool->mu);
    atomic_fetch_add(&pool->sleepers, 1);
    uint32_t g;
    while ((g = generation_of(atomic_load(&pool->claim))) == seen && !atomic_load(&pool->quit))
        pthread_cond_wait(&pool->wake, &pool->mu);
    atomic_fetch_sub(&pool->sleepers, 1);
    pthread_mutex_unlock(&pool->mu);
    return g;
}

static void *worker(void *p)
{
    worker_arg wa = *(worker_arg *)p;
    free(p);
    sotto__pool *pool = wa.pool;
    uint32_t seen = 0;
    for (;;) {
        seen = wait_for_work(pool, seen);
        if (atomic_load(&pool->quit)) return NULL;
        run_shares(pool, seen);
    }
}

sotto__pool *sotto__pool_create(int n_threads)
{
    sotto__pool *pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    pool->n_threads = n_threads < 1 ? 1 : n_threads > SOTTO__POOL_MAX ? SOTTO__POOL_MAX : n_threads;
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->wake, NULL);
    /* generation 0, nothing to claim */
    atomic_init(&pool->claim, (uint64_t)pool->n_threads);
    atomic_init(&pool->done, 0);
    atomic_init(&pool->sleepers, 0);
    atomic_init(&pool->quit, false);
    atomic_init(&pool->contended_until, 0);
    atomic_init(&pool->checked_at, 0);
    atomic_init(&pool->preemptions, 0);
    pool->threads = calloc((size_t)pool->n_threads, sizeof *pool->threads);
    if (!pool->threads) {
        sotto__pool_free(pool);
        return NULL;
    }
    for (int t = 1; t < pool->n_threads; t++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (!wa || pthread_create(&pool->threads[t], NULL, worker, (wa->pool = pool, wa->tid = t, wa)) != 0) {
            free(wa);
            pool->n_threads = t; /* only the started ones are joined */
            sotto__pool_free(pool);
            return NULL;
        }
    }
    return pool;
}

void sotto__pool_free(sotto__pool *pool)
{
    if (!pool) return;
    pthread_mutex_lock(&pool->mu);
    atomic_store(&pool->quit, true);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mu);
    for (int t = 1; t < pool->n_threads; t++)
        if (pool->threads) pthread_join(pool->threads[t], NULL);
    pthread_mutex_destroy(&pool->mu);
    pthread_cond_destroy(&pool->wake);
    free(pool->threads);
    free(pool);
}

int sotto__pool_size(const sotto__pool *pool) { return pool ? pool->n_threads : 1; }

bool sotto__pool_contended(sotto__pool *pool) { return pool && contended(pool, now_ns()); }

/* Each share s of 0..n_threads-1 runs exactly once, as fn(arg, s, n_threads), on some
 * thread, never two shares at once on one thread: a share's results (and its scratch,
 * indexed by s) do not depend on which thread ran it. */
void sotto__parallel_for(sotto__pool *pool, sotto__task fn, void *arg)
{
    if (!pool || pool->n_threads == 1) {
        fn(arg, 0, 1);
        return;
    }
    pool->fn = fn;
    pool->arg = arg;
    atomic_store_explicit(&pool->done, 0, memory_order_relaxed);
    uint32_t gen = generation_of(atomic_load(&pool->claim)) + 1;
    atomic_store(&pool->claim, (uint64_t)gen << 32); /* seq_cst: ordered before the sleepers check */
    if (atomic_load(&pool->sleepers) > 0) {
        pthread_mutex_lock(&pool->mu);
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->mu);
    }
    run_shares(pool, gen);
    /* the shares still running are on workers; one may have been descheduled (an
     * oversubscribed machine): yield the core after a short spin rather than burning
     * its time slice */
    for (int i = 0; atomic_load_explicit(&pool->done, memory_order_acquire) < pool->n_threads; i++) {
        if (i < SPIN_ROUNDS) CPU_RELAX();
        else sched_yield();
    }
}
