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

#define SOTTO_VERSION "0.2.0"

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
    SOTTO_ERR_NOMEM,         /* an allocation failed or a size overflowed */
    SOTTO_ERR_CANCELLED      /* a caller's abort callback asked to stop */
} sotto_status;

/* Static string naming a status ("ok", "invalid argument", ...). */
const char *sotto_status_str(sotto_status status);

/* Message of the last failed call without a context on this thread; "" if none.
 * Valid until the next failing call on the same thread. */
const char *sotto_last_error(void);

/* Frees memory the library returned to the caller (samples, strings). NULL is fine. */
void sotto_free(void *ptr);

/* Name of the compute kernels this process uses, picked once from the CPU's features:
 * "avx512" (AVX2 + AVX-512 VNNI), "avx_vnni", "avx2", "neon_i8mm", "neon_dot", "neon" or
 * "scalar". SOTTO_KERNELS in the environment (the name in any case) forces one the CPU
 * supports. */
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
    const char *source_format;     /* "gguf", "ggml", "ctranslate2" or "safetensors" */
} sotto_model_info;

/* Loads a model from PATH: a native .gguf file, a whisper.cpp legacy ggml .bin file
 * (told apart by its magic; q4_0/q4_1/q5_0/q5_1 weights become q8_0), a CTranslate2
 * Whisper directory (model.bin, config.json, vocabulary.txt/json) or a Hugging Face
 * directory (config.json, model.safetensors, tokenizer.json or vocab.json). Every size
 * and field is validated against the file before use. On success *out owns the model;
 * free it with sotto_model_free. */
sotto_status sotto_model_load(const char *path, sotto_model **out);
/* Frees MODEL (NULL is fine); no context made from it may be in use. */
void sotto_model_free(sotto_model *model);

/* Fills *info; pointers in it live as long as the model (a NULL model: all zero; a NULL
 * info: nothing). */
void sotto_model_get_info(const sotto_model *model, sotto_model_info *info);

/* Raw bytes of token ID (UTF-8 fragments; special tokens as their literal text).
 * Returns NULL for an out-of-range id. Valid as long as the model. */
const char *sotto_token_bytes(const sotto_model *model, int32_t id, size_t *n_bytes);

/* The code of a language given by its code or by openai-whisper's name for it, in any
 * case ("de", "German", "english", "mandarin": "de", "de", "en", "zh"), as a static
 * string; NULL for none of openai's 100 languages. */
const char *sotto_language_code(const char *name);

/* openai-whisper's name of a language code, in lower case as its LANGUAGES has it ("de":
 * "german", "haw": "hawaiian"), as a static string; NULL for none of its 100 codes. */
const char *sotto_language_name(const char *code);

/* Id of a language code ("en", "de", ...) in a multilingual model, or -1. */
int32_t sotto_language_token(const sotto_model *model, const char *code);

typedef struct sotto_convert_params {
    sotto_type encoder_type;   /* weights of conv and encoder blocks */
    sotto_type decoder_type;   /* decoder blocks and the tied token embedding */
} sotto_convert_params;

sotto_convert_params sotto_convert_params_default(void); /* f32, f32 */

/* Writes MODEL as one self-contained GGUF file at PATH (through the temporary name
 * PATH.tmp.PID, PID the process's id, or DIR/.sotto.tmp.PID where PATH's last part is too
 * long for that, created exclusively (a file or link already of that name is removed,
 * never followed), renamed when complete and removed on failure; the
 * permissions of a PATH it replaces are kept; a caller that can be
 * interrupted removes it too; a symbolic link's target is written, the link kept; a PATH
 * that exists and is not a regular file, a device or a FIFO, is SOTTO_ERR_INVALID_ARG).
 * Matrices take the requested types; LayerNorm parameters, biases and position tables
 * stay f32. */
sotto_status sotto_model_save_gguf(const sotto_model *model, const char *path,
                                   const sotto_convert_params *params);

/* ---- audio ---------------------------------------------------------------------- */

/* Reads a RIFF/WAVE file (PATH, or "-": standard input): 16 kHz, mono, PCM 16-bit or
 * IEEE float 32-bit, through the same parser as sotto_audio_open's built-in reader. On
 * success *samples (free with sotto_free) holds *n_samples values in [-1, 1]. A data
 * chunk longer than the file (a truncated file) gives the samples there are, as ffmpeg
 * does (sotto_audio_warning tells it, on a stream); a sample rate below 1000 Hz, which no
 * real audio has, fails with SOTTO_ERR_FORMAT. */
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
 * Damaged input is read as that ffmpeg command reads it (so as openai-whisper and
 * faster-whisper read it), with a warning (sotto_audio_warning) naming what was read
 * around: a packet FFmpeg cannot decode is skipped (bytes after a file's end, a spoilt
 * frame); a stream that ends well before the length its container declares (a truncated
 * download) gives what it decodes; a WAV file whose data chunk is cut short gives the
 * samples there are; a demuxer error ends the input there. It fails with
 * SOTTO_ERR_FORMAT, naming the file, the position and what FFmpeg said (av_strerror),
 * where the command fails too: more than 2/3 of the stream's packets undecodable (the
 * command exits 69), nothing decodable at all; and at the first packet that does not
 * decode in a file whose format FFmpeg only guessed (a probe score under 50: raw floats
 * taken for AMR, which the command decodes into minutes of noise). One difference: where a damaged frame's
 * timestamp runs back, the command's muxer drops that frame's samples and sotto keeps
 * them. A sample rate below 1000 Hz, which no real audio has (a header of a few bytes
 * that would decode to hours), fails with SOTTO_ERR_FORMAT when the file is opened.
 * FFmpeg's own log (stderr by default) is left as the application set it; see
 * sotto_audio_ffmpeg_log. */
typedef struct sotto_audio sotto_audio;

/* Opens PATH ("-": standard input, any format FFmpeg can probe from a pipe) and reads
 * its header. On success *out owns the stream: free it with sotto_audio_close. Fails
 * with SOTTO_ERR_IO (cannot open or read), SOTTO_ERR_FORMAT (not audio, malformed, no
 * audio stream) or SOTTO_ERR_UNSUPPORTED (a format this build cannot decode); the
 * message, from sotto_last_error(), names the file. */
sotto_status sotto_audio_open(const char *path, sotto_audio **out);

/* Where the bytes of an audio file come from, for sotto_audio_open_source and
 * sotto_transcribe_source: a path, an open file descriptor or a buffer in memory. */
typedef enum sotto_source_kind {
    SOTTO_SOURCE_PATH,         /* PATH: a file, or "-" for standard input */
    SOTTO_SOURCE_FD,           /* FD: read from its current offset on, never closed; a regular
                                  file is seekable (and read twice where vad_filter needs it),
                                  a pipe or socket is read once, front to back */
    SOTTO_SOURCE_MEMORY,       /* DATA [N_BYTES]: not copied; it must stay valid and unchanged
                                  until the stream is closed (or the transcription returns) */
} sotto_source_kind;

