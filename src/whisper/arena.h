/* arena.h — the one allocation a context makes on its backend, carved into the buffers
 * its encoder and decoder declare (each 64-byte aligned), plus buffers that alias
 * another's bytes (dead while the other lives). Declared before, placed after the
 * allocation: nothing is allocated again while the context runs. */
#ifndef SOTTO_ARENA_H
#define SOTTO_ARENA_H

#include "../backend.h"

enum { SOTTO__ARENA_MAX = 48 };

typedef struct sotto__arena {
    size_t total;              /* bytes so far */
    sotto__buf base;           /* the allocation, once made */
    bool overflow;             /* a size did not fit size_t, or too many items */
    int n;
    struct {
        sotto__buf *dst;
        size_t off;            /* into the allocation, or into *alias */
        const sotto__buf *alias; /* NULL: a region of its own */
    } item[SOTTO__ARENA_MAX];
} sotto__arena;

/* Declares a buffer of BYTES whose place *DST gets when the arena is allocated. */
void sotto__arena_add(sotto__arena *a, sotto__buf *dst, size_t bytes);
/* Declares *DST = *SRC + OFF bytes, resolved after SRC (declared earlier) is placed. */
void sotto__arena_alias(sotto__arena *a, sotto__buf *dst, const sotto__buf *src, size_t off);
/* Allocates the declared total on BE and places every buffer. */
sotto_status sotto__arena_alloc(sotto__arena *a, sotto__backend *be, sotto__err *err);

#endif
