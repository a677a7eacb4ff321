/* common.h — internal helpers shared by every module: error messages, checked size
 * arithmetic, half-precision conversion, file mapping. Nothing here is public API. */
#ifndef SOTTO_COMMON_H
#define SOTTO_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sotto.h"

/* a message: room for a PATH_MAX path (twice, a model path in a loader's message) and its reason */
#define SOTTO__ERR_LEN 9216

/* An error being built up by internal functions; the public layer copies it into the
 * context or the thread-local slot. */
typedef struct sotto__err {
    sotto_status status;
    char msg[SOTTO__ERR_LEN];
} sotto__err;

/* Control bytes (below 0x20, 0x7f) of MSG as '?': a message is one line, and names from a
 * file (a model's keys, a path with a newline) never reach a terminal as escape codes. */
void sotto__printable(char *msg);

/* Records STATUS with a printf-style message in ERR (if ERR is non-NULL) and returns
 * STATUS, so a caller can write `return sotto__fail(err, ...)`. */
sotto_status sotto__fail(sotto__err *err, sotto_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets the thread-local message returned by sotto_last_error() and returns ERR's status. */
sotto_status sotto__publish(const sotto__err *err);

/* Overflow-checked size arithmetic: false when the true result does not fit. */
static inline bool sotto__mul_ok(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool sotto__add_ok(size_t a, size_t b, size_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

/* IEEE 754 binary16 <-> binary32, exact for every value (round to nearest even). */
float sotto__f16_to_f32(uint16_t h);
uint16_t sotto__f32_to_f16(float f);

/* Little-endian loads from unaligned bytes. */
static inline uint16_t sotto__rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t sotto__rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t sotto__rd64(const uint8_t *p)
{
    return (uint64_t)sotto__rd32(p) | (uint64_t)sotto__rd32(p + 4) << 32;
}

/* A bounded cursor over a file's bytes, for the binary loaders: every read checks the
 * bytes left first and, when short, records "PATH: truncated at byte I while reading
 * WHAT" in ERR. */
typedef struct sotto__reader {
    const uint8_t *p;
    size_t n, i;
    const char *path;
    sotto__err *err;
} sotto__reader;

bool sotto__need(sotto__reader *r, uint64_t k, const char *what);
bool sotto__rd_u32(sotto__reader *r, uint32_t *v, const char *what);
bool sotto__rd_u64(sotto__reader *r, uint64_t *v, const char *what);

/* A read-only file mapping (or a heap copy where mmap is unavailable). */
typedef struct sotto__map {
    const uint8_t *data;
    size_t size;
    bool mapped;
} sotto__map;

sotto_status sotto__map_file(const char *path, sotto__map *map, sotto__err *err);
void sotto__unmap(sotto__map *map);
/* Hands the whole pages of [P, P + N) back to the page cache, if they lie in MAP: they
 * leave the resident set and are read again from the file when touched. */
void sotto__map_release(const sotto__map *map, const void *p, size_t n);

/* Reads a whole (small) file into a NUL-terminated heap buffer; refuses files larger
 * than MAX_BYTES. */
sotto_status sotto__read_file(const char *path, size_t max_bytes, char **out, size_t *n,
                              sotto__err *err);

/* path_join writes DIR/NAME into OUT (size N); false when it does not fit. */
bool sotto__path_join(char *out, size_t n, const char *dir, const char *name);
bool sotto__is_dir(const char *path);
/* A new file beside PATH to write PATH's contents into before a rename: PATH.tmp.PID, or
 * DIR/.sotto.tmp.PID where that name's last part would be longer than NAME_MAX (255)
 * (sotto.h sotto_model_save_gguf). Created exclusively (O_EXCL | O_NOFOLLOW) with PERM: a
 * file or link already there is removed, never followed or truncated (a link planted in a
 * shared directory cannot redirect the write). Its name into TMP (N bytes); the descriptor,
 * or -1 with errno. The tool's out_temp_open keeps the same rule. */
int sotto__temp_beside(const char *path, mode_t perm, char *tmp, size_t n);
bool sotto__file_exists(const char *path);

double sotto__now_ms(void);

/* cpus.c: CPUs from a cgroup CPU quota of QUOTA per PERIOD (microseconds), rounded up,
 * 0 when there is none (QUOTA <= 0: v1's -1); and from the text of cgroup v2's cpu.max
 * ("QUOTA PERIOD", or "max PERIOD": none). */
int sotto__quota_cpus(long long quota, long long period);
int sotto__cgroup_max_cpus(const char *text);
/* cpus.c: a sysfs cache size ("32768K", "1M", "512") in bytes, 0 when TEXT is not one; and
 * the largest data cache CPU 0 reports there, 0 when unknown. */
size_t sotto__cache_size_bytes(const char *text);
size_t sotto__last_cache_bytes(void);

/* cgroup.c: the first line of PATH into BUF (false when it cannot be read); the path of
 * this process's cgroup in the hierarchy CONTROLLER names (v1: "cpu" in
 * "4:cpu,cpuacct:/path"; NULL: the v2 line "0::/path") into OUT; and FN(ARG, DIR) for that
 * cgroup's directory under MOUNT (REL its path) and each parent up to MOUNT. */
bool sotto__first_line(const char *path, char *buf, size_t n);
bool sotto__cgroup_path(const char *controller, char *out, size_t n);
void sotto__cgroup_walk(const char *mount, const char *rel, void (*fn)(void *arg, const char *dir), void *arg);

/* memroom.c: the bytes this process may still allocate (memroom.c says from what), HELD
 * bytes it has allocated but may not have touched counted as taken; UINT64_MAX when
 * nothing bounds it. The parsers it uses: MemAvailable of /proc/meminfo's
 * TEXT in bytes (0 when absent), and the room a cgroup's memory LIMIT text leaves above its
 * USAGE text (v2 memory.max / memory.current, v1 memory.limit_in_bytes / usage_in_bytes;
 * UINT64_MAX for "max", a limit from 2^62 on, or text that is not a number). */
uint64_t sotto__mem_room(uint64_t held);
uint64_t sotto__meminfo_available(const char *text);
uint64_t sotto__cgroup_mem_room(const char *limit, const char *usage);

#endif
