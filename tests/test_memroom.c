/* test_memroom.c — sotto__mem_room, the bytes this process may still allocate (what a
 * context checks a batch's buffers against): its parsers of /proc/meminfo and of a
 * cgroup's memory limit and usage, and, live, that an address-space limit (ulimit -v)
 * bounds it and that it is no more than what the process can then allocate and touch. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check.h"
#include "common.h"

static void parsers(void)
{
    const char *meminfo = "MemTotal:       24730868 kB\nMemFree:        21086500 kB\n"
                          "MemAvailable:   24270808 kB\nBuffers:          123456 kB\n";
    CHECK(sotto__meminfo_available(meminfo) == 24270808ull * 1024, "MemAvailable in bytes");
    CHECK(sotto__meminfo_available("MemAvailable: 7 kB") == 7168, "the first line");
    CHECK(sotto__meminfo_available("MemTotal: 1 kB\nMemFree: 2 kB\n") == 0, "no MemAvailable: 0");
    CHECK(sotto__meminfo_available("MemAvailable:   x kB\n") == 0 && sotto__meminfo_available("MemAvailable: 5 MB\n") == 0 &&
          sotto__meminfo_available("") == 0 && sotto__meminfo_available(NULL) == 0,
          "not a count of kB: 0");
    CHECK(sotto__meminfo_available("XMemAvailable: 5 kB\n") == 0, "only a line's start");

    CHECK(sotto__cgroup_mem_room("max\n", "123\n") == UINT64_MAX, "v2 max: no limit");
    CHECK(sotto__cgroup_mem_room("1000000\n", "250000\n") == 750000, "v2: limit - usage");
    CHECK(sotto__cgroup_mem_room("1000\n", "1000\n") == 0 && sotto__cgroup_mem_room("1000\n", "5000\n") == 0,
          "at or past the limit: none");
    CHECK(sotto__cgroup_mem_room("9223372036854771712\n", "59047936\n") == UINT64_MAX, "v1's unlimited");
    CHECK(sotto__cgroup_mem_room("", "1") == UINT64_MAX && sotto__cgroup_mem_room("x", "1") == UINT64_MAX &&
          sotto__cgroup_mem_room(NULL, "1") == UINT64_MAX, "not a number: no limit");
    CHECK(sotto__cgroup_mem_room("1000\n", NULL) == UINT64_MAX && sotto__cgroup_mem_room("1000\n", "x") == UINT64_MAX,
          "a limit without a usage: unknown");
}

/* Under an address-space limit LIMIT bytes above what the process maps now, the room is
 * at most that (less what the limit's own checks took), and a buffer of the room's size
 * less 8 MiB (what the allocator and stdio may map beside it) can be allocated and
 * touched. Not under a sanitizer, whose shadow memory takes the address space. */
static void address_space(void)
{
#if defined(__SANITIZE_ADDRESS__)
    fprintf(stderr, "address_space: skipped under AddressSanitizer\n");
#else
    unsigned long long size = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%llu", &size) != 1) {
        if (f) fclose(f);
        fprintf(stderr, "address_space: no /proc/self/statm, skipped\n");
        return;
    }
    fclose(f);
    const uint64_t mapped = (uint64_t)size * (uint64_t)sysconf(_SC_PAGESIZE), extra = (uint64_t)256 << 20;
    struct rlimit old, lim;
    if (getrlimit(RLIMIT_AS, &old) != 0) return;
    lim = old;
    lim.rlim_cur = (rlim_t)(mapped + extra);
    if (old.rlim_max != RLIM_INFINITY && lim.rlim_cur > old.rlim_max) return;
    CHECK(setrlimit(RLIMIT_AS, &lim) == 0, "setrlimit");
    uint64_t room = sotto__mem_room(0);
    CHECK(room <= extra && room > extra / 2, "room %llu under a limit %llu above the mapped bytes",
          (unsigned long long)room, (unsigned long long)extra);
    size_t n = room > ((uint64_t)8 << 20) ? (size_t)(room - ((uint64_t)8 << 20)) : 0;
    char *p = n ? malloc(n) : NULL;
    CHECK(p != NULL, "%zu bytes within the room allocate", n);
    if (p) memset(p, 1, n);
    free(p);
    char *q = malloc((size_t)extra + ((size_t)64 << 20));
    CHECK(q == NULL, "64 MiB past the limit does not");
    free(q);
    setrlimit(RLIMIT_AS, &old);
#endif
}

int main(void)
{
    parsers();
    address_space();
    uint64_t room = sotto__mem_room(0);
    CHECK(room > 0, "some room on the machine that runs the tests");
    if (room != UINT64_MAX && room > ((uint64_t)1 << 20))
        CHECK(sotto__mem_room(room - ((uint64_t)1 << 20)) <= ((uint64_t)1 << 20) + ((uint64_t)64 << 20),
              "held bytes are taken from the room (1 MiB left, give or take what changed meanwhile)");
    printf("room now %.0f MiB\n", room == UINT64_MAX ? -1.0 : room / 1048576.0);
    return check_summary();
}
