/* test_bytelevel.c — GPT-2 byte-level strings (src/model/bytelevel.c): every byte round-trips,
 * malformed symbols are refused. */
#include <string.h>

#include "check.h"
#include "model/model.h"

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

int main(void)
{
    test_bytelevel();
    return check_summary();
}
