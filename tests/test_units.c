/* test_units.c — unit tests of the small pieces: half-precision conversion (exhaustive),
 * the JSON reader, GPT-2 byte-level strings, q8_0 blocks, the token-id list parser
 * of `sotto run`, and the tokenizer's UTF-8 check, character classes and pre-split. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/sotto/cli.h"
#include "check.h"
#include "common.h"
#include "model/json.h"
#include "model/model.h"
#include "quant.h"
#include "whisper/tokenizer.h"

static void test_f16(void)
{
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = sotto__f16_to_f32((uint16_t)h);
        uint16_t back = sotto__f32_to_f16(f);
        if (f != f) bad += (back & 0x7c00) != 0x7c00 || !(back & 0x3ff);
        else bad += back != h;
    }
    CHECK(bad == 0, "%d half values do not survive f16 -> f32 -> f16", bad);
    CHECK(sotto__f16_to_f32(0x3c00) == 1.0f && sotto__f16_to_f32(0x0001) == ldexpf(1, -24), "known values");
    CHECK(sotto__f32_to_f16(65520.0f) == 0x7c00 && sotto__f32_to_f16(65519.0f) == 0x7bff, "overflow rounding");
    CHECK(sotto__f32_to_f16(1.0f + ldexpf(1, -11)) == 0x3c00, "ties round to even");
    CHECK(sotto__f32_to_f16(ldexpf(1, -25)) == 0 && sotto__f32_to_f16(ldexpf(1.5f, -25)) == 1, "subnormal rounding");
}

static bool parses(const char *text)
{
    sotto__json_doc doc;
    sotto__err err = {0};
    if (sotto__json_parse(text, strlen(text), "test", &doc, &err) != SOTTO_OK) return false;
    sotto__json_free(&doc);
    return true;
}

static void test_json(void)
{
    const char *good[] = {"{}", "[]", " [1, -2.5e3, true, false, null, \"x\"] ", "{\"a\":{\"b\":[[]]}}",
                          "\"\\u00e9\\ud83d\\ude00\\n\"", "0", "-0.0"};
    const char *bad[] = {"", "{", "[1,]", "{\"a\"}", "{\"a\":1,}", "01", "1.", ".5", "+1", "\"\\x\"", "\"\\ud83d\"",
                         "[1] 2", "tru", "\"abc", "{\"a\":1 \"b\":2}", "\"\x01\"", "-", "1e"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) CHECK(parses(good[i]), "valid JSON rejected: %s", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) CHECK(!parses(bad[i]), "invalid JSON accepted: %s", bad[i]);
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    sotto__json_doc doc;
    sotto__err err = {0};
    CHECK(sotto__json_parse(deep, 200, "deep", &doc, &err) != SOTTO_OK && strstr(err.msg, "deep"),
          "nesting of 100 levels must be refused: %s", err.msg);
    const char *text = "{\"n\": 51865, \"s\": \"\\u0120the\", \"f\": 1.5, \"big\": 1e300}";
    CHECK(sotto__json_parse(text, strlen(text), "t", &doc, &err) == SOTTO_OK, "parse");
    int64_t v = 0;
    CHECK(sotto__json_int(sotto__json_get(doc.root, "n"), 0, 100000, &v) && v == 51865, "integer member");
    CHECK(!sotto__json_int(sotto__json_get(doc.root, "f"), 0, 10, &v), "1.5 is not an integer");
    CHECK(!sotto__json_int(sotto__json_get(doc.root, "big"), 0, INT64_MAX, &v), "1e300 is out of range");
    const char *edge = "[9223372036854775807, -9223372036854775808, 9007199254740992]";
    sotto__json_doc d2;
    CHECK(sotto__json_parse(edge, strlen(edge), "edge", &d2, &err) == SOTTO_OK, "parse edge");
    CHECK(!sotto__json_int(d2.root->child, 0, INT64_MAX, &v), "2^63 - 1 rounds to 2^63 in a double: refused");
    CHECK(sotto__json_int(d2.root->child->next, INT64_MIN, 0, &v) && v == INT64_MIN, "-2^63 is exact");
    CHECK(sotto__json_int(d2.root->child->next->next, 0, INT64_MAX, &v) && v == 9007199254740992LL, "2^53");
    sotto__json_free(&d2);
    const sotto__json *s = sotto__json_get(doc.root, "s");
    CHECK(s && s->len == 5 && memcmp(s->str, "\xc4\xa0the", 5) == 0, "\\u escape decodes to UTF-8");
    sotto__json_free(&doc);
}

static void test_bytelevel(void)
{
    char all[256], enc[512], dec[256];
    for (int i = 0; i < 256; i++) all[i] = (char)i;
    size_t n = sotto__bytelevel_encode(all, 256, enc);
    long m = sotto__bytelevel_decode(enc, n, dec, sizeof dec);
    CHECK(m == 256 && memcmp(all, dec, 256) == 0, "all 256 bytes round-trip");
    CHECK(sotto__bytelevel_decode("\xc4\xa0the", 5, dec, sizeof dec) == 4 && memcmp(dec, " the", 4) == 0, "Ġthe");
    CHECK(sotto__bytelevel_decode("\xe4\xb8\xad", 3, dec, sizeof dec) < 0, "a CJK character is no byte symbol");
    CHECK(sotto__bytelevel_decode("\xc4", 1, dec, sizeof dec) < 0, "truncated UTF-8 is refused");
    CHECK(sotto__bytelevel_decode("\xc1\x81", 2, dec, sizeof dec) < 0, "overlong UTF-8 is refused");
    CHECK(sotto__bytelevel_decode("\xc4\xa0x", 3, dec, 1) < 0, "output one byte short is refused");
}

static void test_q8_0(void)
{
    float x[64], y[64];
    for (int i = 0; i < 64; i++) x[i] = sinf((float)i) * (i < 32 ? 1.0f : 1e-3f);
    sotto__block_q8_0 q[2];
    sotto__quantize(SOTTO_TYPE_Q8_0, x, q, 64);
    sotto__dequantize(SOTTO_TYPE_Q8_0, q, y, 64);
    double worst = 0;
    for (int i = 0; i < 64; i++) { /* (fmax here crashes aarch64 gcc 12's vectoriser) */
        double e = fabs(x[i] - y[i]) / (i < 32 ? 1.0 : 1e-3);
        if (e > worst) worst = e;
    }
    CHECK(worst <= 0.5 / 127 + 1e-3, "q8_0 error %g of the block's range", worst);
}

