/* _stream.c — sotto._sotto.Stream: a live transcription session (sotto_stream_* of
 * sotto.h) on a context of its own. feed() and finish() run the engine with the GIL
 * released and return the events they made as dicts; the Python layer (sotto/_stream.py)
 * wraps them. */
#include "_sotto.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    sotto_context *ctx;
    sotto_stream *stream;
    PyObject *model, *vad;     /* kept alive as long as the session */
    PyObject *events;          /* the list the running call collects into, or NULL */
    int busy;                  /* a call runs (set and cleared under the GIL) */
    int failed;                /* an event could not be made (out of memory in Python) */
    char *language, *prompt;   /* the parameters' strings, which must outlive the session */
} StreamObject;

static char *copy(const char *s)
{
    if (!s) return NULL;
    char *d = PyMem_RawMalloc(strlen(s) + 1);
    return d ? strcpy(d, s) : NULL;
}

static PyObject *word_tuple(const sotto_word *w)
{
    return Py_BuildValue("(sddd)", w->word, w->start, w->end, w->probability);
}

/* The event as a dict {type, start, end, text, tokens, words, audio_time, id, language}. */
static PyObject *event_dict(const sotto_stream_event *e)
{
    PyObject *words = PyList_New(e->n_words), *tokens = PyTuple_New(e->n_tokens);
    for (int i = 0; words && i < e->n_words; i++) {
        PyObject *w = word_tuple(&e->words[i]);
        if (!w) Py_CLEAR(words);
        else PyList_SET_ITEM(words, i, w);
    }
    for (int i = 0; tokens && i < e->n_tokens; i++) {
        PyObject *t = PyLong_FromLong(e->tokens[i]);
        if (!t) Py_CLEAR(tokens);
        else PyTuple_SET_ITEM(tokens, i, t);
    }
    PyObject *d = NULL;
    if (words && tokens)
        d = Py_BuildValue("{s:s,s:d,s:d,s:s,s:O,s:O,s:d,s:i,s:z}", "type",
                          e->type == SOTTO_STREAM_FINAL ? "final" : "tentative", "start", e->start, "end", e->end,
                          "text", e->text, "tokens", tokens, "words", words, "audio_time", e->audio_time, "id", e->id,
                          "language", e->language);
    Py_XDECREF(words);
    Py_XDECREF(tokens);
    return d;
}

/* The session's callback, on the thread that released the GIL: takes it back for the dict. */
static int on_event(const sotto_stream_event *e, void *user)
{
    StreamObject *self = user;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *d = event_dict(e);
    if (!d || PyList_Append(self->events, d) < 0) {
        self->failed = 1;
        PyErr_Clear();
    }
    Py_XDECREF(d);
    PyGILState_Release(g);
    return self->failed;
}

/* Stream(model, vad, n_threads, device, language, beam_size, min_step, trim, max_buffer,
 * initial_prompt, vad_threshold, vad_min_silence_ms, hold, translate): VAD a Vad or None. */
static int Stream_init(StreamObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"model", "vad", "n_threads", "device", "language", "beam_size", "min_step", "trim",
                            "max_buffer", "initial_prompt", "vad_threshold", "vad_min_silence_ms", "hold",
                            "translate", NULL};
    PyObject *model, *vad;
    int n_threads = 0;
    const char *device = NULL, *language = NULL, *prompt = NULL;
    sotto_stream_params p = sotto_stream_params_default();
    if (self->stream) {
        PyErr_SetString(PyExc_RuntimeError, "Stream is already started");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O|izzidddzfidp", names, &ModelType, &model, &vad, &n_threads,
                                     &device, &language, &p.beam_size, &p.min_step_s, &p.trim_s, &p.max_buffer_s,
                                     &prompt, &p.vad_threshold, &p.vad_min_silence_ms, &p.hold_s, &p.translate))
        return -1;
    if (vad != Py_None && !PyObject_TypeCheck(vad, &VadType)) {
        PyErr_SetString(PyExc_TypeError, "vad must be a Vad or None");
        return -1;
    }
    Py_INCREF(model), Py_INCREF(vad);
    self->model = model, self->vad = vad;
    self->language = copy(language), self->prompt = copy(prompt);
    if ((language && !self->language) || (prompt && !self->prompt)) {
        PyErr_NoMemory();
        return -1;
    }
    p.language = self->language, p.initial_prompt = self->prompt;
    p.vad = vad == Py_None ? NULL : ((VadObject *)vad)->vad;
    p.on_event = on_event, p.user_data = self;
    if (sotto_stream_params_check(&p) != SOTTO_OK) { /* the caller's options: named, before any context */
        sotto_py_raise(SOTTO_ERR_INVALID_ARG, sotto_last_error());
        return -1;
    }
    sotto_model_info mi;
    sotto_model_get_info(((ModelObject *)model)->model, &mi);
    const char *code = language && strcmp(language, "auto") ? sotto_language_code(language) : NULL;
    if (!mi.multilingual && code && strcmp(code, "en")) { /* as transcribe and `sotto stream -l` refuse it */
        sotto_py_raise(SOTTO_ERR_INVALID_ARG, "stream: this model is English-only: language en or auto only");
        return -1;
    }
    sotto_context_params cp = sotto_context_params_default();
    cp.n_threads = n_threads, cp.device = device, cp.max_sequences = p.beam_size > 0 ? p.beam_size : 1;
    sotto_status st;
    Py_BEGIN_ALLOW_THREADS
    st = sotto_context_init(((ModelObject *)model)->model, &cp, &self->ctx);
    if (st == SOTTO_OK) st = sotto_stream_init(self->ctx, &p, &self->stream);
    Py_END_ALLOW_THREADS
    if (st != SOTTO_OK) {
        sotto_py_raise(st, sotto_last_error());
        return -1;
    }
    return 0;
}

