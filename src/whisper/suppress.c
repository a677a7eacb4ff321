/* suppress.c — openai-whisper's suppress_tokens (suppress.h). */
#include <stdlib.h>

#include "suppress.h"

static int cmp_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

sotto_status sotto__suppress_list(sotto_context *ctx, const sotto_transcribe_params *p, sotto__i32list *out,
                                  int32_t **owned)
{
    const sotto_model *m = ctx->model;
    const sotto_model_info *h = &m->info;
    *owned = NULL;
    *out = m->suppress;
    if (!p->suppress_tokens) return SOTTO_OK;
    int32_t special[] = {h->token_transcribe, h->token_translate, h->token_sot,
                         h->token_startofprev, h->token_startoflm, h->token_nospeech};
    size_t cap = (size_t)p->n_suppress_tokens + (size_t)m->suppress.n + sizeof special / sizeof *special;
    int32_t *v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v) return sotto__ctx_fail(ctx, SOTTO_ERR_NOMEM, "suppress tokens: out of memory");
    size_t n = 0;
    bool model_list = false;
    for (int i = 0; i < p->n_suppress_tokens; i++) {
        int32_t id = p->suppress_tokens[i];
        if (id == -1) {
            model_list = true;
        } else if (id < 0 || id >= h->n_vocab) {
            free(v);
            return sotto__ctx_fail(ctx, SOTTO_ERR_INVALID_ARG, "suppress token %d: not an id of the model's "
                                   "vocabulary (0..%d, or -1: its list of non-speech symbols)", (int)id,
                                   h->n_vocab - 1);
        } else {
            v[n++] = id;
        }
    }
    for (int i = 0; model_list && i < m->suppress.n; i++) v[n++] = m->suppress.v[i];
    for (size_t i = 0; i < sizeof special / sizeof *special; i++)
        if (special[i] >= 0 && special[i] < h->n_vocab) v[n++] = special[i];
    qsort(v, n, sizeof *v, cmp_id);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || v[u - 1] != v[i]) v[u++] = v[i];
    *owned = v;
    *out = (sotto__i32list){v, (int)u};
    return SOTTO_OK;
}