typedef struct sotto_audio_source {
    sotto_source_kind kind;
    const char *path;          /* SOTTO_SOURCE_PATH */
    int fd;                    /* SOTTO_SOURCE_FD */
    const void *data;          /* SOTTO_SOURCE_MEMORY */
    size_t n_bytes;
    const char *name;          /* FD and MEMORY: what messages call the input (a file name the
                                  caller knows it by); NULL: "descriptor N", "the audio in memory" */
    int channel;               /* 0 (default): every channel down-mixed to mono; N >= 1: channel
                                  N alone (1 the left, 2 the right: a speaker per side), resampled
                                  as the mix is; a file with fewer fails with SOTTO_ERR_FORMAT */
} sotto_audio_source;

/* sotto_audio_open over any SOURCE (the caller keeps SOURCE's descriptor or buffer; the
 * struct itself may go once this returns). Fails as sotto_audio_open, with
 * SOTTO_ERR_INVALID_ARG for a source without its path, descriptor or bytes. */
sotto_status sotto_audio_open_source(const sotto_audio_source *source, sotto_audio **out);

/* Decodes up to CAP samples (16 kHz mono; multiples of 1/32768 in [-1, 1), but for a
 * float WAV in a build without FFmpeg, read as stored) into BUF and sets *n_read to the
 * count; fewer than CAP only when the stream ended. *n_read is 0 at the end, after
 * every sample was returned. A stream that ends without a single sample fails with
 * SOTTO_ERR_FORMAT ("no audio samples"), as does one whose packets mostly do not decode
 * (judged at the end: the read that would return 0); after a failure the stream stays
 * failed. Message: sotto_last_error(). */
sotto_status sotto_audio_read(sotto_audio *a, float *buf, int64_t cap, int64_t *n_read);

/* A note on input that was read around, "" if none: "PATH: data chunk claims N bytes but
 * only M follow (truncated file): read the S s there are", "PATH: 2 packets of its mp3
 * stream did not decode (the first at 7.20 s: ...) and were skipped, ...", "PATH: damaged
 * or truncated file: its mp3 stream decodes to 3.49 s but the container says 7.20 s: read
 * what decodes"; several joined by "; ". A cut WAV's note is set when the stream is opened
 * for a file; the others (and a pipe's) as the damage is met, the last at the end (the
 * read that returns 0); valid until sotto_audio_close. */
const char *sotto_audio_warning(const sotto_audio *a);

/* Length in seconds as the container declares it (its header or an index), or < 0 when
 * it does not say (a pipe, a stream without a length). Decoding may end a few
 * milliseconds off it (encoder delay, padding). */
double sotto_audio_duration(const sotto_audio *a);

/* The channels of A's audio stream as decoded (1 for a mono WAV the built-in reader takes);
 * 0 for NULL. */
int sotto_audio_channels(const sotto_audio *a);

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
 * floor, (x+4)/4. OUT receives [n_mels, SOTTO_N_FRAMES] floats, bin-major. N_MELS 80 or
 * 128; a failure's message is in sotto_last_error(). */
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
    char backend[16];          /* the backend that runs it: "cpu", "vulkan" */
    int index;                 /* N of its device string "backend:N"; -1 for a backend of
                                  one device, named alone ("cpu") */
    char name[256];            /* as its driver names it ("avx2 kernels" for the CPU) */
    sotto_device_type type;
    uint64_t memory_bytes;     /* its largest device-local memory heap; 0 for the host */
    char version[32];          /* the backend's own version of it, "Vulkan 1.3.230"; "" if none */
    char unusable[160];        /* "" when sotto can run on it, else what it lacks */
} sotto_device_info;

/* "discrete GPU", "integrated GPU", "virtual GPU", "software", "other". */
const char *sotto_device_type_name(sotto_device_type type);

/* The name of the I-th backend this build has ("cpu", "vulkan": the order sotto info
 * --devices lists them in), NULL from the last on. Valid for the program's life. */
const char *sotto_backend_name(int i);

/* Lists the devices of the backend named BACKEND in the order "BACKEND:N" counts them: up
 * to CAP of them into OUT, their number into *N. SOTTO_ERR_INVALID_ARG for a backend this
 * build does not have; SOTTO_ERR_UNSUPPORTED (message in sotto_last_error()) when the
 * backend cannot list (vulkan: not built in, or no Vulkan loader installed); a loader
 * without devices lists none. */
sotto_status sotto_device_list(const char *backend, sotto_device_info *out, int cap, int *n);

/* SOTTO_OK when DEVICE has the form sotto_context_params.device takes (NULL, "auto", a
 * backend's name, or "name:N" for a backend that counts its devices), else
 * SOTTO_ERR_INVALID_ARG with "'DEVICE' is not a device: use ..." in sotto_last_error().
 * Checks the form only: whether the device exists is for sotto_context_init. */
sotto_status sotto_device_check(const char *device);

/* ---- context -------------------------------------------------------------------- */

typedef struct sotto_context sotto_context;

#define SOTTO_MAX_SEQUENCES 16
#define SOTTO_MAX_BATCH 64

typedef struct sotto_context_params {
    int n_threads;             /* 0 (or less): all the cores this process may use, sotto_cpu_count (the
                                  CPU device's worker threads; with 2 or more a transcription's
                                  VAD also runs beside its log-mel while the audio is read) */
    /* The device the context runs on:
     *   NULL or "auto"  a discrete or integrated GPU (Vulkan) when the machine has one,
     *                   else the CPU; never a software Vulkan driver
     *   "cpu"           the CPU
     *   "vulkan"        the best Vulkan device: discrete, integrated, virtual, then a
     *                   software one (lavapipe)
     *   "vulkan:N"      device N of sotto_device_list("vulkan"), whatever its type
     * (sotto_device_check says whether a string has one of these forms, for the
     * backends of this build.) sotto_context_device names the one chosen. */
    const char *device;
    int max_sequences;         /* sequences decoded together, each with a KV cache of its own:
                                  the most beams or best-of samples a transcription may use
                                  (1 .. SOTTO_MAX_SEQUENCES; default 5) */
    int max_batch;             /* 30 s windows encoded and decoded together by batched
                                  transcription (sotto_transcribe_params.batch_size), each
                                  with max_sequences caches of its own: 1 .. SOTTO_MAX_BATCH
                                  (default 1). Every buffer is sized for it when the context
                                  is made; more than the machine's available memory holds is
                                  refused (SOTTO_ERR_NOMEM, the message naming what fits) */
} sotto_context_params;

sotto_context_params sotto_context_params_default(void); /* n_threads 0, device NULL (auto) */

/* The CPUs this process may run on: the online CPUs in its affinity mask (taskset, a
 * container's cpuset), at most the smallest CPU quota of its cgroup and those above it,
 * rounded up (cgroup v2 cpu.max, v1 cpu.cfs_quota_us: docker --cpus, a Kubernetes CPU
 * limit, a systemd slice's CPUQuota); at least 1. What a thread count of 0 means
 * everywhere in this API. */
int sotto_cpu_count(void);

