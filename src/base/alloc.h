/* cdag — src/base/alloc.h: allocation of large arrays and the one rule for growable arrays.
 *
 * Every layer, the recorder included, grows its arrays here: doubling from 8 elements, the
 * old array kept on failure, CDAG_ERR_NOMEM with a message naming what could not grow. */
#ifndef CDAG_BASE_ALLOC_H
#define CDAG_BASE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Allocation of arrays that may be large (per op, per edge, per rank), aligned to a cache
   line (64 bytes) except when base_realloc keeps a small block. From BASE_HUGE_MIN bytes on, the
   block's whole 2 MiB pages are advised for transparent huge pages (Linux madvise, which
   THP's default "madvise" mode honours; elsewhere nothing) before the block is written, so
   a fresh mapping gets huge pages as it is first touched (heap pages glibc had touched
   already, for blocks under its 32 MiB mmap threshold, stay small). Why: the passes that
   reach these arrays at random (a message's other end, a rank's next op) take a TLB miss
   per access with 4 KiB pages once a graph outgrows a few MB, and on a virtual machine each
   miss walks two page tables; 2 MiB pages cover gigabytes, and a first touch faults once
   per 2 MiB instead of per 4 KiB. base_realloc keeps the first `used` bytes; free() releases
   all three. */
#define BASE_HUGE_MIN ((size_t)8 << 20)
void *base_malloc(size_t bytes);
void *base_calloc(size_t n, size_t size);
void *base_realloc(void *p, size_t used, size_t bytes);
/* Advises the whole 2 MiB pages inside [p, p + bytes) for transparent huge pages (what
   base_malloc does for its big blocks; the tool does it for its heap). Failure, or a system
   without madvise, leaves the pages small. */
void base_advise_huge(void *p, size_t bytes);

/* Growable arrays, the one rule: a full array doubles (plus what is needed), starting at
   8 elements: a plan of 100,000 stages holds a few small arrays per stage, and at 64 elements
   they took 58 MB of its 400. base_grown_cap gives the new capacity; base_resize moves an
   array to it (*arr is unchanged on failure), so arrays that grow together (struct of arrays)
   share one cap. */
static inline int64_t base_grown_cap(int64_t cap, int64_t need) { return (cap ? cap * 2 : 8) + need; }
int base_resize(void **arr, int64_t used, int64_t new_cap, size_t elem, const char *what);
/* Room for `need` more elements after the first n of *arr (capacity *cap). */
int base_grow(void **arr, int64_t n, int64_t *cap, int64_t need, size_t elem, const char *what);
/* The same for one array, returning CDAG_ERR_NOMEM from the calling function. */
#define BASE_GROW(arr, n, cap, need, what)                           \
  do {                                                             \
    if ((n) + (need) > (cap)) {                                    \
      int64_t c_ = base_grown_cap((cap), (need));                    \
      void *p_ = (arr);                                            \
      if (base_resize(&p_, (n), c_, sizeof *(arr), (what))) return CDAG_ERR_NOMEM; \
      (arr) = p_;                                                  \
      (cap) = c_;                                                  \
    }                                                              \
  } while (0)

#endif
