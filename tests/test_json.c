/* test_json.c — the JSON reader of the model loaders (src/model/json.c): what it accepts and
 * refuses, nesting bounds, exact integers. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "model/json.h"

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

int main(void)
{
    test_json();
    return check_summary();
}
