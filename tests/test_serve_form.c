/* test_serve_form.c — `sotto serve`'s form handling (tools/sotto/serve_form.c, serve_reply.c)
 * without a socket: values arriving in pieces as MHD's post processor hands them over, the
 * limits, every refusal with its param and code, the temperatures as `sotto transcribe
 * --temperature T` makes them, word granularity turning word timestamps on, verbose_json
 * with OpenAI's top-level words, and the error and model-list bodies. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "output.h"
#include "serve.h"

/* KEY=VALUE fed in pieces of PIECE bytes, as the post processor may split it. */
static void feed(serve_form *f, const char *key, const char *value, size_t piece)
{
    size_t n = strlen(value);
    if (n == 0) serve_form_field(f, key, value, 0, 0);
    for (size_t off = 0; off < n; off += piece)
        serve_form_field(f, key, value + off, off, n - off < piece ? n - off : piece);
}

static serve_config config(void)
{
    serve_config c = {.model_id = "tiny.en", .multilingual = 0, .fallback = true};
    c.tp = sotto_transcribe_params_default();
    return c;
}

/* Scans the head TEXT (N bytes) whole, then again a byte at a time; the status (the same
 * both ways, else -1), with *E the refusal's. */
static int head(const char *text, size_t n, serve_error *e)
{
    serve_head h = {0}, one = {0};
    int whole = serve_head_scan(&h, text, n, e), r = SERVE_HEAD_MORE;
    serve_error e1;
    for (size_t i = 1; i <= n && r == SERVE_HEAD_MORE; i++) r = serve_head_scan(&one, text, i, &e1);
    return r == whole ? whole : -1;
}

/* HEAD(TEXT) is refused with STATUS and a message holding WHAT. */
static bool head_refused(const char *text, size_t n, int status, const char *what)
{
    serve_error e = {0};
    int r = head(text, n, &e);
    if (r != SERVE_HEAD_BAD || e.http_status != status || !strstr(e.message, what)) {
        fprintf(stderr, "  head %.40s...: %d, %d '%s'\n", text, r, e.http_status, e.message);
        return false;
    }
    return true;
}

#define H(s) s, sizeof s - 1

/* Checks F and expects refusal with PARAM and CODE (or success when CODE is NULL). */
static bool refused(serve_form *f, bool translate, const char *param, const char *code)
{
    serve_config c = config();
    sotto_transcribe_params tp;
    const out_writer *format;
    serve_error e = {0};
    serve_form_end(f);
    bool ok = serve_form_check(f, &c, translate, &tp, &format, &e);
    if (!code) return ok;
    return !ok && e.http_status == 400 && e.code && !strcmp(e.code, code) &&
           (param ? e.param && !strcmp(e.param, param) : !e.param) && e.message[0];
}

/* BODY cut by its close delimiter (boundary XX) fed in pieces of PIECE bytes: the bytes
 * kept. */
static size_t kept(const char *body, size_t piece)
{
    serve_epilogue ep;
    serve_epilogue_init(&ep, "multipart/form-data; boundary=XX");
    size_t n = strlen(body), total = 0;
    bool cut = false;
    for (size_t off = 0; off < n; off += piece) {
        size_t len = n - off < piece ? n - off : piece, k = serve_epilogue_cut(&ep, body + off, len);
        if (k > len || (cut && k)) return (size_t)-1; /* more than given, or bytes after a cut */
        cut = cut || k < len;
        total += k;
    }
    return total;
}

/* The CLI's json CLI as OpenAI's verbose_json: {"task": TASK, ...} and "language": "en" as
 * "english" (the test's results are English or, translated, German). malloc'd. */
static char *openai_verbose(const char *cli, const char *task)
{
    const char *lang = strstr(cli, "\"language\": \"");
    char *out = malloc(strlen(cli) + 64);
    if (!out || !lang) abort();
    const char *code = lang + 13, *name = !strncmp(code, "en\"", 3) ? "english" : "german";
    sprintf(out, "{\"task\": \"%s\", %.*s\"language\": \"%s%s", task, (int)(lang - cli - 1), cli + 1, name,
            code + 2);
    return out;
}

