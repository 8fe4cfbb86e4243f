/* cdag tests — tests/support/arena_malloc.c: a malloc that is not glibc's (LD_PRELOAD).
 *
 * Programs may bring their own allocator (jemalloc, tcmalloc, mimalloc). The recorder's
 * free and realloc (src/record/pmpi_mem.c) must then hand every pointer to the next
 * definition, never to glibc's: this one allocates from a static arena, never gives memory
 * back, and aborts when asked to free or resize a pointer it did not make (glibc would abort
 * on one of these). Enough for a process to load and exit (tests/record/CMakeLists.txt). */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Alignas(64) char arena[64 << 20];
static size_t used;

static void *take(size_t align, size_t n) {
  size_t p = (used + 16 + align - 1) & ~(align - 1);
  if (p + n > sizeof arena) return NULL;
  used = p + n;
  ((size_t *)(arena + p))[-1] = n;
  return arena + p;
}

static void mine(const void *p) {
  static const char msg[] = "arena_malloc: a pointer it did not make\n";
  if (p && ((const char *)p < arena || (const char *)p >= arena + sizeof arena)) {
    if (write(2, msg, sizeof msg - 1)) {}
    abort();
  }
}

void *malloc(size_t n) { return take(16, n); }
void *calloc(size_t k, size_t n) { return k && n > (size_t)-1 / k ? NULL : take(16, k * n); }   /* the arena is zeros */
void free(void *p) { mine(p); }
size_t malloc_usable_size(void *p) { return p ? ((size_t *)p)[-1] : 0; }
void *realloc(void *p, size_t n) {
  mine(p);
  void *q = take(16, n);
  if (p && q) memcpy(q, p, malloc_usable_size(p) < n ? malloc_usable_size(p) : n);
  return q;
}
void *memalign(size_t a, size_t n) { return take(a < 16 ? 16 : a, n); }
void *aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) { return (*out = memalign(a, n)) ? 0 : 12; }
void *valloc(size_t n) { return memalign(4096, n); }
void *pvalloc(size_t n) { return memalign(4096, n); }
