#version 450
// cross_q8.comp — q8_0 cross-attention keys or values (backend.h sotto__cross_layout),
// quantised as sotto__quantize, in the standard 34-byte blocks. Keys (KEYS): block b of
// [n_head][S][dh / 32] holds x[s][h dh + 32 jb ..]; values: block b of
// [n_head dh][Sp / 32] holds column c = h dh + j of x over s = 32 sb .., zero for s >= S.
// Two passes (-D SCALES first): one thread per block writes d and 1 / d to the scratch;
// then one thread per word of the byte stream writes every byte of that word, so no two
// threads share a word (the stream starts b_delta bytes into the first one; bytes
// outside it are kept).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint x_off, S, n_head, dh, Sp;
    uint sc_off;      // scratch: d [n_blocks], then 1/d [n_blocks]
    uint o_off, o_delta; // output: first word and byte offset of the stream in it
} p;

layout(std430, set = 0, binding = 0) readonly buffer BufX { float x[]; };
layout(std430, set = 0, binding = 1) buffer BufScratch { float sc[]; };
layout(std430, set = 0, binding = 2) buffer BufO { uint o[]; };

uint n_blocks()
{
#ifdef KEYS
    return p.n_head * p.S * (p.dh / 32u);
#else
    return p.n_head * p.dh * (p.Sp / 32u);
#endif
}

float value(uint blk, uint i)
{
    const uint d = p.n_head * p.dh;
#ifdef KEYS
    uint nbh = p.dh / 32u, jb = blk % nbh, hs = blk / nbh, s = hs % p.S, h = hs / p.S;
    return x[p.x_off + s * d + h * p.dh + jb * 32u + i];
#else
    uint nbs = p.Sp / 32u, c = blk / nbs, s = (blk % nbs) * 32u + i;
    return s < p.S ? x[p.x_off + s * d + c] : 0.0;
#endif
}

void main()
{
    const uint nb = n_blocks(), step = 256u * gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    const uint first = sotto_group_id() * 256u + gl_LocalInvocationID.x;
#ifdef SCALES
    for (uint blk = first; blk < nb; blk += step) {
        float amax = 0.0;
        for (uint i = 0u; i < 32u; i++) amax = max(amax, abs(value(blk, i)));
        float d = amax / 127.0;
        sc[p.sc_off + blk] = d;
        sc[p.sc_off + nb + blk] = d > 0.0 ? 1.0 / d : 0.0;
    }
#else
    const uint bytes = nb * 34u, words = (bytes + p.o_delta + 3u) / 4u;
    for (uint w = first; w < words; w += step) {
        uint word = o[p.o_off + w];
        for (uint k = 0u; k < 4u; k++) {
            int pos = int(4u * w + k) - int(p.o_delta);
            if (pos < 0 || uint(pos) >= bytes) continue;
            uint blk = uint(pos) / 34u, r = uint(pos) % 34u, v;
            if (r < 2u) v = sotto_f2h(sc[p.sc_off + blk]) >> (8u * r);
            else v = uint(int(roundEven(value(blk, r - 2u) * sc[p.sc_off + nb + blk])));
            word = bitfieldInsert(word, v & 0xffu, int(8u * k), 8);
        }
        o[p.o_off + w] = word;
    }
#endif
}
