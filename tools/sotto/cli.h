/* cli.h — helpers shared by the subcommands of the sotto tool: exit codes, model
 * resolution, files (option parsing: cli_opt.h). The tool uses only the public header. */
#ifndef SOTTO_CLI_H
#define SOTTO_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sotto.h"

enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_EXEC = 2, EXIT_MISMATCH = 3 };

int cmd_transcribe(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_mel(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_vad(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_stream(int argc, char **argv);

/* The model to use: FLAG (-m's value, or a command's MODEL argument), else $SOTTO_MODEL,
 * else the default installed by `make demo`
 * (${XDG_DATA_HOME:-~/.local/share}/sotto/models/tiny.en.gguf). Either given with no '/'
 * and naming nothing here (not even a dangling link) is an installed model's name (NAME
 * or NAME.gguf in that directory, as openai's `-m tiny.en`). Writes the path into OUT;
 * false (with a message printed, listing the installed models for a name) when none
 * exists. */
bool cli_model_path(const char *flag, char *out, size_t n);

/* The thread count to run with: REQUESTED (-t), or every online core when it is 0; warns
 * on stderr when REQUESTED exceeds the cores. */
int cli_threads(long requested);

/* The Silero VAD model: FLAG, else $SOTTO_VAD_MODEL, else the one setup installs
 * (${XDG_DATA_HOME:-~/.local/share}/sotto/models/silero-vad.gguf). Writes the path into
 * OUT; false when none is given or installed (with a message when REQUIRED). */
bool cli_vad_model_path(const char *flag, char *out, size_t n, bool required);
/* The same for the model file FILE under the data directory, the environment's ENV_NAME
 * before it (batched transcription: SOTTO_BATCH_VAD_MODEL, silero-vad-fw.gguf). */
bool cli_vad_model_path_of(const char *flag, const char *env_name, const char *file, char *out, size_t n,
                           bool required);

/* The device to run on: FLAG (--device), else $SOTTO_DEVICE, else "auto". NULL, with the
 * library's message (sotto_device_check) naming CMD, when it is not a device string. */
const char *cli_device(const char *cmd, const char *flag);

/* Creates the context on P's device and says on stderr which device it runs on; NULL
 * (message printed, naming CMD) when that fails. */
sotto_context *cli_context(const char *cmd, const sotto_model *model, const sotto_context_params *p);

/* Loads a model and prints a message on failure. */
sotto_model *cli_load_model(const char *path);

/* Token id lists: decimal ids separated by commas (COMMAS) or by whitespace and/or
 * commas (files). Surrounding spaces and tabs and CRLF line ends are fine; empty
 * items, leading/trailing commas, non-decimal text, negative, overflowing or
 * >= N_VOCAB ids (when N_VOCAB > 0) and empty lists are rejected with a message in MSG
 * naming SOURCE, the 1-based position and the text. *OUT is malloc'd. */
bool cli_parse_ids(const char *text, size_t len, bool commas, int32_t n_vocab, const char *source,
                   int32_t **out, int *n_out, char *msg, size_t msg_len);

/* Reads a whole file into a NUL-terminated malloc'd buffer (at most MAX bytes). */
char *cli_read_file(const char *path, size_t max, size_t *len, char *msg, size_t msg_len);

/* -l LANG and --task against the model, once, before any input is read: an English-only
 * model transcribes English whatever *LANG says (openai-whisper's command warns and sets
 * en: so does this, *LANG then "en") and does not translate; a multilingual
 * one needs the language's token. False after a message naming CMD. An unknown language
 * is the library's to refuse (sotto_language_code: NULL, as auto). */
bool cli_language_fits(const char *cmd, const sotto_model *model, const char **lang, bool translate);

/* Whether LANG asks for detection: NULL, or "auto" in any case (as the library takes it). */
bool cli_auto_language(const char *lang);

/* Whether paths A and B name one existing file (a path and another way to it). */
bool cli_same_file(const char *a, const char *b);

/* mkdir -p: every directory of PATH before its last '/', and (LAST) PATH itself. False
 * with errno set. */
bool cli_make_dirs(const char *path, bool last);

/* Whether the outputs can be written, checked before any decoding: DIR (--output-dir)
 * exists or is made (with its parents, as openai's os.makedirs) and takes a file; -o OUTPUT's directory (its target's, for
 * a link) takes one, or OUTPUT is a device or FIFO open to writing. False after a message
 * naming CMD. Neither given: true. */
bool cli_output_writable(const char *cmd, const char *dir, const char *output);

/* Writes N bytes to PATH as out_write_file places an output: a regular file through
 * PATH.tmp.PID and a rename, a link's target so, a device or FIFO straight into; "-" is
 * stdout. False with errno set. */
bool cli_write_file(const char *path, const void *data, size_t n);

/* Monotonic clock in milliseconds. */
double cli_now_ms(void);

#endif
