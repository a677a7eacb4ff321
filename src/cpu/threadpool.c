/* threadpool.c — workers wait for the generation counter to move, run their share, and
 * count down. A decoder step issues dozens of short operations, so both sides spin
 * briefly (with a pause hint) before a worker falls back to sleeping on a condition
 * variable; the caller runs share 0 and spins until the others are done. */
#define _POSIX_C_SOURCE 200809L
#include "threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CPU_RELAX() ((void)0)
#endif

/* Pause instructions before a worker sleeps (and the caller yields): a few microseconds.
 * 4000 cost nothing on an idle machine but, with the cores shared by other busy
 * processes, a worker spun away the time slices the thread that feeds it needed: tiny.en
 * q8_0 defaults on the 5-minute reading, 2 threads beside 2 busy loops on 2 cores, took
 * 16.6-22.2 s with 4000, 13.2-15.2 with 500, 9.7-10.9 with 50; idle, 4000 and 500 gave the
 * same (5.4-6.6 s, 4 runs each) and 50 woke the sleeping worker too often (6.0-7.0 s). */
enum { SPIN_ROUNDS = 500 };

struct sotto__pool {
    int n_threads;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    atomic_ulong generation;
    atomic_int pending;
    atomic_int sleepers;
    atomic_bool quit;
    sotto__task fn;
    void *arg;
};

typedef struct worker_arg {
    sotto__pool *pool;
    int tid;
} worker_arg;

/* Waits until the generation differs from SEEN (or quit); returns the new generation. */
static unsigned long wait_for_work(sotto__pool *pool, unsigned long seen)
{
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        unsigned long g = atomic_load_explicit(&pool->generation, memory_order_acquire);
        if (g != seen || atomic_load(&pool->quit)) return g;
        CPU_RELAX();
    }
    pthread_mutex_lock(&pool->mu);
    atomic_fetch_add(&pool->sleepers, 1);
    unsigned long g;
    while ((g = atomic_load(&pool->generation)) == seen && !atomic_load(&pool->quit))
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
    unsigned long seen = 0;
    for (;;) {
        seen = wait_for_work(pool, seen);
        if (atomic_load(&pool->quit)) return NULL;
        pool->fn(pool->arg, wa.tid, pool->n_threads);
        atomic_fetch_sub_explicit(&pool->pending, 1, memory_order_release);
    }
}

sotto__pool *sotto__pool_create(int n_threads)
{
    sotto__pool *pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    pool->n_threads = n_threads < 1 ? 1 : n_threads > SOTTO__POOL_MAX ? SOTTO__POOL_MAX : n_threads;
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->wake, NULL);
    atomic_init(&pool->generation, 0);
    atomic_init(&pool->pending, 0);
    atomic_init(&pool->sleepers, 0);
    atomic_init(&pool->quit, false);
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

void sotto__parallel_for(sotto__pool *pool, sotto__task fn, void *arg)
{
    if (!pool || pool->n_threads == 1) {
        fn(arg, 0, 1);
        return;
    }
    pool->fn = fn;
    pool->arg = arg;
    atomic_store(&pool->pending, pool->n_threads - 1);
    atomic_fetch_add(&pool->generation, 1); /* seq_cst: ordered before the sleepers check */
    if (atomic_load(&pool->sleepers) > 0) {
        pthread_mutex_lock(&pool->mu);
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->mu);
    }
    fn(arg, 0, pool->n_threads);
    /* a worker may have been descheduled (an oversubscribed machine): yield the core
     * after a short spin rather than burning its time slice */
    for (int i = 0; atomic_load_explicit(&pool->pending, memory_order_acquire) > 0; i++) {
        if (i < SPIN_ROUNDS) CPU_RELAX();
        else sched_yield();
    }
}
