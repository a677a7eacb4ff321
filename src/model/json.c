/* json.c — recursive-descent JSON parser with a depth limit, an arena for nodes and
 * strings, and bounds checks on every byte it reads. */
#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct chunk {
    struct chunk *prev;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} chunk;

typedef struct parser {
    const char *s;
    size_t n, i;
    const char *what;
    chunk *arena;
    sotto__err *err;
    bool failed;
} parser;

static void *arena_alloc(parser *p, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    chunk *c = p->arena;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > 65536 ? size : 65536;
        chunk *nc = malloc(sizeof *nc + cap);
        if (!nc) return NULL;
        nc->prev = c;
        nc->used = 0;
        nc->cap = cap;
        p->arena = c = nc;
    }
    void *r = c->data + c->used;
    c->used += size;
    return r;
}

static void *fail(parser *p, const char *why)
{
    if (!p->failed) sotto__fail(p->err, SOTTO_ERR_FORMAT, "%s: invalid JSON at byte %zu: %s", p->what, p->i, why);
    p->failed = true;
    return NULL;
}

static void skip_ws(parser *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
                           p->s[p->i] == '\r'))
        p->i++;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool read_hex4(parser *p, uint32_t *out)
{
    if (p->n - p->i < 4) return false;
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(p->s[p->i + k]);
        if (h < 0) return false;
        v = v << 4 | (uint32_t)h;
    }
    p->i += 4;
    *out = v;
    return true;
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xc0 | cp >> 6); o[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12); o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f)); return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18); o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f)); o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Parses a string at p->i (which holds '"'); the decoded text is never longer than the
 * source, so one allocation of the source span suffices. */
