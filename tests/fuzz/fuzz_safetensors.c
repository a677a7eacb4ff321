/* fuzz_safetensors.c — libFuzzer target: the input as model.safetensors of a Hugging Face
 * directory whose config.json and tokenizer.json are the valid fixtures
 * (tests/fuzz/fixtures/hf) -> sotto_model_load. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    const char *dir = fuzz_dir("safetensors");
    if (!ready) {
        fuzz_fixture(dir, "hf", "config.json");
        fuzz_fixture(dir, "hf", "tokenizer.json");
        ready = 1;
    }
    fuzz_write(dir, "model.safetensors", data, size);
    sotto_model *m = NULL;
    if (sotto_model_load(dir, &m) != SOTTO_OK) return 0;
    fuzz_use_model(m);
    sotto_model_free(m);
    return 0;
}
