/* test_header.c — the public header compiles as strict C11 (-std=c11 -pedantic
 * -Werror) and its default-parameter functions return what it documents. */
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
    printf("%d passed, %d failed\n", ok, !ok);
    return ok ? 0 : 1;
}