static void Stream_dealloc(StreamObject *self)
{
    sotto_stream_free(self->stream);
    sotto_context_free(self->ctx);
    Py_XDECREF(self->model);
    Py_XDECREF(self->vad);
    PyMem_RawFree(self->language);
    PyMem_RawFree(self->prompt);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Runs sotto_stream_push (AUDIO given) or sotto_stream_finish with the GIL released;
 * returns the list of the events it made. */
static PyObject *run(StreamObject *self, PyObject *audio)
{
    if (!self->stream) return sotto_py_raise(SOTTO_ERR_INVALID_ARG, "Stream is not started");
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this Stream is decoding in another thread (one thread at a time)");
        return NULL;
    }
    Py_buffer view = {0};
    if (audio && sotto_py_samples(audio, &view) < 0) return NULL;
    PyObject *events = PyList_New(0);
    if (!events) {
        if (audio) PyBuffer_Release(&view);
        return NULL;
    }
    self->events = events, self->busy = 1;
    sotto_status st;
    Py_BEGIN_ALLOW_THREADS
    st = audio ? sotto_stream_push(self->stream, view.buf, (int64_t)(view.len / 4)) : sotto_stream_finish(self->stream);
    Py_END_ALLOW_THREADS
    self->events = NULL, self->busy = 0;
    if (audio) PyBuffer_Release(&view);
    if (self->failed) {
        Py_DECREF(events);
        return PyErr_NoMemory();
    }
    if (st != SOTTO_OK) {
        Py_DECREF(events);
        return sotto_py_raise(st, sotto_stream_error(self->stream));
    }
    return events;
}

static PyObject *Stream_feed(StreamObject *self, PyObject *args)
{
    PyObject *audio;
    if (!PyArg_ParseTuple(args, "O", &audio)) return NULL;
    return run(self, audio);
}

static PyObject *Stream_finish(StreamObject *self, PyObject *unused)
{
    return run(self, NULL);
}

static PyObject *Stream_time(StreamObject *self, void *unused)
{
    return PyFloat_FromDouble(sotto_stream_time(self->stream));
}

static PyObject *Stream_text(StreamObject *self, void *unused)
{
    return PyUnicode_DecodeUTF8(sotto_stream_text(self->stream), (Py_ssize_t)strlen(sotto_stream_text(self->stream)),
                                "replace");
}

static PyObject *Stream_steps(StreamObject *self, void *unused)
{
    int n = 0;
    double s = 0;
    sotto_stream_stats(self->stream, &n, &s);
    return Py_BuildValue("(id)", n, s);
}

static PyObject *Stream_device(StreamObject *self, void *unused)
{
    return PyUnicode_FromString(self->ctx ? sotto_context_device(self->ctx) : "");
}

static PyMethodDef Stream_methods[] = {
    {"feed", (PyCFunction)Stream_feed, METH_VARARGS,
     "feed(samples) -> [event dict]: sotto_stream_push of 16 kHz mono float32 samples, the GIL released."},
    {"finish", (PyCFunction)Stream_finish, METH_NOARGS,
     "finish() -> [event dict]: sotto_stream_finish (commits everything), the GIL released."},
    {NULL}};

static PyGetSetDef Stream_getset[] = {
    {"time", (getter)Stream_time, NULL, "Seconds of audio fed so far.", NULL},
    {"text", (getter)Stream_text, NULL, "Every committed word so far, joined.", NULL},
    {"steps", (getter)Stream_steps, NULL, "(decoding steps, audio seconds they decoded).", NULL},
    {"device", (getter)Stream_device, NULL, "The device its context runs on.", NULL},
    {NULL}};

static PyTypeObject StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sotto._sotto.Stream",
    .tp_basicsize = sizeof(StreamObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Stream(model, vad, ...): a live transcription session on a context of its own.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Stream_init,
    .tp_dealloc = (destructor)Stream_dealloc,
    .tp_methods = Stream_methods,
    .tp_getset = Stream_getset,
};

int sotto_py_stream_add(PyObject *m)
{
    if (PyType_Ready(&StreamType) < 0) return -1;
    Py_INCREF(&StreamType);
    if (PyModule_AddObject(m, "Stream", (PyObject *)&StreamType) < 0) {
        Py_DECREF(&StreamType);
        return -1;
    }
    return 0;
}