static void test_epilogue(void)
{
    const char *part = "--XX\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--XY\r\n--X\r\r\n--XX";
    char body[256];
    const char *tails[] = {"--", "--\r\n", "--\r\n\r\n", "--\r\ngarbage", "--garbage", "--\r", "--\r\r\n"};
    const size_t keep[] = {2, 4, 4, 4, 2, 3, 3}; /* of the tail: the delimiter and its CRLF */
    for (size_t t = 0; t < sizeof tails / sizeof *tails; t++)
        for (size_t piece = 1; piece <= 9; piece++) {
            snprintf(body, sizeof body, "%s%s", part, tails[t]);
            CHECK(kept(body, piece) == strlen(part) + keep[t], "tail %zu, pieces of %zu: %zu of %zu", t, piece,
                  kept(body, piece), strlen(body));
        }
    snprintf(body, sizeof body, "%s\r\n", part); /* no close delimiter: all of it */
    CHECK(kept(body, 4) == strlen(body), "open body kept");
    serve_epilogue ep;
    const char *types[] = {"multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=\"\"",
                           "multipart/form-data; boundary=0123456789012345678901234567890123456789012345678901234567890123456789x"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        serve_epilogue_init(&ep, types[i]);
        CHECK(ep.len == 0 && serve_epilogue_cut(&ep, "\r\n--x--\r\n\r\n", 11) == 11, "no boundary: %s", types[i]);
    }
    serve_epilogue_init(&ep, "Multipart/Form-Data; BOUNDARY=\"a b\"; charset=x");
    CHECK(ep.len && !strcmp(ep.delim, "\r\n--a b--"), "quoted boundary: '%s'", ep.delim);
}

