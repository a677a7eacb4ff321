/* load.c — sotto_model_load: the load table, one row {probe, load, format} per format
 * sotto reads (CTranslate2 and Hugging Face directories, whisper.cpp's ggml .bin, GGUF),
 * tried in order; each loader builds the model through model.c. */
#include <stdio.h>
#include <sys/stat.h>

#include "model.h"

static bool in_dir(const char *path, const char *name)
{
    char probe[4096];
    return sotto__is_dir(path) && sotto__path_join(probe, sizeof probe, path, name) && sotto__file_exists(probe);
}

static bool probe_ct2(const char *path) { return in_dir(path, "model.bin"); }
static bool probe_hf(const char *path) { return in_dir(path, "model.safetensors"); }
static bool probe_ggml(const char *path) { return !sotto__is_dir(path) && sotto__ggml_probe(path); }
static bool probe_gguf(const char *path) { return !sotto__is_dir(path); } /* any other file */

typedef struct loader {
    bool (*probe)(const char *path);
    sotto_status (*load)(sotto_model *m, const char *path, sotto__err *err);
    const char *format;        /* sotto_model_info.source_format */
} loader;

static const loader loaders[] = {
    {probe_ct2, sotto__load_ct2, "ctranslate2"},
    {probe_hf, sotto__load_hf, "safetensors"},
    {probe_ggml, sotto__load_ggml, "ggml"},
    {probe_gguf, sotto__load_gguf, "gguf"},
};

sotto_status sotto_model_load(const char *path, sotto_model **out)
{
    sotto__err err = {0};
    if (!out) return sotto__publish(&(sotto__err){SOTTO_ERR_INVALID_ARG, "model_load: no place for the model (out is NULL)"});
    *out = NULL;
    sotto_model *m = sotto__model_new();
    if (!m) return sotto__publish(&(sotto__err){SOTTO_ERR_NOMEM, "out of memory"});
    sotto_status st = SOTTO_ERR_FORMAT;
    const loader *l = NULL;
    struct stat sb; /* a FIFO or device is never opened: a FIFO's open waits for a writer */
    if (path && stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) {
        sotto__fail(&err, SOTTO_ERR_IO, "%s: not a regular file or a directory", path);
        sotto_model_free(m);
        return sotto__publish(&err);
    }
    for (size_t i = 0; path && !l && i < sizeof loaders / sizeof *loaders; i++)
        if (loaders[i].probe(path)) l = &loaders[i];
    if (!path) {
        st = sotto__fail(&err, SOTTO_ERR_INVALID_ARG, "no model path given");
    } else if (!l) {
        st = sotto__fail(&err, SOTTO_ERR_FORMAT,
                         "%s: directory holds neither model.bin (CTranslate2) nor "
                         "model.safetensors (Hugging Face)", path);
    } else {
        st = l->load(m, path, &err);
        m->info.source_format = l->format;
    }
    if (st) {
        sotto_model_free(m);
        return sotto__publish(&err);
    }
    *out = m;
    return SOTTO_OK;
}
