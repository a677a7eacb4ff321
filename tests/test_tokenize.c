/* test_tokenize.c — sotto_tokenize against openai-whisper's tiktoken encodings, id for id:
 *   test_tokenize MODEL CORPUS.tsv IDS.tsv
 * CORPUS.tsv: name <TAB> hex of the UTF-8 text; IDS.tsv: name <TAB> ids (the same cases
 * in the same order; scripts/golden_tokens.py writes both). Every case must encode to
 * exactly the reference ids and decode back (sotto_detokenize) to the text. Then the
 * API contract: size queries, a short buffer, invalid UTF-8, NULL arguments. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sotto.h"

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = 0;
    fclose(f);
    return buf;
}

/* Splits the next line of *P at its tab: NAME, and the rest in VALUE; false at the end. */
static bool next_row(char **p, char **name, char **value)
{
    if (!**p) return false;
    char *line = *p, *nl = strchr(line, '\n');
    if (nl) *nl = 0, *p = nl + 1;
    else *p = line + strlen(line);
    char *tab = strchr(line, '\t');
    if (!tab) return false;
    *tab = 0;
    *name = line;
    *value = tab + 1;
    return true;
}

static char *unhex(const char *hex)
{
    size_t n = strlen(hex) / 2;
    char *out = malloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (char)v;
    }
    out[n] = 0;
    return out;
}

static int parse_ids(const char *s, int32_t *out, int cap)
{
    int n = 0;
    char *end;
    for (;;) {
        long v = strtol(s, &end, 10);
        if (end == s || n == cap) break;
        out[n++] = (int32_t)v;
        s = end;
    }
    return n;
}

/* One case: ids equal to the reference, and decoded back to the text. */
static void check_case(const sotto_model *m, const char *name, const char *text, const int32_t *want,
                       int n_want, int32_t *ids, int cap)
{
    int n = -1;
    sotto_status st = sotto_tokenize(m, text, ids, cap, &n);
    CHECK(st == SOTTO_OK, "%s: status %s: %s", name, sotto_status_str(st), sotto_last_error());
    if (st != SOTTO_OK) return;
    int k = 0;
    while (k < n && k < n_want && ids[k] == want[k]) k++;
    CHECK(n == n_want && k == n, "%s: %d ids, reference %d; first difference at %d: %d vs %d", name, n,
          n_want, k, k < n ? ids[k] : -1, k < n_want ? want[k] : -1);
    char *back = NULL;
    st = sotto_detokenize(m, ids, n, &back);
    CHECK(st == SOTTO_OK && back && strcmp(back, text) == 0, "%s: detokenize does not give the text back", name);
    sotto_free(back);
}

