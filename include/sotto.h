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

/* Log-mel spectrogram of one 30 s window exactly as the reference front end: the
 * samples are padded with zeros or trimmed to SOTTO_N_SAMPLES, then STFT (n_fft 400,
 * hop 160, periodic Hann, reflect padding), Slaney mel filters, log10 clamp, max-8
 * floor, (x+4)/4. OUT receives [n_mels, SOTTO_N_FRAMES] floats, bin-major. */
sotto_status sotto_mel_window(const float *samples, int64_t n_samples, int n_mels,
                              float *out);

/* ---- devices -------------------------------------------------------------------- */

typedef enum sotto_device_type {
    SOTTO_DEVICE_OTHER = 0,
    SOTTO_DEVICE_INTEGRATED_GPU,
    SOTTO_DEVICE_DISCRETE_GPU,
    SOTTO_DEVICE_VIRTUAL_GPU,
    SOTTO_DEVICE_SOFTWARE      /* a Vulkan driver that runs on the CPU (lavapipe, SwiftShader) */
} sotto_device_type;

typedef struct sotto_device_info {
    char name[256];            /* as the driver names it */
    sotto_device_type type;
    uint64_t memory_bytes;     /* its largest device-local memory heap */
    char api_version[16];      /* the Vulkan version it supports, "1.3.230" */
    char unusable[160];        /* "" when sotto can run on it, else what it lacks */
} sotto_device_info;

/* "discrete GPU", "integrated GPU", "virtual GPU", "software", "other". */
const char *sotto_device_type_name(sotto_device_type type);

/* Lists the machine's Vulkan devices in the order "vulkan:N" counts them: up to CAP of
 * them into OUT, their number into *N. SOTTO_ERR_UNSUPPORTED (message in
 * sotto_last_error()) when this build has no Vulkan backend or no Vulkan loader is
 * installed; a loader without devices lists none. */
sotto_status sotto_device_list(sotto_device_info *out, int cap, int *n);

/* ---- context -------------------------------------------------------------------- */

typedef struct sotto_context sotto_context;

typedef struct sotto_context_params {
    int n_threads;             /* 0: all online cores (the CPU device's worker threads) */
    /* The device the context runs on:
     *   NULL or "auto"  a discrete or integrated GPU (Vulkan) when the machine has one,
     *                   else the CPU; never a software Vulkan driver
     *   "cpu"           the CPU
     *   "vulkan"        the best Vulkan device: discrete, integrated, virtual, then a
     *                   software one (lavapipe)
     *   "vulkan:N"      device N of sotto_device_list, whatever its type
     * sotto_context_device names the one chosen. */
    const char *device;
} sotto_context_params;

sotto_context_params sotto_context_params_default(void); /* all cores, device NULL (auto) */

/* Creates a context on the device PARAMS names: sizes every activation buffer and the
 * static KV caches once and, on a GPU, uploads the weights. The model must outlive the
 * context. Fails (message in sotto_last_error()) with SOTTO_ERR_INVALID_ARG for a device
 * string of another form, SOTTO_ERR_UNSUPPORTED when Vulkan is not built in, there is no
 * Vulkan loader or no such device, or the device lacks a feature the backend needs, and
 * SOTTO_ERR_NOMEM when device memory runs out. */
sotto_status sotto_context_init(const sotto_model *model, const sotto_context_params *params,
                                sotto_context **out);
void sotto_context_free(sotto_context *ctx);

/* The device CTX runs on, e.g. "cpu (avx2 kernels, 2 threads)" or
 * "vulkan:0 NVIDIA GeForce RTX 4090 (discrete GPU)". Valid as long as CTX. */
const char *sotto_context_device(const sotto_context *ctx);

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
