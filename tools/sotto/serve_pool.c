/* serve_pool.c — the workers of `sotto serve`: one read-only model shared by N contexts,
 * each owned by one thread that takes jobs (an uploaded file and its parameters) from a
 * FIFO queue and runs sotto_transcribe_source on them; with batching (--batch-size) a
 * worker takes up to BATCH waiting jobs at once, waiting up to --batch-window-ms for more
 * to come, and runs them as one sotto_transcribe_batch, their chunks decoded together.
 * Admission is by slots: workers + queue of them, taken when a request's body is in, so
 * what waits is bounded; a job that waits past its deadline, or whose client left, is
 * taken out by serve_pool_sweep. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
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
    int batch;                     /* jobs one worker runs together (1: one at a time) */
    double window_ms;              /* how long a worker with fewer waits for more */
    long long runs, batched_jobs;  /* batched runs made, and the jobs they held */
};

static void run_job(sotto_context *ctx, serve_job *job)
{
    job->outcome = SERVE_JOB_RAN;
    job->result = NULL;
    job->error[0] = 0;
    job->status = sotto_transcribe_source(ctx, &job->source, &job->tp, &job->result);
    if (job->status != SOTTO_OK) snprintf(job->error, sizeof job->error, "%s", sotto_context_error(ctx));
}

/* JOBS [N] as one batched run: their chunks decoded together. */
static void run_batch(sotto_context *ctx, serve_job **jobs, int n)
{
    sotto_batch_item items[SOTTO_MAX_BATCH];
    for (int i = 0; i < n; i++) items[i] = (sotto_batch_item){.source = &jobs[i]->source, .params = &jobs[i]->tp};
    sotto_transcribe_batch(ctx, items, n);
    for (int i = 0; i < n; i++) {
        serve_job *job = jobs[i];
        job->outcome = SERVE_JOB_RAN;
        job->status = items[i].status, job->result = items[i].result;
        snprintf(job->error, sizeof job->error, "%s", items[i].error);
    }
}

/* The next jobs for one worker (under P->mu, P->head not NULL): the head, and with
 * batching up to P->batch - 1 more, waiting until the window after the first is taken
 * for the queue to fill. Their count; 0 when the queue emptied meanwhile (a sweep). */
static int take_jobs(serve_pool *p, serve_job **jobs)
{
    int n = 0;
    double until = cli_now_ms() + p->window_ms;
    for (;;) {
        while (p->head && n < p->batch) {
            jobs[n++] = p->head;
            p->head = p->head->next;
            if (!p->head) p->tail = NULL;
        }
        double left = until - cli_now_ms();
        if (n >= p->batch || p->stopping || left <= 0) return n;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long long ns = ts.tv_nsec + (long long)(left * 1e6);
        ts.tv_sec += (time_t)(ns / 1000000000), ts.tv_nsec = (long)(ns % 1000000000);
        if (pthread_cond_timedwait(&p->cv, &p->mu, &ts) == ETIMEDOUT && !p->head) return n;
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    serve_pool *p = w->pool;
    serve_job *jobs[SOTTO_MAX_BATCH];
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stopping) pthread_cond_wait(&p->cv, &p->mu);
        if (!p->head) break; /* stopping, and nothing left to run */
        int n = take_jobs(p, jobs);
        if (n > 1) p->runs++, p->batched_jobs += n;
        pthread_mutex_unlock(&p->mu);
        for (int i = 0; i < n; i++)
            if (jobs[i]->started) jobs[i]->started(jobs[i]);
        if (n == 1) run_job(w->ctx, jobs[0]);
        else if (n > 1) run_batch(w->ctx, jobs, n);
        pthread_mutex_lock(&p->mu);
        p->busy -= n;
        pthread_mutex_unlock(&p->mu);
        for (int i = 0; i < n; i++) jobs[i]->done(jobs[i]); /* last: DONE may hand the job back to its owner */
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

serve_pool *serve_pool_init(const sotto_model *model, const sotto_context_params *cp, int workers, int queue,
                            int batch, int window_ms)
{
    serve_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->batch = batch < 1 ? 1 : batch > SOTTO_MAX_BATCH ? SOTTO_MAX_BATCH : batch;
    p->window_ms = batch > 1 ? window_ms : 0;
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
    if (workers > 0 && p->batch > 1)
        fprintf(stderr, "sotto serve: batching: up to %d requests' chunks decoded together, %d chunks a batch, a "
                "window of %d ms\n", p->batch, cp->max_batch, window_ms);
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
    if (p->batch > 1)
        fprintf(stderr, "sotto serve: %lld batched run%s held %lld requests\n", p->runs, p->runs == 1 ? "" : "s",
                p->batched_jobs);
    free(p->workers);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
