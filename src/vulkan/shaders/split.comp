#version 450
// split.comp — cross-attention keys or values per head (backend.h sotto__cross_layout,
// f32 and f16): dst[h][s][j] = src[s][h dh + j] for S rows of n_head dh values.
// Variant OUT_F16: halves rounded to nearest even (sotto__f32_to_f16), two per word, one
// thread per word of the destination; the slab may start or end in the middle of a word
// (d_half = 1: its first half is the word's upper one), whose other half is kept.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint s_off, d_off, d_half, S, n_head, dh;
} p;

layout(std430, set = 0, binding = 0) readonly buffer BufS { float s[]; };
layout(std430, set = 0, binding = 1) buffer BufD { uint d[]; };

float value(uint e) // destination element e
{
    uint j = e % p.dh, hs = e / p.dh, sp = hs % p.S, h = hs / p.S;
    return s[p.s_off + sp * p.n_head * p.dh + h * p.dh + j];
}

void main()
{
    const uint n = p.n_head * p.S * p.dh, step = 256u * gl_NumWorkGroups.x * gl_NumWorkGroups.y;
#ifdef OUT_F16
    const uint words = (n + p.d_half + 1u) / 2u;
    for (uint w = sotto_group_id() * 256u + gl_LocalInvocationID.x; w < words; w += step) {
        uint old = d[p.d_off + w], lo = old & 0xffffu, hi = old >> 16;
        int e0 = int(2u * w) - int(p.d_half); // element in the low half
        if (e0 >= 0) lo = sotto_f2h(value(uint(e0)));
        if (uint(e0 + 1) < n) hi = sotto_f2h(value(uint(e0 + 1)));
        d[p.d_off + w] = lo | (hi << 16);
    }
#else
    for (uint e = sotto_group_id() * 256u + gl_LocalInvocationID.x; e < n; e += step) d[p.d_off + e] = floatBitsToUint(value(e));
#endif
}
