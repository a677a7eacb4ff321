/* serve_form.c — the form fields of an OpenAI audio request (file aside: serve_http.c
 * streams it to disk) gathered piece by piece from libmicrohttpd's post processor, and
 * checked into the transcription parameters of that request over the server's defaults. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve.h"

void serve_error_set(serve_error *e, int http_status, const char *type, const char *param, const char *code,
                     const char *fmt, ...)
{
    e->http_status = http_status;
    e->type = type;
    e->param = param;
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
}

/* Appends DATA to BUF (CAP bytes, *N used, NUL kept); false when it does not fit. */
static bool append(char *buf, size_t cap, size_t *n, const char *data, uint64_t off, size_t size)
{
    if (off != *n || size >= cap - *n) return false;
    memcpy(buf + *n, data, size);
    *n += size;
    buf[*n] = 0;
    return true;
}

void serve_form_field(serve_form *f, const char *key, const char *data, uint64_t off, size_t size)
{
    struct { const char *name; char *buf; size_t cap; size_t *n; } fields[] = {
        {"model", f->model, sizeof f->model, &f->n_model},
        {"language", f->language, sizeof f->language, &f->n_language},
        {"temperature", f->temperature, sizeof f->temperature, &f->n_temperature},
        {"response_format", f->response_format, sizeof f->response_format, &f->n_response_format},
        {"prompt", f->prompt, sizeof f->prompt, &f->n_prompt},
        {"stream", f->stream, sizeof f->stream, &f->n_stream},
    };
    if (memchr(data, 0, size) && !f->has_nul[0]) /* C strings would end there: refused, not cut */
        snprintf(f->has_nul, sizeof f->has_nul, "%.*s", (int)sizeof f->has_nul - 1, key);
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        if (strcmp(key, fields[i].name) != 0) continue;
        /* a value starts at offset 0; the field has bytes already: it is given twice */
        if (off == 0 && *fields[i].n > 0) {
            if (!f->duplicate[0]) snprintf(f->duplicate, sizeof f->duplicate, "%s", key);
            return;
        }
        if (!append(fields[i].buf, fields[i].cap, fields[i].n, data, off, size) && !f->too_long[0]) {
            snprintf(f->too_long, sizeof f->too_long, "%s", key);
            f->too_long_max = fields[i].cap - 1;
        }
        return;
    }
    if (strcmp(key, "timestamp_granularities[]") == 0 || strcmp(key, "timestamp_granularities") == 0) {
        /* a new value: the one before is complete; but MHD may hand a value's start over as
         * an empty piece at offset 0 and then its bytes from offset 0 (seen with the openai
         * client's bodies): a value open with no bytes yet goes on */
        if (off == 0 && !(f->gran_open && f->n_gran == 0 && !f->gran_overflow)) serve_form_end(f);
        f->gran_open = true;
        if (!append(f->gran, sizeof f->gran, &f->n_gran, data, off, size)) f->gran_overflow = true;
    }
}

void serve_form_end(serve_form *f)
{
    if (!f->gran_open) return;
    if (!f->gran_overflow && strcmp(f->gran, "segment") == 0) f->granularity_segment = true;
    else if (!f->gran_overflow && strcmp(f->gran, "word") == 0) f->granularity_word = true;
    else if (!f->granularity_bad[0])
        snprintf(f->granularity_bad, sizeof f->granularity_bad, "%s%s", f->gran_overflow ? "(too long) " : "",
                 f->n_gran ? f->gran : "(empty)");
    f->gran_open = f->gran_overflow = false;
    f->n_gran = 0;
    f->gran[0] = 0;
}

static bool check_format(const serve_form *f, const out_writer **format, serve_error *e)
{
    *format = serve_format(f->n_response_format ? f->response_format : "json");
    if (*format) return true;
    serve_error_set(e, 400, "invalid_request_error", "response_format", "invalid_value",
                    "response_format '%s' is not one of %s", f->response_format, serve_format_names());
    return false;
}

/* S is a decimal number as clients write one: an optional sign, digits with at most one
 * '.', at least one digit, an optional exponent (Python's str(0.00001) is "1e-05"): no
 * space, hexadecimal, inf or nan, which strtod would also take. */
