/* panels.c — the store of f16 panels: an open-addressed table from a weight's address to
 * its panels, behind a lock (backends on several threads share it); a matrix is copied
 * once, its panels split over the caller's threads. */
#include "panels.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "threadpool.h"

typedef struct entry {
    const uint16_t *w;         /* NULL: a free slot */
    uint16_t *p;               /* NULL: W is read in place (memory was short) */
} entry;

struct sotto__panel_store {
    pthread_mutex_t mu;
    entry *tab;
    size_t cap, n;             /* cap a power of two, n < cap / 2 */
};

void *sotto__panel_store_make(void *arg)
{
    (void)arg;
    sotto__panel_store *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->cap = 64;
    s->tab = calloc(s->cap, sizeof *s->tab);
    if (!s->tab || pthread_mutex_init(&s->mu, NULL)) {
        free(s->tab);
        free(s);
        return NULL;
    }
    return s;
}

void sotto__panel_store_free(void *store)
{
    sotto__panel_store *s = store;
    if (!s) return;
    for (size_t i = 0; i < s->cap; i++) free(s->tab[i].p);
    free(s->tab);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static size_t slot_of(const entry *tab, size_t cap, const uint16_t *w)
{
    size_t h = ((uintptr_t)w >> 6) * 0x9E3779B97F4A7C15u;
    for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1))
        if (!tab[i].w || tab[i].w == w) return i;
}

static int grow(sotto__panel_store *s)
{
    size_t cap = s->cap * 2;
    entry *tab = calloc(cap, sizeof *tab);
    if (!tab) return -1;
    for (size_t i = 0; i < s->cap; i++)
        if (s->tab[i].w) tab[slot_of(tab, cap, s->tab[i].w)] = s->tab[i];
    free(s->tab);
    s->tab = tab;
    s->cap = cap;
    return 0;
}

typedef struct make_job {
    const uint16_t *w;
    uint16_t *p;
    int N, K;
} make_job;

static void make_task(void *arg, int tid, int nt)
{
    const make_job *j = arg;
    int panels = (j->N + SOTTO__PANEL_W - 1) / SOTTO__PANEL_W, per = (panels + nt - 1) / nt;
    int b = tid * per, e = b + per < panels ? b + per : panels;
    if (b >= e) return;
    int n0 = b * SOTTO__PANEL_W, n1 = e * SOTTO__PANEL_W < j->N ? e * SOTTO__PANEL_W : j->N;
    sotto__f16_panels(j->w + (size_t)n0 * j->K, (size_t)j->K, n1 - n0, j->K, j->p + (size_t)n0 * j->K);
}

/* Whether the machine has twice BYTES free (as the context's batch check measures it):
 * the copy is a speed-up, not worth pushing the process toward the OOM killer. */
static bool spare(size_t bytes)
{
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages <= 0 || page <= 0 || (double)pages * (double)page >= 2.0 * (double)bytes;
}

const uint16_t *sotto__panels_of(sotto__panel_store *s, const sotto__exec *ex, const uint16_t *W, int N, int K)
{
    pthread_mutex_lock(&s->mu);
    size_t i = slot_of(s->tab, s->cap, W);
    uint16_t *p = s->tab[i].p;
    if (!s->tab[i].w && ((s->n + 1) * 2 <= s->cap || grow(s) == 0)) {
        i = slot_of(s->tab, s->cap, W);
        size_t bytes = (sotto__f16_panels_bytes(N, K) + 63) & ~(size_t)63; /* the kernels load whole lines */
        p = spare(bytes) ? aligned_alloc(64, bytes) : NULL;
        if (p) {
            make_job j = {W, p, N, K};
            sotto__parallel_for(ex->pool, make_task, &j);
        }
        s->tab[i] = (entry){W, p}; /* once: a matrix refused stays in place */
        s->n++;
    }
    pthread_mutex_unlock(&s->mu);
    return p;
}
