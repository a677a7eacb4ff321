/* sotto.h — public C API of sotto, a speech-recognition engine for OpenAI Whisper models.
 *
 * Objects: a sotto_model is immutable once loaded and may be shared by any number of
 * threads; a sotto_context holds all per-stream state (activations, KV caches, thread
 * pool, error message) and must be used by one thread at a time.
 *
 * Errors: every fallible function returns a sotto_status. The detailed message for a
 * context call is sotto_context_error(ctx); for calls without a context (loading a model,
 * reading audio, creating a context) it is sotto_last_error(), which is thread-local.
 * The library never prints, exits or aborts on bad input.
 */
#ifndef SOTTO_H
#define SOTTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SOTTO_VERSION "0.1.0"

/* Fixed window geometry of every Whisper model: 30 s of 16 kHz audio, 3000 mel frames. */
#define SOTTO_SAMPLE_RATE 16000
#define SOTTO_N_SAMPLES 480000
#define SOTTO_N_FRAMES 3000

typedef enum sotto_status {
    SOTTO_OK = 0,
    SOTTO_ERR_INVALID_ARG,   /* a caller-supplied value is out of range */
    SOTTO_ERR_IO,            /* a file could not be opened, read or written */
    SOTTO_ERR_FORMAT,        /* a file is malformed, truncated or inconsistent */
    SOTTO_ERR_UNSUPPORTED,   /* well-formed input that this version cannot handle */
    SOTTO_ERR_NOMEM          /* an allocation failed or a size overflowed */
} sotto_status;

/* Static string naming a status ("ok", "invalid argument", ...). */
const char *sotto_status_str(sotto_status status);

/* Message of the last failed call without a context on this thread; "" if none.
 * Valid until the next failing call on the same thread. */
const char *sotto_last_error(void);

/* Frees memory the library returned to the caller (samples, strings). NULL is fine. */
void sotto_free(void *ptr);

/* Name of the compute kernels this process uses, picked once from the CPU's features:
 * "avx512" (AVX2 + AVX-512 VNNI), "avx2" or "scalar". SOTTO_KERNELS in the environment
 * forces one the CPU supports. */
const char *sotto_kernels_name(void);

/* ---- model ---------------------------------------------------------------------- */

typedef struct sotto_model sotto_model;

/* Weight storage types, numbered as in GGUF/ggml. */
typedef enum sotto_type {
    SOTTO_TYPE_F32 = 0,
    SOTTO_TYPE_F16 = 1,
    SOTTO_TYPE_Q8_0 = 8
} sotto_type;

typedef struct sotto_model_info {
    int32_t n_vocab;
    int32_t n_mels;
    int32_t n_audio_ctx;     /* encoder positions (1500) */
    int32_t n_audio_state;   /* encoder width */
    int32_t n_audio_head;
    int32_t n_audio_layer;
    int32_t n_text_ctx;      /* decoder positions (448) */
    int32_t n_text_state;
    int32_t n_text_head;
    int32_t n_text_layer;
    int32_t multilingual;    /* 1 when the vocabulary has language tokens in use */
    /* special token ids (-1 when the vocabulary lacks them) */
    int32_t token_eot, token_sot, token_translate, token_transcribe;
    int32_t token_startoflm, token_startofprev, token_nospeech, token_notimestamps;
    int32_t token_timestamp_begin; /* first timestamp token <|0.00|> */
    int32_t token_lang_first;      /* <|en|>; languages follow in the reference order */
    int32_t n_languages;
    /* bytes of weights per component, as stored in the file (embedding counted once) */
    size_t encoder_bytes, decoder_bytes, embedding_bytes;
    sotto_type encoder_type, decoder_type;
    const char *source_format;     /* "gguf", "ctranslate2" or "safetensors" */
} sotto_model_info;

/* Loads a model from PATH: a native .gguf file, a CTranslate2 Whisper directory
 * (model.bin, config.json, vocabulary.txt/json) or a Hugging Face directory
 * (config.json, model.safetensors, tokenizer.json or vocab.json). Every size and
 * field is validated against the file before use. On success *out owns the model;
 * free it with sotto_model_free. */
sotto_status sotto_model_load(const char *path, sotto_model **out);
void sotto_model_free(sotto_model *model);

/* Fills *info; pointers in it live as long as the model. */
void sotto_model_get_info(const sotto_model *model, sotto_model_info *info);

/* Raw bytes of token ID (UTF-8 fragments; special tokens as their literal text).
 * Returns NULL for an out-of-range id. Valid as long as the model. */
const char *sotto_token_bytes(const sotto_model *model, int32_t id, size_t *n_bytes);

/* Id of a language code ("en", "de", ...) in a multilingual model, or -1. */
int32_t sotto_language_token(const sotto_model *model, const char *code);

typedef struct sotto_convert_params {
    sotto_type encoder_type;   /* weights of conv and encoder blocks */
    sotto_type decoder_type;   /* decoder blocks and the tied token embedding */
} sotto_convert_params;

