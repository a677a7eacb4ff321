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

/* Parses sysfs's cache size ("32768K", "1M", "512"): bytes, 0 when it is not one. */
size_t sotto__cache_size_bytes(const char *text)
{
    char *end;
    unsigned long long v = text ? strtoull(text, &end, 10) : 0;
    if (!text || end == text) return 0;
    unsigned long long mul = *end == 'K' ? 1ull << 10 : *end == 'M' ? 1ull << 20 : *end == 'G' ? 1ull << 30 : 1;
    if (mul > 1) end++;
    if (*end && *end != '\n') return 0;
    return v > SIZE_MAX / mul ? 0 : (size_t)(v * mul);
}

/* The largest data cache of CPU 0 in sysfs (/sys/devices/system/cpu/cpu0/cache/indexN:
 * the L3 of most x86 CPUs, the L2 or a system cache of many ARM ones), where sysconf's
 * figure can be the host's in a virtual machine (320 MB reported beside sysfs's 32 MB
 * on one); 0 when unknown. */
size_t sotto__last_cache_bytes(void)
{
    size_t best = 0;
    for (int i = 0; i < 16; i++) {
        char path[96], type[32], size[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if (!sotto__first_line(path, type, sizeof type)) break;
        if (strncmp(type, "Instruction", 11) == 0) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        size_t b = sotto__first_line(path, size, sizeof size) ? sotto__cache_size_bytes(size) : 0;
        if (b > best) best = b;
    }
    return best;
}
