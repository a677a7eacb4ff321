/* serve_head.c — the strict check of an HTTP/1.x request head (RFC 9112) that `sotto
 * serve`'s front door (serve_door.c) runs on the bytes of each connection before
 * libmicrohttpd reads them: one byte at a time, so a binary request line is refused at its
 * first byte, and the framing headers (Content-Length, Transfer-Encoding, Host) counted. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "serve.h"

enum { RL_METHOD, RL_TARGET, RL_VERSION, RL_CR, H_START, H_NAME, H_VALUE, H_CR, END_CR, DONE };

/* RFC 9110 5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
 * "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA */
static bool tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int bad(serve_head *h, serve_error *e, int status, const char *fmt, const char *arg)
{
    serve_error_set(e, status, "invalid_request_error", NULL, status == 431 ? "header_too_large"
                    : status == 501 ? "not_implemented" : status == 505 ? "http_version" : "bad_request",
                    fmt, arg);
    h->state = -1;
    return SERVE_HEAD_BAD;
}

/* The value of a header whose value the framing depends on. */
static int header_done(serve_head *h, serve_error *e)
{
    size_t n = h->n_value;
    while (n && (h->value[n - 1] == ' ' || h->value[n - 1] == '\t')) n--; /* OWS at the end */
    h->value[n] = 0;
    if (!strcmp(h->name, "content-length")) {
        h->n_length++;
        unsigned long long v = 0;
        bool ok = n > 0 && n <= 18 && !h->value_long; /* 18 digits: no overflow anywhere */
        for (size_t i = 0; ok && i < n; i++) {
            ok = h->value[i] >= '0' && h->value[i] <= '9';
            v = v * 10 + (unsigned)(h->value[i] - '0');
        }
        if (!ok) return bad(h, e, 400, "Content-Length '%s' is not a length in bytes", h->value);
        h->length = v;
    } else if (!strcmp(h->name, "transfer-encoding")) {
        h->n_te++;
        h->chunked = !h->value_long && strcasecmp(h->value, "chunked") == 0;
        if (!h->chunked)
            return bad(h, e, 501, "Transfer-Encoding '%s' is not supported: only chunked is", h->value);
    } else if (!strcmp(h->name, "host")) {
        h->n_host++;
    }
    return SERVE_HEAD_MORE;
}

/* The head is complete: its framing must be unambiguous (RFC 9112 6.1, 6.3) and an
 * HTTP/1.1 request must name one Host (3.2). */
static int head_done(serve_head *h, serve_error *e)
{
    if (h->n_length > 1) return bad(h, e, 400, "%s", "Content-Length is given more than once");
    if (h->n_te > 1) return bad(h, e, 400, "%s", "Transfer-Encoding is given more than once");
    if (h->n_te && h->n_length) return bad(h, e, 400, "%s", "both Transfer-Encoding and Content-Length are given");
    if (h->n_te && h->minor == 0) return bad(h, e, 400, "%s", "Transfer-Encoding in an HTTP/1.0 request");
    if (h->n_host > 1) return bad(h, e, 400, "%s", "Host is given more than once");
    if (h->minor == 1 && h->n_host == 0) return bad(h, e, 400, "%s", "an HTTP/1.1 request must have a Host header");
    h->state = DONE;
    return SERVE_HEAD_OK;
}

static int version_done(serve_head *h, serve_error *e)
{
    const char *v = h->version;
    if (!strcmp(v, "HTTP/1.1") || !strcmp(v, "HTTP/1.0")) {
        h->minor = v[7] - '0';
        return SERVE_HEAD_MORE;
    }
    if (strlen(v) == 8 && !strncmp(v, "HTTP/", 5) && v[5] >= '0' && v[5] <= '9' && v[6] == '.' && v[7] >= '0' &&
        v[7] <= '9')
        return bad(h, e, 505, "%s is not supported: HTTP/1.1 and HTTP/1.0 are", v);
    return bad(h, e, 400, "the request line ends in '%s', not an HTTP version", v);
}

