/* text.c — detokenizing (text.h; the public sotto_detokenize) and the compression ratio
 * of the temperature fallback, through zlib at its default level as Python's
 * zlib.compress. */
#include "text.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

char *sotto__detok(const sotto_model *m, const int32_t *ids, int n, bool specials)
{
    const int32_t eot = m->info.token_eot, tb = m->info.token_timestamp_begin;
    size_t total = 1;
    for (int pass = 0; pass < 2; pass++) {
        char *s = pass ? malloc(total) : NULL;
        if (pass && !s) return NULL;
        size_t o = 0;
        for (int i = 0; i < n; i++) {
            bool keep = ids[i] >= 0 && (ids[i] < eot || (specials && ids[i] < tb && ids[i] > eot));
            size_t len = 0;
            const char *b = keep ? sotto_token_bytes(m, ids[i], &len) : NULL;
            if (!b) continue;
            if (pass) memcpy(s + o, b, len);
            o += len;
        }
        if (!pass) {
            total = o + 1;
            continue;
        }
        s[o] = 0;
        return s;
    }
    return NULL;
}

sotto_status sotto_detokenize(const sotto_model *m, const int32_t *ids, int n_ids, char **text)
{
    if (!text) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "detokenize: no place for the text"});
    *text = NULL;
    if (!m || n_ids < 0 || (n_ids > 0 && !ids))
        return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "detokenize: no model, or no ids for a count > 0"});
    *text = sotto__detok(m, ids, n_ids, false);
    return *text ? SOTTO_OK : sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "detokenize: out of memory"});
}

static bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

void sotto__strip(const char *text, size_t n, size_t *start, size_t *len)
{
    size_t a = 0, b = n;
    while (a < b && space(text[a])) a++;
    while (b > a && space(text[b - 1])) b--;
    *start = a, *len = b - a;
}

double sotto__compression_ratio(const char *text, size_t n)
{
    if (n == 0) return 0;
    uLongf cap = compressBound((uLong)n);
    Bytef *buf = malloc(cap);
    if (!buf) return 0;
    int rc = compress2(buf, &cap, (const Bytef *)text, (uLong)n, Z_DEFAULT_COMPRESSION);
    free(buf);
    return rc == Z_OK && cap ? (double)n / (double)cap : 0;
}
