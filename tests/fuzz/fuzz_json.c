/* fuzz_json.c — libFuzzer target: the metadata JSON reader (src/model/json.h
 * sotto__json_parse), with a walk over the tree that checks its invariants (child
 * counts, keys on object members, NUL-terminated strings) and the accessors. */
#include "fuzz_common.h"
#include "model/json.h"

static void walk(const sotto__json *v, int depth, bool in_object)
{
    if (depth > 65) abort(); /* the parser refuses nesting deeper than 64 */
    if (in_object != (v->key != NULL)) abort();
    if (v->key && v->key[v->key_len] != 0) abort();
    if (v->kind == SOTTO__JSON_STR && (!v->str || v->str[v->len] != 0)) abort();
    int64_t i64;
    (void)sotto__json_int(v, -(INT64_MAX / 2), INT64_MAX / 2, &i64); /* see docs/ROBUSTNESS.md */
    (void)sotto__json_int(v, 0, 1000, &i64);
    int n = 0;
    for (const sotto__json *c = v->child; c; c = c->next, n++) walk(c, depth + 1, v->kind == SOTTO__JSON_OBJ);
    if (n != v->n) abort();
    if ((v->kind != SOTTO__JSON_ARR && v->kind != SOTTO__JSON_OBJ) && n) abort();
    if (v->kind == SOTTO__JSON_OBJ && v->child) {
        /* a key decoded from "\u0000..." holds a NUL: not findable by a C-string key */
        if (strlen(v->child->key) == v->child->key_len && !sotto__json_get(v, v->child->key)) abort();
        (void)sotto__json_get(v, "model");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1); /* exact size, no NUL: ASan sees any overread */
    if (!text) return 0;
    memcpy(text, data, size);
    sotto__json_doc doc = {0};
    sotto__err err = {0};
    if (sotto__json_parse(text, size, "fuzz", &doc, &err) == SOTTO_OK) {
        if (!doc.root) abort();
        walk(doc.root, 0, false);
        sotto__json_free(&doc);
    } else if (doc.root || doc.arena || err.status == SOTTO_OK) {
        abort();
    }
    free(text);
    return 0;
}
