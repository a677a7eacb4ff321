/* test_quant.c — half-precision conversion (exhaustive over all 65536 halves) and q8_0
 * blocks (src/common.c, src/quant.c). */
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "common.h"
#include "quant.h"

static void test_f16(void)
{
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = sotto__f16_to_f32((uint16_t)h);
        uint16_t back = sotto__f32_to_f16(f);
        if (f != f) bad += (back & 0x7c00) != 0x7c00 || !(back & 0x3ff);
        else bad += back != h;
    }
    CHECK(bad == 0, "%d half values do not survive f16 -> f32 -> f16", bad);
    CHECK(sotto__f16_to_f32(0x3c00) == 1.0f && sotto__f16_to_f32(0x0001) == ldexpf(1, -24), "known values");
    CHECK(sotto__f32_to_f16(65520.0f) == 0x7c00 && sotto__f32_to_f16(65519.0f) == 0x7bff, "overflow rounding");
    CHECK(sotto__f32_to_f16(1.0f + ldexpf(1, -11)) == 0x3c00, "ties round to even");
    CHECK(sotto__f32_to_f16(ldexpf(1, -25)) == 0 && sotto__f32_to_f16(ldexpf(1.5f, -25)) == 1, "subnormal rounding");
}

static void test_q8_0(void)
{
    float x[64], y[64];
    for (int i = 0; i < 64; i++) x[i] = sinf((float)i) * (i < 32 ? 1.0f : 1e-3f);
    sotto__block_q8_0 q[2];
    sotto__quantize(SOTTO_TYPE_Q8_0, x, q, 64);
    sotto__dequantize(SOTTO_TYPE_Q8_0, q, y, 64);
    double worst = 0;
    for (int i = 0; i < 64; i++) { /* (fmax here crashes aarch64 gcc 12's vectoriser) */
        double e = fabs(x[i] - y[i]) / (i < 32 ? 1.0 : 1e-3);
        if (e > worst) worst = e;
    }
    CHECK(worst <= 0.5 / 127 + 1e-3, "q8_0 error %g of the block's range", worst);
}

int main(void)
{
    test_f16();
    test_q8_0();
    return check_summary();
}
