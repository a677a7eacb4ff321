#version 450
// transpose.comp — dst[c * ld_dst + r] = src[r * ld_src + c] in 32 x 32 tiles through
// shared memory (both the reads and the writes run along rows).
layout(local_size_x = 32, local_size_y = 8) in;

layout(push_constant) uniform PC {
    uint s_off, d_off, rows, cols, ld_dst, ld_src;
} p;

layout(std430, set = 0, binding = 0) readonly buffer BufS { float s[]; };
layout(std430, set = 0, binding = 1) writeonly buffer BufD { float d[]; };

shared float tile[32][33];

void main()
{
    const uint c0 = gl_WorkGroupID.x * 32u, r0 = gl_WorkGroupID.y * 32u;
    const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    for (uint i = ty; i < 32u; i += 8u) {
        uint r = r0 + i, c = c0 + tx;
        if (r < p.rows && c < p.cols) tile[i][tx] = s[p.s_off + r * p.ld_src + c];
    }
    barrier();
    for (uint i = ty; i < 32u; i += 8u) {
        uint c = c0 + i, r = r0 + tx;
        if (r < p.rows && c < p.cols) d[p.d_off + c * p.ld_dst + r] = tile[tx][i];
    }
}
