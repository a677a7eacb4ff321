/* suppress.h — the ids a transcription never samples: openai-whisper's suppress_tokens
 * (decoding.py DecodingTask._get_suppress_tokens) from the model's list and the caller's. */
#ifndef SOTTO_SUPPRESS_H
#define SOTTO_SUPPRESS_H

#include "context.h"

/* P's suppress_tokens for CTX's model into *OUT: without them (NULL) the model's own list,
 * openai's "-1" (*OWNED NULL); else their ids, the model's list where -1 is among them,
 * and the special tokens openai always adds (<|transcribe|>, <|translate|>,
 * <|startoftranscript|>, <|startofprev|>, <|startoflm|>, <|nocaptions|>), sorted and
 * unique, in *OWNED (free with free). An id past the vocabulary fails on CTX. */
sotto_status sotto__suppress_list(sotto_context *ctx, const sotto_transcribe_params *p, sotto__i32list *out,
                                  int32_t **owned);

#endif
