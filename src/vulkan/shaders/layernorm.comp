#version 450
// layernorm.comp — Y[m] = (X[m] - mean) / sqrt(var + 1e-5) * g + b over rows of D values,
// one workgroup per row: the mean, then the variance of the centred values, each summed
// in a tree over 256 threads (the CPU sums in double; the tree keeps f32 error near
// log2(D) ulps). Y may be X: every thread reads its own elements before writing them.
// Variant DIRECT (software devices, where barriers are dear): one invocation per row,
// each sum over 8 interleaved partial sums, as the CPU's.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#ifdef DIRECT
layout(local_size_x = 64) in;
#else
layout(local_size_x = 256) in;
#endif

layout(push_constant) uniform PC {
    uint x_off, y_off, g_off, b_off, d, rows;
} p;

layout(std430, set = 0, binding = 0) readonly buffer BufX { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer BufY { float y[]; };
layout(std430, set = 0, binding = 2) readonly buffer BufG { float g[]; };
layout(std430, set = 0, binding = 3) readonly buffer BufB { float bb[]; };

#ifdef DIRECT
void main()
{
    const uint row = sotto_group_id() * 64u + gl_LocalInvocationID.x;
    if (row >= p.rows) return;
    const uint xo = p.x_off + row * p.d, yo = p.y_off + row * p.d, d8 = p.d & ~7u;
    float s[8];
    for (int j = 0; j < 8; j++) s[j] = 0.0;
    for (uint i = 0u; i < d8; i += 8u)
        for (int j = 0; j < 8; j++) s[j] += x[xo + i + uint(j)];
    float mean = 0.0;
    for (uint i = d8; i < p.d; i++) mean += x[xo + i];
    for (int j = 0; j < 8; j++) mean += s[j];
    mean /= float(p.d);
    for (int j = 0; j < 8; j++) s[j] = 0.0;
    for (uint i = 0u; i < d8; i += 8u)
        for (int j = 0; j < 8; j++) {
            float c = x[xo + i + uint(j)] - mean;
            s[j] += c * c;
        }
    float var = 0.0;
    for (uint i = d8; i < p.d; i++) var += (x[xo + i] - mean) * (x[xo + i] - mean);
    for (int j = 0; j < 8; j++) var += s[j];
    var /= float(p.d);
    const float inv = 1.0 / sqrt(var + 1e-5);
    for (uint i = 0u; i < p.d; i++) y[yo + i] = (x[xo + i] - mean) * inv * g[p.g_off + i] + bb[p.b_off + i];
}
#else
shared float red[256];

float total(float v)
{
    const uint t = gl_LocalInvocationID.x;
    red[t] = v;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        barrier();
    }
    float r = red[0];
    barrier();
    return r;
}

void main()
{
    const uint row = sotto_group_id(), t = gl_LocalInvocationID.x;
    if (row >= p.rows) return;
    const uint xo = p.x_off + row * p.d, yo = p.y_off + row * p.d;
    float s = 0.0;
    for (uint i = t; i < p.d; i += 256u) s += x[xo + i];
    const float mean = total(s) / float(p.d);
    float v = 0.0;
    for (uint i = t; i < p.d; i += 256u) {
        float c = x[xo + i] - mean;
        v += c * c;
    }
    const float var = total(v) / float(p.d);
    const float inv = 1.0 / sqrt(var + 1e-5);
    for (uint i = t; i < p.d; i += 256u) y[yo + i] = (x[xo + i] - mean) * inv * g[p.g_off + i] + bb[p.b_off + i];
}
#endif
