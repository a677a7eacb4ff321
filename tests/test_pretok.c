/* test_pretok.c — the tokenizer's text side (src/whisper/tokenizer.c, unicode_tables.c): the
 * UTF-8 check, Unicode character classes and the pre-split regex. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "whisper/tokenizer.h"

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
    test_uc_class();
    test_utf8_check();
    test_pretok();
    return check_summary();
}
