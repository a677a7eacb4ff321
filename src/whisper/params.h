/* params.h — the check of sotto_transcribe_params (params.c), for sotto_transcribe's own
 * use: the public sotto_transcribe_params_check publishes the same message. */
#ifndef SOTTO_PARAMS_H
#define SOTTO_PARAMS_H

#include "../common.h"

/* Every value of P in range (the rules in sotto.h above sotto_transcribe_params_check);
 * else SOTTO_ERR_INVALID_ARG with a message naming the value in ERR. */
sotto_status sotto__transcribe_params_check(const sotto_transcribe_params *p, sotto__err *err);

#endif