/* One byte C of the request line. */
static int line_byte(serve_head *h, unsigned char c, serve_error *e)
{
    switch (h->state) {
    case RL_METHOD:
        if (c == ' ' && h->n_method) h->state = RL_TARGET;
        else if (tchar(c) && h->n_method + 1 < sizeof h->method) h->method[h->n_method++] = (char)c;
        else return bad(h, e, 400, "%s", "the request line is not HTTP (a method, a path and a version)");
        return SERVE_HEAD_MORE;
    case RL_TARGET:
        if (c == ' ' && h->n_target) h->state = RL_VERSION;
        else if (c > 0x20 && c < 0x7f) h->n_target++;
        else return bad(h, e, 400, "%s", "the request target has a space, a control byte or a byte above 0x7e");
        return SERVE_HEAD_MORE;
    case RL_VERSION:
        if (c == '\r') h->state = RL_CR;
        else if (c > 0x20 && c < 0x7f && h->n_version + 1 < sizeof h->version) h->version[h->n_version++] = (char)c;
        else return bad(h, e, 400, "%s", "the request line does not end in an HTTP version and CRLF");
        return SERVE_HEAD_MORE;
    default: /* RL_CR */
        if (c != '\n') return bad(h, e, 400, "%s", "a CR not followed by LF in the request line");
        h->state = H_START;
        return version_done(h, e);
    }
}

/* One byte C of a header line or of the empty line that ends the head. */
static int header_byte(serve_head *h, unsigned char c, serve_error *e)
{
    switch (h->state) {
    case H_START:
        if (c == '\r') h->state = END_CR;
        else if (c == ' ' || c == '\t') return bad(h, e, 400, "%s", "a header line starts with white space (obsolete folding)");
        else if (tchar(c)) {
            h->state = H_NAME;
            h->n_name = 0;
            h->name[h->n_name++] = (char)(c | ((c >= 'A' && c <= 'Z') ? 0x20 : 0));
        } else return bad(h, e, 400, "%s", "a header name has a byte that is not a token character");
        return SERVE_HEAD_MORE;
    case H_NAME:
        if (c == ':') {
            h->name[h->n_name < sizeof h->name ? h->n_name : sizeof h->name - 1] = 0;
            h->state = H_VALUE;
            h->n_value = 0, h->value_long = false;
        } else if (tchar(c)) {
            if (h->n_name + 1 < sizeof h->name) h->name[h->n_name] = (char)(c | ((c >= 'A' && c <= 'Z') ? 0x20 : 0));
            h->n_name++;
        } else return bad(h, e, 400, "%s", "a header name has a space or a control byte before its colon");
        return SERVE_HEAD_MORE;
    case H_VALUE:
        if (c == '\r') h->state = H_CR;
        else if (c == 0) return bad(h, e, 400, "a NUL byte in the value of header '%s'", h->name);
        else if (c < 0x20 && c != '\t') return bad(h, e, 400, "a control byte in the value of header '%s'", h->name);
        else if (c == 0x7f) return bad(h, e, 400, "a DEL byte in the value of header '%s'", h->name);
        else if (h->n_value || (c != ' ' && c != '\t')) { /* OWS before the value is skipped */
            if (h->n_value + 1 < sizeof h->value) h->value[h->n_value++] = (char)c;
            else h->value_long = true;
        }
        return SERVE_HEAD_MORE;
    case H_CR:
        if (c != '\n') return bad(h, e, 400, "a CR not followed by LF in header '%s'", h->name);
        h->state = H_START;
        return header_done(h, e);
    default: /* END_CR */
        if (c != '\n') return bad(h, e, 400, "%s", "a CR not followed by LF at the end of the head");
        return head_done(h, e);
    }
}

int serve_head_scan(serve_head *h, const char *buf, size_t n, serve_error *e)
{
    if (h->state == DONE) return SERVE_HEAD_OK;
    if (h->state < 0) return SERVE_HEAD_BAD;
    for (; h->at < n; h->at++) {
        unsigned char c = (unsigned char)buf[h->at];
        int r = h->state < H_START ? line_byte(h, c, e) : header_byte(h, c, e);
        if (r != SERVE_HEAD_MORE) {
            h->at++;
            return r;
        }
    }
    if (n >= SERVE_HEAD_MAX)
        return bad(h, e, 431, "the request head is longer than %s bytes", SERVE_HEAD_MAX_TEXT);
    return SERVE_HEAD_MORE;
}
