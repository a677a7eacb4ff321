/* threadpool.c — workers sleep on a condition variable until the generation counter
 * moves, run their share, and count down; the caller runs share 0 and waits. */
#define _POSIX_C_SOURCE 200809L
#include "threadpool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct sotto__pool {
    int n_threads;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    unsigned long generation;
    int pending;
    bool quit;
    sotto__task fn;
    void *arg;
};

typedef struct worker_arg {
    sotto__pool *pool;
    int tid;
} worker_arg;

static void *worker(void *p)
{
    worker_arg wa = *(worker_arg *)p;
    free(p);
    sotto__pool *pool = wa.pool;
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&pool->mu);
        while (!pool->quit && pool->generation == seen) pthread_cond_wait(&pool->wake, &pool->mu);
        if (pool->quit) {
            pthread_mutex_unlock(&pool->mu);
            return NULL;
        }
        seen = pool->generation;
        sotto__task fn = pool->fn;
        void *arg = pool->arg;
        pthread_mutex_unlock(&pool->mu);
        fn(arg, wa.tid, pool->n_threads);
        pthread_mutex_lock(&pool->mu);
        if (--pool->pending == 0) pthread_cond_signal(&pool->done);
        pthread_mutex_unlock(&pool->mu);
    }
}

sotto__pool *sotto__pool_create(int n_threads)
{
    sotto__pool *pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    pool->n_threads = n_threads < 1 ? 1 : n_threads;
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
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
    pool->quit = true;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mu);
    for (int t = 1; t < pool->n_threads; t++)
        if (pool->threads) pthread_join(pool->threads[t], NULL);
    pthread_mutex_destroy(&pool->mu);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->done);
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
    pthread_mutex_lock(&pool->mu);
    pool->fn = fn;
    pool->arg = arg;
    pool->pending = pool->n_threads - 1;
    pool->generation++;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mu);
    fn(arg, 0, pool->n_threads);
    pthread_mutex_lock(&pool->mu);
    while (pool->pending > 0) pthread_cond_wait(&pool->done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
}
