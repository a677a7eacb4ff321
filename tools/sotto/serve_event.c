/* serve_event.c — the server events of a Realtime session written as JSON text (the json
 * writer's strings: invalid UTF-8 as U+FFFD, since a WebSocket text frame must be UTF-8),
 * numbered per session, and OpenAI's error event; both halves of a session (serve_rt.c,
 * serve_turn.c) and its transport (serve_ws.c) write through here. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdlib.h>

#include "output.h"
#include "serve_rt.h"

bool rt_event_begin(serve_rt *rt, rt_event *ev, const char *type)
{
    ev->buf = NULL, ev->n = 0;
    ev->f = open_memstream(&ev->buf, &ev->n);
    if (!ev->f) return false;
    long long id = atomic_fetch_add(&rt->n_event, 1) + 1;
    fprintf(ev->f, "{\"event_id\": \"event_%lld\", \"type\": \"%s\"", id, type);
    return true;
}

void rt_put_str(rt_event *ev, const char *key, const char *value)
{
    fprintf(ev->f, ", \"%s\": ", key);
    if (value) out_json_string(ev->f, value); /* invalid UTF-8 as U+FFFD: a text frame must be UTF-8 */
    else fputs("null", ev->f);
}

void rt_put_int(rt_event *ev, const char *key, long long value)
{
    fprintf(ev->f, ", \"%s\": %lld", key, value);
}

void rt_put_raw(rt_event *ev, const char *key, const char *json)
{
    fprintf(ev->f, ", \"%s\": %s", key, json);
}

void rt_event_send(serve_rt *rt, rt_event *ev)
{
    fputc('}', ev->f);
    bool ok = !ferror(ev->f);
    if (fclose(ev->f) != 0) ok = false;
    if (ok) rt->send(rt->user, ev->buf); /* it takes the text */
    else free(ev->buf);
}

static void verror(serve_rt *rt, const char *type, const char *code, const char *param, const char *fmt, va_list ap)
{
    char msg[640];
    vsnprintf(msg, sizeof msg, fmt, ap);
    rt_event ev;
    if (!rt_event_begin(rt, &ev, "error")) return;
    fputs(", \"error\": {\"type\": ", ev.f);
    out_json_string(ev.f, type);
    fputs(", \"code\": ", ev.f);
    out_json_string(ev.f, code);
    fputs(", \"message\": ", ev.f);
    out_json_string(ev.f, msg);
    fputs(", \"param\": ", ev.f);
    if (param) out_json_string(ev.f, param);
    else fputs("null", ev.f);
    fputs(", \"event_id\": ", ev.f);
    if (rt->client_event[0]) out_json_string(ev.f, rt->client_event);
    else fputs("null", ev.f);
    fputc('}', ev.f);
    rt_event_send(rt, &ev);
}

void rt_error(serve_rt *rt, const char *type, const char *code, const char *param, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(rt, type, code, param, fmt, ap);
    va_end(ap);
}

void serve_rt_error(serve_rt *rt, const char *code, const char *param, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(rt, "invalid_request_error", code, param, fmt, ap);
    va_end(ap);
}

void rt_new_item(serve_rt *rt, char out[32])
{
    long long n = atomic_fetch_add(&rt->n_item, 1) + 1;
    snprintf(out, 32, "item_%d_%lld", rt->id, n);
}

