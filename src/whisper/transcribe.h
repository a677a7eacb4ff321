/* transcribe.h — long-form transcription over a finished whole-file log-mel, for the
 * callers that build it from a stream (the public sotto_transcribe builds it from an
 * array). */
#ifndef SOTTO_TRANSCRIBE_H
#define SOTTO_TRANSCRIBE_H

#include "../audio/melfile.h"
#include "context.h"

sotto_status sotto__transcribe_mel(sotto_context *ctx, const sotto__melfile *mf, const sotto_transcribe_params *params,
                                   sotto_result **out);

#endif
