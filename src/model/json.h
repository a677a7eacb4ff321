/* json.h — a small strict JSON reader for model metadata (config.json, tokenizer.json,
 * safetensors headers). Builds a tree in one arena; strings are decoded to UTF-8. */
#ifndef SOTTO_JSON_H
#define SOTTO_JSON_H

#include "../common.h"

typedef enum { SOTTO__JSON_NULL, SOTTO__JSON_BOOL, SOTTO__JSON_NUM, SOTTO__JSON_STR,
               SOTTO__JSON_ARR, SOTTO__JSON_OBJ } sotto__json_kind;

typedef struct sotto__json {
    sotto__json_kind kind;
    bool boolean;
    double num;
    const char *str;           /* STR: decoded bytes, NUL-terminated; len may include NULs */
    size_t len;
    const char *key;           /* member name when the parent is an object */
    size_t key_len;
    struct sotto__json *child; /* first element or member */
    struct sotto__json *next;  /* next sibling */
    int n;                     /* number of children */
} sotto__json;

typedef struct sotto__json_doc {
    sotto__json *root;
    void *arena;               /* chunk list owned by the doc */
} sotto__json_doc;

/* Parses TEXT[0..n) as one JSON value (surrounding whitespace allowed). Nesting deeper
 * than 64 levels, bad escapes, invalid numbers and trailing garbage are errors; the
 * message names the byte offset and is prefixed with WHAT. */
sotto_status sotto__json_parse(const char *text, size_t n, const char *what,
                               sotto__json_doc *doc, sotto__err *err);
void sotto__json_free(sotto__json_doc *doc);

/* Member KEY of object O (NULL if O is not an object or has no such member). */
const sotto__json *sotto__json_get(const sotto__json *o, const char *key);

/* True and *out set when V is a number with an integral value in [lo, hi]. */
bool sotto__json_int(const sotto__json *v, int64_t lo, int64_t hi, int64_t *out);

#endif
