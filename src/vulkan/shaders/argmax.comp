#version 450
// argmax.comp — the first index of the maximum of N floats, as the CPU's scan (vocab.c
// first_max): NaN values lose to every number, equal values go to the lower index, and
// a NaN first value makes the answer 0 (the scan never leaves it). Values compare as
// ordered integers of their bits (-0 taken as +0), so -inf (excluded ids) needs no
// float semantics. Variants (-D): MASK (set the ids of a list to -inf) | STAGE1 (one
// (key, index) pair per workgroup into the partials) | STAGE2 (one workgroup: the
// partials to the answer).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint x_off, n, part_off, n_part, out_off, ids_off, n_ids;
} p;

layout(std430, set = 0, binding = 0) buffer BufX { uint x[]; };
layout(std430, set = 0, binding = 1) buffer BufPart { uint part[]; };
layout(std430, set = 0, binding = 2) readonly buffer BufIds { int ids[]; };

shared uint skey[256];
shared uint sidx[256];

const uint INVALID = 0u; // below every number's key

uint key_of(uint bits)
{
    if ((bits & 0x7fffffffu) > 0x7f800000u) return INVALID;
    if (bits == 0x80000000u) bits = 0u;
    return (bits & 0x80000000u) != 0u ? ~bits : bits | 0x80000000u; // >= 0x007fffff
}

// (k1, i1) or (k2, i2), whichever the scan keeps
void pick(inout uint k1, inout uint i1, uint k2, uint i2)
{
    if (k2 > k1 || (k2 == k1 && i2 < i1)) {
        k1 = k2;
        i1 = i2;
    }
}

void reduce_and_store(uint k, uint i, uint slot)
{
    const uint t = gl_LocalInvocationID.x;
    skey[t] = k;
    sidx[t] = i;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1) {
        if (t < s) {
            uint k1 = skey[t], i1 = sidx[t];
            pick(k1, i1, skey[t + s], sidx[t + s]);
            skey[t] = k1;
            sidx[t] = i1;
        }
        barrier();
    }
    if (t == 0u) {
        part[slot] = skey[0];
        part[slot + 1u] = sidx[0];
    }
}

void main()
{
    const uint t = gl_LocalInvocationID.x;
#if defined(MASK)
    for (uint i = gl_WorkGroupID.x * 256u + t; i < p.n_ids; i += 256u * gl_NumWorkGroups.x) {
        int id = ids[p.ids_off + i];
        if (id >= 0 && uint(id) < p.n) x[p.x_off + uint(id)] = 0xff800000u;
    }
#elif defined(STAGE1)
    uint k = INVALID, idx = 0xffffffffu;
    for (uint i = gl_WorkGroupID.x * 256u + t; i < p.n; i += 256u * gl_NumWorkGroups.x)
        pick(k, idx, key_of(x[p.x_off + i]), i);
    reduce_and_store(k, idx, p.part_off + 2u * gl_WorkGroupID.x);
#else
    uint k = INVALID, idx = 0xffffffffu;
    for (uint i = t; i < p.n_part; i += 256u) pick(k, idx, part[p.part_off + 2u * i], part[p.part_off + 2u * i + 1u]);
    barrier();
    reduce_and_store(k, idx, p.out_off);
    if (t == 0u && (key_of(x[p.x_off]) == INVALID || part[p.out_off + 1u] >= p.n)) part[p.out_off + 1u] = 0u;
#endif
}
