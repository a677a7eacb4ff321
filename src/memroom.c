/* memroom.c — how many more bytes this process may allocate (sotto__mem_room), so that
 * a batch too large for the machine is refused, naming what fits, before its buffers are
 * allocated, instead of failing in the allocator or being killed mid-run by the OOM
 * killer. The least of:
 *   - the machine's available memory: /proc/meminfo's MemAvailable, which counts the page
 *     cache the kernel can drop (sysconf's free pages do not: a machine that has read a few
 *     GB of files shows little free memory and much available);
 *   - the room under this process's cgroup memory limits, on its cgroup and every parent
 *     (v2 memory.max - memory.current, v1 memory.limit_in_bytes - memory.usage_in_bytes):
 *     a container's limit, docker --memory, a systemd slice's MemoryMax;
 *   - the room under its address-space and data limits (ulimit -v, ulimit -d), against
 *     /proc/self/statm.
 * Memory the process has allocated but not yet touched (a batch's buffers before its
 * passes reach every page) is in its address space but not in the first two, which count
 * pages: the caller passes it, and it is taken from those two (in full: the touched part
 * of it is then counted twice, which errs toward refusing). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common.h"

/* Limits from 2^62 bytes on are none (v1 writes an unlimited cgroup's as 2^63 - 4096). */
static const uint64_t NO_LIMIT = (uint64_t)1 << 62;

uint64_t sotto__meminfo_available(const char *text)
{
    if (!text) return 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, "MemAvailable:", 13) != 0) continue;
        char *end;
        unsigned long long kb = strtoull(p + 13, &end, 10);
        if (end == p + 13) return 0;
        while (*end == ' ' || *end == '\t') end++;
        if (strncmp(end, "kB", 2) != 0) return 0;
        return kb > UINT64_MAX / 1024 ? UINT64_MAX : (uint64_t)kb * 1024;
    }
    return 0;
}

uint64_t sotto__cgroup_mem_room(const char *limit, const char *usage)
{
    if (!limit || strncmp(limit, "max", 3) == 0) return UINT64_MAX;
    char *end;
    unsigned long long lim = strtoull(limit, &end, 10);
    if (end == limit || lim >= NO_LIMIT) return UINT64_MAX;
    unsigned long long use = usage ? strtoull(usage, &end, 10) : 0;
    if (!usage || end == usage) return UINT64_MAX; /* a limit but no usage: unknown */
    return use >= lim ? 0 : (uint64_t)(lim - use);
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

typedef struct mem_walk {
    const char *limit_file, *usage_file;
    uint64_t room;
} mem_walk;

static void mem_dir(void *arg, const char *dir)
{
    mem_walk *w = arg;
    char path[4300], lim[64], use[64];
    snprintf(path, sizeof path, "%s/%s", dir, w->limit_file);
    if (!sotto__first_line(path, lim, sizeof lim)) return;
    snprintf(path, sizeof path, "%s/%s", dir, w->usage_file);
    w->room = min_u64(w->room, sotto__cgroup_mem_room(lim, sotto__first_line(path, use, sizeof use) ? use : NULL));
}

static uint64_t cgroup_room(void)
{
    char rel[2048];
    uint64_t room = UINT64_MAX;
    if (sotto__cgroup_path(NULL, rel, sizeof rel)) {
        mem_walk w = {"memory.max", "memory.current", UINT64_MAX};
        sotto__cgroup_walk("/sys/fs/cgroup", rel, mem_dir, &w);
        room = min_u64(room, w.room);
    }
    if (sotto__cgroup_path("memory", rel, sizeof rel)) {
        mem_walk w = {"memory.limit_in_bytes", "memory.usage_in_bytes", UINT64_MAX};
        sotto__cgroup_walk("/sys/fs/cgroup/memory", rel, mem_dir, &w);
        room = min_u64(room, w.room);
    }
    return room;
}

/* The room under RESOURCE's soft limit, USED bytes taken; UINT64_MAX when unlimited. */
static uint64_t rlimit_room(int resource, uint64_t used)
{
    struct rlimit r;
    if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
    return (uint64_t)r.rlim_cur > used ? (uint64_t)r.rlim_cur - used : 0;
}

static uint64_t limits_room(void)
{
    unsigned long long size = 0, resident, shared, text, lib, data = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    bool ok = f && fscanf(f, "%llu %llu %llu %llu %llu %llu", &size, &resident, &shared, &text, &lib, &data) == 6;
    if (f) fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    if (!ok || page <= 0) return UINT64_MAX;
    return min_u64(rlimit_room(RLIMIT_AS, (uint64_t)size * (uint64_t)page),
                   rlimit_room(RLIMIT_DATA, (uint64_t)data * (uint64_t)page));
}

uint64_t sotto__mem_room(uint64_t held)
{
    char buf[8192];
    uint64_t avail = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
        avail = sotto__meminfo_available(buf);
    }
    if (avail == 0) { /* no MemAvailable (before Linux 3.14, or not Linux): the free pages */
        long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        avail = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
    }
    uint64_t pages = min_u64(avail, cgroup_room()); /* pages touched; HELD are not, or not all */
    pages = pages == UINT64_MAX ? pages : pages > held ? pages - held : 0;
    return min_u64(pages, limits_room()); /* the address space holds HELD already */
}