int main(void)
{
    test_epilogue();
    for (size_t piece = 1; piece <= 8; piece++) {
        serve_form f = {0};
        feed(&f, "response_format", "verbose_json", piece);
        feed(&f, "timestamp_granularities[]", "segment", piece);
        feed(&f, "prompt", "Elinor and Marianne.", piece);
        feed(&f, "temperature", "0.4", piece);
        feed(&f, "language", "en", piece);
        feed(&f, "model", "whisper-1", piece);
        feed(&f, "unknown_field", "ignored", piece);
        serve_form_end(&f);
        serve_config c = config();
        sotto_transcribe_params tp;
        const out_writer *format = NULL;
        serve_error e = {0};
        CHECK(serve_form_check(&f, &c, false, &tp, &format, &e), "pieces of %zu: %s", piece, e.message);
        CHECK(format == out_find("json"), "format %s", format ? format->name : "(none)");
        CHECK(tp.initial_prompt && !strcmp(tp.initial_prompt, "Elinor and Marianne."), "prompt");
        CHECK(tp.language && !strcmp(tp.language, "en") && !tp.translate, "language");
        /* --temperature 0.4 with fallback: 0.4, 0.6, 0.8, 1.0 */
        CHECK(tp.n_temperatures == 4 && tp.temperatures[0] == 0.4 && tp.temperatures[3] > 0.99 &&
              tp.temperatures[3] < 1.01, "temperatures: %d", tp.n_temperatures);
    }
    { /* the defaults: json, the library's temperatures, nothing else set */
        serve_form f = {0};
        serve_config c = config();
        sotto_transcribe_params tp, def = sotto_transcribe_params_default();
        const out_writer *format = NULL;
        serve_error e = {0};
        CHECK(serve_form_check(&f, &c, false, &tp, &format, &e), "%s", e.message);
        CHECK(format == serve_format("json") && !strcmp(format->mime, "application/json") && tp.n_temperatures == def.n_temperatures && !tp.initial_prompt &&
              !tp.language, "defaults");
        c.fallback = false; /* --no-fallback: the one temperature a request names */
        feed(&f, "temperature", "0.2", 3);
        CHECK(serve_form_check(&f, &c, false, &tp, &format, &e) && tp.n_temperatures == 1 &&
              tp.temperatures[0] == 0.2, "no fallback");
    }
    struct { const char *key, *value, *param, *code; } bad[] = {
        {"response_format", "docx", "response_format", "invalid_value"},
        {"response_format", "JSON", "response_format", "invalid_value"},
        {"temperature", "1.01", "temperature", "invalid_value"},
        {"temperature", "-0", NULL, NULL}, /* -0 is 0: fine */
        {"temperature", "nan", "temperature", "invalid_value"},
        {"temperature", "0.5x", "temperature", "invalid_value"},
        {"temperature", "1e-05", NULL, NULL}, /* Python's str(0.00001), as the openai client sends it */
        {"temperature", "+0.5", NULL, NULL},
        {"temperature", "5E-1", NULL, NULL},
        {"temperature", "2e0", "temperature", "invalid_value"},
        {"temperature", "1e", "temperature", "invalid_value"},
        {"temperature", "1e+", "temperature", "invalid_value"},
        {"temperature", "e5", "temperature", "invalid_value"},
        {"temperature", "0x1p-1", "temperature", "invalid_value"},
        {"temperature", " 0.5", "temperature", "invalid_value"},
        {"temperature", "inf", "temperature", "invalid_value"},
        {"model", "whisper-2", "model", "model_not_found"},
        {"language", "de", "language", "unsupported_language"},
        {"language", "auto", NULL, NULL},
        {"stream", "true", NULL, NULL}, /* server-sent events, of json (the default format) */
        {"stream", "false", NULL, NULL},
        {"stream", "yes", "stream", "invalid_value"},
        {"stream", "TRUE", "stream", "invalid_value"},
        {"timestamp_granularities[]", "word", "timestamp_granularities[]", "invalid_value"}, /* not verbose_json */
        {"timestamp_granularities[]", "segments", "timestamp_granularities[]", "invalid_value"},
        {"timestamp_granularities[]", "", "timestamp_granularities[]", "invalid_value"},
        {"timestamp_granularities[]", "segment-and-much-longer-than-any-value", "timestamp_granularities[]",
         "invalid_value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        serve_form f = {0};
        feed(&f, bad[i].key, bad[i].value, 5);
        CHECK(refused(&f, false, bad[i].param, bad[i].code), "%s=%s", bad[i].key, bad[i].value);
    }
    { /* base64 (a Realtime append's audio): RFC 4648's vectors; anything else refused */
        struct { const char *in, *out; } ok[] = {{"", ""}, {"Zg==", "f"}, {"Zm8=", "fo"}, {"Zm9v", "foo"},
                                                 {"Zm9vYg==", "foob"}, {"Zm9vYmE=", "fooba"}, {"Zm9vYmFy", "foobar"},
                                                 {"+/8=", "\xfb\xff"}};
        for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
            unsigned char out[16];
            size_t bad_at;
            long long n = serve_b64_decode(ok[i].in, strlen(ok[i].in), out, &bad_at);
            CHECK(n == (long long)strlen(ok[i].out) && !memcmp(out, ok[i].out, (size_t)n), "base64 '%s'", ok[i].in);
        }
        struct { const char *in; size_t at; } no[] = {{"Zg=", 3}, {"Zg", 2}, {"Z===", 1}, {"====", 0}, {"Zh==", 1},
                                                      {"Zm9=", 2}, {"Zm 9", 2}, {"Zm9v\n", 5}, {"Zg==Zm9v", 2},
                                                      {"Zm-v", 2}, {"Zm9\x80", 3}};
        for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
            unsigned char out[16];
            size_t bad_at = 99;
            long long n = serve_b64_decode(no[i].in, strlen(no[i].in), out, &bad_at);
            CHECK(n == -1 && bad_at == no[i].at, "base64 %s refused at %zu (%lld, at %zu)", no[i].in, no[i].at, n, bad_at);
        }
    }
    { /* stream=true: server-sent events of json or text, on transcriptions only */
        serve_form f = {0};
        feed(&f, "stream", "true", 2);
        feed(&f, "response_format", "srt", 2);
        CHECK(refused(&f, false, "response_format", "unsupported_value"), "stream=true with srt");
        serve_form g = {0};
        feed(&g, "stream", "true", 3);
        feed(&g, "response_format", "text", 3);
        CHECK(refused(&g, false, NULL, NULL) && serve_form_stream(&g), "stream=true with text");
        serve_form h = {0};
        feed(&h, "stream", "true", 1);
        CHECK(refused(&h, true, "stream", "unsupported_value"), "stream=true on a translation");
        serve_form k = {0};
        feed(&k, "stream", "false", 1);
        CHECK(refused(&k, false, NULL, NULL) && !serve_form_stream(&k), "stream=false");
    }
    { /* word granularity (with verbose_json) turns word timestamps on; segment alone does not */
        for (int with_segment = 0; with_segment < 2; with_segment++) {
            serve_form f = {0};
            feed(&f, "response_format", "verbose_json", 4);
            if (with_segment) feed(&f, "timestamp_granularities[]", "segment", 4);
            feed(&f, "timestamp_granularities[]", "word", 3);
            serve_form_end(&f);
            serve_config c = config();
            sotto_transcribe_params tp;
            const out_writer *format = NULL;
            serve_error e = {0};
            CHECK(serve_form_check(&f, &c, false, &tp, &format, &e) && format == out_find("json") &&
                  tp.word_timestamps == 1, "word (with segment: %d): %s", with_segment, e.message);
        }
        serve_form g = {0};
        feed(&g, "response_format", "verbose_json", 4);
        feed(&g, "timestamp_granularities[]", "segment", 4);
        serve_form_end(&g);
        serve_config c = config();
        sotto_transcribe_params tp;
        const out_writer *format = NULL;
        serve_error e = {0};
        CHECK(serve_form_check(&g, &c, false, &tp, &format, &e) && tp.word_timestamps == 0, "segment only");
    }
    { /* verbose_json: the CLI's JSON with OpenAI's task first and the language's name; with
       * words, OpenAI's top-level words added last */
        sotto_word w0[] = {{" Hello,", 0.0, 0.5, 0.9}, {" caf\xc3\xa9", 0.5, 1.25, 0.75}};
        sotto_word w1[] = {{"\"Yes.\"", 1.5, 2.0, 1.0}};
        sotto_segment segs[] = {{.id = 0, .start = 0, .end = 1.25, .text = " Hello, caf\xc3\xa9", .words = w0,
                                 .n_words = 2},
                                {.id = 1, .start = 1.5, .end = 2.0, .text = "\"Yes.\"", .words = w1, .n_words = 1},
                                {.id = 2, .start = 2.0, .end = 2.0, .text = ""}};
        sotto_result r = {.text = " Hello, caf\xc3\xa9\"Yes.\"", .language = "en", .duration = 3.0, .segments = segs,
                          .n_segments = 3, .word_timestamps = 1};
        char *cli = NULL;
        size_t n_cli = 0, n = 0;
        FILE *m = open_memstream(&cli, &n_cli);
        out_write(m, out_find("json"), &r, &(out_state){0});
        fclose(m);
        char *body = serve_render(&r, serve_format("verbose_json"), false, &n);
        char *want = openai_verbose(cli, "transcribe");
        const char *words = ", \"words\": [{\"word\": \"Hello,\", \"start\": 0.0, \"end\": 0.5}, "
                            "{\"word\": \"caf\\u00e9\", \"start\": 0.5, \"end\": 1.25}, "
                            "{\"word\": \"\\\"Yes.\\\"\", \"start\": 1.5, \"end\": 2.0}]}\n";
        size_t n_want = strlen(want);
        CHECK(body && strstr(cli, "\"words\": [{\"word\": \" Hello,\"") && n == n_want - 2 + strlen(words) &&
              !memcmp(body, want, n_want - 2) && !memcmp(body + n_want - 2, words, strlen(words)),
              "verbose_json with words:\n  %s\n  want: %s", body ? body : "(null)", want);
        free(body);
        free(want);
        r.word_timestamps = 0; /* without: the CLI's bytes alone */
        for (int i = 0; i < 3; i++) segs[i].words = NULL, segs[i].n_words = 0;
        free(cli);
        m = open_memstream(&cli, &n_cli);
        out_write(m, out_find("json"), &r, &(out_state){0});
        fclose(m);
        body = serve_render(&r, serve_format("verbose_json"), false, &n);
        want = openai_verbose(cli, "transcribe");
        CHECK(body && n == strlen(want) && !memcmp(body, want, n) && !strstr(body, "words"),
              "verbose_json without words:\n  %s\n  want: %s", body ? body : "(null)", want);
        free(body);
        free(want);
        r.language = "de"; /* a translation: its task, and the source language's name */
        free(cli);
        m = open_memstream(&cli, &n_cli);
        out_write(m, out_find("json"), &r, &(out_state){0});
        fclose(m);
        body = serve_render(&r, serve_format("verbose_json"), true, &n);
        const char *head = "{\"task\": \"translate\", \"text\": ";
        CHECK(body && !strncmp(body, head, strlen(head)) &&
                  strstr(body, ", \"language\": \"german\", \"duration\": 3.0}\n"),
              "verbose_json of a translation: %s", body ? body : "(null)");
        free(body);
        free(cli);
    }
    { /* MHD's pieces of the openai client's timestamp_granularities[]=word: an empty one at
       * offset 0, then "wo" at 0 and "rd" at 2 (once taken for an empty value and refused) */
        serve_form f = {0};
        feed(&f, "response_format", "verbose_json", 4);
        feed(&f, "timestamp_granularities[]", "segment", 7);
        serve_form_field(&f, "timestamp_granularities[]", "", 0, 0);
        serve_form_field(&f, "timestamp_granularities[]", "wo", 0, 2);
        serve_form_field(&f, "timestamp_granularities[]", "rd", 2, 2);
        serve_form_end(&f);
        CHECK(refused(&f, false, NULL, NULL) && f.granularity_word && f.granularity_segment && !f.granularity_bad[0],
              "an empty first piece: %s", f.granularity_bad);
    }
    { /* a value longer than its field: refused, naming it, never written past the buffer */
        serve_form f = {0};
        char big[SERVE_FIELD_MAX + 10];
        memset(big, 'x', sizeof big - 1);
        big[sizeof big - 1] = 0;
        feed(&f, "prompt", big, 1000);
        CHECK(f.n_prompt < SERVE_FIELD_MAX && refused(&f, false, "prompt", "field_too_long"), "long prompt");
        serve_form g = {0};
        feed(&g, "model", big, 7);
        CHECK(refused(&g, false, "model", "field_too_long"), "long model");
    }
    { /* pieces out of order (an offset that skips) are refused, not glued */
        serve_form f = {0};
        serve_form_field(&f, "language", "e", 0, 1);
        serve_form_field(&f, "language", "n", 5, 1);
        CHECK(refused(&f, false, "language", "field_too_long"), "offset gap");
    }
    { /* translation needs a multilingual model */
        serve_form f = {0};
        CHECK(refused(&f, true, "model", "unsupported_model"), "translate on tiny.en");
    }
    { /* the bodies */
        serve_error e;
        serve_error_set(&e, 400, "invalid_request_error", NULL, "x", "bad \"%s\"\n", "é");
        size_t n = 0;
        char *j = serve_error_json(&e, &n);
        const char *want = "{\"error\": {\"message\": \"bad \\\"\\u00e9\\\"\\n\", \"type\": \"invalid_request_error\", "
                           "\"param\": null, \"code\": \"x\"}}\n";
        CHECK(j && n == strlen(want) && !memcmp(j, want, n), "error json: %s", j ? j : "(null)");
        free(j);
        j = serve_models_json("tiny.en", true, &n);
        CHECK(j && strstr(j, "\"id\": \"tiny.en\"") && strstr(j, "\"object\": \"list\""), "models: %s", j ? j : "");
        free(j);
        j = serve_models_json("whisper-1", false, &n); /* GET /v1/models/whisper-1 */
        CHECK(j && !strcmp(j, "{\"id\": \"whisper-1\", \"object\": \"model\", \"created\": 0, \"owned_by\": \"sotto\"}\n") &&
                  n == strlen(j), "model: %s", j ? j : "");
        free(j);
    }
    { /* request heads (RFC 9112): what libmicrohttpd took or answered twice */
        serve_error e;
        CHECK(head(H("POST /v1/audio/transcriptions HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\nbody"), &e) ==
                  SERVE_HEAD_OK, "a valid head");
        serve_head h = {0};
        const char ok[] = "GET /health HTTP/1.0\r\n\r\nGET /x";
        CHECK(serve_head_scan(&h, ok, sizeof ok - 1, &e) == SERVE_HEAD_OK && h.at == 24 && h.minor == 0,
              "HTTP/1.0 needs no Host; the head's length (%zu)", h.at);
        CHECK(head(H("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n"), &e) == SERVE_HEAD_OK,
              "chunked alone");
        CHECK(head(H("GET / HTTP/1.1\r\nHo"), &e) == SERVE_HEAD_MORE, "an incomplete head waits");
        CHECK(head_refused(H("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\ncontent-length: 33\r\n\r\n"), 400,
                           "more than once"), "two Content-Lengths");
        CHECK(head_refused(H("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"), 400,
                           "more than once"), "two equal Content-Lengths");
        CHECK(head_refused(H("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551617\r\n\r\n"), 400,
                           "not a length"), "an overflowing Content-Length");
        CHECK(head_refused(H("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -5\r\n\r\n"), 400, "not a length"),
              "a negative Content-Length");
        CHECK(head_refused(H("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1 2\r\n\r\n"), 400, "not a length"),
              "Content-Length 1 2");
        CHECK(head_refused(H("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"),
                           400, "both"), "Transfer-Encoding with Content-Length");
        CHECK(head_refused(H("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), 501,
                           "only chunked"), "a transfer coding other than chunked");
        CHECK(head_refused(H("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"), 400, "HTTP/1.0"),
              "chunked in HTTP/1.0");
        CHECK(head_refused(H("GET /health HTTP/1.1\r\n\r\n"), 400, "Host"), "HTTP/1.1 without Host");
        CHECK(head_refused(H("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), 400, "Host"), "two Hosts");
        CHECK(head_refused(H("GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer k\0junk\r\n\r\n"), 400, "NUL"),
              "a NUL byte in a header");
        CHECK(head_refused(H("GET / HTTP/1.1\r\nHost: a\r\nX-Bad header: 1\r\n\r\n"), 400, "before its colon"),
              "a space in a header name");
        CHECK(head_refused(H("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n"), 400, "folding"), "obs-fold");
        CHECK(head_refused(H("GET / HTTP/1.1\nHost: a\n\n"), 400, "CR"), "bare LF");
        CHECK(head_refused(H("GET / HTTP/2.0\r\nHost: a\r\n\r\n"), 505, "HTTP/2.0"), "HTTP/2.0");
        CHECK(head_refused(H("GET / FTP\r\n\r\n"), 400, "HTTP version"), "not an HTTP version");
        /* a binary request line is refused at its first byte, whatever follows */
        serve_head b = {0};
        CHECK(serve_head_scan(&b, "\x16\x03\x01", 3, &e) == SERVE_HEAD_BAD && b.at == 1 && e.http_status == 400,
              "binary: at byte %zu", b.at);
        CHECK(head_refused(H("P\0ST / HTTP/1.1\r\n"), 400, "not HTTP"), "a NUL in the method");
        char big[SERVE_HEAD_MAX + 64];
        int n = snprintf(big, sizeof big, "GET / HTTP/1.1\r\nHost: a\r\nX-Big: ");
        memset(big + n, 'y', sizeof big - (size_t)n);
        CHECK(head_refused(big, SERVE_HEAD_MAX, 431, "longer"), "a head of SERVE_HEAD_MAX bytes is 431");
    }
    { /* NUL bytes, duplicated fields, strict temperatures (issue 23's 18) */
        serve_form f = {0};
        serve_form_field(&f, "response_format", "json\0srt", 0, 8);
        CHECK(refused(&f, false, "response_format", "invalid_value"), "a NUL in response_format");
        serve_form g = {0};
        feed(&g, "language", "en", 1);
        feed(&g, "language", "en", 2);
        CHECK(refused(&g, false, "language", "duplicate_field"), "language twice names the duplicate");
        serve_form g2 = {0};
        serve_form_field(&g2, "language", "", 0, 0); /* MHD's empty first piece, then the value */
        serve_form_field(&g2, "language", "en", 0, 2);
        CHECK(refused(&g2, false, NULL, NULL), "an empty piece at 0, then the value: one value");
        const char *bad_t[] = {" 0.5", "0x1p-1", "0.5 ", "inf", "nan", ".", "0..5", "-.", "--0", "+-1", "1e1.5"};
        for (size_t i = 0; i < sizeof bad_t / sizeof *bad_t; i++) {
            serve_form t = {0};
            feed(&t, "temperature", bad_t[i], 3);
            CHECK(refused(&t, false, "temperature", "invalid_value"), "temperature '%s' refused", bad_t[i]);
        }
        const char *good_t[] = {"0", "0.5", ".5", "1", "1.0", "0.25", "+0.5", "5e-1", "1e-05"};
        for (size_t i = 0; i < sizeof good_t / sizeof *good_t; i++) {
            serve_form t = {0};
            feed(&t, "temperature", good_t[i], 3);
            CHECK(refused(&t, false, NULL, NULL), "temperature '%s' taken", good_t[i]);
        }
    }
    { /* the JSON writer (output.c, the CLI's -f json too): U+FFFD for bytes that are not
       * well-formed UTF-8, over each maximal subpart as Python's errors="replace", never a
       * lone surrogate escape */
        struct { const char *in, *want; } u[] = {
            {"\xc3\xa9", "\\u00e9"},
            {"\xf0\x9f\x98\x80", "\\ud83d\\ude00"},          /* U+1F600: a pair */
            {"\xf4\x8f\xbf\xbf", "\\udbff\\udfff"},          /* U+10FFFF */
            {"\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd"},        /* a surrogate, U+D800 */
            {"\xed\xbf\xbf\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"},
            {"\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"}, /* above U+10FFFF */
            {"\xf7\xbf\xbf\xbf", "\\ufffd\\ufffd\\ufffd\\ufffd"},
            {"\xc0\xaf", "\\ufffd\\ufffd"},                  /* overlong '/' */
            {"\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd"},
            {"\xe2\x82" "a", "\\ufffda"},                        /* cut short: one U+FFFD */
            {"\xff\x80", "\\ufffd\\ufffd"},
            {"a\xe2", "a\\ufffd"},                            /* cut by the string's end */
        };
        for (size_t i = 0; i < sizeof u / sizeof *u; i++) {
            serve_error e;
            serve_error_set(&e, 400, "t", NULL, NULL, "%s", u[i].in);
            size_t n = 0;
            char *j = serve_error_json(&e, &n), want[128];
            snprintf(want, sizeof want, "{\"error\": {\"message\": \"%s\",", u[i].want);
            CHECK(j && !strncmp(j, want, strlen(want)), "utf-8 case %zu: %s", i, j ? j : "(null)");
            free(j);
        }
    }
    { /* json: OpenAI's text has no leading space */
        sotto_result r = {.text = " Hello there."};
        size_t n = 0;
        char *j = serve_render(&r, serve_format("json"), false, &n);
        const char *want = "{\"text\": \"Hello there.\"}\n";
        CHECK(j && n == strlen(want) && !memcmp(j, want, n), "json text: %s", j ? j : "(null)");
        free(j);
    }
    return check_summary();
}
