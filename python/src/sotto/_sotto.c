/* _sotto.c — the CPython extension under the sotto package: Model, Context and Vad over
 * the public C API (include/sotto.h), nothing else. Context.transcribe releases the GIL
 * while the engine runs; engine errors raise sotto.SottoError with the library's message.
 * The Python layer (sotto/_model.py) builds the friendly API on these three types. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <structmember.h>
#include <stdbool.h>
#include <math.h>
#include <string.h>

#include "sotto.h"
#include "_sotto.h"

static PyObject *SottoError; /* sotto.SottoError(RuntimeError), .status: sotto_status_str() */

/* Raises SottoError(MESSAGE) with .status set; returns NULL for the caller to return. */
static PyObject *raise_status(sotto_status st, const char *message)
{
    PyObject *e = PyObject_CallFunction(SottoError, "s", message && *message ? message : sotto_status_str(st));
    if (!e) return NULL;
    PyObject *name = PyUnicode_FromString(sotto_status_str(st));
    if (name && PyObject_SetAttrString(e, "status", name) == 0) PyErr_SetObject(SottoError, e);
    Py_XDECREF(name);
    Py_DECREF(e);
    return NULL;
}

/* The one argument of Model(path) and Vad(path) as bytes (a new reference), or NULL with
 * the error set (also when this object WHAT was loaded already). */
static PyObject *path_arg(PyObject *args, PyObject *kw, bool loaded, const char *what)
{
    static char *names[] = {"path", NULL};
    PyObject *path_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&", names, PyUnicode_FSConverter, &path_obj)) return NULL;
    if (loaded) {
        Py_DECREF(path_obj);
        PyErr_Format(PyExc_RuntimeError, "%s is already loaded", what);
        return NULL;
    }
    return path_obj;
}

/* After a load from PATH_OBJ (released here): 0, or -1 with SottoError set. */
static int loaded(sotto_status st, PyObject *path_obj)
{
    Py_DECREF(path_obj);
    if (st == SOTTO_OK) return 0;
    raise_status(st, sotto_last_error());
    return -1;
}

/* ---- Model ------------------------------------------------------------------------ */

static int Model_init(ModelObject *self, PyObject *args, PyObject *kw)
{
    PyObject *path_obj = path_arg(args, kw, self->model != NULL, "Model");
    if (!path_obj) return -1;
    sotto_status st;
    Py_BEGIN_ALLOW_THREADS
    st = sotto_model_load(PyBytes_AS_STRING(path_obj), &self->model);
    Py_END_ALLOW_THREADS
    return loaded(st, path_obj);
}