/* Creates a context on the device PARAMS names: sizes every activation buffer and the
 * static KV caches once and, on a GPU, uploads the weights. The model must outlive the
 * context. Fails (message in sotto_last_error()) with SOTTO_ERR_INVALID_ARG for a device
 * string of another form, SOTTO_ERR_UNSUPPORTED when Vulkan is not built in, there is no
 * Vulkan loader or no such device, or the device lacks a feature the backend needs, and
 * SOTTO_ERR_NOMEM when device memory runs out. */
sotto_status sotto_context_init(const sotto_model *model, const sotto_context_params *params,
                                sotto_context **out);
/* Frees CTX (NULL is fine). */
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

/* One word of a segment, with word timestamps (openai-whisper's timing.py: the
 * cross-attention of the model's alignment heads aligned to the audio by DTW). */
typedef struct sotto_word {
    const char *word;          /* UTF-8 as the reference makes it: its leading space, the
                                  punctuation merged into it ("Mr.", " (see") */
    double start, end;         /* seconds from the start of the audio, rounded to 0.01 s */
    double probability;        /* the mean probability of its tokens */
} sotto_word;

/* One segment of a transcript, as openai-whisper's transcribe() makes it: text between
 * two timestamp tokens of a window (or a whole window without timestamps). */
typedef struct sotto_segment {
    int id;                    /* 0, 1, ... in order */
    int64_t seek;              /* mel frame (10 ms) where its window starts */
    double start, end;         /* seconds from the start of the audio */
    const char *text;          /* UTF-8, as the reference: usually with a leading space;
                                  "" for a segment emptied as instantaneous or blank */
    const int32_t *tokens;     /* its tokens, timestamps included */
    int n_tokens;
    double temperature;        /* of the decode that produced it */
    double avg_logprob;        /* sum of the sampled tokens' log-probabilities / (n + 1) */
    double compression_ratio;  /* UTF-8 bytes / zlib-compressed bytes of the window's text */
    double no_speech_prob;     /* probability of <|nospeech|> at the first step */
    const sotto_word *words;   /* with word_timestamps: its words in order (n_words may be 0); */
    int n_words;               /*   else NULL and 0 */
    const char *language;      /* code of the language its window was decoded in ("en", "de":
                                  the result's, or with multilingual its window's own; static) */
} sotto_segment;

/* Returns nonzero to stop at this segment: the result holds the segments up to it, the
 * later ones of its window are dropped. */
typedef int (*sotto_segment_callback)(const sotto_segment *segment, void *user_data);
/* A note on input read around (sotto_audio_warning's message), as soon as it is known. */
typedef void (*sotto_warning_callback)(const char *message, void *user_data);
/* Audio seconds done and in all, after each window; returns nonzero to stop there. */
typedef int (*sotto_progress_callback)(double done_s, double total_s, void *user_data);
/* The language detected from the first 30 s (its code, "en", ..., and probability),
 * before the first window is decoded; returns nonzero to stop there (no segments). */
typedef int (*sotto_language_callback)(const char *language, float probability, void *user_data);
/* Polled with the seconds of audio read so far while the input is read (every 4 s of it),
 * then with the whole input's before each window and every 16 decoder steps; nonzero
 * stops the transcription there, which fails with SOTTO_ERR_CANCELLED and keeps nothing (a server cancels the work of a
 * client that left, or refuses audio past a duration without decoding all of it). */
typedef int (*sotto_abort_callback)(double audio_s, void *user_data);

#define SOTTO_MAX_TEMPERATURES 16

typedef struct sotto_vad sotto_vad; /* the Silero VAD (below) */
typedef struct sotto_vad_params sotto_vad_params; /* its parameters (below) */

