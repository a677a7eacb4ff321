/* common.c — error recording, half-precision conversion and file access used by the
 * loaders, the front end and the engine. */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static _Thread_local char last_error[SOTTO__ERR_LEN];

void sotto__printable(char *msg)
{
    for (unsigned char *c = (unsigned char *)msg; *c; c++)
        if (*c < 0x20 || *c == 0x7f) *c = '?';
}

sotto_status sotto__fail(sotto__err *err, sotto_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        sotto__printable(err->msg);
        err->status = status;
    }
    return status;
}

sotto_status sotto__publish(const sotto__err *err)
{
    snprintf(last_error, sizeof last_error, "%s", err->msg);
    return err->status;
}

const char *sotto_last_error(void) { return last_error; }

const char *sotto_status_str(sotto_status status)
{
    switch (status) {
    case SOTTO_OK: return "ok";
    case SOTTO_ERR_INVALID_ARG: return "invalid argument";
    case SOTTO_ERR_IO: return "i/o error";
    case SOTTO_ERR_FORMAT: return "malformed input";
    case SOTTO_ERR_UNSUPPORTED: return "unsupported input";
    case SOTTO_ERR_NOMEM: return "out of memory";
    case SOTTO_ERR_CANCELLED: return "cancelled";
    }
    return "unknown status";
}

void sotto_free(void *ptr) { free(ptr); }

float sotto__f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | man << 13;
    } else if (exp != 0) {
        bits = sign | (exp + 112) << 23 | man << 13;
    } else if (man == 0) {
        bits = sign;
    } else { /* subnormal: normalise */
        int e = -1;
        do {
            man <<= 1;
            e++;
        } while (!(man & 0x400));
        bits = sign | (uint32_t)(112 - e) << 23 | (man & 0x3ff) << 13;
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t sotto__f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) /* inf or nan */
        return (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
    if (ax >= 0x477ff000u) /* rounds to >= 65520: overflow to inf */
        return (uint16_t)(sign | 0x7c00);
    if (ax < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
        if (ax < 0x33000000u) return sign; /* < 2^-25 rounds to zero */
        uint32_t man = (ax & 0x7fffff) | 0x800000;
        int shift = 126 - (int)(ax >> 23); /* 14..24 */
        uint32_t q = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1))) q++;
        return (uint16_t)(sign | q);
    }
    uint32_t r = ax - 0x38000000u; /* rebias exponent 127 -> 15 */
    uint32_t q = r >> 13;
    uint32_t rem = r & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) q++;
    return (uint16_t)(sign | q);
}

bool sotto__need(sotto__reader *r, uint64_t k, const char *what)
{
    if (r->n - r->i >= k) return true;
    sotto__fail(r->err, SOTTO_ERR_FORMAT, "%s: truncated at byte %zu while reading %s", r->path, r->i, what);
    return false;
}

bool sotto__rd_u32(sotto__reader *r, uint32_t *v, const char *what)
{
    if (!sotto__need(r, 4, what)) return false;
    *v = sotto__rd32(r->p + r->i);
    r->i += 4;
    return true;
}

bool sotto__rd_u64(sotto__reader *r, uint64_t *v, const char *what)
{
    if (!sotto__need(r, 8, what)) return false;
    *v = sotto__rd64(r->p + r->i);
    r->i += 8;
    return true;
}

sotto_status sotto__map_file(const char *path, sotto__map *map, sotto__err *err)
{
    memset(map, 0, sizeof *map);
    int fd = open(path, O_RDONLY | O_NONBLOCK); /* a FIFO must not wait for a writer: refused below */
    if (fd < 0) return sotto__fail(err, SOTTO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return sotto__fail(err, SOTTO_ERR_IO, "%s: not a regular file", path);
    }
    map->size = (size_t)st.st_size;
    if (map->size == 0) {
        close(fd);
        map->data = (const uint8_t *)"";
        return SOTTO_OK;
    }
    void *p = mmap(NULL, map->size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return sotto__fail(err, SOTTO_ERR_IO, "%s: cannot map: %s", path, strerror(errno));
    map->data = p;
    map->mapped = true;
    return SOTTO_OK;
}

void sotto__map_release(const sotto__map *map, const void *p, size_t n)
{
    if (!map->mapped || (const uint8_t *)p < map->data || n > map->size ||
        (size_t)((const uint8_t *)p - map->data) > map->size - n)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) / page * page, hi = ((uintptr_t)p + n) / page * page;
#ifdef MADV_DONTNEED
    if (lo < hi) madvise((void *)lo, hi - lo, MADV_DONTNEED); /* read-only private pages: dropped, re-read on use */
#endif
}

void sotto__unmap(sotto__map *map)
{
    if (map->mapped) munmap((void *)map->data, map->size);
    memset(map, 0, sizeof *map);
}

sotto_status sotto__read_file(const char *path, size_t max_bytes, char **out, size_t *n,
                              sotto__err *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) /* before fopen: a FIFO would wait for a writer */
        return sotto__fail(err, SOTTO_ERR_IO, "%s: not a regular file", path);
    FILE *f = fopen(path, "rb");
    if (!f) return sotto__fail(err, SOTTO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return sotto__fail(err, SOTTO_ERR_IO, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > max_bytes) {
        fclose(f);
        return sotto__fail(err, SOTTO_ERR_FORMAT, "%s: %lld bytes, more than the %zu allowed",
                           path, (long long)st.st_size, max_bytes);
    }
    size_t size = (size_t)st.st_size;
    char *buf = malloc(size + 1);
    if (!buf) {
        fclose(f);
        return sotto__fail(err, SOTTO_ERR_NOMEM, "%s: out of memory", path);
    }
    size_t got = fread(buf, 1, size, f);
    fclose(f);
    if (got != size) {
        free(buf);
        return sotto__fail(err, SOTTO_ERR_IO, "%s: short read", path);
    }
    buf[size] = 0;
    *out = buf;
    if (n) *n = size;
    return SOTTO_OK;
}

bool sotto__path_join(char *out, size_t n, const char *dir, const char *name)
{
    int w = snprintf(out, n, "%s/%s", dir, name);
    return w > 0 && (size_t)w < n;
}

int sotto__temp_beside(const char *path, mode_t perm, char *tmp, size_t n)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    char pid[24];
    int k = snprintf(pid, sizeof pid, ".tmp.%ld", (long)getpid());
    int w = strlen(base) + (size_t)k <= 255 ? snprintf(tmp, n, "%s%s", path, pid)
                                            : snprintf(tmp, n, "%.*s.sotto%s", (int)(base - path), path, pid);
    if (w < 0 || (size_t)w >= n) return errno = ENAMETOOLONG, -1;
    for (int tries = 0; tries < 8; tries++) {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, perm);
        if (fd >= 0 || errno != EEXIST) return fd;
        if (unlink(tmp) != 0 && errno != ENOENT) return -1; /* a link or a stale file: gone, then again */
    }
    return errno = EEXIST, -1;
}

bool sotto__is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool sotto__file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

double sotto__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
