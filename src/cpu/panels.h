/* panels.h — a model's f16 weights in panels (kernels.h sotto__f16_panels), made on first
 * use by the batched decoder's products and shared by every CPU backend on the model (a
 * slot of the model's derived data, freed with it). */
#ifndef SOTTO_PANELS_H
#define SOTTO_PANELS_H

#include <stdint.h>

#include "ops.h"

typedef struct sotto__panel_store sotto__panel_store;

/* An empty store (ARG unused), NULL when out of memory; freed by sotto__panel_store_free.
 * The weights stay where they are: the batched engine's prefixes and the beams of
 * sequential decoding read them in place (their file's pages handed back after a matrix
 * went into panels came back at the next chunk's prefix: peak RSS the same). */
void *sotto__panel_store_make(void *arg);
void sotto__panel_store_free(void *store);

/* The panels of W ([N, K] halves, row stride K), made on the first call for W on EX's
 * threads; NULL, for good, when the machine had less than twice their size free then or
 * the allocation failed (the caller reads W in place: the same bits). Safe to call from
 * several threads. */
const uint16_t *sotto__panels_of(sotto__panel_store *s, const sotto__exec *ex, const uint16_t *W, int N, int K);

#endif
