/* bytelevel.c — GPT-2 byte-level token strings: bytes 33..126, 161..172 and 174..255 stand
 * for themselves, the other 68 bytes for U+0100.. in ascending order (space is 'Ġ').
 * Vocabulary files store tokens this way; the engine keeps raw bytes. */
#include "model.h"

static bool printable(unsigned b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174; }

/* Code point that stands for byte B: the non-printable bytes 0..32, 127..160 and 173
 * take U+0100.. in that order. */
static unsigned byte_to_cp(unsigned b)
{
    if (printable(b)) return b;
    if (b <= 32) return 256 + b;
    if (b <= 160) return 256 + 33 + (b - 127);
    return 256 + 67; /* 173 */
}

static unsigned cp_to_byte(unsigned cp)
{
    unsigned k = cp - 256;
    if (cp < 256) return cp;
    if (k <= 32) return k;
    if (k <= 66) return 127 + (k - 33);
    return 173;
}

long sotto__bytelevel_decode(const char *s, size_t n, char *out, size_t cap)
{
    size_t i = 0, o = 0;
    const unsigned char *u = (const unsigned char *)s;
    while (i < n) {
        unsigned cp;
        if (u[i] < 0x80) {
            cp = u[i++];
        } else if ((u[i] & 0xe0) == 0xc0 && i + 1 < n && (u[i + 1] & 0xc0) == 0x80) {
            cp = (unsigned)(u[i] & 0x1f) << 6 | (u[i + 1] & 0x3f);
            i += 2;
            if (cp < 0x80) return -1; /* overlong: "\xc1\x81" must not load as 'A' */
        } else {
            return -1; /* every byte symbol is below U+0800 */
        }
        if (cp >= 256 + 68 || o >= cap) return -1;
        if (cp < 256 && !printable(cp)) return -1;
        out[o++] = (char)cp_to_byte(cp);
    }
    return (long)o;
}

size_t sotto__bytelevel_encode(const char *bytes, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned cp = byte_to_cp((unsigned char)bytes[i]);
        if (cp < 0x80) {
            out[o++] = (char)cp;
        } else {
            out[o++] = (char)(0xc0 | cp >> 6);
            out[o++] = (char)(0x80 | (cp & 0x3f));
        }
    }
    return o;
}
