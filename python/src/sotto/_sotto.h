/* _sotto.h — what the extension's files share: the Model and Vad objects (_sotto.c), the
 * error and sample-buffer helpers, and the Stream type's registration (_stream.c). */
#ifndef SOTTO_PY_H
#define SOTTO_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "sotto.h"

typedef struct {
    PyObject_HEAD
    sotto_model *model;
} ModelObject;

typedef struct {
    PyObject_HEAD
    sotto_vad *vad;
} VadObject;

extern PyTypeObject ModelType, VadType;

/* Raises sotto.SottoError(MESSAGE) with .status; returns NULL. */
PyObject *sotto_py_raise(sotto_status st, const char *message);

/* A view of AUDIO as a 1-D float32 C-contiguous buffer: 0, or -1 with TypeError set. */
int sotto_py_samples(PyObject *audio, Py_buffer *view);

/* Adds the Stream type to module M: 0, or -1 with the error set. */
int sotto_py_stream_add(PyObject *m);

#endif
