/* test_idlist.c — the token-id list parser of `sotto run` (tools/sotto/idlist.c): the items
 * it takes and every rejection with the flag, position and text in the message. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/sotto/cli.h"
#include "check.h"

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

int main(void)
{
    test_idlist();
    return check_summary();
}
