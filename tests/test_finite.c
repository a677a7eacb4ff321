/* test_finite.c — sotto__first_non_finite (src/model/model.c), which every model load runs
 * over its weights eight bytes at a time: the index it reports equals a one-at-a-time
 * scan's for NaN, +Inf and -Inf in f32 and f16 at the first and last element, on both
 * sides of its 512-word chunks and in the tails, and the largest finite values, zeros
 * and subnormals of either sign are never reported. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/model.h"

static int64_t naive(const void *data, int64_t n, int step)
{
    const uint8_t *p = data;
    for (int64_t i = 0; i < n; i++) {
        uint32_t v = 0;
        memcpy(&v, p + (size_t)i * (size_t)step, (size_t)step);
        if (step == 4 ? (v & 0x7f800000u) == 0x7f800000u : (v & 0x7c00u) == 0x7c00u) return i;
    }
    return -1;
}

/* Element I of N set to BITS, the others to finite values around it (the extremes among
 * them), at an offset of OFF bytes from an 8-byte boundary. */
static void check_at(int step, int64_t n, int64_t i, uint32_t bits, int off, int *bad)
{
    static const uint32_t fin32[] = {0x7f7fffffu, 0xff7fffffu, 0x00000001u, 0x80000000u, 0x3f800000u, 0x7f000000u};
    static const uint16_t fin16[] = {0x7bff, 0xfbff, 0x0001, 0x8000, 0x3c00, 0x7800};
    uint8_t *buf = calloc((size_t)(n + 2) * (size_t)step + 8, 1), *p = buf + off;
    for (int64_t k = 0; k < n; k++) {
        uint32_t v = step == 4 ? fin32[k % 6] : fin16[k % 6];
        memcpy(p + (size_t)k * (size_t)step, &v, (size_t)step);
    }
    if (i >= 0) memcpy(p + (size_t)i * (size_t)step, &bits, (size_t)step);
    int64_t got = sotto__first_non_finite(p, n, step == 4 ? SOTTO_TYPE_F32 : SOTTO_TYPE_F16);
    int64_t want = naive(p, n, step);
    if ((got != want || want != i) && (*bad)++ < 5)
        printf("  %s n=%lld bits 0x%x at %lld (offset %d): got %lld, scan %lld\n", step == 4 ? "f32" : "f16",
               (long long)n, bits, (long long)i, off, (long long)got, (long long)want);
    free(buf);
}

int main(void)
{
    static const uint32_t bad32[] = {0x7fc00000u, 0x7f800000u, 0xff800000u, 0x7f800001u, 0xffffffffu};
    static const uint16_t bad16[] = {0x7e00, 0x7c00, 0xfc00, 0x7c01, 0xffff};
    static const int64_t ns[] = {1, 2, 3, 4, 5, 1023, 1024, 1025, 2047, 2048, 2049, 4099, 10000};
    int bad = 0, runs = 0;
    for (int step = 2; step <= 4; step += 2)
        for (size_t a = 0; a < sizeof ns / sizeof *ns; a++) {
            int64_t n = ns[a], per = 8 / step, chunk = 512 * per;
            int64_t at[] = {0, n - 1, n / 2, chunk - 1, chunk, chunk + 1, 2 * chunk, n - 2, n / per * per};
            check_at(step, n, -1, 0, (int)a % 8, &bad), runs++;
            for (size_t b = 0; b < sizeof at / sizeof *at; b++) {
                if (at[b] < 0 || at[b] >= n) continue;
                uint32_t bits = step == 4 ? bad32[(a + b) % 5] : bad16[(a + b) % 5];
                check_at(step, n, at[b], bits, (int)(a + b) % 8, &bad), runs++;
            }
        }
    CHECK(bad == 0, "sotto__first_non_finite differs from a scan in %d of %d cases", bad, runs);
    return check_summary();
}
