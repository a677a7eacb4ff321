/* fuzz_idlist.c — libFuzzer target: the token-id list parser of `sotto run`
 * (tools/sotto/idlist.c cli_parse_ids). Byte 0 picks the mode: bit 0 comma lists,
 * bits 1-2 the vocabulary bound (none, 100, 51864, INT32_MAX); the rest is the text,
 * passed without a terminating NUL so reads past the end are caught. */
#include <stdbool.h>

#include "cli.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    static const int32_t vocab[4] = {0, 100, 51864, INT32_MAX};
    bool commas = data[0] & 1;
    int32_t n_vocab = vocab[(data[0] >> 1) & 3];
    size_t len = size - 1;
    char *text = malloc(len ? len : 1); /* exact size: ASan sees any overread */
    if (!text) return 0;
    memcpy(text, data + 1, len);
    int32_t *ids = NULL;
    int n = -1;
    char msg[256];
    if (cli_parse_ids(text, len, commas, n_vocab, "fuzz", &ids, &n, msg, sizeof msg)) {
        if (!ids || n < 1 || (size_t)n > len) abort();
        for (int i = 0; i < n; i++)
            if (ids[i] < 0 || (n_vocab > 0 && ids[i] >= n_vocab)) abort();
    } else {
        if (ids || n != 0 || !memchr(msg, 0, sizeof msg) || strncmp(msg, "fuzz: ", 6) != 0) abort();
    }
    free(ids);
    free(text);
    return 0;
}
