/* nonspeech.c — a model's suppress lists derived from its vocabulary, as openai-whisper's
 * tokenizer makes them (tokenizer.py non_speech_tokens, decoding.py _get_suppress_tokens
 * for suppress_tokens="-1" and SuppressBlank), for a model file that has none: whisper.cpp's
 * ggml files, a CTranslate2 folder without config.json, a Hugging Face folder without
 * generation_config.json (sotto__model_finish stores what it makes). */
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define BPE_MAX 16

typedef struct ids_out {
    int32_t *v;                /* [BPE_MAX] */
    int n;
    bool bad;
} ids_out;

static void put_id(void *arg, int32_t id)
{
    ids_out *o = arg;
    if (id < 0) o->bad = true;
    if (o->n < BPE_MAX) o->v[o->n] = id;
    o->n++;
}

/* The one BPE (token_index.c) of the piece S[0..n) (n <= BPE_MAX): the ids into OUT,
 * their count, or -1 when a part is no token (a vocabulary without all 256 single bytes)
 * or memory ran out. */
static int bpe(sotto__bpe *b, const uint8_t *s, int n, int32_t *out)
{
    ids_out o = {out, 0, false};
    if (!sotto__bpe_piece(b, s, (size_t)n, put_id, &o) || o.bad) return -1;
    return o.n;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Sets the suppress lists as openai-whisper's decoder builds them for
 * suppress_tokens="-1" (decoding.py _get_suppress_tokens, SuppressBlank):
 * suppress = sorted(non_speech_tokens + transcribe, translate, startoftranscript,
 * startofprev, startoflm, nospeech); suppress_begin = encode(" ") + endoftext.
 * non_speech_tokens: the first token of " -" and " '", and of each symbol below, alone
 * and after a space, where it encodes to one token (always, for the musical signs).
 * Every piece is one pre-split chunk of tokenizer.py's regex (no letters, digits or
 * inner spaces), so it is byte-pair encoded whole. */
sotto_status sotto__nonspeech(const sotto_model *m, sotto__i32list *suppress, sotto__i32list *begin, sotto__err *err)
{
    static const char *const symbols[] = {
        "\"", "#", "(", ")", "*", "+", "/", ":", ";", "<", "=", ">", "@", "[", "\\", "]", "^", "_", "`", "{",
        "|", "}", "~", "\u300c", "\u300d", "\u300e", "\u300f", "<<", ">>", "<<<", ">>>", "--", "---", "-(",
        "-[", "('", "(\"", "((", "))", "(((", ")))", "[[", "]]", "{{", "}}", "\u266a\u266a", "\u266a\u266a\u266a",
        /* the miscellaneous symbols U+2640..U+267F: first token even when split */
        "\u2669", "\u266a", "\u266b", "\u266c", "\u266d", "\u266e", "\u266f",
    };
    const size_t n_sym = sizeof symbols / sizeof *symbols, first_misc = n_sym - 7;
    const sotto_model_info *h = &m->info;
    *suppress = *begin = (sotto__i32list){0};
    int32_t *list = malloc((2 * n_sym + 2 + 6) * sizeof *list);
    int32_t *blank = malloc((BPE_MAX + 1) * sizeof *blank);
    if (!list || !blank) {
        free(list), free(blank);
        return sotto__fail(err, SOTTO_ERR_NOMEM, "out of memory");
    }
    sotto__bpe v = {.m = m};
    int n = 0, k;
    int32_t ids[BPE_MAX];
    uint8_t buf[BPE_MAX];
    if ((k = bpe(&v, (const uint8_t *)" -", 2, ids)) > 0) list[n++] = ids[0];
    if ((k = bpe(&v, (const uint8_t *)" '", 2, ids)) > 0) list[n++] = ids[0];
    for (size_t s = 0; s < n_sym; s++) {
        size_t len = strlen(symbols[s]);
        for (int spaced = 0; spaced < 2; spaced++) {
            buf[0] = ' ';
            memcpy(buf + spaced, symbols[s], len);
            k = bpe(&v, buf, (int)len + spaced, ids);
            if (k == 1 || (k > 1 && s >= first_misc)) list[n++] = ids[0];
        }
    }
    int32_t extra[6] = {h->token_transcribe, h->token_translate, h->token_sot, h->token_startofprev,
                        h->token_startoflm, h->token_nospeech};
    for (int i = 0; i < 6; i++)
        if (extra[i] >= 0) list[n++] = extra[i];
    qsort(list, (size_t)n, sizeof *list, cmp_i32);
    int u = 0;
    for (int i = 0; i < n; i++)
        if (u == 0 || list[i] != list[u - 1]) list[u++] = list[i];
    int n_blank = bpe(&v, (const uint8_t *)" ", 1, ids), nb = 0;
    sotto__bpe_free(&v);
    for (int i = 0; i < n_blank && i < BPE_MAX; i++) blank[nb++] = ids[i];
    blank[nb++] = h->token_eot;
    *suppress = (sotto__i32list){list, u};
    *begin = (sotto__i32list){blank, nb};
    return SOTTO_OK;
}
