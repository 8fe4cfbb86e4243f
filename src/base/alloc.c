/* cdag — src/base/alloc.c: large arrays advised for huge pages, growable arrays (alloc.h). */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE (the build asks for POSIX only) */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/alloc.h"

#define HUGE_PAGE ((uintptr_t)2 << 20)

/* The pages may lie in glibc's heap (blocks under its mmap threshold), where the advice
   outlives the block: whatever reuses those pages may get huge pages too, which is harmless. */
void base_advise_huge(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1), hi = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);
  if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
  (void)p, (void)bytes;
#endif
}

/* A big block starts on a 2 MiB boundary, so all of it but its tail can be huge pages: glibc
   maps such a block 4 KiB past a boundary, and its first, unadvised 2 MiB took 512 faults,
   11 us each on this project's virtual machines (5.6 ms an 8 MiB block; 4 huge pages take
   well under 1 ms). The alignment costs address space only (up to 2 MiB a block, which a
   limit on virtual memory counts). */
void *base_malloc(size_t bytes) {
  void *p;
  int big = bytes >= BASE_HUGE_MIN;
  if (posix_memalign(&p, big ? HUGE_PAGE : 64, bytes ? bytes : 1)) return NULL;
  if (big) base_advise_huge(p, bytes);
  return p;
}

/* A big block is advised before it is zeroed, so the zeroing faults in huge pages. */
void *base_calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  void *p = base_malloc(n * size);
  if (p) memset(p, 0, n * size);
  return p;
}

/* Growing a big block copies it into a fresh advised one (realloc would copy too, or move
   the mapping without the advice). */
void *base_realloc(void *p, size_t used, size_t bytes) {
  if (bytes < BASE_HUGE_MIN) return realloc(p, bytes);
  void *q = base_malloc(bytes);
  if (!q) return NULL;
  if (p) memcpy(q, p, used < bytes ? used : bytes);
  free(p);
  return q;
}

int base_resize(void **arr, int64_t used, int64_t new_cap, size_t elem, const char *what) {
  void *p = base_realloc(*arr, (size_t)used * elem, (size_t)new_cap * elem);
  if (!p) return CDAG_NOMEM(what);
  *arr = p;
  return CDAG_OK;
}

int base_grow(void **arr, int64_t n, int64_t *cap, int64_t need, size_t elem, const char *what) {
  if (n + need <= *cap) return CDAG_OK;
  int64_t c = base_grown_cap(*cap, need);
  int rc = base_resize(arr, n, c, elem, what);
  if (rc == CDAG_OK) *cap = c;
  return rc;
}

