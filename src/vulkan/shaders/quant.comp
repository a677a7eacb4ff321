#version 450
// quant.comp — rows of f32 activations to q8_0 blocks exactly as sotto__quantize: per
// block of 32, d = max|x| / 127, q = round-to-even(x / d) through the reciprocal, the
// scale stored rounded to f16. Output in the internal layout the q8_0 products read:
// packed int8 words [rows][ldq] and the f16-rounded scales as f32 [rows][ldd]. One
// thread per block.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform PC {
    uint x_off, ldx, K, rows;
    uint q_off, ldq, d_off, ldd;
} p;

layout(std430, set = 0, binding = 0) readonly buffer BufX { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer BufQ { uint q[]; };

void main()
{
    const uint nb = p.K / 32u, total = nb * p.rows;
    for (uint blk = sotto_group_id() * 64u + gl_LocalInvocationID.x; blk < total; blk += 64u * gl_NumWorkGroups.x * gl_NumWorkGroups.y) {
        uint r = blk / nb, j = blk % nb, xb = p.x_off + r * p.ldx + j * 32u;
        float amax = 0.0;
        for (uint i = 0u; i < 32u; i++) amax = max(amax, abs(x[xb + i]));
        float d = amax / 127.0;
        float id = d > 0.0 ? 1.0 / d : 0.0;
        for (uint w = 0u; w < 8u; w++) {
            uint packed = 0u;
            for (uint i = 0u; i < 4u; i++) {
                int v = int(roundEven(x[xb + 4u * w + i] * id));
                packed |= (uint(v) & 0xffu) << (8u * i);
            }
            q[p.q_off + r * p.ldq + j * 8u + w] = packed;
        }
        q[p.d_off + r * p.ldd + j] = floatBitsToUint(sotto_h2f(sotto_f2h(d)));
    }
}