typedef struct sotto_transcribe_params {
    const char *language;      /* "en", "de", ... or openai's name ("German": sotto_language_code);
                                  NULL or "auto" (any case): detected from the first 30 s
                                  (multilingual models; English-only models are "en") */
    int translate;             /* 1: task translate (multilingual models) */
    int timestamps;            /* 1: timestamp tokens, segments cut at them (default);
                                  0: <|notimestamps|>, one segment per 30 s window */
    int beam_size;             /* beams at temperature 0 (default 5); 1: greedy */
    int best_of;               /* samples at temperature > 0 (default 5) */
    float patience;            /* beam search patience (default 1) */
    int ctranslate2_search;    /* 0 (default): openai-whisper's beam search (BeamSearchDecoder:
                                  each beam's beam_size + 1 best pooled; every <|endoftext|>
                                  ranked before the beam_size-th live one finishes a sequence);
                                  1: CTranslate2 4.8's, which faster-whisper runs (the 2 x
                                  beam_size best of all beams; only an <|endoftext|> among the
                                  first beam_size finishes one, its place taken by the next
                                  that does not end; at the last step every beam a hypothesis).
                                  The two keep different sequences and may end on different
                                  text; the batched pipeline (batch_size) always takes 1.
                                  With 1 a window also stops where CTranslate2's max_length
                                  (n_text_ctx) stops it: min(n_text_ctx / 2, n_text_ctx - S +
                                  1) tokens from its start sequence's last (S tokens up to
                                  it), the prefix counted, sample_len at most */
    int use_length_penalty;    /* 0 (default): rank by sum logprob / length; 1: by */
    float length_penalty;      /*   sum logprob / ((5 + length) / 6) ^ length_penalty, and
                                  with ctranslate2_search by CTranslate2's sum logprob /
                                  length ^ length_penalty (faster-whisper's length_penalty; 0:
                                  the sum, and a beam search ends when its best candidate
                                  ends, as CTranslate2's early exit) */
    double temperatures[SOTTO_MAX_TEMPERATURES]; /* tried in order while a window fails */
    int n_temperatures;        /*   (default 6: 0, 0.2, ... 1.0) */
    int fallback_best;         /* when every temperature fails: 0 (default) the last decode, as
                                  openai-whisper; 1 faster-whisper's: the highest avg_logprob of
                                  those within the compression ratio threshold (else of all),
                                  the last temperature reported */
    int check_compression;     /* 1 (default): a window fails when its compression ratio */
    float compression_ratio_threshold; /* is above this (2.4) */
    int check_logprob;         /* 1 (default): ... or its avg_logprob below this (-1.0) */
    float logprob_threshold;
    int check_no_speech;       /* 1 (default): no_speech_prob above this (0.6) with avg_logprob */
    float no_speech_threshold; /*   below logprob_threshold is silence: the window is skipped */
    int condition_on_previous_text; /* 1 (default): previous text is the next window's prompt */
    const char *initial_prompt; /* text before the first window, or NULL */
    int carry_initial_prompt;  /* 1: openai-whisper's carry_initial_prompt: initial_prompt
                                  begins every window's prompt, the previous text after it cut
                                  to what fits n_text_ctx / 2 - 1 with it (0, default: the
                                  first window's alone) */
    int suppress_blank;        /* 1 (default): no blank or <|endoftext|> first */
    float max_initial_timestamp; /* seconds; the first timestamp at most this (1.0); < 0: any */
    uint64_t seed;             /* of the sampling at temperature > 0 */
    int sample_len;            /* most tokens sampled per window; 0 (default): n_text_ctx / 2 */
    int word_timestamps;       /* 1: words with times in every segment, and segment times and
                                  seeking refined by them, as openai's word_timestamps=True.
                                  The model's alignment heads (GGUF whisper.alignment_heads,
                                  CT2/HF config) are used; a model without them uses every
                                  head of the second half of the decoder layers (openai's
                                  default for a checkpoint it has no table entry for) */
    const char *prepend_punctuations; /* merged into the next word; NULL: "\"'“¿([{-" */
    const char *append_punctuations;  /* into the previous; NULL: "\"'.。,，!！?？:：”)]}、" */
    int check_hallucination_silence; /* 1, with word_timestamps: openai's
                                  hallucination_silence_threshold: silences longer than */
    float hallucination_silence_threshold; /* this (seconds) around a segment of anomalous
                                  words are skipped, and the segment with them */
    const sotto_vad *vad;      /* a Silero VAD (sotto_vad_load) or NULL; it runs along the audio */
    int silence_check;         /* 1 (default), with VAD: a window the decoder calls silence
                                  (no_speech_prob above no_speech_threshold) in which the VAD
                                  hears no speech is skipped, whatever its avg_logprob (the
                                  reference transcribes silence and noise as "you", ". .") */
    int vad_filter;            /* 1, with VAD: only the speech it finds is transcribed, as
                                  faster-whisper's vad_filter; timestamps on the original
                                  timeline (vad_threshold, vad_min_speech_ms ... below), and a
                                  segment whose words lie on both sides of a silence the VAD
                                  dropped is cut there (timed by its words). 2: faster-whisper
                                  1.2.1's segments exactly (restore_speech_timestamps: a
                                  segment may span such a silence, its times mapped back). 0
                                  (default): all of the audio */
    float vad_threshold;       /* faster-whisper's VadOptions: 0.5 */
    int vad_min_speech_ms;     /* 0 */
    int vad_min_silence_ms;    /* 2000 */
    int vad_speech_pad_ms;     /* 400 */
    /* faster-whisper 1.2.1's options (its transcribe.py), with its meaning: */
    const char *hotwords;      /* text in every window's prompt: after <|startofprev|>, before
                                  the previous text (" " + it stripped, at most n_text_ctx / 2 - 1
                                  tokens), but for a window given a prefix; NULL or "": none */
    const char *prefix;        /* text the window at 0 s is forced to begin with (" " + it
                                  stripped, after <|0.00|> with timestamps); its tokens are the
                                  first segment's; NULL or "": none */
    int multilingual;          /* 1: every window's language detected from it (a multilingual
                                  model, language auto or not): a recording that switches */
    const double *clip_timestamps; /* seconds start, end, start, end, ...: only these clips are
                                  transcribed, in order (an odd count: the last runs to the
                                  end; each window cut at its clip's end); NULL: all of it */
    int n_clip_timestamps;
    int max_new_tokens;        /* > 0: faster-whisper's max_new_tokens, as CTranslate2 4.8 caps
                                  it: a window of a P-token prompt (start sequence and prefix
                                  included; S of them before the prefix) gets at most
                                  min((P + N) / 2, P + N - S + 1) tokens, its prefix counted;
                                  P + N above n_text_ctx fails. 0: sample_len alone */
    float repetition_penalty;  /* CTranslate2's (faster-whisper's repetition_penalty), 1 (default):
                                  off. At each step after the first, the logit x of every token
                                  the window has sampled so far (after its prompt, start
                                  sequence and prefix) becomes x * penalty when x < 0, else
                                  x / penalty, before the suppressions and the timestamp rules;
                                  > 1 discourages repeats. A finite number > 0 */
    int no_repeat_ngram_size;  /* CTranslate2's: > 0: no n-gram of this many tokens is sampled
                                  twice in a window (a token that would complete one already in
                                  its sampled tokens is masked); 0 (default): off */
    sotto_segment_callback on_segment; /* each segment as its window is done, or NULL */
    sotto_progress_callback on_progress;
    sotto_language_callback on_language; /* when the language is detected, or NULL */
    sotto_abort_callback abort_callback; /* or NULL */
    sotto_warning_callback on_warning; /* sotto_transcribe_file: a truncated WAV, or NULL */
    void *user_data;           /* for the five callbacks */
    int batch_size;            /* 0 (default): openai-whisper's long-form loop above. N >= 1:
                                  faster-whisper 1.2.1's BatchedInferencePipeline: the audio cut
                                  by VAD (sotto_batch_chunks with VAD, which should be
                                  faster-whisper's own, silero-vad-fw.gguf; without one only
                                  audio of at most 30 s, as one chunk) into chunks of at most
                                  30 s of speech, each decoded on its own: no conditioning on
                                  previous text, max_initial_timestamp 0, the pipeline's prompt
                                  in every chunk's (<|startofprev|>, hotwords as above, then
                                  initial_prompt's tokens as written: no space added, the last
                                  n_text_ctx / 2 - 1 of them; prefix is not used, as the
                                  pipeline passes none), batch_vad's cut (below),
                                  no fallback and no skip as silence, decoded at temperature
                                  0 whatever temperatures[0] says (the pipeline's
                                  CTranslate2 call does not sample; segments report
                                  temperatures[0]),
                                  timestamps and word_timestamps as set (faster-whisper's
                                  default is without timestamps: set timestamps 0). N chunks
                                  are encoded in one pass and decoded together, the context's
                                  max_batch at most, and a chunk that ends gives its place to
                                  the next at once; each chunk's tokens are those it gets in a
                                  batch of its own. Times on the file's timeline. The whole
                                  input is read into memory first. With clip_timestamps (the
                                  pipeline's clip_timestamps) each start, end pair is a chunk
                                  instead (an odd count: the last to the end; its first 30 s
                                  decoded; times start + the chunk's own, no VAD); with
                                  multilingual each chunk's language is detected from its own
                                  encoder output (faster-whisper's batched multilingual: the
                                  result's language stays the one given or detected first). A
                                  language not given is detected as the pipeline detects it:
                                  from the chunks' log-mels end to end, then one frame of
                                  -1.5, the first 30 s (zeros after) */
    int batch_continue;        /* batched, with timestamps (no word_timestamps): a chunk whose
                                  decoding ends 1 s or more before its speech does (its last
                                  timestamp token earlier) is decoded again from that timestamp
                                  to its end, as openai's long-form loop seeks to the last
                                  timestamp, up to 8 pieces a chunk; a chunk's next piece takes
                                  the next free place, ahead of chunks not yet begun. The
                                  chunks stay faster-whisper's;
                                  each chunk's pieces depend on that chunk alone. 0 (default):
                                  faster-whisper's, one decode a chunk */
    const sotto_vad_params *batch_vad; /* batched, cut by VAD: the speech found with these,
                                  merged into chunks of at most 30 s as always: the pipeline's
                                  vad_parameters (it takes a dict's keys over VadOptions'
                                  defaults, so min_silence_duration_ms 2000 unless given, and
                                  max_speech_duration_s 30 whatever the dict says:
                                  sotto_vad_params_batched(30) with min_silence_duration_ms 2000
                                  and the dict's keys set). NULL (default): the pipeline's own
                                  cut, sotto_vad_params_batched(30). Checked as
                                  sotto_vad_intervals checks its parameters */
    float vad_neg_threshold;   /* vad_filter's other two VadOptions: speech ends below this
                                  probability; NAN (default): max(vad_threshold - 0.15, 0.01).
                                  Else in (0, 1) */
    float vad_max_speech_s;    /* speech longer than this (seconds) is split at its last
                                  silence over 98 ms, as faster-whisper's vad.py splits it;
                                  INFINITY (default): never. Else above 0 */
    const int32_t *suppress_tokens; /* openai-whisper's suppress_tokens: the ids never sampled.
                                  NULL (default): the model's list, openai's "-1" (the
                                  non-speech symbols and the special tokens). Else these
                                  N ids (N may be 0), -1 among them standing for the model's
                                  list; <|startoftranscript|>, <|startofprev|>,
                                  <|startoflm|>, <|transcribe|>, <|translate|> and
                                  <|nocaptions|> are always suppressed, as openai adds them.
                                  Each >= -1 (checked against the vocabulary when
                                  transcribing) */
    int n_suppress_tokens;
    double prompt_reset_temperature; /* a window decoded at a temperature above this is not
                                  the next one's prompt: 0.5 (default, openai-whisper's rule;
                                  faster-whisper's prompt_reset_on_temperature). Not NaN */
    int without_logprobs;      /* 1: a window decoded greedily at the only temperature (beam_size
                                  1, one temperature, 0) may leave out its log-probabilities
                                  where nothing decides on them (the silence check reads them
                                  past no_speech_threshold: computed there): the same tokens,
                                  the segments' avg_logprob NaN. Faster where the backend can
                                  take a step's argmax without every logit (the CPU where the
                                  vocabulary does not fit its last cache). 0 (default): always
                                  computed */
    const int32_t *initial_prompt_tokens; /* faster-whisper's initial_prompt given as token ids:
                                  these ids before the first window, as they are (no space
                                  added, nothing stripped), in place of initial_prompt's text
                                  (not both; not with batch_size). Each checked against the
                                  vocabulary when transcribing */
    int n_initial_prompt_tokens;
} sotto_transcribe_params;