static void expect_ids(const char *text, bool commas, const int32_t *want, int n_want)
{
    int32_t *ids;
    int n;
    char msg[256] = "";
    bool ok = cli_parse_ids(text, strlen(text), commas, 51864, "--prefix", &ids, &n, msg, sizeof msg);
    CHECK(ok && n == n_want && memcmp(ids, want, (size_t)n * sizeof *ids) == 0, "'%s' -> %s", text, msg);
    if (ok) free(ids);
}

static void expect_reject(const char *text, bool commas, const char *needle)
{
    int32_t *ids = NULL;
    int n;
    char msg[256] = "";
    bool ok = cli_parse_ids(text, strlen(text), commas, 51864, "--eos", &ids, &n, msg, sizeof msg);
    CHECK(!ok && strstr(msg, "--eos") && strstr(msg, needle), "'%s' must be rejected with '%s' (got '%s')", text,
          needle, msg);
    free(ids);
}

static void test_idlist(void)
{
    const int32_t a[] = {50257, 50362}, b[] = {7}, c[] = {1, 2, 3};
    expect_ids("50257,50362", true, a, 2);
    expect_ids(" 50257 ,\t50362 ", true, a, 2);
    expect_ids("007", true, b, 1);
    expect_ids("1 2\r\n3\r\n", false, c, 3);
    expect_ids("1, 2,3\n", false, c, 3);
    expect_reject("12abc", true, "item 1 '12abc'");
    expect_reject("1.5", true, "'1.5'");
    expect_reject("0x10", true, "'0x10'");
    expect_reject("+-3", true, "'+-3'");
    expect_reject("+3", true, "'+3'");
    expect_reject("-3", true, "negative");
    expect_reject("1,-3", true, "item 2");
    expect_reject("51864", true, "outside the vocabulary");
    expect_reject("99999999999999999999", true, "overflows");
    expect_reject("4294967296", true, "overflows");
    expect_reject("1,,2", true, "item 2 is empty");
    expect_reject(",", true, "item 1 is empty");
    expect_reject(",,", true, "item 1 is empty");
    expect_reject("1,2,", true, "trailing comma");
    expect_reject("", true, "empty");
    expect_reject("  \t ", true, "empty");
    expect_reject("1 2", true, "'1 2'");
    expect_reject("1,,2", false, "item 2 is empty");
    expect_reject("1\n2\nx\n", false, "item 3 'x'");
}

