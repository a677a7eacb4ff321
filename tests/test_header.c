/* test_header.c — the public header compiles as strict C11 (-std=c11 -pedantic
 * -Werror), its default-parameter functions return what it documents, and NULL where a
 * model or an out-pointer goes is refused (or, for the free functions, fine). */
#include "sotto.h"

#include <stdio.h>

int main(void)
{
    sotto_context_params cp = sotto_context_params_default();
    sotto_greedy_params gp = sotto_greedy_params_default();
    sotto_convert_params vp = sotto_convert_params_default();
    int ok = cp.n_threads == 0 && gp.max_new_tokens == 32 && gp.suppress == 1 && gp.prefix == NULL &&
             vp.encoder_type == SOTTO_TYPE_F32 && vp.decoder_type == SOTTO_TYPE_F32 &&
             sotto_status_str(SOTTO_ERR_FORMAT)[0] != 0 && sotto_last_error()[0] == 0;
    sotto_model *m = NULL;
    ok = ok && sotto_model_load("/nonexistent/model.gguf", &m) == SOTTO_ERR_IO && m == NULL &&
         sotto_last_error()[0] != 0;
    sotto_model_free(NULL);
    sotto_context_free(NULL);
    /* NULL where an out-pointer or the model goes: refused with a message, never a crash */
    sotto_context *ctx = NULL;
    char *text = NULL;
    int32_t id = 1;
    sotto_model_info info = {.n_vocab = 7};
    ok = ok && sotto_model_load("/nonexistent/model.gguf", NULL) == SOTTO_ERR_INVALID_ARG &&
         sotto_context_init(NULL, NULL, &ctx) == SOTTO_ERR_INVALID_ARG && ctx == NULL &&
         sotto_context_init(NULL, NULL, NULL) == SOTTO_ERR_INVALID_ARG &&
         sotto_detokenize(NULL, &id, 1, &text) == SOTTO_ERR_INVALID_ARG && text == NULL &&
         sotto_detokenize(NULL, &id, 1, NULL) == SOTTO_ERR_INVALID_ARG && sotto_last_error()[0] != 0;
    sotto_model_get_info(NULL, &info);
    sotto_model_get_info(NULL, NULL);
    ok = ok && info.n_vocab == 0;
    sotto_result_free(NULL);
    sotto_vad_free(NULL);
    sotto_vad_stream_free(NULL);
    sotto_vad_stream_reset(NULL);
    printf("%d passed, %d failed\n", ok, !ok);
    return ok ? 0 : 1;
}
