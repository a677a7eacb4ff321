/* quant.c — scalar conversion between weight storage types (used at load and by
 * `sotto convert`; the matmul kernels have their own fast paths). */
#include "quant.h"

#include <math.h>
#include <string.h>

bool sotto__type_bytes(sotto_type type, int64_t numel, size_t *out)
{
    if (numel < 0) return false;
    switch (type) {
    case SOTTO_TYPE_F32: return sotto__mul_ok((size_t)numel, 4, out);
    case SOTTO_TYPE_F16: return sotto__mul_ok((size_t)numel, 2, out);
    case SOTTO_TYPE_Q8_0:
        if (numel % SOTTO__QK8_0) return false;
        return sotto__mul_ok((size_t)numel / SOTTO__QK8_0, sizeof(sotto__block_q8_0), out);
    }
    return false;
}

const char *sotto__type_name(sotto_type type)
{
    switch (type) {
    case SOTTO_TYPE_F32: return "f32";
    case SOTTO_TYPE_F16: return "f16";
    case SOTTO_TYPE_Q8_0: return "q8_0";
    }
    return "?";
}

void sotto__dequantize(sotto_type type, const void *src, float *dst, int64_t n)
{
    switch (type) {
    case SOTTO_TYPE_F32:
        memcpy(dst, src, (size_t)n * sizeof(float));
        break;
    case SOTTO_TYPE_F16: {
        const uint8_t *p = src;
        for (int64_t i = 0; i < n; i++) dst[i] = sotto__f16_to_f32(sotto__rd16(p + 2 * i));
        break;
    }
    case SOTTO_TYPE_Q8_0: {
        const uint8_t *p = src;
        for (int64_t b = 0; b < n / SOTTO__QK8_0; b++) {
            const uint8_t *blk = p + (size_t)b * sizeof(sotto__block_q8_0);
            float d = sotto__f16_to_f32(sotto__rd16(blk));
            for (int i = 0; i < SOTTO__QK8_0; i++)
                dst[b * SOTTO__QK8_0 + i] = d * (float)(int8_t)blk[2 + i];
        }
        break;
    }
    }
}

void sotto__quantize(sotto_type type, const float *src, void *dst, int64_t n)
{
    switch (type) {
    case SOTTO_TYPE_F32:
        memcpy(dst, src, (size_t)n * sizeof(float));
        break;
    case SOTTO_TYPE_F16: {
        uint16_t *out = dst;
        for (int64_t i = 0; i < n; i++) out[i] = sotto__f32_to_f16(src[i]);
        break;
    }
    case SOTTO_TYPE_Q8_0: {
        sotto__block_q8_0 *out = dst;
        for (int64_t b = 0; b < n / SOTTO__QK8_0; b++) {
            const float *x = src + b * SOTTO__QK8_0;
            float amax = 0;
            for (int i = 0; i < SOTTO__QK8_0; i++) amax = fmaxf(amax, fabsf(x[i]));
            float d = amax / 127.0f;
            float id = d > 0 ? 1.0f / d : 0.0f;
            out[b].d = sotto__f32_to_f16(d);
            for (int i = 0; i < SOTTO__QK8_0; i++) out[b].qs[i] = (int8_t)lrintf(x[i] * id);
        }
        break;
    }
    }
}