/* openai-whisper's defaults (its command line's: beam 5, best of 5, fallback on). */
sotto_transcribe_params sotto_transcribe_params_default(void);

/* Sets P's temperatures as openai-whisper's command line makes them from --temperature
 * T0 and --temperature_increment_on_fallback INCREMENT: np.arange(T0, 1.0 + 1e-6,
 * INCREMENT), that is T0, T0 + INCREMENT, ... (each T0 + i * INCREMENT in double) up to
 * 1.0, at most SOTTO_MAX_TEMPERATURES of them; T0 alone when INCREMENT is 0 (no
 * fallback). The default six are floats (0.2f, ...), so the schedule from 0 with 0.2 is
 * not bit for bit sotto_transcribe_params_default's. Fails with SOTTO_ERR_INVALID_ARG
 * (P untouched, message in sotto_last_error()) unless T0 is in [0, 1] and INCREMENT a
 * finite number >= 0. */
sotto_status sotto_transcribe_params_temperatures(sotto_transcribe_params *p, double t0, double increment);

/* Checks every value of P that does not depend on a model or a context, as
 * sotto_transcribe and sotto_transcribe_file do before they read a sample: 1 to
 * SOTTO_MAX_TEMPERATURES temperatures, each finite and >= 0; beam_size and best_of >= 1
 * (the context's max_sequences bounds them when transcribing); patience in (0, 100];
 * length_penalty finite when used; sample_len >= 0; the compression, logprob and
 * no-speech thresholds, max_initial_timestamp and prompt_reset_temperature not NaN; the
 * hallucination silence threshold >= 0 when on; with a VAD, vad_threshold in (0, 1) and its durations >= 0;
 * max_new_tokens >= 0, clip timestamps >= 0 (with batch_size each start < its end);
 * repetition_penalty finite and > 0, no_repeat_ngram_size >= 0; n_suppress_tokens >= 0 and
 * each of them >= -1; n_initial_prompt_tokens >= 0 with its array, and not beside
 * initial_prompt or batch_size; no prefix or carry_initial_prompt with batch_size (every
 * chunk gets the pipeline's one prompt: initial_prompt and hotwords).
 * SOTTO_OK, or SOTTO_ERR_INVALID_ARG with a message naming the value in
 * sotto_last_error(). The language must be "auto", a code or a name sotto_language_code
 * knows; whether the model has it is checked when transcribing. */
sotto_status sotto_transcribe_params_check(const sotto_transcribe_params *p);

/* A transcript: owned by the caller, freed with sotto_result_free; every pointer in it
 * lives as long as the result. */
typedef struct sotto_result {
    const char *text;          /* every segment's text, joined */
    const char *language;      /* code of the language transcribed ("en", ...) */
    float language_probability; /* when detected; else 0 */
    int language_detected;
    double duration;           /* seconds of audio */
    const sotto_segment *segments;
    int n_segments;
    int stopped;               /* 1: a callback stopped it early */
    int word_timestamps;       /* 1: made with word_timestamps (segments carry words) */
} sotto_result;

/* Frees RESULT and everything it points to (NULL is fine). */
void sotto_result_free(sotto_result *result);

/* Transcribes the audio file PATH ("-": standard input; any format sotto_audio_open
 * reads) with sotto_transcribe's semantics, streaming it: the samples are decoded in
 * chunks into the whole-file log-mel and never held whole. A file that cannot be read or
 * decoded fails with sotto_audio_open's status and a message naming it. */
sotto_status sotto_transcribe_file(sotto_context *ctx, const char *path, const sotto_transcribe_params *params,
                                   sotto_result **out);

/* sotto_transcribe_file over any SOURCE (a descriptor or a buffer in memory as well as a
 * path; see sotto_audio_source), with the same semantics and messages (naming SOURCE's
 * name). */
sotto_status sotto_transcribe_source(sotto_context *ctx, const sotto_audio_source *source,
                                     const sotto_transcribe_params *params, sotto_result **out);

/* Transcribes 16 kHz mono SAMPLES with openai-whisper's long-form semantics (whole-file
 * log-mel, 30 s windows advanced by the timestamps, temperature fallback, conditioning on
 * previous text). Needs a context whose max_sequences covers beam_size and best_of. */
sotto_status sotto_transcribe(sotto_context *ctx, const float *samples, int64_t n_samples,
                              const sotto_transcribe_params *params, sotto_result **out);

/* Detects the spoken language of SAMPLES (16 kHz mono) as openai-whisper's transcribe()
 * does for a multilingual model: from the first 30 s of the whole file's log-mel, the
 * most probable language token after <|startoftranscript|>. Writes its code ("en", "de",
 * ...) into CODE (CODE_CAP bytes; 8 hold every code) and its probability among the
 * languages into *PROBABILITY (may be NULL). */
sotto_status sotto_detect_language(sotto_context *ctx, const float *samples, int64_t n_samples, char *code,
                                   size_t code_cap, float *probability);

