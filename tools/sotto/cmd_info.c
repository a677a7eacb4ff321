/* cmd_info.c — `sotto info MODEL`: hyper-parameters, tokenizer facts and the bytes each
 * component takes, in the types it is stored in. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_opt.h"

static const char *type_name(sotto_type t)
{
    return t == SOTTO_TYPE_F32 ? "f32" : t == SOTTO_TYPE_F16 ? "f16" : t == SOTTO_TYPE_Q8_0 ? "q8_0" : "?";
}

static void show_token(const sotto_model *m, const char *label, int32_t id)
{
    size_t n = 0;
    const char *s = id >= 0 ? sotto_token_bytes(m, id, &n) : NULL;
    if (s) printf("  %-17s %6d  %.*s\n", label, id, (int)n, s);
    else printf("  %-17s   none\n", label);
}

/* `sotto info --devices`: every backend's devices with what --device calls them and
 * whether auto would take them (a GPU, or the fallback: the CPU). */
static int show_devices(void)
{
    const char *backend;
    for (int b = 0; (backend = sotto_backend_name(b)); b++) {
        sotto_device_info dev[16];
        int n = 0;
        if (sotto_device_list(backend, dev, 16, &n) != SOTTO_OK) {
            printf("%-12s none: %s\n", backend, sotto_last_error());
            continue;
        }
        if (n == 0) printf("%-12s none: no device found\n", backend);
        for (int i = 0; i < n && i < 16; i++) {
            const sotto_device_info *d = &dev[i];
            if (d->index < 0) { /* a backend of one device: the host's */
                printf("%-12s %s\n", d->backend, d->name);
                continue;
            }
            char name[48]; /* "vulkan:12": the backend's name is at most 15 bytes */
            bool gpu = d->type == SOTTO_DEVICE_DISCRETE_GPU || d->type == SOTTO_DEVICE_INTEGRATED_GPU;
            snprintf(name, sizeof name, "%.15s:%d", d->backend, d->index);
            printf("%-12s %s (%s, %.0f MB%s%s)%s%s\n", name, d->name, sotto_device_type_name(d->type),
                   d->memory_bytes / 1e6, d->version[0] ? ", " : "", d->version, d->unusable[0] ? ": unusable, " : "",
                   d->unusable[0] ? d->unusable : gpu ? "" : " (auto skips it)");
        }
    }
    return EXIT_OK;
}

typedef struct info_opts {
    int devices;
} info_opts;

static const cli_opt options[] = {
    {"--devices", 0, OPT_TRUE, offsetof(info_opts, devices),
     .help = "the devices --device can name, every backend's, instead"},
    {0},
};

static const cli_cmd command = {
    .name = "info",
    .usage = "usage: sotto info MODEL\n"
             "       sotto info --devices\n"
             "\n"
             "Prints a model's hyper-parameters, tokenizer facts and its size per component (encoder,\n"
             "decoder, token embedding) and weight type.\n"
             "\n",
    .opts = options,
    .max_args = 1,
    .args = "MODEL",
};

int cmd_info(int argc, char **argv)
{
    info_opts o = {0};
    int n_pos;
    int rc = cli_parse(&command, argc, argv, &o, &n_pos);
    if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
    if (o.devices && n_pos == 0) return show_devices();
    if (o.devices || n_pos == 0) {
        fprintf(stderr, "usage: sotto info MODEL | --devices\n");
        return EXIT_INPUT;
    }
    char path[4096];
    if (!cli_model_path(argv[1], path, sizeof path)) return EXIT_INPUT; /* a name: the installed model */
    sotto_model *m = cli_load_model(path);
    if (!m) return EXIT_EXEC;
    sotto_model_info h;
    sotto_model_get_info(m, &h);
    printf("model          %s (%s)\n", path, h.source_format);
    printf("vocabulary     %d tokens, %s\n", h.n_vocab, h.multilingual ? "multilingual" : "English-only");
    if (h.multilingual) printf("languages      %d\n", h.n_languages);
    printf("mel bins       %d\n", h.n_mels);
    printf("encoder        %d layers, width %d, %d heads, %d positions\n", h.n_audio_layer, h.n_audio_state,
           h.n_audio_head, h.n_audio_ctx);
    printf("decoder        %d layers, width %d, %d heads, %d positions\n", h.n_text_layer, h.n_text_state,
           h.n_text_head, h.n_text_ctx);
    printf("special tokens\n");
    show_token(m, "endoftext", h.token_eot);
    show_token(m, "startoftranscript", h.token_sot);
    show_token(m, "translate", h.token_translate);
    show_token(m, "transcribe", h.token_transcribe);
    show_token(m, "nospeech", h.token_nospeech);
    show_token(m, "notimestamps", h.token_notimestamps);
    show_token(m, "timestamp_begin", h.token_timestamp_begin);
    const double MB = 1e6;
    printf("weights (as loaded: bf16 widened to f32, 4- and 5-bit ggml types to q8_0)\n");
    printf("  encoder        %10.2f MB  %s matrices\n", h.encoder_bytes / MB, type_name(h.encoder_type));
    printf("  decoder        %10.2f MB  %s matrices (embedding excluded)\n", h.decoder_bytes / MB,
           type_name(h.decoder_type));
    printf("  embedding      %10.2f MB  %s, tied: also the output projection\n", h.embedding_bytes / MB,
           type_name(h.decoder_type));
    printf("  total          %10.2f MB\n", (h.encoder_bytes + h.decoder_bytes + h.embedding_bytes) / MB);
    sotto_model_free(m);
    return EXIT_OK;
}
