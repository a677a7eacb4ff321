/* threadpool.h — a fixed set of worker threads owned by a context. parallel_for runs
 * fn(arg, share, n_threads) once for every share 0..n_threads-1, each on whichever thread
 * claims it first (the caller too), and returns when all are done; no threads are
 * created per operation. */
#ifndef SOTTO_THREADPOOL_H
#define SOTTO_THREADPOOL_H

#include <stdatomic.h>
#include <stdbool.h>

enum { SOTTO__POOL_MAX = 256 }; /* the most threads a pool runs */

typedef struct sotto__pool sotto__pool;
typedef void (*sotto__task)(void *arg, int tid, int n_threads);

/* Starts N_THREADS - 1 workers (N_THREADS at most SOTTO__POOL_MAX; more are clamped);
 * NULL on failure. N_THREADS <= 1 gives a pool that runs everything on the caller. */
sotto__pool *sotto__pool_create(int n_threads);
void sotto__pool_free(sotto__pool *pool);
int sotto__pool_size(const sotto__pool *pool);
void sotto__parallel_for(sotto__pool *pool, sotto__task fn, void *arg);
/* The next of N work items an operation's shares take in turn from its counter NEXT
 * (set to 0 before parallel_for), or -1 when all are taken: a share runs items until none
 * is left, so a thread with a core to itself (or a faster core) runs more of them than one
 * that other processes preempt, and the operation ends when the work does, not when its
 * slowest thread's fixed part does. The items' results must not depend on which share
 * runs them. */
static inline int sotto__next_item(atomic_int *next, int n)
{
    int i = atomic_fetch_add_explicit(next, 1, memory_order_relaxed);
    return i < n ? i : -1;
}

/* Whether POOL's waits keep to a short spin now: other processes (or its own threads on
 * one core) were found to preempt it within the last second (threadpool.c). */
bool sotto__pool_contended(sotto__pool *pool);

#endif