static bool decimal_number(const char *s)
{
    int digits = 0, dots = 0;
    if (*s == '-' || *s == '+') s++;
    for (; *s && *s != 'e' && *s != 'E'; s++) {
        if (*s >= '0' && *s <= '9') digits++;
        else if (*s == '.' && !dots) dots++;
        else return false;
    }
    if (!digits) return false;
    if (!*s) return true;
    s++; /* the exponent */
    if (*s == '-' || *s == '+') s++;
    if (!*s) return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}

/* The temperatures `sotto transcribe --temperature T` tries (the library's schedule, as
 * openai's command line: T, T + 0.2, ... up to 1.0, or T alone without fallback). */
static bool check_temperature(const serve_form *f, const serve_config *cfg, sotto_transcribe_params *tp,
                              serve_error *e)
{
    if (!f->n_temperature && cfg->fallback) return true; /* the library's defaults, as the CLI's */
    double t0 = 0;
    if (f->n_temperature) {
        char *end;
        errno = 0;
        t0 = strtod(f->temperature, &end);
        if (!decimal_number(f->temperature) || *end || errno || !isfinite(t0) || t0 < 0 || t0 > 1) {
            serve_error_set(e, 400, "invalid_request_error", "temperature", "invalid_value",
                            "temperature must be a number from 0 to 1, not '%s'", f->temperature);
            return false;
        }
    }
    sotto_transcribe_params_temperatures(tp, t0, cfg->fallback ? 0.2 : 0); /* t0 was checked */
    return true;
}

bool serve_form_stream(const serve_form *f)
{
    return f->n_stream && strcmp(f->stream, "true") == 0;
}

bool serve_form_check(const serve_form *f, const serve_config *cfg, bool translate, sotto_transcribe_params *tp,
                      const out_writer **format, serve_error *e)
{
    *tp = cfg->tp;
    if (f->has_nul[0]) {
        serve_error_set(e, 400, "invalid_request_error", f->has_nul, "invalid_value",
                        "the value of '%s' has a NUL byte", f->has_nul);
        return false;
    }
    if (f->duplicate[0]) {
        serve_error_set(e, 400, "invalid_request_error", f->duplicate, "duplicate_field",
                        "the field '%s' is given more than once", f->duplicate);
        return false;
    }
    if (f->too_long[0]) {
        serve_error_set(e, 400, "invalid_request_error", f->too_long, "field_too_long",
                        "the value of '%s' is too long (at most %zu bytes)", f->too_long, f->too_long_max);
        return false;
    }
    if (!check_format(f, format, e)) return false;
    if (f->n_stream && strcmp(f->stream, "false") != 0 && strcmp(f->stream, "true") != 0) {
        serve_error_set(e, 400, "invalid_request_error", "stream", "invalid_value",
                        "stream must be true or false, not '%s'", f->stream);
        return false;
    }
    if (serve_form_stream(f) && translate) {
        serve_error_set(e, 400, "invalid_request_error", "stream", "unsupported_value",
                        "stream=true is for /v1/audio/transcriptions: translations are answered whole");
        return false;
    }
    if (serve_form_stream(f) && *format != serve_format("json") && *format != serve_format("text")) {
        serve_error_set(e, 400, "invalid_request_error", "response_format", "unsupported_value",
                        "stream=true answers with server-sent events (transcript.text.delta, then "
                        "transcript.text.done): response_format must be json or text, not %s", f->response_format);
        return false;
    }
    if (f->n_model && strcmp(f->model, cfg->model_id) != 0 && strcmp(f->model, "whisper-1") != 0) {
        serve_error_set(e, 400, "invalid_request_error", "model", "model_not_found",
                        "model '%s' is not served here: this server runs '%s' (whisper-1 names it too)", f->model,
                        cfg->model_id);
        return false;
    }
    if (f->granularity_bad[0]) {
        serve_error_set(e, 400, "invalid_request_error", "timestamp_granularities[]", "invalid_value",
                        "timestamp_granularities[] '%s' is not one of segment, word", f->granularity_bad);
        return false;
    }
    bool verbose = f->n_response_format && strcmp(f->response_format, "verbose_json") == 0;
    if ((f->granularity_segment || f->granularity_word) && !verbose) {
        serve_error_set(e, 400, "invalid_request_error", "timestamp_granularities[]", "invalid_value",
                        "timestamp_granularities[] needs response_format verbose_json");
        return false;
    }
    if (f->granularity_word) tp->word_timestamps = 1; /* OpenAI's words: openai-whisper's word_timestamps */
    tp->without_logprobs = !verbose; /* the one answer that has avg_logprob */
    if (!check_temperature(f, cfg, tp, e)) return false;
    if (translate && !cfg->multilingual) {
        serve_error_set(e, 400, "invalid_request_error", "model", "unsupported_model",
                        "model '%s' is English-only: it cannot translate (serve a multilingual model)", cfg->model_id);
        return false;
    }
    tp->translate = translate;
    if (f->n_language && strcasecmp(f->language, "auto") != 0) {
        bool known = cfg->multilingual ? sotto_language_token(cfg->model, f->language) >= 0
                                       : strcmp(f->language, "en") == 0;
        if (!known) {
            char why[256];
            serve_language_error(f->language, cfg, why, sizeof why);
            serve_error_set(e, 400, "invalid_request_error", "language", "unsupported_language", "%s", why);
            return false;
        }
        tp->language = f->language;
    }
    int n_ids;
    if (f->n_prompt && cfg->model && sotto_tokenize(cfg->model, f->prompt, NULL, 0, &n_ids)) { /* named as the form's */
        const char *why = sotto_last_error(), *colon = strstr(why, ": ");
        serve_error_set(e, 400, "invalid_request_error", "prompt", "invalid_value", "prompt: %s",
                        colon ? colon + 2 : why);
        return false;
    }
    if (f->n_prompt) tp->initial_prompt = f->prompt; /* batched: every chunk's, as the pipeline's initial_prompt */
    if (sotto_transcribe_params_check(tp)) { /* the library's rules, over what the request set */
        serve_error_set(e, 400, "invalid_request_error", NULL, "invalid_value", "%s", sotto_last_error());
        return false;
    }
    return true;
}

