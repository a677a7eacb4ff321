/* serve_b64.c — the strict base64 reader (RFC 4648 section 4, the standard alphabet, with
 * its padding) of the audio in a Realtime input_audio_buffer.append event: any other byte,
 * a length that is not a multiple of 4, padding anywhere but at the end, or nonzero bits
 * after the last byte is refused, so one text has one meaning. */
#include <string.h>

#include "serve.h"

static int value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

long long serve_b64_decode(const char *in, size_t n, unsigned char *out, size_t *bad_at)
{
    *bad_at = 0;
    if (n % 4) {
        *bad_at = n;
        return -1;
    }
    size_t pad = n >= 1 && in[n - 1] == '=' ? (n >= 2 && in[n - 2] == '=' ? 2 : 1) : 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        for (int j = 0; j < 4; j++) {
            size_t at = i + (size_t)j;
            bool padding = at >= n - pad;
            v[j] = padding ? 0 : value((unsigned char)in[at]);
            if (v[j] < 0) {
                *bad_at = at;
                return -1;
            }
        }
        unsigned bits = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
        size_t keep = i + 4 < n ? 3 : 3 - pad;
        /* the bits the padding leaves over must be zero (RFC 4648 3.5: canonical encoding) */
        if ((keep == 1 && (bits & 0xffff)) || (keep == 2 && (bits & 0xff))) {
            *bad_at = n - pad - 1;
            return -1;
        }
        out[k++] = (unsigned char)(bits >> 16);
        if (keep > 1) out[k++] = (unsigned char)(bits >> 8);
        if (keep > 2) out[k++] = (unsigned char)bits;
    }
    return (long long)k;
}
