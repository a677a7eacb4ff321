/* test_load_threads.c — loading a model starts no threads (the vocabulary proxy is made
 * on the first context's pool, not at load), a context starts its pool's workers, and
 * freeing it ends them. Every pthread_create of the process is counted (this file
 * interposes it), and live threads are counted in /proc/self/task.
 *
 * usage: test_load_threads MODEL */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "check.h"
#include "sotto.h"

static int n_created;

/* The executable's definition wins over libc's for the library's calls too. */
int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
    n_created++;
    return real(t, attr, fn, arg);
}

static int n_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_load_threads MODEL\n");
        return 2;
    }
    int before = n_threads();
    CHECK(before == 1, "the test starts with one thread (%d)", before);
    sotto_model *m = NULL;
    CHECK(sotto_model_load(argv[1], &m) == SOTTO_OK, "load: %s", sotto_last_error());
    CHECK(n_created == 0, "loading started %d threads", n_created);
    CHECK(n_threads() == before, "loading left %d threads running", n_threads() - before);
    sotto_context *ctx = NULL;
    sotto_context_params p = sotto_context_params_default();
    p.n_threads = 3;
    CHECK(m && sotto_context_init(m, &p, &ctx) == SOTTO_OK, "context: %s", sotto_last_error());
    CHECK(n_threads() == before + 2 && n_created == 2, "a 3-thread context runs 2 workers beside the caller (%d, %d "
          "created)", n_threads() - before, n_created);
    sotto_context *ctx2 = NULL;
    p.n_threads = 1;
    CHECK(m && sotto_context_init(m, &p, &ctx2) == SOTTO_OK, "second context: %s", sotto_last_error());
    CHECK(n_threads() == before + 2, "a 1-thread context starts none (%d)", n_threads() - before);
    sotto_context_free(ctx);
    sotto_context_free(ctx2);
    CHECK(n_threads() == before, "freeing the contexts ends their workers (%d left)", n_threads() - before);
    sotto_model_free(m);
    return check_summary();
}