sotto_convert_params sotto_convert_params_default(void); /* f32, f32 */

/* Writes MODEL as one self-contained GGUF file at PATH (through a temporary name,
 * renamed when complete). Matrices take the requested types; LayerNorm parameters,
 * biases and position tables stay f32. */
sotto_status sotto_model_save_gguf(const sotto_model *model, const char *path,
                                   const sotto_convert_params *params);

/* ---- audio ---------------------------------------------------------------------- */

/* Reads a RIFF/WAVE file: 16 kHz, mono, PCM 16-bit or IEEE float 32-bit. On success
 * *samples (free with sotto_free) holds *n_samples values in [-1, 1]. */
sotto_status sotto_wav_read(const char *path, float **samples, int64_t *n_samples);

/* Audio input: any file FFmpeg reads, or WAV alone in a build without FFmpeg.
 *
 * A sotto_audio is a decoding stream over one file (or standard input) that yields
 * 16 kHz mono float samples in order, a chunk at a time: nothing holds the whole file,
 * so memory does not grow with its length. A handle belongs to one thread at a time;
 * different handles are independent.
 *
 * What comes out is what openai-whisper's load_audio reads, sample for sample:
 * `ffmpeg -nostdin -threads 0 -i FILE -f s16le -ac 1 -acodec pcm_s16le -ar 16000 -`
 * divided by 32768 (the audio stream av_find_best_stream picks: a video file's sound
 * track; the command picks the one with the most channels, which differs only for files
 * with several audio tracks; libswresample with its default settings,
 * down-mixing by its default matrix and rounding to 16 bits). A RIFF/WAVE file of 16 kHz
 * mono 16-bit PCM is read by the built-in reader instead, to the same samples as
 * sotto_wav_read (identical to what FFmpeg gives for it). Without FFmpeg the built-in
 * reader also takes 16 kHz mono 32-bit float WAV, and refuses every other file with the
 * Debian packages to install.
 *
 * Damaged input is refused, not decoded around: a packet FFmpeg cannot decode, or a
 * stream that ends well before the length its container declares, fails with
 * SOTTO_ERR_FORMAT naming the file, the position and what FFmpeg said (av_strerror).
 * FFmpeg's own log (stderr by default) is left as the application set it; see
 * sotto_audio_ffmpeg_log. */
typedef struct sotto_audio sotto_audio;

/* Opens PATH ("-": standard input, any format FFmpeg can probe from a pipe) and reads
 * its header. On success *out owns the stream: free it with sotto_audio_close. Fails
 * with SOTTO_ERR_IO (cannot open or read), SOTTO_ERR_FORMAT (not audio, malformed, no
 * audio stream) or SOTTO_ERR_UNSUPPORTED (a format this build cannot decode); the
 * message, from sotto_last_error(), names the file. */
sotto_status sotto_audio_open(const char *path, sotto_audio **out);

/* Decodes up to CAP samples (16 kHz mono; multiples of 1/32768 in [-1, 1), but for a
 * float WAV in a build without FFmpeg, read as stored) into BUF and sets *n_read to the
 * count; fewer than CAP only when the stream ended. *n_read is 0 at the end, after
 * every sample was returned. A stream that ends without a single sample fails with
 * SOTTO_ERR_FORMAT ("no audio samples"), as does damage found on the way; after a
 * failure the stream stays failed. Message: sotto_last_error(). */
sotto_status sotto_audio_read(sotto_audio *a, float *buf, int64_t cap, int64_t *n_read);

/* Length in seconds as the container declares it (its header or an index), or < 0 when
 * it does not say (a pipe, a stream without a length). Decoding may end a few
 * milliseconds off it (encoder delay, padding). */
double sotto_audio_duration(const sotto_audio *a);

/* Closes the stream and frees it; NULL is fine. */
void sotto_audio_close(sotto_audio *a);

/* The whole of PATH (or "-") as one array: *samples (free with sotto_free) holds
 * *n_samples 16 kHz mono values. For short inputs; long ones go through sotto_audio_read
 * a chunk at a time. Errors as sotto_audio_open and sotto_audio_read; on failure
 * *samples is NULL and *n_samples 0. */
sotto_status sotto_audio_load(const char *path, float **samples, int64_t *n_samples);

/* What this build reads, for help texts: a static string naming the FFmpeg library
 * versions it was built with, or saying the build lacks FFmpeg and which packages to install. */
const char *sotto_audio_formats(void);

/* Sets FFmpeg's process-wide log level (av_log_set_level), which sotto never changes
 * on its own: 0 nothing, 1 errors, 2 warnings too, 3 FFmpeg's default (information).
 * It affects every FFmpeg user in the process; the sotto tool sets 0, since its own
 * messages carry what FFmpeg said. No effect in a build without FFmpeg. */
void sotto_audio_ffmpeg_log(int verbosity);

