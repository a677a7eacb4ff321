/* backend_cpu.h — the CPU backend: the op table of backend.h on this process's memory,
 * run by the ops of ops.h on a thread pool of its own, with the vocabulary proxy for the
 * greedy argmax. */
#ifndef SOTTO_BACKEND_CPU_H
#define SOTTO_BACKEND_CPU_H

#include "../backend.h"

/* A CPU backend on N_THREADS threads (1 .. SOTTO__POOL_MAX) with scratch for ops called
 * within LIM. */
sotto_status sotto__cpu_backend_create(int n_threads, const sotto__limits *lim, sotto__backend **out,
                                       sotto__err *err);

/* The vocabulary proxy (tensor.h) of EMB, made on BE's threads; NULL when EMB's shape has
 * none (n_in not a multiple of 128, or above SOTTO__PROXY_MAX_K) or memory is short.
 * Free with sotto__cpu_proxy_free (NULL is fine). */
sotto__proxy *sotto__cpu_proxy_make(sotto__backend *be, const sotto__linear *emb);
void sotto__cpu_proxy_free(void *proxy);

/* From now on argmax over the weights at W (the host matrix P was made of) scores rows
 * through P, which must outlive BE (the same ids as without it). P NULL: every logit. */
void sotto__cpu_backend_use_proxy(sotto__backend *be, const void *w, const sotto__proxy *p);

#endif