static void Model_dealloc(ModelObject *self)
{
    sotto_model_free(self->model);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Model_info(ModelObject *self, PyObject *unused)
{
    if (!self->model) return raise_status(SOTTO_ERR_INVALID_ARG, "Model is not loaded");
    sotto_model_info i;
    sotto_model_get_info(self->model, &i);
    return Py_BuildValue("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:O,s:i,s:s}", "n_vocab", i.n_vocab, "n_mels",
                         i.n_mels, "n_audio_ctx", i.n_audio_ctx, "n_audio_state", i.n_audio_state, "n_audio_layer",
                         i.n_audio_layer, "n_text_ctx", i.n_text_ctx, "n_text_state", i.n_text_state, "n_text_layer",
                         i.n_text_layer, "n_audio_head", i.n_audio_head, "n_text_head", i.n_text_head,
                         "multilingual", i.multilingual ? Py_True : Py_False, "n_languages", i.n_languages,
                         "source_format", i.source_format);
}

static const char *type_name(sotto_type t)
{
    return t == SOTTO_TYPE_F32 ? "f32" : t == SOTTO_TYPE_F16 ? "f16" : t == SOTTO_TYPE_Q8_0 ? "q8_0" : "?";
}

/* "f32", "f16" or "q8_0" as a sotto_type; -1 with ValueError set for anything else. */
static int type_parse(const char *name, sotto_type *out)
{
    static const sotto_type types[] = {SOTTO_TYPE_F32, SOTTO_TYPE_F16, SOTTO_TYPE_Q8_0};
    for (int i = 0; i < 3; i++)
        if (strcmp(name, type_name(types[i])) == 0) {
            *out = types[i];
            return 0;
        }
    PyErr_Format(PyExc_ValueError, "weight type must be f32, f16 or q8_0, not '%s'", name);
    return -1;
}

/* Model.weight_types() -> (encoder type, decoder type) as stored: "f32", "f16", "q8_0". */
static PyObject *Model_weight_types(ModelObject *self, PyObject *unused)
{
    if (!self->model) return raise_status(SOTTO_ERR_INVALID_ARG, "Model is not loaded");
    sotto_model_info i;
    sotto_model_get_info(self->model, &i);
    return Py_BuildValue("(ss)", type_name(i.encoder_type), type_name(i.decoder_type));
}

/* Model.save_gguf(path, encoder_type, decoder_type): sotto_model_save_gguf with the GIL
 * released (what `sotto convert` does). */
static PyObject *Model_save_gguf(ModelObject *self, PyObject *args)
{
    PyObject *path_obj;
    const char *enc, *dec;
    if (!PyArg_ParseTuple(args, "O&ss", PyUnicode_FSConverter, &path_obj, &enc, &dec)) return NULL;
    sotto_convert_params cp = sotto_convert_params_default();
    if (!self->model || type_parse(enc, &cp.encoder_type) < 0 || type_parse(dec, &cp.decoder_type) < 0) {
        Py_DECREF(path_obj);
        return self->model ? NULL : raise_status(SOTTO_ERR_INVALID_ARG, "Model is not loaded");
    }
    sotto_status st;
    Py_BEGIN_ALLOW_THREADS
    st = sotto_model_save_gguf(self->model, PyBytes_AS_STRING(path_obj), &cp);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (st != SOTTO_OK) return raise_status(st, sotto_last_error());
    Py_RETURN_NONE;
}

static PyMethodDef Model_methods[] = {
    {"info", (PyCFunction)Model_info, METH_NOARGS, "The model's hyper-parameters (sotto_model_get_info)."},
    {"weight_types", (PyCFunction)Model_weight_types, METH_NOARGS, "(encoder, decoder) weight types as stored."},
    {"save_gguf", (PyCFunction)Model_save_gguf, METH_VARARGS,
     "save_gguf(path, encoder_type, decoder_type): sotto_model_save_gguf (f32, f16 or q8_0)."},
    {NULL}};

PyTypeObject ModelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sotto._sotto.Model",
    .tp_basicsize = sizeof(ModelObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Model(path): a Whisper model loaded by sotto_model_load; immutable, shared by contexts.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Model_init,
    .tp_dealloc = (destructor)Model_dealloc,
    .tp_methods = Model_methods,
};

/* ---- Vad -------------------------------------------------------------------------- */

static int Vad_init(VadObject *self, PyObject *args, PyObject *kw)
{
    PyObject *path_obj = path_arg(args, kw, self->vad != NULL, "Vad");
    if (!path_obj) return -1;
    sotto_status st;
    Py_BEGIN_ALLOW_THREADS
    st = sotto_vad_load(PyBytes_AS_STRING(path_obj), &self->vad);
    Py_END_ALLOW_THREADS
    return loaded(st, path_obj);
}

static void Vad_dealloc(VadObject *self)
{
    sotto_vad_free(self->vad);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int samples_view(PyObject *audio, Py_buffer *view);

/* Vad.speech(samples, threshold, neg_threshold, min_speech_duration_ms,
 * max_speech_duration_s, min_silence_duration_ms, speech_pad_ms, n_threads) -> list of
 * (start, end) sample intervals: sotto_vad_speech (silero-vad's get_speech_timestamps) on
 * a 1-D float32 buffer, the GIL released; NEG_THRESHOLD None: the package's own; PIPELINE:
 * faster-whisper's vad.py instead (sotto_vad_speech_fw). */
static PyObject *Vad_speech(VadObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"samples", "threshold", "neg_threshold", "min_speech_ms", "max_speech_s",
                            "min_silence_ms", "pad_ms", "n_threads", "pipeline", NULL};
    PyObject *audio, *neg = Py_None;
    sotto_vad_params vp = sotto_vad_params_default();
    int n_threads = 0, pipeline = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OdOidiii|$p", names, &audio, &vp.threshold, &neg,
                                     &vp.min_speech_duration_ms, &vp.max_speech_duration_s,
                                     &vp.min_silence_duration_ms, &vp.speech_pad_ms, &n_threads, &pipeline))
        return NULL;
    if (!self->vad) return raise_status(SOTTO_ERR_INVALID_ARG, "Vad is not loaded");
    if (neg != Py_None) {
        vp.use_neg_threshold = 1;
        vp.neg_threshold = PyFloat_AsDouble(neg);
        if (vp.neg_threshold == -1.0 && PyErr_Occurred()) return NULL;
    }
    Py_buffer view;
    if (samples_view(audio, &view) < 0) return NULL;
    sotto_vad_interval *iv = NULL;
    int64_t n = 0;
    sotto_status st;
    Py_BEGIN_ALLOW_THREADS
    if (pipeline) st = sotto_vad_speech_fw(self->vad, view.buf, (int64_t)(view.len / 4), &vp, n_threads, &iv, &n);
    else st = sotto_vad_speech(self->vad, view.buf, (int64_t)(view.len / 4), &vp, n_threads, &iv, &n);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (st != SOTTO_OK) return raise_status(st, sotto_last_error());
    PyObject *out = PyList_New((Py_ssize_t)n);
    for (int64_t i = 0; out && i < n; i++) {
        PyObject *t = Py_BuildValue("(LL)", (long long)iv[i].start, (long long)iv[i].end);
        if (!t) Py_CLEAR(out);
        else PyList_SET_ITEM(out, (Py_ssize_t)i, t);
    }
    sotto_free(iv);
    return out;
}

static PyMethodDef Vad_methods[] = {
    {"speech", (PyCFunction)(void (*)(void))Vad_speech, METH_VARARGS | METH_KEYWORDS,
     "speech(samples, threshold, neg_threshold, min_speech_ms, max_speech_s, min_silence_ms, pad_ms, n_threads,"
     " *, pipeline=False) -> [(start, end), ...] in samples (sotto_vad_speech; pipeline: faster-whisper's"
     " vad.py, sotto_vad_speech_fw)."},
    {NULL}};

PyTypeObject VadType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sotto._sotto.Vad",
    .tp_basicsize = sizeof(VadObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Vad(path): a Silero VAD model (sotto_vad_load); immutable, shared.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Vad_init,
    .tp_dealloc = (destructor)Vad_dealloc,
    .tp_methods = Vad_methods,
};

/* ---- Context ---------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    sotto_context *ctx;
    PyObject *model;           /* the ModelObject, kept alive as long as the context */
    int busy;                  /* a transcription runs (set and cleared under the GIL) */
    int max_sequences;         /* as created: the most beams or samples a call may use */
    int max_batch;             /* as created: the most chunks a batched call may decode together */
} ContextObject;