static void test_uc_class(void)
{
    static const struct { uint32_t cp; int cls; } cases[] = {
        {'a', SOTTO__UC_LETTER}, {'Z', SOTTO__UC_LETTER}, {'5', SOTTO__UC_NUMBER}, {' ', SOTTO__UC_SPACE},
        {'\t', SOTTO__UC_SPACE}, {'\r', SOTTO__UC_SPACE}, {0x0b, SOTTO__UC_SPACE}, {'\'', SOTTO__UC_OTHER},
        {'_', SOTTO__UC_OTHER}, {0x1c, SOTTO__UC_OTHER}, /* str.isspace() but not White_Space */
        {0x85, SOTTO__UC_SPACE}, {0xa0, SOTTO__UC_SPACE}, {0x3000, SOTTO__UC_SPACE}, {0x2028, SOTTO__UC_SPACE},
        {0x200b, SOTTO__UC_OTHER}, {0x180e, SOTTO__UC_OTHER}, {0xfeff, SOTTO__UC_OTHER},
        {0xe9, SOTTO__UC_LETTER}, {0xd7, SOTTO__UC_OTHER}, /* multiplication sign */
        {0x4e2d, SOTTO__UC_LETTER}, {0x0627, SOTTO__UC_LETTER}, {0x0301, SOTTO__UC_OTHER}, /* Mn */
        {0x093f, SOTTO__UC_OTHER}, /* Mc */ {0xb2, SOTTO__UC_NUMBER}, {0xbd, SOTTO__UC_NUMBER},
        {0x2162, SOTTO__UC_NUMBER}, /* Nl */ {0x0663, SOTTO__UC_NUMBER}, {0x1f600, SOTTO__UC_OTHER},
        {0x1e5d0, SOTTO__UC_LETTER}, /* Ol Onal, new in Unicode 16.0: tiktoken 0.9.0 says L */
        {0x31350, SOTTO__UC_LETTER}, {0xa0000, SOTTO__UC_OTHER}, {0x10ffff, SOTTO__UC_OTHER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK(sotto__uc_class(cases[i].cp) == cases[i].cls, "class of U+%04X: %d", (unsigned)cases[i].cp,
              sotto__uc_class(cases[i].cp));
    for (int i = 1; i < SOTTO__UC_N_RANGES; i++)
        CHECK(sotto__uc_ranges[i].lo > sotto__uc_ranges[i - 1].hi, "ranges sorted and disjoint at %d", i);
}

static void test_utf8_check(void)
{
    static const struct { const char *s; size_t at; } cases[] = {
        {"plain", 5}, {"caf\xc3\xa9", 5}, {"\xe4\xb8\xad", 3}, {"\xf0\x9f\x98\x80", 4}, {"\xf4\x8f\xbf\xbf", 4},
        {"\xed\x9f\xbf", 3}, {"\xee\x80\x80", 3}, {"a\x80", 1}, {"\xc2", 0}, {"\xc0\x80", 0}, {"\xe0\x9f\xbf", 0},
        {"\xed\xa0\x80", 0}, {"\xf0\x8f\xbf\xbf", 0}, {"\xf4\x90\x80\x80", 0}, {"\xf8\x88\x80\x80\x80", 0},
        {"\xe4\xb8", 0}, {"ab\xe4\x41\x41", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t n = strlen(cases[i].s);
        CHECK(sotto__utf8_check((const uint8_t *)cases[i].s, n) == cases[i].at, "case %zu", i);
    }
}

/* S split by the pre-split regex must give the pieces joined by '|' in WANT. */
static void expect_pieces(const char *s, const char *want)
{
    char got[256] = "";
    size_t n = strlen(s), o = 0;
    for (size_t pos = 0; pos < n && o + 1 < sizeof got;) {
        size_t end = sotto__pretok_next((const uint8_t *)s, n, pos);
        if (end <= pos || end > n) break;
        if (pos) got[o++] = '|';
        for (size_t i = pos; i < end && o + 1 < sizeof got; i++) got[o++] = s[i];
        got[o] = 0;
        pos = end;
    }
    CHECK(strcmp(got, want) == 0, "\"%s\": got \"%s\", want \"%s\"", s, got, want);
}

static void test_pretok(void)
{
    expect_pieces("Hello world", "Hello| world");
    expect_pieces("it's they're I'M", "it|'s| they|'re| I|'|M");
    expect_pieces("''s x's", "''|s| x|'s");
    expect_pieces("a  b", "a| | b");
    expect_pieces("a   b", "a|  | b");
    expect_pieces("a\n\nb", "a|\n|\n|b");
    expect_pieces("a \n b", "a| \n| b");
    expect_pieces("x  ", "x|  ");
    expect_pieces(" ", " ");
    expect_pieces("1999 and 12.5", "1999| and| 12|.|5");
    expect_pieces("?! ...x", "?!| ...|x");
    expect_pieces("\tTab", "\t|Tab");
    expect_pieces("caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87", "caf\xc3\xa9| \xe4\xb8\xad\xe6\x96\x87");
    expect_pieces("a\xc2\xa0" "b", "a|\xc2\xa0|" "b");  /* NBSP is whitespace, not " ?" */
}

int main(void)
{
    test_f16();
    test_json();
    test_bytelevel();
    test_q8_0();
    test_idlist();
    test_uc_class();
    test_utf8_check();
    test_pretok();
    return check_summary();
}