/* Log-mel spectrogram of one 30 s window exactly as the reference front end: the
 * samples are padded with zeros or trimmed to SOTTO_N_SAMPLES, then STFT (n_fft 400,
 * hop 160, periodic Hann, reflect padding), Slaney mel filters, log10 clamp, max-8
 * floor, (x+4)/4. OUT receives [n_mels, SOTTO_N_FRAMES] floats, bin-major. */
sotto_status sotto_mel_window(const float *samples, int64_t n_samples, int n_mels,
                              float *out);

/* ---- context -------------------------------------------------------------------- */

typedef struct sotto_context sotto_context;

typedef struct sotto_context_params {
    int n_threads;             /* 0: all online cores */
} sotto_context_params;

sotto_context_params sotto_context_params_default(void);

/* Creates a context: sizes every activation buffer and the static KV caches once.
 * The model must outlive the context. */
sotto_status sotto_context_init(const sotto_model *model, const sotto_context_params *params,
                                sotto_context **out);
void sotto_context_free(sotto_context *ctx);

/* Message describing the last failure on CTX; "" if none. Valid until the next call. */
const char *sotto_context_error(const sotto_context *ctx);

/* Runs the encoder on one window MEL [n_mels, SOTTO_N_FRAMES] and projects the cross-
 * attention K/V of every decoder layer once; both stay resident until the next
 * sotto_encode. Resets the self-attention cache. */
sotto_status sotto_encode(sotto_context *ctx, const float *mel, int64_t n_floats);

/* Encoder output [n_audio_ctx, n_audio_state] of the last sotto_encode, or NULL. */
const float *sotto_encoder_output(const sotto_context *ctx);

/* Decoder forward pass over TOKENS[0..n_tokens) at cache positions n_past.. : writes
 * their self-attention K/V into the static cache and computes the logits of the last
 * token. Requires a prior sotto_encode; n_past + n_tokens <= n_text_ctx. */
sotto_status sotto_decode(sotto_context *ctx, const int32_t *tokens, int n_tokens, int n_past);

/* Logits [n_vocab] of the last decode, or NULL: of sotto_decode, or of the last step of
 * sotto_greedy (which picks tokens without every logit; they are computed here, on the
 * first call after it). Valid until the next decode. */
const float *sotto_logits(const sotto_context *ctx);

/* ---- greedy search -------------------------------------------------------------- */

typedef struct sotto_greedy_params {
    const int32_t *prefix;     /* forced start sequence; NULL: the model's default */
    int n_prefix;
    const int32_t *eos;        /* stop ids; NULL: <|endoftext|> */
    int n_eos;
    int max_new_tokens;        /* capped by n_text_ctx - n_prefix */
    int suppress;              /* 1: apply the reference's suppress rules (blank at the
                                  first step, non-speech and special tokens always);
                                  0: plain argmax */
} sotto_greedy_params;

sotto_greedy_params sotto_greedy_params_default(void); /* default prefix, eot, 32, suppress 1 */

typedef struct sotto_decode_stats {
    int n_prefill;             /* prefill forward passes (0 or 1) */
    int n_steps;               /* single-token forward passes */
    double prefill_ms, steps_ms; /* each pass timed with the argmax over its logits */
} sotto_decode_stats;

/* Greedy decoding after sotto_encode: prefills the prefix in one forward pass, then
 * appends argmax tokens, advancing the cache position, until an EOS id is emitted or
 * max_new_tokens tokens were produced. No forward pass is run for a token that would
 * not be emitted: G generated tokens cost 1 prefill + (G - 1) steps. OUT receives the
 * complete sequence (prefix, generated ids, the EOS if produced); it must hold
 * n_text_ctx ids. *n_out is its length. STATS may be NULL. */
sotto_status sotto_greedy(sotto_context *ctx, const sotto_greedy_params *params,
                          int32_t *out, int *n_out, sotto_decode_stats *stats);

/* ---- transcription -------------------------------------------------------------- */

typedef struct sotto_transcribe_params {
    const char *language;      /* "en", ...; NULL: "en" (multilingual models only) */
    int translate;             /* 1: task translate (multilingual models only) */
} sotto_transcribe_params;

sotto_transcribe_params sotto_transcribe_params_default(void);

/* Transcribes 16 kHz mono SAMPLES window after window (30 s each) with greedy
 * decoding and the reference suppress rules, no timestamps. *text (free with
 * sotto_free) receives the UTF-8 transcript. */
sotto_status sotto_transcribe(sotto_context *ctx, const float *samples, int64_t n_samples,
                              const sotto_transcribe_params *params, char **text);

/* Appends the UTF-8 text of IDS (special and timestamp tokens skipped) to a new string
 * (free with sotto_free). */
sotto_status sotto_detokenize(const sotto_model *model, const int32_t *ids, int n_ids,
                              char **text);

#ifdef __cplusplus
}
#endif

#endif /* SOTTO_H */