static int Context_init(ContextObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"model", "n_threads", "device", "max_sequences", "max_batch", NULL};
    PyObject *model;
    int n_threads = 0, max_sequences = 5, max_batch = 1;
    const char *device = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|izii", names, &ModelType, &model, &n_threads, &device,
                                     &max_sequences, &max_batch))
        return -1;
    if (self->ctx) {
        PyErr_SetString(PyExc_RuntimeError, "Context is already created");
        return -1;
    }
    if (!((ModelObject *)model)->model) {
        raise_status(SOTTO_ERR_INVALID_ARG, "Model is not loaded");
        return -1;
    }
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = n_threads, cp.device = device, cp.max_sequences = max_sequences, cp.max_batch = max_batch;
    sotto_status st;
    Py_BEGIN_ALLOW_THREADS
    st = sotto_context_init(((ModelObject *)model)->model, &cp, &self->ctx);
    Py_END_ALLOW_THREADS
    if (st != SOTTO_OK) {
        raise_status(st, sotto_last_error());
        return -1;
    }
    Py_INCREF(model);
    self->model = model;
    self->max_sequences = max_sequences;
    self->max_batch = max_batch;
    return 0;
}

static void Context_dealloc(ContextObject *self)
{
    sotto_context_free(self->ctx);
    Py_XDECREF(self->model);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Context_device(ContextObject *self, void *unused)
{
    if (!self->ctx) return raise_status(SOTTO_ERR_INVALID_ARG, "Context is not created");
    return PyUnicode_FromString(sotto_context_device(self->ctx));
}

/* A float option that may be None (its check off): sets *VALUE and *ENABLED. */
static int opt_float(PyObject *o, const char *name, float *value, int *enabled)
{
    if (o == Py_None) {
        *enabled = 0;
        return 0;
    }
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "%s must be a number or None", name);
        return -1;
    }
    *value = (float)v;
    *enabled = 1;
    return 0;
}

/* TEMPS: None (the library's six), or a sequence of 1..SOTTO_MAX_TEMPERATURES numbers. */
static int opt_temperatures(PyObject *temps, sotto_transcribe_params *p)
{
    if (temps == Py_None) return 0;
    PyObject *seq = PySequence_Fast(temps, "temperature must be a sequence of numbers");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n < 1 || n > SOTTO_MAX_TEMPERATURES) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "temperature: 1 to %d values, not %zd", SOTTO_MAX_TEMPERATURES, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        double t = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
        if (t == -1.0 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        p->temperatures[i] = t;
    }
    p->n_temperatures = (int)n;
    Py_DECREF(seq);
    return 0;
}

/* A segment's words as a list of (word, start, end, probability) tuples. */
static PyObject *words_to_python(const sotto_segment *s)
{
    PyObject *words = PyList_New(s->n_words);
    if (!words) return NULL;
    for (int k = 0; k < s->n_words; k++) {
        const sotto_word *w = &s->words[k];
        PyObject *text = PyUnicode_DecodeUTF8(w->word, (Py_ssize_t)strlen(w->word), "replace");
        PyObject *t = text ? Py_BuildValue("(Nddd)", text, w->start, w->end, w->probability) : NULL;
        if (!t) {
            Py_DECREF(words);
            return NULL;
        }
        PyList_SET_ITEM(words, k, t);
    }
    return words;
}

/* One segment as a tuple (id, seek, start, end, text, tokens, temperature, avg_logprob,
 * compression_ratio, no_speech_prob, words): WORDS is the list of its words when the
 * transcription has word timestamps (WITH_WORDS), else None. NULL with an exception set
 * on failure. */
static PyObject *segment_to_python(const sotto_segment *s, int with_words)
{
    PyObject *tokens = PyTuple_New(s->n_tokens);
    if (!tokens) return NULL;
    for (int k = 0; k < s->n_tokens; k++) {
        PyObject *id = PyLong_FromLong(s->tokens[k]);
        if (!id) {
            Py_DECREF(tokens);
            return NULL;
        }
        PyTuple_SET_ITEM(tokens, k, id);
    }
    PyObject *text = PyUnicode_DecodeUTF8(s->text, (Py_ssize_t)strlen(s->text), "replace");
    if (!text) {
        Py_DECREF(tokens);
        return NULL;
    }
    PyObject *words = Py_None;
    if (with_words) words = words_to_python(s);
    else Py_INCREF(words);
    if (!words) {
        Py_DECREF(tokens);
        Py_DECREF(text);
        return NULL;
    }
    return Py_BuildValue("(iLddNNddddN)", s->id, (long long)s->seek, s->start, s->end, text, tokens, s->temperature,
                         s->avg_logprob, s->compression_ratio, s->no_speech_prob, words);
}

/* The result as plain Python values: a dict of the transcript's fields and the list of
 * segment tuples. */
static PyObject *result_to_python(const sotto_result *r)
{
    PyObject *segs = PyList_New(r->n_segments);
    if (!segs) return NULL;
    for (int i = 0; i < r->n_segments; i++) {
        PyObject *t = segment_to_python(&r->segments[i], r->word_timestamps);
        if (!t) {
            Py_DECREF(segs);
            return NULL;
        }
        PyList_SET_ITEM(segs, i, t);
    }
    PyObject *text = PyUnicode_DecodeUTF8(r->text, (Py_ssize_t)strlen(r->text), "replace");
    if (!text) {
        Py_DECREF(segs);
        return NULL;
    }
    return Py_BuildValue("{s:N,s:s,s:d,s:O,s:d,s:O,s:N}", "text", text, "language", r->language,
                         "language_probability", (double)r->language_probability, "language_detected",
                         r->language_detected ? Py_True : Py_False, "duration", r->duration, "stopped",
                         r->stopped ? Py_True : Py_False, "segments", segs);
}

