/* serve_reply.c — the bodies `sotto serve` answers with: a transcript in the requested
 * response_format, written by the writers of `sotto transcribe` (output.c) into memory so
 * the bytes are the CLI's; OpenAI's error object; the model list. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* OpenAI's json: {"text": ...} alone, without the leading space openai-whisper's text has
 * (as OpenAI's API answers). */
static void text_json_end(FILE *f, const sotto_result *r, out_state *st)
{
    const char *text = r->text;
    while (*text == ' ') text++;
    fputs("{\"text\": ", f);
    out_json_string(f, text);
    fputs("}\n", f);
}

/* OpenAI's text: the json answer's text and a newline (one paragraph, where the CLI's txt
 * puts each segment on a line of its own, as openai-whisper's writer does). */
static void text_plain_end(FILE *f, const sotto_result *r, out_state *st)
{
    const char *text = r->text;
    while (*text == ' ') text++;
    fputs(text, f);
    fputc('\n', f);
}

static void no_begin(FILE *f, out_state *st) {}
static bool no_segment(FILE *f, const sotto_segment *s, out_state *st) { return true; }

static const out_writer text_json = {"json", "json", "application/json", no_begin, no_segment, text_json_end};
static const out_writer text_plain = {"text", "txt", "text/plain; charset=utf-8", no_begin, no_segment,
                                      text_plain_end};

/* OpenAI's response_format names: the server's own json, else a writer of the CLI's. */
static const struct {
    const char *name;
    const out_writer *own;
    const char *cli;
} formats[] = {{"json", &text_json, NULL}, {"text", &text_plain, NULL}, {"srt", NULL, "srt"}, {"vtt", NULL, "vtt"},
               {"verbose_json", NULL, "json"}};

const out_writer *serve_format(const char *name)
{
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
        if (strcmp(name, formats[i].name) == 0) return formats[i].own ? formats[i].own : out_find(formats[i].cli);
    return NULL;
}

const char *serve_format_names(void)
{
    return "json, text, srt, vtt, verbose_json";
}

char *serve_render(const sotto_result *r, const out_writer *format, bool translate, size_t *n)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, n);
    if (!f) return NULL;
    out_state st = {.top_words = r->word_timestamps, .task = translate ? "translate" : "transcribe"};
    if (!out_write(f, format, r, &st)) {
        fclose(f);
        free(buf);
        return NULL;
    }
    return finish(f, &buf, n);
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

char *serve_models_json(const char *model_id, bool list, size_t *n)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, n);
    if (!f) return NULL;
    fputs(list ? "{\"object\": \"list\", \"data\": [{\"id\": " : "{\"id\": ", f);
    out_json_string(f, model_id);
    fputs(", \"object\": \"model\", \"created\": 0, \"owned_by\": \"sotto\"}", f);
    /* the list names it whisper-1 too, as requests may: a client that looks for OpenAI's
     * name in the list finds it */
    if (list && strcmp(model_id, "whisper-1") != 0)
        fputs(", {\"id\": \"whisper-1\", \"object\": \"model\", \"created\": 0, \"owned_by\": \"sotto\"}", f);
    fputs(list ? "]}\n" : "\n", f);
    return finish(f, &buf, n);
}
