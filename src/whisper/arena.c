/* arena.c — declared buffers placed in one backend allocation (arena.h). */
#include "arena.h"

static bool push(sotto__arena *a, sotto__buf *dst, size_t off, const sotto__buf *alias)
{
    if (a->n == SOTTO__ARENA_MAX) {
        a->overflow = true;
        return false;
    }
    a->item[a->n].dst = dst, a->item[a->n].off = off, a->item[a->n].alias = alias;
    a->n++;
    return true;
}

void sotto__arena_add(sotto__arena *a, sotto__buf *dst, size_t bytes)
{
    size_t rounded, total;
    if (!sotto__add_ok(bytes, 63, &rounded) || !sotto__add_ok(a->total, rounded & ~(size_t)63, &total)) {
        a->overflow = true;
        return;
    }
    if (push(a, dst, a->total, NULL)) a->total = total;
}

void sotto__arena_alias(sotto__arena *a, sotto__buf *dst, const sotto__buf *src, size_t off) { push(a, dst, off, src); }

sotto_status sotto__arena_alloc(sotto__arena *a, sotto__backend *be, sotto__err *err)
{
    if (a->overflow) return sotto__fail(err, SOTTO_ERR_NOMEM, "context: the buffers' sizes overflow");
    sotto__buf base;
    sotto_status st = be->ops->alloc(be, a->total, &base, err);
    if (st) return st;
    a->base = base;
    for (int i = 0; i < a->n; i++)
        *a->item[i].dst = a->item[i].alias ? sotto__buf_at(*a->item[i].alias, a->item[i].off)
                                           : sotto__buf_at(base, a->item[i].off);
    return SOTTO_OK;
}