/* The engine's callbacks, on the thread that called transcribe, after each window: they
 * take the GIL for a moment to run pending signal handlers (Ctrl-C in the main thread
 * raises KeyboardInterrupt there) and the caller's on_segment; an exception stops the
 * transcription and is raised when it returns. */
typedef struct callbacks {
    PyObject *on_segment;      /* callable(segment tuple) -> truthy to stop, or NULL */
    PyObject *on_language;     /* callable(code, probability) -> truthy to stop, or NULL */
    int words;                 /* the segments carry words (word_timestamps) */
    int failed;                /* an exception is set on this thread */
    char warning[512];         /* the input's warning (a truncated WAV), raised when it returns */
} callbacks;

static void cb_warning(const char *message, void *user)
{
    callbacks *c = user;
    snprintf(c->warning, sizeof c->warning, "%s", message);
}

/* With the GIL: the pending signal handlers, then CALL(FN, ARG, C) when FN is set;
 * nonzero to stop (a true return, or an exception, which sets C->failed). */
static int with_gil(callbacks *c, PyObject *fn, PyObject *(*call)(PyObject *, const void *, const callbacks *),
                    const void *arg)
{
    if (c->failed) return 1;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = 0;
    if (PyErr_CheckSignals() < 0) {
        stop = c->failed = 1;
    } else if (fn) {
        PyObject *r = call(fn, arg, c);
        int truth = r ? PyObject_IsTrue(r) : -1;
        Py_XDECREF(r);
        if (truth < 0) stop = c->failed = 1;
        else stop = truth;
    }
    PyGILState_Release(g);
    return stop;
}

static PyObject *call_segment(PyObject *fn, const void *arg, const callbacks *c)
{
    PyObject *t = segment_to_python(arg, c->words);
    PyObject *r = t ? PyObject_CallFunctionObjArgs(fn, t, NULL) : NULL;
    Py_XDECREF(t);
    return r;
}

static int cb_segment(const sotto_segment *s, void *user)
{
    callbacks *c = user;
    return with_gil(c, c->on_segment, call_segment, s);
}

typedef struct language_arg {
    const char *code;
    float probability;
} language_arg;

static PyObject *call_language(PyObject *fn, const void *arg, const callbacks *c)
{
    const language_arg *a = arg;
    (void)c;
    return PyObject_CallFunction(fn, "sd", a->code, (double)a->probability);
}

static int cb_language(const char *language, float probability, void *user)
{
    callbacks *c = user;
    language_arg a = {language, probability};
    return with_gil(c, c->on_language, call_language, &a);
}

static int cb_progress(double done_s, double total_s, void *user)
{
    (void)done_s, (void)total_s;
    return with_gil(user, NULL, NULL, NULL); /* Ctrl-C between windows */
}

/* CLIPS: a sequence of numbers (seconds) into *OUT (PyMem_Free) and *N; 0, or -1 with an
 * exception set. */
static int opt_clips(PyObject *clips, double **out, int *n)
{
    PyObject *seq = PySequence_Fast(clips, "clip_timestamps must be a sequence of numbers");
    if (!seq) return -1;
    Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
    double *t = PyMem_Malloc((size_t)(k ? k : 1) * sizeof *t);
    if (!t || k > INT32_MAX) {
        Py_DECREF(seq);
        PyMem_Free(t);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        t[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
        if (t[i] == -1.0 && PyErr_Occurred()) {
            Py_DECREF(seq);
            PyMem_Free(t);
            return -1;
        }
    }
    Py_DECREF(seq);
    *out = t, *n = (int)k;
    return 0;
}

/* IDS, the option NAME: a sequence of token ids (ints; with MODEL_LIST, -1 standing for
 * the model's list of non-speech symbols) into *OUT (PyMem_Free) and *N; 0, or -1 with an
 * exception set. */
static int opt_ids(PyObject *ids, const char *name, bool model_list, int32_t **out, int *n)
{
    PyObject *seq = PySequence_Fast(ids, "token ids must be a sequence of ints");
    if (!seq) {
        PyErr_Format(PyExc_TypeError, "%s must be a sequence of token ids", name);
        return -1;
    }
    Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
    int32_t *v = k > INT32_MAX ? NULL : PyMem_Malloc((size_t)(k ? k : 1) * sizeof *v);
    if (!v) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        long x = PyLong_Check(item) && !PyBool_Check(item) ? PyLong_AsLong(item) : -2;
        if ((x == -1 && PyErr_Occurred()) || x < (model_list ? -1 : 0) || x > INT32_MAX) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: item %zd (%R) is not a token id (an int >= 0%s)", name, i, item,
                         model_list ? ", or -1: the model's list of non-speech symbols" : "");
            Py_DECREF(seq);
            PyMem_Free(v);
            return -1;
        }
        v[i] = (int32_t)x;
    }
    Py_DECREF(seq);
    *out = v, *n = (int)k;
    return 0;
}

static PyObject *transcribe_with(ContextObject *self, PyObject *audio, sotto_transcribe_params *params, PyObject *vad,
                                 PyObject *on_segment, PyObject *on_language);

/* Context.transcribe(audio, **options): AUDIO is a path (str, bytes, os.PathLike) or an
 * object exporting a 1-D buffer of float32 samples (a numpy array, array('f'), ...). */
