/* threadpool.h — a fixed set of worker threads owned by a context. parallel_for runs
 * fn(arg, share, n_threads) once for every share 0..n_threads-1, each on whichever thread
 * claims it first (the caller too), and returns when all are done; no threads are
 * created per operation. */
#ifndef SOTTO_THREADPOOL_H
#define SOTTO_THREADPOOL_H

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
/* Whether POOL's waits keep to a short spin now: other processes (or its own threads on
 * one core) were found to preempt it within the last second (threadpool.c). */
bool sotto__pool_contended(sotto__pool *pool);

#endif
