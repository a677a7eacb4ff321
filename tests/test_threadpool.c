/* test_threadpool.c — sotto__parallel_for: every share runs exactly once per call, for 1 to
 * 8 threads and many calls in a row; and a share is not tied to one thread: with every
 * thread on one core (Linux), the caller runs the workers' shares it gets to first
 * (a descheduled worker no longer holds up the operation: docs/BENCHMARKS.md, contention);
 * and the default thread count, sotto_cpu_count: the affinity mask and a cgroup's CPU
 * quota bound it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "cpu/threadpool.h"
#include "sotto.h"

static int failures;
#define CHECK(c, ...)                                              \
    do {                                                           \
        if (!(c)) {                                                \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);    \
            fprintf(stderr, __VA_ARGS__);                          \
            fputc('\n', stderr);                                   \
            failures++;                                            \
        }                                                          \
    } while (0)

typedef struct job {
    atomic_int runs[SOTTO__POOL_MAX];
    atomic_int busy[SOTTO__POOL_MAX]; /* a share running twice at once */
    atomic_int wrong_n, overlap, on_caller;
    int n;
    pthread_t caller;
    volatile double sink;
} job;

static void task(void *arg, int s, int nt)
{
    job *j = arg;
    if (nt != j->n || s < 0 || s >= nt) {
        atomic_fetch_add(&j->wrong_n, 1);
        return;
    }
    if (atomic_fetch_add(&j->busy[s], 1) != 0) atomic_fetch_add(&j->overlap, 1);
    double x = 0; /* a little work, more for some shares */
    for (int i = 0; i < 200 * (1 + s % 3); i++) x += i * 0.5;
    j->sink = x;
    atomic_fetch_sub(&j->busy[s], 1);
    atomic_fetch_add(&j->runs[s], 1);
    if (s > 0 && pthread_equal(pthread_self(), j->caller)) atomic_fetch_add(&j->on_caller, 1);
}

static void every_share_once(int n, int calls)
{
    static job j;
    memset(&j, 0, sizeof j);
    j.n = n;
    j.caller = pthread_self();
    sotto__pool *pool = sotto__pool_create(n);
    CHECK(pool && sotto__pool_size(pool) == n, "pool of %d", n);
    if (!pool) return;
    for (int c = 0; c < calls; c++) {
        sotto__parallel_for(pool, task, &j);
        for (int s = 0; s < n; s++) /* all done when parallel_for returns */
            CHECK(atomic_load(&j.runs[s]) == c + 1, "n=%d call %d: share %d ran %d times", n, c, s,
                  atomic_load(&j.runs[s]));
        if (failures) break;
    }
    CHECK(atomic_load(&j.wrong_n) == 0, "n=%d: a share with a wrong index or count", n);
    CHECK(atomic_load(&j.overlap) == 0, "n=%d: a share ran twice at once", n);
    sotto__pool_free(pool);
}

#ifdef __linux__
/* Both threads on one core: the caller claims share 1 as soon as it has run share 0,
 * unless the worker was scheduled in that instant, so nearly every call runs both on
 * the caller (a pool that binds share 1 to the worker: never). */