static PyObject *Context_transcribe(ContextObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"audio", "language", "translate", "timestamps", "beam_size", "best_of", "patience",
                            "length_penalty", "temperatures", "compression_ratio_threshold", "log_prob_threshold",
                            "no_speech_threshold", "condition_on_previous_text", "initial_prompt",
                            "suppress_blank", "max_initial_timestamp", "seed", "sample_len", "vad", "silence_check",
                            "vad_filter", "vad_threshold", "vad_min_speech_ms", "vad_min_silence_ms",
                            "vad_speech_pad_ms", "on_segment", "word_timestamps", "prepend_punctuations",
                            "append_punctuations", "hallucination_silence_threshold", "batch_size", "hotwords",
                            "prefix", "multilingual", "clip_timestamps", "max_new_tokens", "repetition_penalty",
                            "no_repeat_ngram_size", "carry_initial_prompt", "batch_vad_params", "vad_neg_threshold",
                            "vad_max_speech_s", "on_language", "fallback_best", "suppress_tokens", "ctranslate2_search",
                            "prompt_reset_on_temperature", "initial_prompt_tokens", NULL};
    sotto_transcribe_params p = sotto_transcribe_params_default();
    PyObject *audio, *length_penalty = Py_None, *temps = Py_None, *vad = Py_None, *on_segment = Py_None;
    PyObject *crt = NULL, *lpt = NULL, *nst = NULL, *hst = Py_None, *clips = Py_None, *bvad = Py_None;
    PyObject *vneg = Py_None, *on_language = Py_None, *suppress = Py_None, *prompt_ids = Py_None;
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$zppiifOOOOOpzpfKiOpifiiiOpzzOizzpOifipOOfOpOpdO", names, &audio,
                                     &p.language,
                                     &p.translate, &p.timestamps, &p.beam_size, &p.best_of, &p.patience,
                                     &length_penalty, &temps, &crt, &lpt, &nst, &p.condition_on_previous_text,
                                     &p.initial_prompt, &p.suppress_blank, &p.max_initial_timestamp, &seed,
                                     &p.sample_len, &vad, &p.silence_check, &p.vad_filter, &p.vad_threshold,
                                     &p.vad_min_speech_ms, &p.vad_min_silence_ms, &p.vad_speech_pad_ms,
                                     &on_segment, &p.word_timestamps, &p.prepend_punctuations,
                                     &p.append_punctuations, &hst, &p.batch_size, &p.hotwords, &p.prefix,
                                     &p.multilingual, &clips, &p.max_new_tokens, &p.repetition_penalty,
                                     &p.no_repeat_ngram_size, &p.carry_initial_prompt, &bvad, &vneg,
                                     &p.vad_max_speech_s, &on_language, &p.fallback_best, &suppress,
                                     &p.ctranslate2_search, &p.prompt_reset_temperature, &prompt_ids))
        return NULL;
    if (vneg != Py_None && (p.vad_neg_threshold = (float)PyFloat_AsDouble(vneg)) == -1.0f && PyErr_Occurred())
        return NULL;
    sotto_vad_params batch_vad = sotto_vad_params_batched(30);
    if (bvad != Py_None) { /* (threshold, neg_threshold or None, min speech ms, max speech s, min silence ms, pad ms) */
        PyObject *neg = Py_None;
        if (!PyArg_ParseTuple(bvad, "dOidii;batch_vad_params: (threshold, neg_threshold or None, "
                              "min_speech_duration_ms, max_speech_duration_s, min_silence_duration_ms, speech_pad_ms)",
                              &batch_vad.threshold, &neg, &batch_vad.min_speech_duration_ms,
                              &batch_vad.max_speech_duration_s, &batch_vad.min_silence_duration_ms,
                              &batch_vad.speech_pad_ms))
            return NULL;
        batch_vad.use_neg_threshold = neg != Py_None;
        if (neg != Py_None && (batch_vad.neg_threshold = PyFloat_AsDouble(neg)) == -1.0 && PyErr_Occurred())
            return NULL;
        p.batch_vad = &batch_vad;
    }
    p.seed = seed;
    if (!self->ctx) return raise_status(SOTTO_ERR_INVALID_ARG, "Context is not created");
    if ((crt && opt_float(crt, "compression_ratio_threshold", &p.compression_ratio_threshold, &p.check_compression)) ||
        (lpt && opt_float(lpt, "log_prob_threshold", &p.logprob_threshold, &p.check_logprob)) ||
        (nst && opt_float(nst, "no_speech_threshold", &p.no_speech_threshold, &p.check_no_speech)) ||
        opt_float(length_penalty, "length_penalty", &p.length_penalty, &p.use_length_penalty) ||
        opt_float(hst, "hallucination_silence_threshold", &p.hallucination_silence_threshold,
                  &p.check_hallucination_silence) ||
        opt_temperatures(temps, &p))
        return NULL;
    double *clip_ts = NULL; /* freed on every path below: the library reads them while transcribing */
    int32_t *suppress_ids = NULL, *initial_ids = NULL;
    if ((clips != Py_None && opt_clips(clips, &clip_ts, &p.n_clip_timestamps) < 0) ||
        (suppress != Py_None && opt_ids(suppress, "suppress_tokens", true, &suppress_ids, &p.n_suppress_tokens) < 0) ||
        (prompt_ids != Py_None &&
         opt_ids(prompt_ids, "initial_prompt_tokens", false, &initial_ids, &p.n_initial_prompt_tokens) < 0)) {
        PyMem_Free(clip_ts);
        PyMem_Free(suppress_ids);
        return NULL;
    }
    p.clip_timestamps = clip_ts;
    p.suppress_tokens = suppress_ids;
    p.initial_prompt_tokens = initial_ids;
    PyObject *out = transcribe_with(self, audio, &p, vad, on_segment, on_language);
    PyMem_Free(clip_ts);
    PyMem_Free(suppress_ids);
    PyMem_Free(initial_ids);
    return out;
}

