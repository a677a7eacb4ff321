#version 450
// softmax.comp — attention rows in place (sotto__softmax_ref): with m the maximum of the
// first VISIBLE values, x[i] = exp(scale (x[i] - m)) / sum for i < visible and 0 for
// visible <= i < n_pad. Row r of the batch is query t = r % T; visible = n, or for a causal
// mask (causal_pos >= 0) min(n, causal_pos + t + 1). One workgroup per row; variant
// DIRECT (software devices): one invocation per row, the sum over 8 partial sums.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#ifdef DIRECT
layout(local_size_x = 64) in;
#else
layout(local_size_x = 256) in;
#endif

layout(push_constant) uniform PC {
    uint off, ld, n, n_pad, rows, T;
    int causal_pos;
    float scale;
} p;

layout(std430, set = 0, binding = 0) buffer BufX { float x[]; };

#ifdef DIRECT
void main()
{
    const uint row = sotto_group_id() * 64u + gl_LocalInvocationID.x;
    if (row >= p.rows) return;
    const uint o = p.off + row * p.ld;
    uint vis = p.n;
    if (p.causal_pos >= 0) vis = min(p.n, uint(p.causal_pos) + row % p.T + 1u);
    float m = uintBitsToFloat(0xff800000u);
    for (uint i = 0u; i < vis; i++) m = max(m, x[o + i]);
    float s[8];
    for (int j = 0; j < 8; j++) s[j] = 0.0;
    uint v8 = vis & ~7u;
    for (uint i = 0u; i < v8; i += 8u)
        for (int j = 0; j < 8; j++) {
            float e = exp((x[o + i + uint(j)] - m) * p.scale);
            x[o + i + uint(j)] = e;
            s[j] += e;
        }
    float sum = 0.0;
    for (uint i = v8; i < vis; i++) {
        float e = exp((x[o + i] - m) * p.scale);
        x[o + i] = e;
        sum += e;
    }
    for (int j = 0; j < 8; j++) sum += s[j];
    const float inv = 1.0 / sum;
    for (uint i = 0u; i < vis; i++) x[o + i] *= inv;
    for (uint i = vis; i < p.n_pad; i++) x[o + i] = 0.0;
}
#else
shared float red[256];

void main()
{
    const uint row = sotto_group_id(), t = gl_LocalInvocationID.x;
    if (row >= p.rows) return;
    const uint o = p.off + row * p.ld;
    uint vis = p.n;
    if (p.causal_pos >= 0) vis = min(p.n, uint(p.causal_pos) + row % p.T + 1u);
    float m = uintBitsToFloat(0xff800000u); // -inf
    for (uint i = t; i < vis; i += 256u) m = max(m, x[o + i]);
    red[t] = m;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1) {
        if (t < s) red[t] = max(red[t], red[t + s]);
        barrier();
    }
    m = red[0];
    barrier();
    float sum = 0.0;
    for (uint i = t; i < vis; i += 256u) {
        float e = exp((x[o + i] - m) * p.scale);
        x[o + i] = e;
        sum += e;
    }
    red[t] = sum;
    barrier();
    for (uint s = 128u; s > 0u; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        barrier();
    }
    const float inv = 1.0 / red[0];
    for (uint i = t; i < vis; i += 256u) x[o + i] *= inv;
    for (uint i = vis + t; i < p.n_pad; i += 256u) x[o + i] = 0.0;
}
#endif
