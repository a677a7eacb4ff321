/* input.h — the audio side of a transcription (input.c): the whole-file log-mel, the VAD's
 * speech probabilities beside it, and for vad_filter the speech-only signal and the map
 * of its times back to the original timeline. */
#ifndef SOTTO_INPUT_H
#define SOTTO_INPUT_H

#include "../audio/melfile.h"
#include "../common.h"

typedef struct sotto__input {
    sotto__melfile *mf;        /* finished: of the whole signal, or of its speech (vad_filter) */
    int64_t n_samples;         /* of the signal read */
    float *probs;              /* [n_probs] VAD speech probabilities, one per 512 samples, or NULL */
    int64_t n_probs, cap_probs;
    sotto_vad_interval *speech; /* vad_filter: the speech kept, in original samples */
    int64_t n_speech;
    int64_t *keep_end;         /* [n_speech] each interval's end in the kept signal */
    double *silence_before;    /* [n_speech] seconds dropped before it */
} sotto__input;

/* Reads FROM (a path, "-", a descriptor or memory; NULL: the N_SAMPLES SAMPLES) for a
 * transcription with P (its vad, vad_filter and VAD options) at N_MELS bins; with
 * N_THREADS 2 or more the VAD runs on a thread of its own beside the log-mel. */
sotto_status sotto__input_read(const sotto_audio_source *from, const float *samples, int64_t n_samples, int n_mels,
                               int n_threads, const sotto_transcribe_params *p, sotto__input *in, sotto__err *err);
void sotto__input_free(sotto__input *in);

/* faster-whisper's SpeechTimestampsMap over in->speech [n_speech] (keep_end and
 * silence_before); false when out of memory. */
bool sotto__input_map(sotto__input *in);

/* Every sample of AUDIO into *X (free with free), *N of them; P's abort callback (P may
 * be NULL) is polled with the seconds read after each chunk, as while a signal is fed:
 * SOTTO_ERR_CANCELLED when it asks to stop. */
sotto_status sotto__input_read_all(sotto_audio *audio, const sotto_transcribe_params *p, float **x, int64_t *n);

/* A time T (seconds) of the kept signal on the original timeline (faster-whisper's
 * SpeechTimestampsMap.get_original_time, IS_END for an end); T itself without vad_filter. */
double sotto__input_original_time(const sotto__input *in, double t, bool is_end);
/* The same in the chunk that holds time AT (faster-whisper maps a word's start and end in
 * the chunk of its middle). */
double sotto__input_original_time_at(const sotto__input *in, double t, double at);

/* The speech interval (chunk) of vad_filter that time T (seconds) of the kept signal lies
 * in: a change of chunk between two times is a silence the VAD dropped. 0 without. */
int64_t sotto__input_chunk(const sotto__input *in, double t);
/* The same for an end: one at a chunk's last sample lies in that chunk. */
int64_t sotto__input_end_chunk(const sotto__input *in, double t);

/* Whether the VAD gave any 32 ms window of samples [FROM, TO) a probability >= THRESHOLD
 * (true without a VAD). */
bool sotto__input_has_speech(const sotto__input *in, int64_t from, int64_t to, float threshold);

#endif