/* The rest of Context.transcribe, over P as parsed. */
static PyObject *transcribe_with(ContextObject *self, PyObject *audio, sotto_transcribe_params *params, PyObject *vad,
                                 PyObject *on_segment, PyObject *on_language)
{
    sotto_transcribe_params p = *params;
    if (vad != Py_None) {
        if (!PyObject_TypeCheck(vad, &VadType) || !((VadObject *)vad)->vad) {
            PyErr_SetString(PyExc_TypeError, "vad must be a loaded sotto._sotto.Vad or None");
            return NULL;
        }
        p.vad = ((VadObject *)vad)->vad;
    }
    if (on_segment != Py_None && !PyCallable_Check(on_segment)) {
        PyErr_SetString(PyExc_TypeError, "on_segment must be callable or None");
        return NULL;
    }
    if (on_language != Py_None && !PyCallable_Check(on_language)) {
        PyErr_SetString(PyExc_TypeError, "on_language must be callable or None");
        return NULL;
    }
    if (sotto_transcribe_params_check(&p) != SOTTO_OK) { /* the library's rules, before any audio is read */
        PyErr_SetString(PyExc_ValueError, sotto_last_error());
        return NULL;
    }
    callbacks cbs = {.on_segment = on_segment == Py_None ? NULL : on_segment,
                     .on_language = on_language == Py_None ? NULL : on_language, .words = p.word_timestamps};
    p.on_segment = cb_segment, p.on_progress = cb_progress, p.on_warning = cb_warning, p.user_data = &cbs;
    if (cbs.on_language) p.on_language = cb_language;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this Context is transcribing in another thread (one thread at a time)");
        return NULL;
    }

    PyObject *path = NULL;
    Py_buffer view = {0};
    if (PyObject_CheckBuffer(audio) && !PyBytes_Check(audio)) {
        if (samples_view(audio, &view) < 0) return NULL;
    } else if (!PyUnicode_FSConverter(audio, &path)) {
        return NULL;
    }
    sotto_result *r = NULL;
    sotto_status st;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    if (path) st = sotto_transcribe_file(self->ctx, PyBytes_AS_STRING(path), &p, &r);
    else st = sotto_transcribe(self->ctx, view.buf, (int64_t)(view.len / 4), &p, &r);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (path) Py_DECREF(path);
    else PyBuffer_Release(&view);
    if (cbs.failed) { /* the exception of a callback (KeyboardInterrupt, on_segment's own) */
        sotto_result_free(r);
        return NULL;
    }
    if (st != SOTTO_OK) return raise_status(st, sotto_context_error(self->ctx));
    if (cbs.warning[0] && PyErr_WarnEx(PyExc_RuntimeWarning, cbs.warning, 1) < 0) { /* warnings made errors */
        sotto_result_free(r);
        return NULL;
    }
    PyObject *out = result_to_python(r);
    sotto_result_free(r);
    return out;
}

/* A 1-D float32 buffer of finite samples from AUDIO into VIEW: 0, or -1 with TypeError
 * (not such a buffer) or ValueError (NaN or infinity: every buffer, not only the numpy
 * arrays the package checks, as array('f') and memoryview reach here as they are). */
static int samples_view(PyObject *audio, Py_buffer *view)
{
    if (PyObject_GetBuffer(audio, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    const char *f = view->format ? view->format : "";
    if (*f == '=' || (*f == '<' && PY_LITTLE_ENDIAN) || (*f == '>' && !PY_LITTLE_ENDIAN)) f++;
    if (view->ndim != 1 || view->itemsize != 4 || strcmp(f, "f") != 0) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "audio samples must be a 1-D float32 buffer (16 kHz mono)");
        return -1;
    }
    const float *x = view->buf;
    for (Py_ssize_t i = 0; i < view->len / 4; i++)
        if (!isfinite(x[i])) {
            PyBuffer_Release(view);
            PyErr_Format(PyExc_ValueError, "audio samples must be finite (NaN or infinity at sample %zd)", i);
            return -1;
        }
    return 0;
}

/* Context.detect_language(samples) -> (code, probability): sotto_detect_language on the
 * first 30 s of SAMPLES (a 1-D float32 buffer), the GIL released. */
static PyObject *Context_detect_language(ContextObject *self, PyObject *args)
{
    PyObject *audio;
    if (!PyArg_ParseTuple(args, "O", &audio)) return NULL;
    if (!self->ctx) return raise_status(SOTTO_ERR_INVALID_ARG, "Context is not created");
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this Context is transcribing in another thread (one thread at a time)");
        return NULL;
    }
    Py_buffer view;
    if (samples_view(audio, &view) < 0) return NULL;
    char code[16] = "";
    float prob = 0;
    sotto_status st;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    st = sotto_detect_language(self->ctx, view.buf, (int64_t)(view.len / 4), code, sizeof code, &prob);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    PyBuffer_Release(&view);
    if (st != SOTTO_OK) return raise_status(st, sotto_context_error(self->ctx));
    return Py_BuildValue("(sd)", code, (double)prob);
}

/* The probability of each language, token order, of ARGS' one buffer: samples (MEL false,
 * sotto_detect_language_probs) or a log-mel window (sotto_detect_language_probs_mel). */
