/* output.c — transcript writers (output.h) mirroring openai/whisper utils.py: WriteTXT
 * (each segment's text stripped, a line each), WriteSRT (numbered cues, hours always,
 * decimal comma), WriteVTT ("WEBVTT", cues with dotted milliseconds), WriteTSV (integer
 * milliseconds) and WriteJSON (the result dict: text, segments, language, plus
 * language_probability when detected and duration, as OpenAI's verbose_json has them).
 * Timestamps round to milliseconds half to even, as Python's round. */
#define _POSIX_C_SOURCE 200809L
#include "output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int out_format(const char *name)
{
    static const char *names[] = {"txt", "srt", "vtt", "tsv", "json"};
    if (strcmp(name, "all") == 0) return OUT_ALL;
    for (int i = 0; i < 5; i++)
        if (strcmp(name, names[i]) == 0) return 1 << i;
    return 0;
}

const char *out_ext(int format)
{
    switch (format) {
    case OUT_TXT: return "txt";
    case OUT_SRT: return "srt";
    case OUT_VTT: return "vtt";
    case OUT_TSV: return "tsv";
    default: return "json";
    }
}

void out_timestamp(char *buf, size_t n, double seconds, bool always_hours, char marker)
{
    long long ms = llrint(seconds * 1000.0);
    long long h = ms / 3600000, m = ms % 3600000 / 60000, s = ms % 60000 / 1000;
    ms %= 1000;
    if (always_hours || h > 0) snprintf(buf, n, "%02lld:%02lld:%02lld%c%03lld", h, m, s, marker, ms);
    else snprintf(buf, n, "%02lld:%02lld%c%03lld", m, s, marker, ms);
}

/* TEXT stripped of surrounding whitespace, with every occurrence of FROM replaced by TO. */
static void put_stripped(FILE *f, const char *text, const char *from, const char *to)
{
    size_t a = 0, b = strlen(text);
    while (a < b && strchr(" \t\n\r\v\f", text[a])) a++;
    while (b > a && strchr(" \t\n\r\v\f", text[b - 1])) b--;
    size_t k = from ? strlen(from) : 0;
    for (size_t i = a; i < b; i++) {
        if (k && i + k <= b && memcmp(text + i, from, k) == 0) {
            fputs(to, f);
            i += k - 1;
        } else {
            fputc(text[i], f);
        }
    }
}

static bool blank(const char *text)
{
    for (; *text; text++)
        if (!strchr(" \t\n\r\v\f", *text)) return false;
    return true;
}

void out_begin(FILE *f, int format)
{
    if (format == OUT_VTT) fputs("WEBVTT\n\n", f);
    if (format == OUT_TSV) fputs("start\tend\ttext\n", f);
}

/* One srt/vtt cue from START to END of TEXT (left out when blank). */
static void put_cue(FILE *f, int format, double start, double end, const char *text, int *index)
{
    char a[32], b[32];
    if (blank(text)) return;
    out_timestamp(a, sizeof a, start, format == OUT_SRT, format == OUT_SRT ? ',' : '.');
    out_timestamp(b, sizeof b, end, format == OUT_SRT, format == OUT_SRT ? ',' : '.');
    if (format == OUT_SRT) fprintf(f, "%d\n", ++*index);
    fprintf(f, "%s --> %s\n", a, b);
    put_stripped(f, text, "-->", "->");
    fputs("\n\n", f);
}

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* The cue of words W [N] (their texts joined); false when out of memory. */
static bool put_words(FILE *f, int format, const sotto_word *w, int n, int *index)
{
    size_t len = 1;
    for (int i = 0; i < n; i++) len += strlen(w[i].word);
    char *text = malloc(len);
    if (!text) return false;
    text[0] = 0;
    for (int i = 0, o = 0; i < n; i++) o += sprintf(text + o, "%s", w[i].word);
    put_cue(f, format, w[0].start, w[n - 1].end, text, index);
    free(text);
    return true;
}

/* S's words packed into cues as L says (whisper.cpp whisper_wrap_segment's rule, at word
 * boundaries); false when out of memory. */
static bool put_lines(FILE *f, int format, const sotto_segment *s, const out_lines *l, int *index)
{
    size_t acc = 0;
    int first = 0;
    for (int i = 0; i < s->n_words; i++) {
        size_t cur = utf8_chars(s->words[i].word);
        if (acc + cur > (size_t)l->max_len && i > first && (!l->split_on_word || s->words[i].word[0] == ' ')) {
            if (!put_words(f, format, s->words + first, i - first, index)) return false;
            first = i, acc = 0;
        }
        acc += cur;
    }
    return put_words(f, format, s->words + first, s->n_words - first, index);
}

bool out_segment(FILE *f, int format, const sotto_segment *s, const out_lines *lines, int *index)
{
    bool ok = true;
    switch (format) {
    case OUT_TXT:
        put_stripped(f, s->text, NULL, NULL);
        fputc('\n', f);
        break;
    case OUT_SRT:
    case OUT_VTT:
        if (lines && lines->max_len > 0 && s->n_words > 0 && !blank(s->text)) {
            ok = put_lines(f, format, s, lines, index);
            break;
        }
        put_cue(f, format, s->start, s->end, s->text, index);
        break;
    case OUT_TSV:
        fprintf(f, "%lld\t%lld\t", llrint(1000 * s->start), llrint(1000 * s->end));
        put_stripped(f, s->text, "\t", " ");
        fputc('\n', f);
        break;
    }
    fflush(f);
    return ok;
}

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

/* A JSON string as Python's json.dump (ensure_ascii): non-ASCII as \\uXXXX (UTF-16). */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
        if (c >= 0x80) {
            unsigned cp = c & (0x3f >> extra);
            int k = 1;
            for (; k <= extra && (p[k] & 0xc0) == 0x80; k++) cp = cp << 6 | (p[k] & 0x3f);
            if (c < 0xc0 || k <= extra) cp = 0xfffd, k = 1; /* malformed: the replacement character */
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

void out_json(FILE *f, const sotto_result *r)
{
    fputs("{\"text\": ", f);
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
    put_string(f, r->language);
    if (r->language_detected) {
        fputs(", \"language_probability\": ", f);
        put_number(f, r->language_probability);
    }
    fputs(", \"duration\": ", f);
    put_number(f, r->duration);
    fputs("}\n", f);
}

bool out_write_file(const char *path, int format, const sotto_result *r, const out_lines *lines)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) return false;
    FILE *f = fopen(tmp, "w");
    if (!f) return false;
    bool written = true;
    if (format == OUT_JSON) {
        out_json(f, r);
    } else {
        int index = 0;
        out_begin(f, format);
        for (int i = 0; i < r->n_segments && written; i++) written = out_segment(f, format, &r->segments[i], lines, &index);
    }
    bool ok = written && !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (ok) ok = rename(tmp, path) == 0;
    if (!ok) remove(tmp);
    return ok;
}

void out_json_string(FILE *f, const char *s)
{
    put_string(f, s);
}

void out_json_number(FILE *f, double x)
{
    put_number(f, x);
}
