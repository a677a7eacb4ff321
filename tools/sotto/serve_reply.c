/* serve_reply.c — the bodies `sotto serve` answers with: a transcript in the requested
 * response_format, written by the writers of `sotto transcribe` (output.c) into memory so
 * the bytes are the CLI's; OpenAI's error object; the model list. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "output.h"
#include "serve.h"

/* Closes the memory stream F over *BUF; the buffer, or NULL (freed) after a write error. */
static char *finish(FILE *f, char **buf, size_t *n)
{
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0) bad = true;
    if (bad) {
        free(*buf);
        return NULL;
    }
    return *buf;
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
            out_json_string(f, text);
            fputs(", \"start\": ", f);
            out_json_number(f, w->start);
            fputs(", \"end\": ", f);
            out_json_number(f, w->end);
            fputc('}', f);
            first = false;
        }
    fputc(']', f);
}

/* verbose_json: the CLI's -f json, and with word timestamps OpenAI's top-level words
 * after its last member. */
static bool put_verbose(FILE *f, const sotto_result *r)
{
    if (!r->word_timestamps) {
        out_json(f, r);
        return true;
    }
    char *cli = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&cli, &n);
    if (!m) return false;
    out_json(m, r);
    if (!finish(m, &cli, &n)) return false;
    bool ok = n >= 2 && cli[n - 2] == '}' && cli[n - 1] == '\n'; /* out_json's end */
    if (ok) {
        fwrite(cli, 1, n - 2, f);
        put_top_words(f, r);
        fputs("}\n", f);
    }
    free(cli);
    return ok;
}

char *serve_render(const sotto_result *r, int format, size_t *n)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, n);
    if (!f) return NULL;
    static const int cli_format[] = {[SERVE_FMT_TEXT] = OUT_TXT, [SERVE_FMT_SRT] = OUT_SRT,
                                     [SERVE_FMT_VTT] = OUT_VTT, [SERVE_FMT_VERBOSE_JSON] = OUT_JSON};
    if (format == SERVE_FMT_JSON) {
        fputs("{\"text\": ", f);
        out_json_string(f, r->text);
        fputs("}\n", f);
    } else if (format == SERVE_FMT_VERBOSE_JSON) {
        if (!put_verbose(f, r)) {
            fclose(f);
            free(buf);
            return NULL;
        }
    } else {
        int index = 0;
        out_begin(f, cli_format[format]);
        for (int i = 0; i < r->n_segments; i++) out_segment(f, cli_format[format], &r->segments[i], NULL, &index);
    }
    return finish(f, &buf, n);
}

const char *serve_content_type(int format)
{
    switch (format) {
    case SERVE_FMT_JSON:
    case SERVE_FMT_VERBOSE_JSON: return "application/json";
    case SERVE_FMT_VTT: return "text/vtt; charset=utf-8";
    default: return "text/plain; charset=utf-8";
    }
}

static void put_or_null(FILE *f, const char *s)
{
    if (s) out_json_string(f, s);
    else fputs("null", f);
}

char *serve_error_json(const serve_error *e, size_t *n)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, n);
    if (!f) return NULL;
    fputs("{\"error\": {\"message\": ", f);
    out_json_string(f, e->message);
    fputs(", \"type\": ", f);
    put_or_null(f, e->type);
    fputs(", \"param\": ", f);
    put_or_null(f, e->param);
    fputs(", \"code\": ", f);
    put_or_null(f, e->code);
    fputs("}}\n", f);
    return finish(f, &buf, n);
}

char *serve_models_json(const char *model_id, size_t *n)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, n);
    if (!f) return NULL;
    fputs("{\"object\": \"list\", \"data\": [{\"id\": ", f);
    out_json_string(f, model_id);
    fputs(", \"object\": \"model\", \"created\": 0, \"owned_by\": \"sotto\"}]}\n", f);
    return finish(f, &buf, n);
}
