/* cpus.c — how many CPUs this process may run on (sotto_cpu_count): the default thread
 * count of contexts, the VAD and the tool. The online CPUs alone count the whole machine,
 * where a process under taskset, in a container's cpuset or under a CPU quota (docker
 * --cpus, a Kubernetes limit) gets fewer: threads past those wait on each other at every
 * barrier of the pool. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT (the build defines it) */
#endif
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

int sotto__quota_cpus(long long quota, long long period)
{
    if (quota <= 0 || period <= 0) return 0;
    long long n = quota / period + (quota % period != 0);
    return n > 1 << 20 ? 1 << 20 : (int)n;
}

int sotto__cgroup_max_cpus(const char *text)
{
    long long quota, period;
    if (!text || strncmp(text, "max", 3) == 0) return 0;
    if (sscanf(text, "%lld %lld", &quota, &period) != 2) return 0;
    return sotto__quota_cpus(quota, period);
}

/* The quota in DIR, in CPUs (v2: cpu.max; v1: cpu.cfs_quota_us per cpu.cfs_period_us);
 * 0 when none or unreadable. */
static int dir_quota(const char *dir, bool v2)
{
    char path[4300], q[128], p[128];
    snprintf(path, sizeof path, "%s/%s", dir, v2 ? "cpu.max" : "cpu.cfs_quota_us");
    if (!sotto__first_line(path, q, sizeof q)) return 0;
    if (v2) return sotto__cgroup_max_cpus(q);
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    return sotto__first_line(path, p, sizeof p) ? sotto__quota_cpus(atoll(q), atoll(p)) : 0;
}

/* quota_up's walk: the smallest quota so far (0: none). */
typedef struct quota_walk {
    bool v2;
    int best;
} quota_walk;

static void quota_dir(void *arg, const char *dir)
{
    quota_walk *w = arg;
    int q = dir_quota(dir, w->v2);
    if (q > 0 && (w->best == 0 || q < w->best)) w->best = q;
}

/* The smallest quota from this process's cgroup REL up to MOUNT, the hierarchy's root (in
 * a container REL is "/" and MOUNT its own cgroup); 0 when there is none. */
static int quota_up(const char *mount, const char *rel, bool v2)
{
    quota_walk w = {v2, 0};
    sotto__cgroup_walk(mount, rel, quota_dir, &w);
    return w.best;
}

/* The CPU quota of this process's cgroups (v2, and v1's cpu controller), rounded up to
 * CPUs; 0 when none. */
static int cgroup_cpus(void)
{
    char rel[2048];
    int best = 0;
    if (sotto__cgroup_path(NULL, rel, sizeof rel)) best = quota_up("/sys/fs/cgroup", rel, true);
    if (sotto__cgroup_path("cpu", rel, sizeof rel))
        for (int m = 0; m < 2; m++) {
            int q = quota_up(m ? "/sys/fs/cgroup/cpu,cpuacct" : "/sys/fs/cgroup/cpu", rel, false);
            if (q > 0 && (best == 0 || q < best)) best = q;
        }
    return best;
}

int sotto_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef CPU_COUNT
    cpu_set_t set; /* 1024 CPUs; a larger machine fails the call and keeps the online count */
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        long c = CPU_COUNT(&set);
        if (c > 0 && (n < 1 || c < n)) n = c;
    }
#endif
    int q = cgroup_cpus();
    if (q > 0 && (n < 1 || q < n)) n = q;
    return n > 0 ? (int)n : 1;
}