/* The probability of every language of a multilingual model for SAMPLES (16 kHz mono), as
 * faster-whisper's detect_language sees a window: the first 30 s of the whole file's
 * log-mel, a shorter file's frames followed by zeros (where sotto_detect_language, as
 * openai, has the log-mel of silence), the softmax over the language tokens at
 * <|startoftranscript|>. PROBS[i] (CAP >= n_languages of them) is
 * the language of token token_lang_first + i (sotto_language_token's order: en, zh, de,
 * ...); *N_PROBS gets n_languages. SOTTO_ERR_INVALID_ARG for an English-only model or a
 * CAP too small. */
sotto_status sotto_detect_language_probs(sotto_context *ctx, const float *samples, int64_t n_samples, float *probs,
                                         int cap, int *n_probs);

/* The same of a given log-mel window MEL [n_mels, SOTTO_N_FRAMES] (N_FLOATS of them; as
 * sotto_mel_window writes it): faster-whisper's detect_language(features=...) of one
 * window. It is encoded on CTX (as sotto_encode). */
sotto_status sotto_detect_language_probs_mel(sotto_context *ctx, const float *mel, int64_t n_floats, float *probs,
                                             int cap, int *n_probs);

/* Appends the UTF-8 text of IDS (special and timestamp tokens skipped, as are ids outside
 * the vocabulary) to a new string (free with sotto_free). A NULL model or text, or no ids
 * for N_IDS > 0 or N_IDS < 0, fail with SOTTO_ERR_INVALID_ARG. */
sotto_status sotto_detokenize(const sotto_model *model, const int32_t *ids, int n_ids,
                              char **text);

/* Encodes the NUL-terminated UTF-8 TEXT into token ids exactly as openai-whisper's
 * tokenizer does (tiktoken's `gpt2` encoding for English-only models, `multilingual`
 * otherwise): its regex splits the text into pieces, each piece is byte-level BPE
 * encoded by merge rank (a token's rank is its id). Nothing is added: no start sequence,
 * no <|startofprev|>, no leading space (openai encodes a prompt as " " + text). Text
 * that spells a special token ("<|endoftext|>") is encoded as ordinary text, as
 * tiktoken's encode_ordinary does (openai's Tokenizer.encode refuses such text).
 *   Sizes: *n_ids receives the number of ids TEXT encodes to, both on success and when
 * IDS is too small. IDS NULL is a size query: SOTTO_OK, nothing written, CAP ignored.
 * Otherwise IDS[0..CAP) receives the ids; when there are more than CAP, the first CAP
 * are written and SOTTO_ERR_INVALID_ARG is returned. At most one id per byte of TEXT.
 *   Errors (message in sotto_last_error(), *n_ids 0): SOTTO_ERR_INVALID_ARG for NULL
 * model/text/n_ids, a negative CAP, or invalid UTF-8 (a stray or missing continuation
 * byte, an overlong form, a surrogate, a code point above U+10FFFF; the message names
 * the byte offset): a Python str, which tiktoken encodes, cannot hold such bytes.
 * SOTTO_ERR_UNSUPPORTED when the model's vocabulary lacks a single-byte token.
 *   Any loader's model works (no merges list is needed). Thread-safe on a shared model. */
sotto_status sotto_tokenize(const sotto_model *model, const char *text, int32_t *ids, int cap,
                            int *n_ids);

/* ---- live transcription (a streaming session) ----------------------------------- */

/* A sotto_stream turns audio pushed as it arrives into text as it is spoken, with the
 * LocalAgreement-2 policy of whisper_streaming (Machacek et al., arXiv 2307.14743):
 *   - the session holds a buffer of the stream's latest audio; every min_step_s of new
 *     audio, sotto_transcribe decodes the whole buffer (beam search, word timestamps on,
 *     the committed text before the buffer as prompt, no temperature fallback) as one
 *     window, the unfinished last segment kept (unless the decoding ends 2 s or more
 *     before the audio does: then the rest is decoded too, as openai's loop would);
 *   - the words on which this decoding and the one before agree, as a prefix of both
 *     (compared case- and punctuation-blind; words without a letter or digit are never
 *     words), are committed: given once, never revised; the rest is the tentative tail,
 *     replaced by the next step's (none while a buffer without committed words is shorter
 *     than hold_s); a decoding's words that say the last committed ones again (its prompt
 *     echoed: 4 words or more) or a phrase three times running (a loop) are not taken,
 *     and after an echo the decodings go without the prompt until the next commit;
 *   - once the buffer is longer than trim_s it is cut at the end of the last segment
 *     whose words are all committed; at max_buffer_s (a 30 s window at most) the pending
 *     words of every segment but the last are committed and cut, so it stays bounded;
 *   - with a VAD (Silero, sotto_vad_load), audio in which it hears no speech costs no
 *     decoding and leaves the buffer (but for a short lead-in), and a pause of
 *     vad_min_silence_ms after speech decodes once more and commits all that is pending;
 *   - sotto_stream_finish decodes what is left and commits everything.
 * Every time is on the stream's timeline: seconds from its first sample.
 * A session uses its context for every decoding: the context (and the model and VAD)
 * must outlive it, and neither may be used by anyone else while a call on the session
 * runs. A session belongs to one thread at a time; sessions on different contexts are
 * independent. Decoding happens inside sotto_stream_push and sotto_stream_finish, on the
 * caller's thread, and the callback runs there too. */
typedef struct sotto_stream sotto_stream;

typedef enum sotto_stream_event_type {
    SOTTO_STREAM_TENTATIVE = 0, /* the current uncommitted tail (text may be ""): it replaces
                                   the previous tentative event */
    SOTTO_STREAM_FINAL = 1      /* committed words, as one segment: never revised, never
                                   repeated; the finals in order are the transcript */
} sotto_stream_event_type;

/* One event. Every pointer in it is valid only during the callback. */
typedef struct sotto_stream_event {
    sotto_stream_event_type type;
    double start, end;         /* its first word's start, its last word's end; both the
                                  stream's current end for an empty tentative */
    const char *text;          /* UTF-8, its words joined (each with its leading space) */
    const int32_t *tokens;     /* text tokens of TEXT (sotto_tokenize; no timestamps) */
    int n_tokens;
    const sotto_word *words;   /* its words, times on the stream's timeline */
    int n_words;
    double audio_time;         /* seconds of audio pushed when the event was made */
    int id;                    /* FINAL: 0, 1, ... in order; TENTATIVE: the id the next final gets */
    const char *language;      /* code of the language its words were decoded in ("en", "de"):
                                  the one given, or the session's detected one (below); NULL
                                  before any decoding */
} sotto_stream_event;

/* Called with every event; a nonzero return stops the session: the call that made the
 * event fails with SOTTO_ERR_CANCELLED and the session takes no more audio. */
typedef int (*sotto_stream_callback)(const sotto_stream_event *event, void *user_data);