void serve_language_error(const char *lang, const serve_config *cfg, char *out, size_t n)
{
    const char *code = sotto_language_code(lang);
    if (!sotto_language_name(lang)) /* not a code: a name ("english"), or nothing */
        snprintf(out, n, "language '%s' is not an ISO-639-1 code%s%s%s", lang, code ? " (its code: '" : "",
                 code ? code : "", code ? "')" : "");
    else if (cfg->multilingual)
        snprintf(out, n, "language '%s': model '%s' does not know it", lang, cfg->model_id);
    else
        snprintf(out, n, "language '%s': model '%s' is English-only (en)", lang, cfg->model_id);
}

void serve_epilogue_init(serve_epilogue *ep, const char *content_type)
{
    *ep = (serve_epilogue){0};
    const char *b = content_type;
    while (b && *b && strncasecmp(b, "boundary=", 9) != 0) b++;
    if (!b || !*b) return;
    b += 9;
    size_t n = *b == '"' ? strcspn(++b, "\"") : strcspn(b, "; \t");
    if (n == 0 || n > 70 || memchr(b, '\r', n)) return; /* RFC 2046: 1 to 70 characters, no CR */
    ep->len = (size_t)snprintf(ep->delim, sizeof ep->delim, "\r\n--%.*s--", (int)n, b);
}

size_t serve_epilogue_cut(serve_epilogue *ep, const char *data, size_t size)
{
    if (!ep->len) return size;
    size_t i = 0;
    while (ep->state == 0 && i < size) {
        if (ep->matched == 0) { /* the delimiter's one CR is its first byte */
            const char *cr = memchr(data + i, '\r', size - i);
            if (!cr) return size;
            i = (size_t)(cr - data);
        }
        char c = data[i++];
        if (c == ep->delim[ep->matched]) ep->matched++;
        else ep->matched = c == '\r';
        if (ep->matched == ep->len) ep->state = 1;
    }
    for (; (ep->state == 1 || ep->state == 2) && i < size; i++, ep->state++) /* its line's CRLF */
        if (data[i] != "\r\n"[ep->state - 1]) {
            ep->state = 3;
            break;
        }
    return ep->state == 3 ? i : size;
}
