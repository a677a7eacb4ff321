/* idlist.c — the strict token-id list parser of `sotto run` (--prefix, --prefix-file,
 * --eos, --expected): decimal ids only, every malformed item named by position. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static void quote(char *dst, size_t n, const char *s, size_t len)
{
    if (len > 40) len = 40;
    size_t o = 0;
    for (size_t i = 0; i < len && o + 5 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 32 && c < 127) dst[o++] = (char)c;
        else o += (size_t)snprintf(dst + o, n - o, "\\x%02x", c);
    }
    dst[o] = 0;
}

/* Validates one item; false with MSG set. */
static bool parse_item(const char *s, size_t len, int pos, int32_t n_vocab, const char *source, int32_t *out,
                       char *msg, size_t msg_len)
{
    char q[200];
    quote(q, sizeof q, s, len);
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            const char *why = s[0] == '-' && len > 1 ? "is negative" : "is not a decimal token id";
            snprintf(msg, msg_len, "%s: item %d '%s' %s", source, pos, q, why);
            return false;
        }
    }
    size_t start = 0;
    while (start + 1 < len && s[start] == '0') start++;
    unsigned long long v = 0;
    bool overflow = len - start > 10;
    for (size_t i = start; i < len && !overflow; i++) v = v * 10 + (unsigned long long)(s[i] - '0');
    if (overflow || v > INT32_MAX) {
        snprintf(msg, msg_len, "%s: item %d '%s' overflows a token id", source, pos, q);
        return false;
    }
    if (n_vocab > 0 && v >= (unsigned long long)n_vocab) {
        snprintf(msg, msg_len, "%s: item %d '%s' is outside the vocabulary (0..%d)", source, pos, q, n_vocab - 1);
        return false;
    }
    *out = (int32_t)v;
    return true;
}

bool cli_parse_ids(const char *text, size_t len, bool commas, int32_t n_vocab, const char *source, int32_t **out,
                   int *n_out, char *msg, size_t msg_len)
{
    *out = NULL;
    *n_out = 0;
    int32_t *ids = malloc((len / 2 + 1) * sizeof *ids); /* an item takes at least 2 bytes with its separator */
    if (!ids) {
        snprintf(msg, msg_len, "%s: out of memory", source);
        return false;
    }
    int n = 0;
    enum { START, ITEM, COMMA } prev = START;
    size_t i = 0;
    bool ok = true;
    while (ok) {
        while (i < len && is_ws(text[i])) i++;
        if (i >= len) break;
        if (text[i] == ',') {
            if (prev != ITEM) {
                snprintf(msg, msg_len, "%s: item %d is empty", source, n + 1);
                ok = false;
            }
            prev = COMMA;
            i++;
            continue;
        }
        size_t b = i;
        while (i < len && text[i] != ',' && (commas || !is_ws(text[i]))) i++;
        size_t e = i;
        while (e > b && is_ws(text[e - 1])) e--;
        ok = parse_item(text + b, e - b, n + 1, n_vocab, source, &ids[n], msg, msg_len);
        n += ok;
        prev = ITEM;
    }
    if (ok && prev == COMMA) {
        snprintf(msg, msg_len, "%s: item %d is empty (trailing comma)", source, n + 1);
        ok = false;
    }
    if (ok && n == 0) {
        snprintf(msg, msg_len, "%s: the list is empty", source);
        ok = false;
    }
    if (!ok) {
        free(ids);
        return false;
    }
    *out = ids;
    *n_out = n;
    return true;
}
