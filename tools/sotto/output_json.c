/* output_json.c — the json writer (output.h): openai-whisper's WriteJSON, the result dict
 * (text, segments, language, plus language_probability when detected and duration, as
 * OpenAI's verbose_json has them; words in every segment with word timestamps), strings
 * and numbers as Python's json.dump writes them. For sotto serve's verbose_json, on
 * request, OpenAI's "task" first, the language's name, and OpenAI's top-level words last. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

/* A double as Python's repr: the shortest digits that read back as the same value,
 * positional for exponents -4 .. 15 (with ".0" when integral), else d.ddde+XX. */
static void put_number(FILE *f, double x)
{
    if (isnan(x) || isinf(x)) {
        fputs(isnan(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity", f);
        return;
    }
    char e[40], digits[24];
    for (int p = 1; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, x);
        if (strtod(e, NULL) == x) break;
    }
    const char *m = e[0] == '-' ? e + 1 : e;
    int n = 0;
    for (const char *c = m; *c && *c != 'e'; c++)
        if (*c != '.') digits[n++] = *c;
    digits[n] = 0;
    int exp = atoi(strchr(e, 'e') + 1);
    if (e[0] == '-') fputc('-', f);
    if (exp < -4 || exp >= 16) {
        fprintf(f, "%c%s%s", digits[0], n > 1 ? "." : "", digits + 1);
        fprintf(f, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
    } else if (exp < 0) {
        fprintf(f, "0.%.*s%s", -exp - 1, "0000", digits);
    } else if (n <= exp + 1) {
        fprintf(f, "%s%.*s.0", digits, exp + 1 - n, "0000000000000000");
    } else {
        fprintf(f, "%.*s.%s", exp + 1, digits, digits + exp + 1);
    }
}

/* The code point of the UTF-8 sequence at P, *N its bytes; for bytes that do not form
 * one (a stray continuation byte, a lead byte C0, C1 or F5-FF, a sequence cut short, an
 * overlong one, a surrogate U+D800-DFFF, above U+10FFFF: RFC 3629's table of well-formed
 * sequences) U+FFFD over the maximal subpart (*N >= 1), as Python's errors="replace". */
static unsigned utf8_next(const unsigned char *p, int *n)
{
    unsigned c = p[0], lo = 0x80, hi = 0xbf;
    int extra = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    *n = 1;
    if (c < 0x80) return c;
    if (!extra) return 0xfffd;
    if (c == 0xe0) lo = 0xa0;      /* E0 80-9F: overlong */
    else if (c == 0xed) hi = 0x9f; /* ED A0-BF: surrogates */
    else if (c == 0xf0) lo = 0x90; /* F0 80-8F: overlong */
    else if (c == 0xf4) hi = 0x8f; /* F4 90-BF: above U+10FFFF */
    unsigned cp = c & (0x3f >> extra);
    for (int k = 1; k <= extra; k++) { /* a NUL ends the string: it is no continuation byte */
        unsigned b = p[k];
        if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xbf)) {
            *n = k;
            return 0xfffd;
        }
        cp = cp << 6 | (b & 0x3f);
    }
    *n = extra + 1;
    return cp;
}

/* A JSON string as Python's json.dump (ensure_ascii): non-ASCII as \\uXXXX (UTF-16, a
 * pair above U+FFFF), and U+FFFD for bytes that are not well-formed UTF-8, so a reader
 * never meets a lone surrogate. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        if (c >= 0x80) {
            int k;
            unsigned cp = utf8_next(p, &k);
            p += k;
            if (cp >= 0x10000) {
                cp -= 0x10000;
                fprintf(f, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
            } else {
                fprintf(f, "\\u%04x", cp);
            }
            continue;
        }
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\r') fputs("\\r", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c == '\b') fputs("\\b", f);
        else if (c == '\f') fputs("\\f", f);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc((int)c, f);
        p++;
    }
    fputc('"', f);
}

/* R's words over all its segments as OpenAI's verbose_json has them at the top level:
 * , "words": [{"word": ..., "start": ..., "end": ...}, ...] (the word without the leading
 * space openai-whisper's words carry). */
static void put_top_words(FILE *f, const sotto_result *r)
{
    fputs(", \"words\": [", f);
    bool first = true;
    for (int i = 0; i < r->n_segments; i++)
        for (int k = 0; k < r->segments[i].n_words; k++) {
            const sotto_word *w = &r->segments[i].words[k];
            const char *text = w->word;
            while (*text == ' ') text++;
            fputs(first ? "{\"word\": " : ", {\"word\": ", f);
            put_string(f, text);
            fputs(", \"start\": ", f);
            put_number(f, w->start);
            fputs(", \"end\": ", f);
            put_number(f, w->end);
            fputc('}', f);
            first = false;
        }
    fputc(']', f);
}

void out_json_end(FILE *f, const sotto_result *r, out_state *st)
{
    fputs("{", f);
    if (st->task) {
        fputs("\"task\": ", f);
        put_string(f, st->task);
        fputs(", ", f);
    }
    fputs("\"text\": ", f);
    put_string(f, r->text);
    fputs(", \"segments\": [", f);
    for (int i = 0; i < r->n_segments; i++) {
        const sotto_segment *s = &r->segments[i];
        fprintf(f, "%s{\"id\": %d, \"seek\": %lld, \"start\": ", i ? ", " : "", s->id, (long long)s->seek);
        put_number(f, s->start);
        fputs(", \"end\": ", f);
        put_number(f, s->end);
        fputs(", \"text\": ", f);
        put_string(f, s->text);
        fputs(", \"tokens\": [", f);
        for (int t = 0; t < s->n_tokens; t++) fprintf(f, "%s%d", t ? ", " : "", (int)s->tokens[t]);
        fputs("], \"temperature\": ", f);
        put_number(f, s->temperature);
        fputs(", \"avg_logprob\": ", f);
        put_number(f, s->avg_logprob);
        fputs(", \"compression_ratio\": ", f);
        put_number(f, s->compression_ratio);
        fputs(", \"no_speech_prob\": ", f);
        put_number(f, s->no_speech_prob);
        if (r->word_timestamps) {
            fputs(", \"words\": [", f);
            for (int w = 0; w < s->n_words; w++) {
                const sotto_word *x = &s->words[w];
                fputs(w ? ", {\"word\": " : "{\"word\": ", f);
                put_string(f, x->word);
                fputs(", \"start\": ", f);
                put_number(f, x->start);
                fputs(", \"end\": ", f);
                put_number(f, x->end);
                fputs(", \"probability\": ", f);
                put_number(f, x->probability);
                fputc('}', f);
            }
            fputc(']', f);
        }
        fputc('}', f);
    }
    fputs("], \"language\": ", f);
    const char *name = st->task ? sotto_language_name(r->language) : NULL;
    put_string(f, name ? name : r->language);
    if (r->language_detected) {
        fputs(", \"language_probability\": ", f);
        put_number(f, r->language_probability);
    }
    fputs(", \"duration\": ", f);
    put_number(f, r->duration);
    if (st->top_words) put_top_words(f, r);
    fputs("}\n", f);
}

void out_json_string(FILE *f, const char *s)
{
    put_string(f, s);
}

void out_json_number(FILE *f, double x)
{
    put_number(f, x);
}