static const char *parse_string(parser *p, size_t *len)
{
    size_t start = ++p->i, end = start;
    while (end < p->n && p->s[end] != '"') end += p->s[end] == '\\' ? 2 : 1;
    if (end >= p->n) return fail(p, "unterminated string");
    char *out = arena_alloc(p, end - start + 1);
    if (!out) return fail(p, "out of memory");
    size_t o = 0;
    while (p->i < end) {
        unsigned char c = (unsigned char)p->s[p->i++];
        if (c < 0x20) return fail(p, "control character in string");
        if (c != '\\') { out[o++] = (char)c; continue; }
        char e = p->s[p->i++];
        switch (e) {
        case '"': out[o++] = '"'; break;
        case '\\': out[o++] = '\\'; break;
        case '/': out[o++] = '/'; break;
        case 'b': out[o++] = '\b'; break;
        case 'f': out[o++] = '\f'; break;
        case 'n': out[o++] = '\n'; break;
        case 'r': out[o++] = '\r'; break;
        case 't': out[o++] = '\t'; break;
        case 'u': {
            uint32_t cp;
            if (!read_hex4(p, &cp)) return fail(p, "bad \\u escape");
            if (cp >= 0xd800 && cp < 0xdc00) {
                uint32_t lo;
                if (p->i + 2 > end || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u')
                    return fail(p, "lone surrogate");
                p->i += 2;
                if (!read_hex4(p, &lo) || lo < 0xdc00 || lo > 0xdfff) return fail(p, "bad surrogate pair");
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp < 0xe000) {
                return fail(p, "lone surrogate");
            }
            if (p->i > end) return fail(p, "bad \\u escape");
            o += put_utf8(out + o, cp);
            break;
        }
        default: return fail(p, "bad escape");
        }
    }
    p->i = end + 1;
    out[o] = 0;
    *len = o;
    return out;
}

static bool parse_number(parser *p, double *out)
{
    size_t j = p->i;
    if (j < p->n && p->s[j] == '-') j++;
    if (j >= p->n || p->s[j] < '0' || p->s[j] > '9') return false;
    if (p->s[j] == '0') j++;
    else while (j < p->n && p->s[j] >= '0' && p->s[j] <= '9') j++;
    if (j < p->n && p->s[j] == '.') {
        j++;
        if (j >= p->n || p->s[j] < '0' || p->s[j] > '9') return false;
        while (j < p->n && p->s[j] >= '0' && p->s[j] <= '9') j++;
    }
    if (j < p->n && (p->s[j] == 'e' || p->s[j] == 'E')) {
        j++;
        if (j < p->n && (p->s[j] == '+' || p->s[j] == '-')) j++;
        if (j >= p->n || p->s[j] < '0' || p->s[j] > '9') return false;
        while (j < p->n && p->s[j] >= '0' && p->s[j] <= '9') j++;
    }
    char buf[64];
    size_t len = j - p->i;
    if (len >= sizeof buf) { /* long numbers: parse the leading digits only for magnitude */
        len = sizeof buf - 1;
    }
    memcpy(buf, p->s + p->i, len);
    buf[len] = 0;
    *out = strtod(buf, NULL);
    p->i = j;
    return true;
}

static sotto__json *parse_value(parser *p, int depth)
{
    if (depth > MAX_DEPTH) return fail(p, "nesting too deep");
    skip_ws(p);
    if (p->i >= p->n) return fail(p, "unexpected end");
    sotto__json *v = arena_alloc(p, sizeof *v);
    if (!v) return fail(p, "out of memory");
    memset(v, 0, sizeof *v);
    char c = p->s[p->i];
    if (c == '{' || c == '[') {
        bool obj = c == '{';
        v->kind = obj ? SOTTO__JSON_OBJ : SOTTO__JSON_ARR;
        p->i++;
        skip_ws(p);
        sotto__json **tail = &v->child;
        if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) { p->i++; return v; }
        for (;;) {
            const char *key = NULL;
            size_t key_len = 0;
            if (obj) {
                skip_ws(p);
                if (p->i >= p->n || p->s[p->i] != '"') return fail(p, "expected a member name");
                if (!(key = parse_string(p, &key_len))) return NULL;
                skip_ws(p);
                if (p->i >= p->n || p->s[p->i] != ':') return fail(p, "expected ':'");
                p->i++;
            }
            sotto__json *item = parse_value(p, depth + 1);
            if (!item) return NULL;
            item->key = key;
            item->key_len = key_len;
            *tail = item;
            tail = &item->next;
            v->n++;
            skip_ws(p);
            if (p->i >= p->n) return fail(p, "unexpected end");
            if (p->s[p->i] == ',') { p->i++; continue; }
            if (p->s[p->i] == (obj ? '}' : ']')) { p->i++; return v; }
            return fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }
    if (c == '"') {
        v->kind = SOTTO__JSON_STR;
        return (v->str = parse_string(p, &v->len)) ? v : NULL;
    }
    static const struct { const char *word; sotto__json_kind kind; bool val; } words[] = {
        {"true", SOTTO__JSON_BOOL, true}, {"false", SOTTO__JSON_BOOL, false}, {"null", SOTTO__JSON_NULL, false}};
    for (int k = 0; k < 3; k++) {
        size_t len = strlen(words[k].word);
        if (p->n - p->i >= len && memcmp(p->s + p->i, words[k].word, len) == 0) {
            p->i += len;
            v->kind = words[k].kind;
            v->boolean = words[k].val;
            return v;
        }
    }
    v->kind = SOTTO__JSON_NUM;
    if (!parse_number(p, &v->num)) return fail(p, "invalid value");
    return v;
}

sotto_status sotto__json_parse(const char *text, size_t n, const char *what,
                               sotto__json_doc *doc, sotto__err *err)
{
    parser p = {.s = text, .n = n, .what = what, .err = err};
    doc->root = parse_value(&p, 0);
    if (doc->root) {
        skip_ws(&p);
        if (p.i != p.n) doc->root = fail(&p, "trailing characters");
    }
    doc->arena = p.arena;
    if (!doc->root) {
        sotto__json_free(doc);
        return err ? err->status : SOTTO_ERR_FORMAT;
    }
    return SOTTO_OK;
}

void sotto__json_free(sotto__json_doc *doc)
{
    chunk *c = doc->arena;
    while (c) {
        chunk *prev = c->prev;
        free(c);
        c = prev;
    }
    doc->arena = NULL;
    doc->root = NULL;
}

const sotto__json *sotto__json_get(const sotto__json *o, const char *key)
{
    if (!o || o->kind != SOTTO__JSON_OBJ) return NULL;
    size_t len = strlen(key);
    for (const sotto__json *c = o->child; c; c = c->next)
        if (c->key_len == len && memcmp(c->key, key, len) == 0) return c;
    return NULL;
}

bool sotto__json_int(const sotto__json *v, int64_t lo, int64_t hi, int64_t *out)
{
    /* (double)INT64_MAX rounds up to 2^63: compare in int64 after ruling that out */
    if (!v || v->kind != SOTTO__JSON_NUM || !isfinite(v->num) || v->num != floor(v->num) ||
        v->num >= 9223372036854775808.0 || v->num < -9223372036854775808.0)
        return false;
    int64_t i = (int64_t)v->num;
    if (i < lo || i > hi) return false;
    *out = i;
    return true;
}