static void check_contract(const sotto_model *m)
{
    const char *text = "Hello world, it's 2024!"; /* gpt2 and multilingual: 7 ids */
    int32_t ids[64], small[3] = {-7, -7, -7};
    int n = -1, n_all = -1;
    CHECK(sotto_tokenize(m, text, NULL, 0, &n_all) == SOTTO_OK && n_all > 3, "size query: %d", n_all);
    CHECK(sotto_tokenize(m, text, NULL, 12345, &n) == SOTTO_OK && n == n_all, "size query ignores cap");
    CHECK(sotto_tokenize(m, text, ids, 64, &n) == SOTTO_OK && n == n_all, "fits");
    CHECK(sotto_tokenize(m, text, ids, n_all, &n) == SOTTO_OK && n == n_all, "exactly fits");
    sotto_status st = sotto_tokenize(m, text, small, 2, &n);
    CHECK(st == SOTTO_ERR_INVALID_ARG && n == n_all, "short buffer: %s, n %d", sotto_status_str(st), n);
    CHECK(small[0] == ids[0] && small[1] == ids[1] && small[2] == -7, "short buffer: the first cap ids, no more");
    CHECK(strstr(sotto_last_error(), "needs") != NULL, "short-buffer message: %s", sotto_last_error());
    CHECK(sotto_tokenize(m, "", ids, 0, &n) == SOTTO_OK && n == 0, "empty text: no ids");
    CHECK(sotto_tokenize(m, "", NULL, 0, &n) == SOTTO_OK && n == 0, "empty size query");

    static const struct { const char *bytes; const char *what; size_t at; } bad[] = {
        {"ok \x80", "stray continuation byte", 3},
        {"\xc3", "truncated 2-byte sequence", 0},
        {"ab\xe2\x82", "truncated 3-byte sequence", 2},
        {"\xc0\xaf", "overlong '/'", 0},
        {"\xc1\x81", "overlong 'A'", 0},
        {"x\xe0\x80\xaf", "overlong 3-byte", 1},
        {"\xf0\x80\x80\xaf", "overlong 4-byte", 0},
        {"\xed\xa0\x80", "surrogate U+D800", 0},
        {"\xed\xbf\xbf", "surrogate U+DFFF", 0},
        {"\xf4\x90\x80\x80", "U+110000", 0},
        {"\xf5\x80\x80\x80", "lead byte 0xf5", 0},
        {"\xff", "byte 0xff", 0},
        {"caf\xc3\xa9 \xc3\x28", "bad continuation", 6},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        n = 99;
        st = sotto_tokenize(m, bad[i].bytes, ids, 64, &n);
        char want[32];
        snprintf(want, sizeof want, "at byte %zu", bad[i].at);
        CHECK(st == SOTTO_ERR_INVALID_ARG && n == 0 && strstr(sotto_last_error(), "invalid UTF-8") &&
                  strstr(sotto_last_error(), want),
              "%s: %s, n %d, \"%s\"", bad[i].what, sotto_status_str(st), n, sotto_last_error());
        st = sotto_tokenize(m, bad[i].bytes, NULL, 0, &n);
        CHECK(st == SOTTO_ERR_INVALID_ARG && n == 0, "%s: size query refuses it too", bad[i].what);
    }
    CHECK(sotto_tokenize(m, "\xf4\x8f\xbf\xbd \xef\xbf\xbd \xed\x9f\xbf", ids, 64, &n) == SOTTO_OK,
          "U+10FFFD, U+FFFD and U+D7FF are valid: %s", sotto_last_error());
    CHECK(sotto_tokenize(NULL, text, ids, 64, &n) == SOTTO_ERR_INVALID_ARG, "NULL model");
    CHECK(sotto_tokenize(m, NULL, ids, 64, &n) == SOTTO_ERR_INVALID_ARG, "NULL text");
    CHECK(sotto_tokenize(m, text, ids, 64, NULL) == SOTTO_ERR_INVALID_ARG, "NULL n_ids");
    CHECK(sotto_tokenize(m, text, ids, -1, &n) == SOTTO_ERR_INVALID_ARG, "negative cap");
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_tokenize MODEL CORPUS.tsv IDS.tsv\n");
        return 2;
    }
    sotto_model *m;
    if (sotto_model_load(argv[1], &m) != SOTTO_OK) {
        printf("FAIL: cannot load %s: %s\n", argv[1], sotto_last_error());
        return 1;
    }
    char *corpus = read_all(argv[2]), *refs = read_all(argv[3]);
    if (!corpus || !refs) {
        printf("FAIL: cannot read %s or %s\n", argv[2], argv[3]);
        return 1;
    }
    enum { CAP = 1 << 16 };
    int32_t *want = malloc(CAP * sizeof *want), *ids = malloc(CAP * sizeof *ids);
    char *pc = corpus, *pr = refs, *name, *hex, *rname, *list;
    int n_cases = 0;
    long n_ids = 0;
    while (next_row(&pc, &name, &hex)) {
        if (!next_row(&pr, &rname, &list) || strcmp(name, rname) != 0) {
            CHECK(false, "%s: no reference ids in the same place of %s", name, argv[3]);
            break;
        }
        char *text = unhex(hex);
        int n_want = parse_ids(list, want, CAP);
        check_case(m, name, text, want, n_want, ids, CAP);
        free(text);
        n_cases++;
        n_ids += n_want;
    }
    CHECK(n_cases > 300, "only %d cases in %s", n_cases, argv[2]);
    printf("%d cases, %ld reference ids\n", n_cases, n_ids);
    check_contract(m);
    free(want);
    free(ids);
    free(corpus);
    free(refs);
    sotto_model_free(m);
    return check_summary();
}