static PyObject *language_probs(ContextObject *self, PyObject *args, bool mel)
{
    PyObject *audio;
    if (!PyArg_ParseTuple(args, "O", &audio)) return NULL;
    if (!self->ctx) return raise_status(SOTTO_ERR_INVALID_ARG, "Context is not created");
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this Context is transcribing in another thread (one thread at a time)");
        return NULL;
    }
    Py_buffer view;
    if (!mel && samples_view(audio, &view) < 0) return NULL;
    if (mel) { /* float32 of any shape: the library checks its length */
        if (PyObject_GetBuffer(audio, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
        if (view.itemsize != 4 || !view.format || strchr(view.format, 'f') == NULL) {
            PyBuffer_Release(&view);
            PyErr_SetString(PyExc_TypeError, "mel must be a float32 buffer [n_mels, 3000]");
            return NULL;
        }
    }
    float probs[256];
    int n = 0;
    sotto_status st;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    st = mel ? sotto_detect_language_probs_mel(self->ctx, view.buf, (int64_t)(view.len / 4), probs, 256, &n)
             : sotto_detect_language_probs(self->ctx, view.buf, (int64_t)(view.len / 4), probs, 256, &n);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    PyBuffer_Release(&view);
    if (st != SOTTO_OK) return raise_status(st, sotto_context_error(self->ctx));
    PyObject *out = PyList_New(n);
    for (int i = 0; out && i < n; i++) {
        PyObject *v = PyFloat_FromDouble((double)probs[i]);
        if (!v) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, v);
    }
    return out;
}

/* Context.detect_language_probs(samples) -> [probability of each language, token order]. */
static PyObject *Context_detect_language_probs(ContextObject *self, PyObject *args)
{
    return language_probs(self, args, false);
}

/* Context.detect_language_probs_mel(mel) -> the same of a [n_mels, 3000] log-mel window. */
static PyObject *Context_detect_language_probs_mel(ContextObject *self, PyObject *args)
{
    return language_probs(self, args, true);
}

static PyMethodDef Context_methods[] = {
    {"detect_language_probs_mel", (PyCFunction)Context_detect_language_probs_mel, METH_VARARGS,
     "detect_language_probs_mel(mel) -> [float]: sotto_detect_language_probs_mel of a [n_mels, 3000] float32 buffer."},
    {"detect_language_probs", (PyCFunction)Context_detect_language_probs, METH_VARARGS,
     "detect_language_probs(samples) -> [float]: sotto_detect_language_probs, in language-token order."},
    {"detect_language", (PyCFunction)Context_detect_language, METH_VARARGS,
     "detect_language(samples) -> (code, probability): sotto_detect_language, the GIL released."},
    {"transcribe", (PyCFunction)(void (*)(void))Context_transcribe, METH_VARARGS | METH_KEYWORDS,
     "transcribe(audio, **options) -> dict: sotto_transcribe_file or sotto_transcribe, the GIL released."},
    {NULL}};

static PyGetSetDef Context_getset[] = {
    {"device", (getter)Context_device, NULL, "The device the context runs on (sotto_context_device).", NULL},
    {NULL}};

static PyMemberDef Context_members[] = {
    {"max_sequences", T_INT, offsetof(ContextObject, max_sequences), READONLY,
     "The most beams or best-of samples a transcription on this context may use."},
    {"max_batch", T_INT, offsetof(ContextObject, max_batch), READONLY,
     "The most chunks a batched transcription (batch_size) on this context may decode together."},
    {NULL}};

static PyTypeObject ContextType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sotto._sotto.Context",
    .tp_basicsize = sizeof(ContextObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Context(model, n_threads=0, device=None, max_sequences=5, max_batch=1): per-stream state; one thread at a time.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Context_init,
    .tp_dealloc = (destructor)Context_dealloc,
    .tp_methods = Context_methods,
    .tp_getset = Context_getset,
    .tp_members = Context_members,
};

/* ---- module ----------------------------------------------------------------------- */

PyObject *sotto_py_raise(sotto_status st, const char *message)
{
    return raise_status(st, message);
}

int sotto_py_samples(PyObject *audio, Py_buffer *view)
{
    return samples_view(audio, view);
}

static PyObject *audio_formats(PyObject *m, PyObject *unused)
{
    return PyUnicode_FromString(sotto_audio_formats());
}

/* CHANNEL (sotto_audio_source.channel) of PATH into *SAMPLES (sotto_free) and *N, and the
 * stream's channel count into *CHANNELS: sotto_audio_open_source and sotto_audio_read;
 * what was read around (damage, a truncated file) into WARNING[WARNING_CAP], "" if nothing. */
static sotto_status load_channel(const char *path, int channel, float **samples, int64_t *n, int *channels,
                                 char *warning, size_t warning_cap)
{
    warning[0] = 0;
    *samples = NULL, *n = 0;
    sotto_audio *a = NULL;
    sotto_audio_source src = {.kind = SOTTO_SOURCE_PATH, .path = path, .channel = channel};
    sotto_status st = sotto_audio_open_source(&src, &a);
    int64_t cap = 0;
    while (!st) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 1 << 18;
            float *p = realloc(*samples, (size_t)cap * sizeof *p);
            if (!p) {
                st = SOTTO_ERR_NOMEM;
                break;
            }
            *samples = p;
        }
        int64_t got = 0;
        st = sotto_audio_read(a, *samples + *n, cap - *n, &got);
        if (!st && got == 0) break;
        *n += got;
    }
    *channels = sotto_audio_channels(a);
    if (!st) snprintf(warning, warning_cap, "%s", sotto_audio_warning(a));
    sotto_audio_close(a);
    if (st) free(*samples), *samples = NULL, *n = 0;
    return st;
}

/* audio_load(path, channel=0) -> (bytes, channels): the whole file as 16 kHz mono float32
 * samples (native byte order) of the mix (0) or of channel N >= 1, and the stream's
 * channel count, decoded with the GIL released. */