typedef struct sotto_stream_params {
    const char *language;      /* as sotto_transcribe_params.language; NULL or "auto": detected
                                  at each step (multilingual models) until a step with words
                                  has heard hold_s of audio: that step's language is the
                                  session's from then on (events carry theirs) */
    int translate;             /* 1: task translate */
    int beam_size;             /* beams of each decoding (default 5; 1: greedy); up to the
                                  context's max_sequences */
    double min_step_s;         /* audio between two decodings (default 0.5; > 0) */
    double trim_s;             /* buffer length past which it is cut at a committed segment end
                                  (default 12) */
    double max_buffer_s;       /* the buffer bound (default 25; trim_s < it <= 30) */
    double hold_s;             /* a buffer that holds no committed word (an utterance's start,
                                  after a pause or a trim) commits nothing by agreement before
                                  it holds this much audio (default 2; below max_buffer_s) */
    const char *initial_prompt; /* text before the stream, or NULL */
    const sotto_vad *vad;      /* a Silero VAD, or NULL: every step decodes */
    int vad_threads;           /* the VAD's threads (default 1) */
    float vad_threshold;       /* speech at this probability (default 0.5) */
    int vad_min_silence_ms;    /* the pause that commits what is pending (default 500) */
    sotto_stream_callback on_event; /* or NULL */
    void *user_data;
} sotto_stream_params;

sotto_stream_params sotto_stream_params_default(void);

/* Checks PARAMS as sotto_stream_init does (without a context): SOTTO_OK, or
 * SOTTO_ERR_INVALID_ARG with a message naming the value in sotto_last_error(). */
sotto_status sotto_stream_params_check(const sotto_stream_params *params);

/* Opens a session on CTX (PARAMS is copied; its strings must outlive the session). Fails
 * with SOTTO_ERR_INVALID_ARG (bad parameters, a beam past the context's max_sequences, a
 * language the model lacks) or SOTTO_ERR_NOMEM; message in sotto_last_error(). */
sotto_status sotto_stream_init(sotto_context *ctx, const sotto_stream_params *params, sotto_stream **out);

/* Frees the session (without finishing it: what is pending is dropped). NULL is fine. */
void sotto_stream_free(sotto_stream *stream);

/* Appends SAMPLES[0..n_samples) (16 kHz mono, any count, 0 included) and runs the
 * decoding steps they make due: events come out through the callback before it returns.
 * One push of much audio makes one step over all of it, as audio that arrived while a
 * step ran is taken in at the next one (so a slow step never makes a backlog), as long
 * as the buffer stays within max_buffer_s; past that, one step each time the buffer
 * fills max_buffer_s, so that every sample is heard (a push of minutes is decoded in
 * pieces: a step hears 30 s at most). Fails
 * with SOTTO_ERR_CANCELLED when the callback stopped the session, SOTTO_ERR_INVALID_ARG
 * after sotto_stream_finish or a failure, or the decoder's status; message in
 * sotto_stream_error(). */
sotto_status sotto_stream_push(sotto_stream *stream, const float *samples, int64_t n_samples);

/* Ends the stream: decodes the audio not yet decoded, commits every pending word (FINAL
 * events) and sends one last, empty TENTATIVE. The session takes no more audio. */
sotto_status sotto_stream_finish(sotto_stream *stream);

/* Seconds of audio pushed so far. */
double sotto_stream_time(const sotto_stream *stream);

/* Every committed word's text so far, joined (the finals' text in order); valid until the
 * next call on STREAM. */
const char *sotto_stream_text(const sotto_stream *stream);

/* Decoding steps run so far and the audio seconds they decoded, for a caller that
 * reports the work done (each step decodes its whole buffer). Either may be NULL. */
void sotto_stream_stats(const sotto_stream *stream, int *n_steps, double *decoded_s);

/* Message describing the last failure on STREAM; "" if none. */
const char *sotto_stream_error(const sotto_stream *stream);

/* ---- voice activity detection (Silero VAD) -------------------------------------- */

/* The 16 kHz Silero VAD, run as the silero-vad package (6.2.3) runs its ONNX model: one
 * speech probability per SOTTO_VAD_WINDOW samples (32 ms), each window seen with the last
 * 64 samples of the one before, the LSTM state carried from window to window. A
 * sotto_vad is immutable once loaded and may be shared by any number of threads; a
 * sotto_vad_stream holds one stream's state and belongs to one thread at a time. */
#define SOTTO_VAD_WINDOW 512

typedef struct sotto_vad_stream sotto_vad_stream;

/* Loads a Silero VAD GGUF file (scripts/silero_vad_to_gguf.py writes it from the package's
 * silero_vad.onnx; scripts/setup.sh installs one). Every key, tensor name, type, shape and
 * byte range is checked, and every weight must be finite; a bad file fails with
 * SOTTO_ERR_FORMAT / SOTTO_ERR_UNSUPPORTED (SOTTO_ERR_IO if unreadable) and a message in
 * sotto_last_error(). On success *out owns the model; free it with sotto_vad_free. */
sotto_status sotto_vad_load(const char *path, sotto_vad **out);
/* Frees VAD (NULL is fine); no stream on it may be in use. */
void sotto_vad_free(sotto_vad *vad);

/* A stream of 16 kHz mono samples, pushed in chunks of any size, on N_THREADS threads
 * (0 or less: all online cores, as a context's; the thread pool is started here, never by
 * sotto_vad_load). VAD
 * must outlive the stream. Fails with a message in sotto_last_error(). */
sotto_status sotto_vad_stream_init(const sotto_vad *vad, int n_threads, sotto_vad_stream **out);
/* Frees STREAM (NULL is fine). */
void sotto_vad_stream_free(sotto_vad_stream *stream);

/* Message describing the last failure on STREAM; "" if none. Valid until the next call. */
const char *sotto_vad_stream_error(const sotto_vad_stream *stream);

/* Back to the start of a stream: no samples buffered, zero context and LSTM state (NULL:
 * nothing). */
void sotto_vad_stream_reset(sotto_vad_stream *stream);

/* Appends SAMPLES[0..n_samples) and writes the speech probability of every window
 * completed by them to PROBS, in order; *n_probs gets their count. A window is complete
 * when its 512 samples are in; the rest waits for the next push or for the flush. PROBS
 * must hold (buffered + n_samples) / 512 values, at most (n_samples + 511) / 512; CAP is
 * its size, and when it is too small nothing is consumed (SOTTO_ERR_INVALID_ARG).
 * However the signal is cut, the probabilities are those of the whole signal given at once
 * up to float rounding (windows are batched per push, and a batch's matrix products may
 * group their sums differently: measured below 3e-6). */
sotto_status sotto_vad_stream_push(sotto_vad_stream *stream, const float *samples, int64_t n_samples, float *probs,
                                   int64_t cap, int64_t *n_probs);

/* Ends the stream: the buffered samples of an incomplete last window, if any, padded with
 * zeros to 512 (as get_speech_timestamps pads the last chunk), give one more probability
 * in *PROBS (PROBS holds 1 value); *n_probs is 0 or 1. The stream is then reset. */
sotto_status sotto_vad_stream_flush(sotto_vad_stream *stream, float *probs, int64_t *n_probs);

/* Every window's speech probability of SAMPLES (a whole signal: a stream pushed and
 * flushed): (n_samples + 511) / 512 values in *probs (free with sotto_free; NULL when
 * n_samples is 0). Errors in sotto_last_error(). */
