/* cdag — src/record/pmpi_mem.c: memory the program gives back (free, realloc, munmap).
 *
 * The shadow (shadow.c) holds what each buffer a message read or wrote contained. Once the
 * program frees that buffer, its bytes are no longer the program's data: the allocator, MPI
 * or the recorder itself may hand the memory out again and fill it with anything, and the
 * phase's end, comparing what it holds with memory, would prove copies and computations on
 * bytes nobody sent (MPICH's datatype/tresized: 5,291 copies of 4 bytes in one run, none in
 * the next, as the freed pages were mapped again or not). So free, realloc (the buffer it
 * may move, the tail it cuts) and munmap, wherever the program calls them, note the range
 * they give back, and the shadow forgets it before the next intercepted call looks at
 * memory (rec_mem_drain from next_seq) and before the phase's end compares. A program's
 * munmap that an MPI library's own memory hooks take over (UCX's, patching the program's
 * calls) is not seen; what it unmapped the phase's end cannot read, and skips, unless
 * mapped again since.
 *
 * They may run on any thread, MPI's own included, and at any time (inside the recorder's
 * own calls too), so they only note: into a ring under a spinlock, emptied by the thread
 * that records. A ring that fills before the next call widens one range over everything it
 * could not note, forgotten as a whole: conservative (the shadow then knows less, and the
 * recording may hold computations where bytes were forwarded), never a stranger's bytes
 * taken for the program's. Outside an active phase nothing is noted (the shadow is reset at
 * the next one's start). The next definitions are found with dlsym(RTLD_NEXT) at load. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/pmpi.h"

enum { RING = 8192 };

static struct {
  int lock;                    /* spinlock over the rest */
  uint32_t n;                  /* ranges noted */
  uint64_t a[RING], len[RING];
  uint64_t lo, hi;             /* over the ranges the full ring could not take (lo < hi: some) */
} gone;
static int watching;           /* a phase is active: rec_mem_watch */
static void (*next_free)(void *);
static void *(*next_realloc)(void *, size_t);
static int (*next_munmap)(void *, size_t);

extern void __libc_free(void *);
extern void *__libc_realloc(void *, size_t);

/* At load, before the program runs: dlsym may allocate, so not inside free itself. */
__attribute__((constructor)) static void mem_resolve(void) {
  next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
  next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
  next_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
}

static void note_gone(const void *p, uint64_t n) {
  if (!n || !__atomic_load_n(&watching, __ATOMIC_RELAXED)) return;
  uint64_t a = (uint64_t)(uintptr_t)p;
  while (__atomic_exchange_n(&gone.lock, 1, __ATOMIC_ACQUIRE)) continue;
  if (gone.n < RING) {
    gone.a[gone.n] = a, gone.len[gone.n++] = n;
  } else {
    if (gone.lo >= gone.hi || a < gone.lo) gone.lo = a;
    if (a + n > gone.hi) gone.hi = a + n;
  }
  __atomic_store_n(&gone.lock, 0, __ATOMIC_RELEASE);
}

void rec_mem_watch(int on) { __atomic_store_n(&watching, on, __ATOMIC_RELAXED); }

void rec_mem_drain(rec_shadow *sh, uint64_t seq) {
  if (!sh) return;
  static uint64_t a[RING], len[RING];   /* copied out: forgetting frees memory, which notes */
  if (!__atomic_load_n(&gone.n, __ATOMIC_RELAXED) && !__atomic_load_n(&gone.hi, __ATOMIC_RELAXED)) return;
  while (__atomic_exchange_n(&gone.lock, 1, __ATOMIC_ACQUIRE)) continue;
  uint32_t n = gone.n;
  uint64_t lo = gone.lo, hi = gone.hi;
  memcpy(a, gone.a, n * sizeof *a);
  memcpy(len, gone.len, n * sizeof *len);
  gone.n = 0, gone.lo = gone.hi = 0;
  __atomic_store_n(&gone.lock, 0, __ATOMIC_RELEASE);
  for (uint32_t i = 0; i < n; i++) rec_shadow_forget(sh, a[i], len[i], seq);
  if (lo < hi) rec_shadow_forget(sh, lo, hi - lo, seq);
}

#pragma GCC visibility push(default)

void free(void *p) {
  if (p) note_gone(p, malloc_usable_size(p));
  if (next_free) next_free(p);
  else __libc_free(p);
}

/* Noted before the call, which is the last (a tail call): an allocator that asks who calls
   it (tests/support/failmalloc.c, which fails the recorder's own allocations) sees the
   program. Growing may move the buffer, so the whole of it is noted; shrinking gives back
   the tail. */
void *realloc(void *p, size_t n) {
  size_t had = p ? malloc_usable_size(p) : 0;
  if (had) note_gone((char *)p + (n < had ? n : 0), n < had ? had - n : had);
  return next_realloc ? next_realloc(p, n) : __libc_realloc(p, n);
}

int munmap(void *a, size_t n) {
  note_gone(a, n);
  return next_munmap ? next_munmap(a, n) : (int)syscall(SYS_munmap, a, n);   /* before the constructor */
}

#pragma GCC visibility pop