static void caller_takes_shares(void)
{
    cpu_set_t one, old;
    if (sched_getaffinity(0, sizeof old, &old) != 0) return;
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &old)) cpu++;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) return; /* the pool's worker inherits it */
    static job j;
    memset(&j, 0, sizeof j);
    j.n = 2;
    j.caller = pthread_self();
    sotto__pool *pool = sotto__pool_create(2);
    CHECK(pool != NULL, "pool");
    const int calls = 2000;
    for (int c = 0; pool && c < calls; c++) sotto__parallel_for(pool, task, &j);
    /* host work between operations (a decoder step's): the worker's long spin would keep
     * the one core from the caller, so the pool must find itself contended and keep its
     * waits short. It finds that from the process's involuntary context switches, and how
     * often the kernel preempts one core's two threads depends on its scheduler and tick:
     * CI once saw 200 such calls (20 ms) pass without a look that found the rate over its
     * threshold. So the calls go on until the pool counts as contended, for at most 5 s
     * (a pool that never finds itself contended still fails). */
    int hosted = 0;
    struct timespec t_begin;
    clock_gettime(CLOCK_MONOTONIC, &t_begin);
    for (; pool; hosted++) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (hosted >= 200 && (sotto__pool_contended(pool) || t0.tv_sec - t_begin.tv_sec >= 5)) break;
        do clock_gettime(CLOCK_MONOTONIC, &t);
        while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 50000);
        sotto__parallel_for(pool, task, &j);
    }
    CHECK(sotto__pool_contended(pool), "two threads on one core: the pool does not count as contended "
          "after %d calls with host work between them", hosted);
    sotto__pool_free(pool);
    sched_setaffinity(0, sizeof old, &old);
    CHECK(atomic_load(&j.runs[1]) == calls + hosted, "share 1 ran %d times", atomic_load(&j.runs[1]));
    CHECK(atomic_load(&j.on_caller) >= calls / 4, "on one core the caller ran share 1 in %d of %d calls",
          atomic_load(&j.on_caller), calls + hosted);
    printf("one core: the caller ran share 1 in %d of %d calls; contended after %d calls with host work\n",
           atomic_load(&j.on_caller), calls + hosted, hosted);
}
#endif

/* The quota's CPUs, rounded up; none for "max", v1's -1 or text that is not two numbers. */
static void cpu_count(void)
{
    CHECK(sotto__cgroup_max_cpus("max 100000\n") == 0, "cpu.max: max");
    CHECK(sotto__cgroup_max_cpus("100000 100000\n") == 1, "cpu.max: one CPU");
    CHECK(sotto__cgroup_max_cpus("150000 100000") == 2, "cpu.max: 1.5 CPUs round up");
    CHECK(sotto__cgroup_max_cpus("50000 100000") == 1, "cpu.max: half a CPU is one");
    CHECK(sotto__cgroup_max_cpus("800000 100000") == 8, "cpu.max: eight");
    CHECK(sotto__cgroup_max_cpus("") == 0 && sotto__cgroup_max_cpus("100000") == 0 && sotto__cgroup_max_cpus("x y") == 0 &&
          sotto__cgroup_max_cpus(NULL) == 0, "cpu.max: not two numbers");
    CHECK(sotto__quota_cpus(-1, 100000) == 0 && sotto__quota_cpus(100000, 0) == 0, "v1: no quota");
    CHECK(sotto__quota_cpus(250000, 100000) == 3, "v1: 2.5 CPUs round up");
    CHECK(sotto__cache_size_bytes("32768K\n") == 32u << 20 && sotto__cache_size_bytes("1M") == 1u << 20 &&
          sotto__cache_size_bytes("512") == 512, "sysfs cache sizes");
    CHECK(sotto__cache_size_bytes("") == 0 && sotto__cache_size_bytes("K") == 0 && sotto__cache_size_bytes("12Q") == 0 &&
          sotto__cache_size_bytes("4KB") == 0 && sotto__cache_size_bytes(NULL) == 0, "not a cache size");
    printf("last cache: %zu bytes\n", sotto__last_cache_bytes());
    int n = sotto_cpu_count();
    CHECK(n >= 1, "sotto_cpu_count %d", n);
#ifdef __linux__
    cpu_set_t one, old;
    if (sched_getaffinity(0, sizeof old, &old) != 0) return;
    CHECK(n <= CPU_COUNT(&old), "sotto_cpu_count %d, but the affinity mask holds %d", n, CPU_COUNT(&old));
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &old)) cpu++;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) return;
    CHECK(sotto_cpu_count() == 1, "one CPU in the affinity mask: sotto_cpu_count %d", sotto_cpu_count());
    sched_setaffinity(0, sizeof old, &old);
#endif
}

int main(void)
{
    cpu_count();
    for (int n = 1; n <= 8; n++) every_share_once(n, n <= 2 ? 20000 : 3000);
#ifdef __linux__
    caller_takes_shares();
#endif
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("threadpool: ok\n");
    return 0;
}
