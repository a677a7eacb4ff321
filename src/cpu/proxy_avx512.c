/* proxy_avx512.c — vocabulary proxy scores (kernels.h scores_p5) with AVX-512 VNNI,
 * compiled with those flags for this file only and selected at run time.
 *
 * Per record, each 128 values unpack from 64 nibble bytes and 16 bit bytes into two
 * vectors of 64 bytes (values 0..63 and 64..127: nibble, plus 16 where the bit mask
 * says), and vpdpbusd multiplies them by the activations: lanes 0..7 of a product hold
 * one block of 32 and lanes 8..15 the next, so the per-block factors s * d are laid out
 * the same way (a permute of the record's 16 block factors) and one FMA per product
 * scales and accumulates. */
#include <immintrin.h>
#include <string.h>

#include "kernels.h"

enum { SB = 16 }; /* blocks whose scales one vector holds (512 values) */

void sotto__scores_p5_avx512(const int8_t *a, const float *d, const float *g, const uint8_t *rows, float *u, int N,
                             int K)
{
    const int nb = K / 32;
    const size_t rb = (size_t)K / 2 + K / 8 + K / 16;
    const __m512i lo = _mm512_set1_epi8(15), sixteen = _mm512_set1_epi8(16);
    __m512i pick[SB / 2]; /* lanes 0..7 take block factor 2p, lanes 8..15 factor 2p + 1 */
    for (int p = 0; p < SB / 2; p++)
        pick[p] = _mm512_setr_epi32(2 * p, 2 * p, 2 * p, 2 * p, 2 * p, 2 * p, 2 * p, 2 * p, 2 * p + 1, 2 * p + 1,
                                    2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1);
    for (int n = 0; n < N; n++) {
        const uint8_t *row = rows + (size_t)n * rb, *bits = row + K / 2;
        const uint16_t *sr = (const uint16_t *)(bits + K / 8);
        if (n + 8 < N) /* records stream in order: fetch the ones eight ahead */
            for (size_t o = 0; o < rb; o += 64) _mm_prefetch((const char *)(row + 8 * rb + o), _MM_HINT_T0);
        __m512 acc = _mm512_setzero_ps();
        for (int b0 = 0; b0 < nb; b0 += SB) {
            int nblk = nb - b0 < SB ? nb - b0 : SB;
            __mmask16 m = (__mmask16)((1u << nblk) - 1);
            __m512 sf = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, sr + b0));
            acc = _mm512_fmadd_ps(sf, _mm512_maskz_loadu_ps(m, g + b0), acc);
            __m512 sd = _mm512_mul_ps(sf, _mm512_maskz_loadu_ps(m, d + b0));
            for (int c = 0; c < nblk / 4; c++) {
                int chunk = b0 / 4 + c;
                __m512i v = _mm512_loadu_si512((const void *)(row + (size_t)chunk * 64));
                __mmask64 h0, h1;
                memcpy(&h0, bits + (size_t)chunk * 16, 8);
                memcpy(&h1, bits + (size_t)chunk * 16 + 8, 8);
                __m512i v0 = _mm512_mask_add_epi8(_mm512_and_si512(v, lo), h0, _mm512_and_si512(v, lo), sixteen);
                __m512i vh = _mm512_and_si512(_mm512_srli_epi16(v, 4), lo);
                __m512i v1 = _mm512_mask_add_epi8(vh, h1, vh, sixteen);
                const int8_t *ac = a + (size_t)chunk * 128;
                __m512i p0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), v0, _mm512_loadu_si512((const void *)ac));
                __m512i p1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), v1, _mm512_loadu_si512((const void *)(ac + 64)));
                acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p0), _mm512_permutexvar_ps(pick[2 * c], sd), acc);
                acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p1), _mm512_permutexvar_ps(pick[2 * c + 1], sd), acc);
            }
        }
        u[n] = _mm512_reduce_add_ps(acc);
    }
}
