#version 450
// embed.comp — X[i] = EMB row ids[i] widened to f32 (sotto__dequantize) + POS[i], for the
// tokens whose row lies in the bound rows [row0, row0 + n_rows) of the table (a table
// above maxStorageBufferRange is bound and embedded in pieces). Variants (-D): E_F32 |
// E_F16 | E_Q8 (q8_0 rows of d / 32 blocks; e_off in bytes, else in elements).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint e_off, row0, n_rows, d, n, pos_off, x_off, ids_off;
} p;

layout(std430, set = 0, binding = 0) readonly buffer BufE { uint e[]; };
layout(std430, set = 0, binding = 1) readonly buffer BufPos { float pos[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BufX { float x[]; };
layout(std430, set = 0, binding = 3) readonly buffer BufIds { int ids[]; };

uint byte_at(uint off) { return (e[off >> 2] >> (8u * (off & 3u))) & 0xffu; }

void main()
{
    const uint total = p.n * p.d, step = 256u * gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    for (uint g = sotto_group_id() * 256u + gl_LocalInvocationID.x; g < total; g += step) {
        uint i = g / p.d, j = g % p.d;
        int tok = ids[p.ids_off + i];
        if (tok < int(p.row0) || tok >= int(p.row0 + p.n_rows)) continue;
        uint r = uint(tok) - p.row0;
        float v;
#if defined(E_Q8)
        uint blk = p.e_off + (r * (p.d / 32u) + j / 32u) * 34u;
        float dd = sotto_h2f(byte_at(blk) | (byte_at(blk + 1u) << 8));
        v = dd * float(bitfieldExtract(int(byte_at(blk + 2u + j % 32u)), 0, 8));
#elif defined(E_F16)
        uint el = p.e_off + r * p.d + j;
        v = sotto_h2f((e[el >> 1] >> (16u * (el & 1u))) & 0xffffu);
#else
        v = uintBitsToFloat(e[p.e_off + r * p.d + j]);
#endif
        x[p.x_off + g] = v + pos[p.pos_off + g];
    }
}