static PyObject *audio_load(PyObject *m, PyObject *args)
{
    PyObject *path_obj;
    int channel = 0, channels = 0;
    if (!PyArg_ParseTuple(args, "O&|i", PyUnicode_FSConverter, &path_obj, &channel)) return NULL;
    float *samples = NULL;
    int64_t n = 0;
    sotto_status st;
    char warning[2048];
    Py_BEGIN_ALLOW_THREADS
    st = load_channel(PyBytes_AS_STRING(path_obj), channel, &samples, &n, &channels, warning, sizeof warning);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (st != SOTTO_OK) return raise_status(st, sotto_last_error());
    if (warning[0] && PyErr_WarnEx(PyExc_RuntimeWarning, warning, 1) < 0) { /* warnings made errors */
        free(samples);
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize((const char *)samples, (Py_ssize_t)n * (Py_ssize_t)sizeof(float));
    free(samples);
    return out ? Py_BuildValue("(Ni)", out, channels) : NULL;
}

/* mel_window(samples, n_mels) -> bytes: sotto_mel_window of a 1-D float32 buffer (its first
 * 30 s, zeros after), [n_mels, 3000] float32 in native byte order. */
static PyObject *mel_window(PyObject *m, PyObject *args)
{
    PyObject *audio;
    int n_mels;
    if (!PyArg_ParseTuple(args, "Oi", &audio, &n_mels)) return NULL;
    if (n_mels < 1 || n_mels > 256) {
        PyErr_Format(PyExc_ValueError, "n_mels %d (1..256)", n_mels);
        return NULL;
    }
    Py_buffer view;
    if (samples_view(audio, &view) < 0) return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n_mels * SOTTO_N_FRAMES * (Py_ssize_t)sizeof(float));
    sotto_status st = SOTTO_OK;
    if (out) {
        float *mel = (float *)PyBytes_AS_STRING(out);
        Py_BEGIN_ALLOW_THREADS
        st = sotto_mel_window(view.buf, (int64_t)(view.len / 4), n_mels, mel);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&view);
    if (out && st != SOTTO_OK) {
        Py_DECREF(out);
        return raise_status(st, sotto_last_error());
    }
    return out;
}

/* language_name(code) -> str or None: sotto_language_name (openai's LANGUAGES[code]). */
static PyObject *language_name(PyObject *m, PyObject *args)
{
    const char *code;
    if (!PyArg_ParseTuple(args, "s", &code)) return NULL;
    const char *name = sotto_language_name(code);
    if (!name) Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

/* backends() -> list of str: this build's backends, in sotto info --devices' order
 * (sotto_backend_name). */
static PyObject *backends(PyObject *m, PyObject *unused)
{
    (void)m, (void)unused;
    PyObject *out = PyList_New(0);
    for (int i = 0; out && sotto_backend_name(i); i++) {
        PyObject *s = PyUnicode_FromString(sotto_backend_name(i));
        if (!s || PyList_Append(out, s) < 0) Py_CLEAR(out);
        Py_XDECREF(s);
    }
    return out;
}

static PyMethodDef module_methods[] = {
    {"backends", backends, METH_NOARGS, "backends() -> this build's backend names (sotto_backend_name), cpu first."},
    {"audio_formats", audio_formats, METH_NOARGS, "What this build reads (sotto_audio_formats)."},
    {"mel_window", mel_window, METH_VARARGS,
     "mel_window(samples, n_mels) -> bytes: the log-mel of a 30 s window, [n_mels, 3000] float32 (sotto_mel_window)."},
    {"audio_load", audio_load, METH_VARARGS,
     "audio_load(path, channel=0) -> (bytes of float32 16 kHz mono, channels): the mix or channel N."},
    {"language_name", language_name, METH_VARARGS,
     "language_name(code) -> openai's lower-case name of a language code (\"de\": \"german\"), or None."},
    {NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_sotto",
                                    .m_doc = "The C engine under the sotto package.", .m_size = -1,
                                    .m_methods = module_methods};

PyMODINIT_FUNC PyInit__sotto(void)
{
    if (PyType_Ready(&ModelType) < 0 || PyType_Ready(&VadType) < 0 || PyType_Ready(&ContextType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    sotto_audio_ffmpeg_log(0); /* as the tool: FFmpeg's lines ("[mp3 @ 0x...] Estimating duration
                                  from bitrate") stay off stderr; errors carry FFmpeg's words */
    SottoError = PyErr_NewExceptionWithDoc("sotto.SottoError",
                                           "An error of the sotto engine; str() is its message, .status its kind "
                                           "(\"invalid argument\", \"I/O error\", ...).",
                                           PyExc_RuntimeError, NULL);
    if (!SottoError || PyModule_AddObject(m, "SottoError", SottoError) < 0 ||
        PyModule_AddStringConstant(m, "VERSION", SOTTO_VERSION) < 0 ||
        PyModule_AddIntConstant(m, "MAX_SEQUENCES", SOTTO_MAX_SEQUENCES) < 0 ||
        PyModule_AddIntConstant(m, "MAX_BATCH", SOTTO_MAX_BATCH) < 0 ||
        PyModule_AddIntConstant(m, "MAX_TEMPERATURES", SOTTO_MAX_TEMPERATURES) < 0 ||
        PyModule_AddIntConstant(m, "SAMPLE_RATE", SOTTO_SAMPLE_RATE) < 0)
        goto fail;
    Py_INCREF(SottoError); /* PyModule_AddObject stole one */
    PyObject *types[] = {(PyObject *)&ModelType, (PyObject *)&VadType, (PyObject *)&ContextType};
    const char *type_names[] = {"Model", "Vad", "Context"};
    for (int i = 0; i < 3; i++) {
        Py_INCREF(types[i]);
        if (PyModule_AddObject(m, type_names[i], types[i]) < 0) {
            Py_DECREF(types[i]);
            goto fail;
        }
    }
    if (sotto_py_stream_add(m) < 0) goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
