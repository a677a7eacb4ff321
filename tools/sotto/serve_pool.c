/* serve_pool.c — the workers of `sotto serve`: one read-only model shared by N contexts,
 * each owned by one thread that takes jobs (an uploaded file and its parameters) from a
 * FIFO queue and runs sotto_transcribe_source on them. Admission is by slots: workers +
 * queue of them, taken when a request's body is in, so what waits is bounded; a job that
 * waits past its deadline, or whose client left, is taken out by serve_pool_sweep. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

typedef struct worker {
    serve_pool *pool;
    sotto_context *ctx;
    pthread_t thread;
    bool started;
} worker;

struct serve_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    serve_job *head, *tail;        /* submitted, not yet taken by a worker */
    int slots, busy;               /* workers + queue; taken now */
    bool stopping;
    int n_workers;
    worker *workers;
};

static void run_job(sotto_context *ctx, serve_job *job)
{
    job->outcome = SERVE_JOB_RAN;
    job->result = NULL;
    job->error[0] = 0;
    job->status = sotto_transcribe_source(ctx, &job->source, &job->tp, &job->result);
    if (job->status != SOTTO_OK) snprintf(job->error, sizeof job->error, "%s", sotto_context_error(ctx));
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    serve_pool *p = w->pool;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stopping) pthread_cond_wait(&p->cv, &p->mu);
        serve_job *job = p->head;
        if (!job) break; /* stopping, and nothing left to run */
        p->head = job->next;
        if (!p->head) p->tail = NULL;
        pthread_mutex_unlock(&p->mu);
        run_job(w->ctx, job);
        pthread_mutex_lock(&p->mu);
        p->busy--;
        pthread_mutex_unlock(&p->mu);
        job->done(job); /* last: DONE may hand JOB back to its owner, who frees it */
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

serve_pool *serve_pool_init(const sotto_model *model, const sotto_context_params *cp, int workers, int queue)
{
    serve_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->slots = workers + queue;
    p->workers = calloc((size_t)workers, sizeof *p->workers);
    if (!p->workers) {
        serve_pool_free(p);
        return NULL;
    }
    for (int i = 0; i < workers; i++) {
        worker *w = &p->workers[i];
        w->pool = p;
        if (sotto_context_init(model, cp, &w->ctx) != SOTTO_OK) {
            fprintf(stderr, "sotto serve: worker %d: %s\n", i, sotto_last_error());
            serve_pool_free(p);
            return NULL;
        }
        p->n_workers = i + 1;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            fprintf(stderr, "sotto serve: cannot start worker thread %d\n", i);
            serve_pool_free(p);
            return NULL;
        }
        w->started = true;
    }
    if (workers > 0)
        fprintf(stderr, "sotto serve: %d worker%s on %s, %d more request%s may wait\n", workers, workers == 1 ? "" : "s",
                sotto_context_device(p->workers[0].ctx), queue, queue == 1 ? "" : "s");
    return p;
}

bool serve_pool_reserve(serve_pool *p)
{
    pthread_mutex_lock(&p->mu);
    bool ok = !p->stopping && p->busy < p->slots;
    if (ok) p->busy++;
    pthread_mutex_unlock(&p->mu);
    return ok;
}

void serve_pool_cancel(serve_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->busy--;
    pthread_mutex_unlock(&p->mu);
}

void serve_pool_submit(serve_pool *p, serve_job *job)
{
    job->next = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->tail) p->tail->next = job;
    else p->head = job;
    p->tail = job;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

int serve_pool_busy(serve_pool *p)
{
    pthread_mutex_lock(&p->mu);
    int n = p->busy;
    pthread_mutex_unlock(&p->mu);
    return n;
}

void serve_pool_sweep(serve_pool *p, double now_ms, bool (*drop)(serve_job *job))
{
    serve_job *out = NULL;
    pthread_mutex_lock(&p->mu);
    for (serve_job **at = &p->head, *prev = NULL; *at;) {
        serve_job *j = *at;
        bool expired = j->deadline_ms > 0 && now_ms > j->deadline_ms;
        bool (*gone)(serve_job *) = j->drop ? j->drop : drop;
        if (expired || (gone && gone(j))) {
            j->outcome = expired ? SERVE_JOB_EXPIRED : SERVE_JOB_DROPPED;
            *at = j->next;
            if (p->tail == j) p->tail = prev;
            p->busy--;
            j->next = out;
            out = j;
        } else {
            prev = j;
            at = &j->next;
        }
    }
    pthread_mutex_unlock(&p->mu);
    while (out) { /* DONE may free the job: its link is read first */
        serve_job *next = out->next;
        out->done(out);
        out = next;
    }
}

void serve_pool_free(serve_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_workers; i++) {
        if (p->workers[i].started) pthread_join(p->workers[i].thread, NULL);
        sotto_context_free(p->workers[i].ctx);
    }
    free(p->workers);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