sotto_status sotto_vad_probs(const sotto_vad *vad, const float *samples, int64_t n_samples, int n_threads,
                             float **probs, int64_t *n_probs);

/* The parameters of silero-vad's get_speech_timestamps (utils_vad.py), at 16 kHz. */
struct sotto_vad_params {
    double threshold;              /* speech when a probability is >= this (0.5) */
    int use_neg_threshold;         /* 0 (default): the end threshold is max(threshold - 0.15, 0.01) */
    double neg_threshold;          /* 1: this instead; speech ends below it */
    int min_speech_duration_ms;    /* shorter speech is dropped (250) */
    double max_speech_duration_s;  /* longer speech is split (INFINITY: never) */
    int min_silence_duration_ms;   /* silence that ends speech (100) */
    int speech_pad_ms;             /* added on each side (30) */
    int min_silence_at_max_speech_ms; /* a split point needs this much silence (98) */
    int use_max_poss_sil_at_max_speech; /* 1 (default): split at the longest such silence;
                                       0: at the last one */
};

/* The package's defaults (0.5, neg_threshold unset, 250 ms, INFINITY, 100 ms, 30 ms, 98 ms, 1). */
sotto_vad_params sotto_vad_params_default(void);

/* One interval of speech, in samples of the 16 kHz signal: [start, end). */
typedef struct sotto_vad_interval {
    int64_t start, end;
} sotto_vad_interval;

/* get_speech_timestamps_from_probs exactly as the package computes it (its float
 * arithmetic in double; sample positions exact): the speech intervals of a signal of
 * N_SAMPLES samples from its N_PROBS window probabilities (n_probs is (n_samples + 511) /
 * 512 for a whole signal). *out (free with sotto_free; NULL when none) receives *n_out
 * intervals in order. SOTTO_ERR_INVALID_ARG for a negative count or duration, a threshold
 * that is not finite, or max_speech_duration_s not above 0; the message in
 * sotto_last_error(). Thread-safe: a pure function. */
sotto_status sotto_vad_intervals(const float *probs, int64_t n_probs, int64_t n_samples,
                                 const sotto_vad_params *params, sotto_vad_interval **out, int64_t *n_out);

/* get_speech_timestamps: sotto_vad_probs of SAMPLES, then sotto_vad_intervals. PARAMS NULL:
 * the defaults. */
sotto_status sotto_vad_speech(const sotto_vad *vad, const float *samples, int64_t n_samples,
                              const sotto_vad_params *params, int n_threads, sotto_vad_interval **out,
                              int64_t *n_out);

/* faster-whisper 1.2.1's get_speech_timestamps (its vad.py): the probabilities of SAMPLES
 * padded with zeros to whole 512-sample windows, one window more when they already are
 * whole (np.pad), then sotto_vad_intervals with PARAMS under vad.py's rule for over-long
 * speech: a split at the last silence longer than 98 ms (PARAMS' min_silence_at_max_speech_ms
 * and use_max_poss_sil_at_max_speech are not read). PARAMS NULL: faster-whisper's VadOptions
 * (threshold 0.5, min speech 0 ms, no maximum, min silence 2000 ms, pad 400 ms). */
sotto_status sotto_vad_speech_fw(const sotto_vad *vad, const float *samples, int64_t n_samples,
                                 const sotto_vad_params *params, int n_threads, sotto_vad_interval **out,
                                 int64_t *n_out);

/* ---- batched transcription's chunks (faster-whisper's BatchedInferencePipeline) ----- */

/* faster-whisper 1.2.1's VadOptions with the pipeline's max_speech_duration_s =
 * CHUNK_LENGTH_S and min_silence_duration_ms = 160: threshold 0.5, min speech 0 ms,
 * speech pad 400 ms, and its vad.py rule for over-long speech (a split at the last
 * silence longer than 98 ms: use_max_poss_sil_at_max_speech 0). */
sotto_vad_params sotto_vad_params_batched(double chunk_length_s);

/* One chunk of collect_chunks: speech intervals FIRST .. FIRST + N_SPEECH - 1, their
 * samples end to end (N_SAMPLES in all); OFFSET is the speech before it (the samples of
 * the chunks before), as faster-whisper's chunk metadata holds it in seconds. */
typedef struct sotto_batch_chunk {
    int64_t offset, n_samples;
    int64_t first, n_speech;
} sotto_batch_chunk;

/* The pipeline's cut of SAMPLES (16 kHz mono, a whole signal): the VAD's probabilities as
 * faster-whisper's vad.py computes them (the signal padded with zeros to whole 512-sample
 * windows, one window more when it already is), the speech intervals of
 * sotto_vad_params_batched(CHUNK_LENGTH_S) into *SPEECH, then collect_chunks(max_duration
 * = CHUNK_LENGTH_S) into *CHUNKS (both free with sotto_free; none when there is no
 * speech). CHUNK_LENGTH_S in (0, 30]. Errors in sotto_last_error(). */
sotto_status sotto_batch_chunks(const sotto_vad *vad, const float *samples, int64_t n_samples, double chunk_length_s,
                                int n_threads, sotto_vad_interval **speech, int64_t *n_speech,
                                sotto_batch_chunk **chunks, int64_t *n_chunks);

/* One input of sotto_transcribe_batch. */
typedef struct sotto_batch_item {
    const sotto_audio_source *source; /* the audio (read whole first), or NULL: SAMPLES */
    const float *samples;      /* 16 kHz mono, N_SAMPLES of them, when SOURCE is NULL */
    int64_t n_samples;
    const sotto_transcribe_params *params; /* batch_size >= 1 (the context's max_batch at most) */
    sotto_result *result;      /* out: on success (the caller frees it), else NULL */
    sotto_status status;       /* out */
    char error[512];           /* out: the message when STATUS is not SOTTO_OK */
} sotto_batch_item;

/* Transcribes the N ITEMS, each as sotto_transcribe_source (or sotto_transcribe) would with
 * its params (batched transcription: see batch_size), their chunks pooled: the chunks of
 * every item, the first item's, then the second's, ..., go through the encoder and the
 * decoder together, up to the largest batch_size among them at a time, so that inputs too
 * short to fill a batch alone (a server's requests) fill one together. Each item's tokens,
 * segments and callbacks are those it gets alone (with sampling, temperatures[0] > 0, its
 * draws depend on the batch), its callbacks called on this thread with its user_data.
 * Items with and without timestamps (start sequences of two lengths) are batched apart.
 * An item fails alone (its params, its audio, its abort callback: SOTTO_ERR_CANCELLED);
 * an encoder or decoder failure fails the items whose chunks it was starting. Each item's status, error
 * and result say; the return value is SOTTO_OK when every item succeeded, else the first
 * failed item's status, or SOTTO_ERR_INVALID_ARG (no item touched) for a NULL CTX or ITEMS
 * or N < 1. Uses the context as sotto_transcribe does (one call at a time). */
sotto_status sotto_transcribe_batch(sotto_context *ctx, sotto_batch_item *items, int n);

#ifdef __cplusplus
}
#endif

#endif /* SOTTO_H */
