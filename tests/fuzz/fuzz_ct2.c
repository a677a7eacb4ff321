/* fuzz_ct2.c — libFuzzer target: the input as model.bin of a CTranslate2 directory whose
 * config.json and vocabulary.txt are the valid fixtures (tests/fuzz/fixtures/ct2) ->
 * sotto_model_load. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    const char *dir = fuzz_dir("ct2");
    if (!ready) {
        fuzz_fixture(dir, "ct2", "config.json");
        fuzz_fixture(dir, "ct2", "vocabulary.txt");
        ready = 1;
    }
    fuzz_write(dir, "model.bin", data, size);
    sotto_model *m = NULL;
    if (sotto_model_load(dir, &m) != SOTTO_OK) return 0;
    fuzz_use_model(m);
    sotto_model_free(m);
    return 0;
}
