/* fuzz_ggml.c — libFuzzer target: the input as a whisper.cpp legacy ggml .bin file ->
 * sotto_model_load (which tells it from GGUF by the magic). A model that loads is also
 * written as GGUF with sotto_model_save_gguf and must load again. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = fuzz_dir("ggml");
    const char *path = fuzz_write(dir, "model.bin", data, size);
    sotto_model *m = NULL;
    if (sotto_model_load(path, &m) != SOTTO_OK) return 0; /* refusing is fine; crashing is not */
    fuzz_use_model(m);
    char out[1024];
    snprintf(out, sizeof out, "%s/resaved.gguf", dir);
    fuzz_track("resaved.gguf");
    fuzz_track("resaved.gguf.tmp");
    sotto_convert_params params = sotto_convert_params_default();
    params.encoder_type = params.decoder_type = SOTTO_TYPE_Q8_0;
    if (sotto_model_save_gguf(m, out, &params) == SOTTO_OK) {
        sotto_model *again = NULL;
        if (sotto_model_load(out, &again) != SOTTO_OK) {
            fprintf(stderr, "fuzz_ggml: a loaded model, saved as GGUF, does not load: %s\n", sotto_last_error());
            abort();
        }
        sotto_model_free(again);
    }
    sotto_model_free(m);
    return 0;
}
