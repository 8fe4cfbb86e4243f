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
 * that records. Most of what a program frees never held a message (MPICH's pt2pt/sendself
 * frees 3.6 million chunks in its phase): a range is noted only when one of its pages is
 * marked in a bitmap the shadow sets as it comes to hold ranges (rec_mem_mark; pages hashed
 * to bits, cleared at each phase's start), so the rest costs a few bit tests. A ring that fills before the next call widens one range over everything it
 * could not note, forgotten as a whole: conservative (the shadow then knows less, and the
 * recording may hold computations where bytes were forwarded), never a stranger's bytes
 * taken for the program's. Outside an active phase nothing is noted (the shadow is reset at
 * the next one's start). The next definitions are found with dlsym at the first call (the
 * constructors of the recorder's own dependencies run before its own, and call realloc:
 * libnuma's), never assumed to be glibc's, since the program may bring another malloc. A signal handler that gives memory back while its thread notes is not noted (the
 * spinlock is its thread's), and a child forked meanwhile starts with the lock free. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/pmpi.h"

enum { RING = 1 << 16, PAGE_SHIFT = 12, MARK_BITS = 1 << 20, MARK_SCAN = 4096 };

static struct {
  int lock;                    /* spinlock over the rest */
  uint32_t n;                  /* ranges noted */
  rec_range r[RING];
  uint64_t lo, hi;             /* over the ranges the full ring could not take (lo < hi: some) */
} gone;
static int watching;           /* a phase is active: rec_mem_watch */
static uint64_t marked[MARK_BITS / 64];   /* a page's hash: the shadow held bytes there */

static uint64_t page_bit(uint64_t page) { return (page * 0x9e3779b97f4a7c15ull) >> (64 - 20); }

void rec_mem_mark(uint64_t a, uint64_t n) {
  for (uint64_t pg = a >> PAGE_SHIFT, last = (a + n - 1) >> PAGE_SHIFT; pg <= last; pg++) {
    uint64_t b = page_bit(pg);
    if (!(__atomic_load_n(&marked[b / 64], __ATOMIC_RELAXED) >> (b % 64) & 1))
      __atomic_fetch_or(&marked[b / 64], 1ull << (b % 64), __ATOMIC_RELAXED);
  }
}

void rec_mem_watch(int on) {
  if (on) memset(marked, 0, sizeof marked);   /* the shadow was reset: it holds nothing */
  __atomic_store_n(&watching, on, __ATOMIC_RELAXED);
}

void rec_mem_drain(rec_shadow *sh, uint64_t seq) {
  if (!sh) return;
  static rec_range r[RING];   /* copied out: forgetting frees memory, which notes */
  if (!__atomic_load_n(&gone.n, __ATOMIC_RELAXED) && !__atomic_load_n(&gone.hi, __ATOMIC_RELAXED)) return;
  while (__atomic_exchange_n(&gone.lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
  uint32_t n = gone.n;
  uint64_t lo = gone.lo, hi = gone.hi;
  memcpy(r, gone.r, n * sizeof *r);
  gone.n = 0, gone.lo = gone.hi = 0;
  __atomic_store_n(&gone.lock, 0, __ATOMIC_RELEASE);
  rec_shadow_forget_ranges(sh, r, n, seq);
  if (lo < hi) rec_shadow_forget(sh, lo, hi - lo, seq);
}

static void (*next_free)(void *);
static void *(*next_realloc)(void *, size_t);
static int (*next_munmap)(void *, size_t);
static __thread int noting __attribute__((tls_model("initial-exec")));   /* in note_gone, or resolving */
static uint64_t page_size = 4096;

static void child_unlock(void) {
  gone.lock = 0;
  watching = 0;   /* the child is not the recorded process */
}

void free(void *p);
void *realloc(void *p, size_t n);
int munmap(void *a, size_t n);

/* The definition the program would have without the recorder: the first in the global order,
   unless that is the recorder's own (then the next after it). An executable, or a library
   preloaded before the recorder, may bring its own allocator, which dlsym(RTLD_NEXT) from
   here would skip. */
static void *next_of(const char *name, void *self) {
  void *f = dlsym(RTLD_DEFAULT, name);
  return f && f != self ? f : dlsym(RTLD_NEXT, name);
}

/* The next definitions. dlsym may allocate (calloc for its error state), and even call
   free: such a call, made while resolving, leaks its pointer rather than guess whose it is. */
static void resolve(void) {
  if (noting) return;
  noting = 1;
  if (!next_free) next_free = (void (*)(void *))next_of("free", (void *)free);
  if (!next_realloc) next_realloc = (void *(*)(void *, size_t))next_of("realloc", (void *)realloc);
  if (!next_munmap) next_munmap = (int (*)(void *, size_t))next_of("munmap", (void *)munmap);
  noting = 0;
}

__attribute__((constructor)) static void mem_start(void) {
  long pg = sysconf(_SC_PAGESIZE);
  if (pg > 0) page_size = (uint64_t)pg;
  pthread_atfork(NULL, NULL, child_unlock);
  resolve();
}

/* May the shadow hold any of [a, a+n)? Over MARK_SCAN pages, taken as yes. */
static int maybe_held(uint64_t a, uint64_t n) {
  uint64_t pg = a >> PAGE_SHIFT, last = (a + n - 1) >> PAGE_SHIFT;
  if (last - pg >= MARK_SCAN) return 1;
  for (; pg <= last; pg++) {
    uint64_t b = page_bit(pg);
    if (__atomic_load_n(&marked[b / 64], __ATOMIC_RELAXED) >> (b % 64) & 1) return 1;
  }
  return 0;
}

static void note_gone(const void *p, uint64_t n) {
  uint64_t a = (uint64_t)(uintptr_t)p;
  if (!n || noting || !__atomic_load_n(&watching, __ATOMIC_RELAXED) || !maybe_held(a, n)) return;
  noting = 1;
  while (__atomic_exchange_n(&gone.lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
  if (gone.n < RING) {
    gone.r[gone.n++] = (rec_range){a, n};
  } else {
    if (gone.lo >= gone.hi || a < gone.lo) gone.lo = a;
    if (a + n > gone.hi) gone.hi = a + n;
  }
  __atomic_store_n(&gone.lock, 0, __ATOMIC_RELEASE);
  noting = 0;
}

#pragma GCC visibility push(default)

void free(void *p) {
  if (p && __atomic_load_n(&watching, __ATOMIC_RELAXED)) note_gone(p, malloc_usable_size(p));
  if (!next_free) resolve();
  if (next_free) next_free(p);   /* else resolving: leaked */
}

/* The whole buffer is noted, before the call: growing may move it, and an allocator other
   than glibc's may move it to shrink it too. The call is the last, a tail call (made one at
   any optimisation), so that an allocator asking who calls it (tests/support/failmalloc.c,
   which fails the recorder's own allocations) sees the program. */
#if defined(__clang__)
#define TAIL __attribute__((musttail))
#else
#define TAIL
__attribute__((optimize("O2", "optimize-sibling-calls")))
#endif
void *realloc(void *p, size_t n) {
  if (p && __atomic_load_n(&watching, __ATOMIC_RELAXED)) note_gone(p, malloc_usable_size(p));
  if (!next_realloc) resolve();
  if (!next_realloc) return NULL;   /* resolving: the caller sees an allocation fail */
  TAIL return next_realloc(p, n);
}

/* The kernel unmaps whole pages: a length ending inside one gives back the rest of it. */
int munmap(void *a, size_t n) {
  note_gone(a, (n + page_size - 1) & ~(page_size - 1));
  if (!next_munmap) resolve();
  return next_munmap ? next_munmap(a, n) : (int)syscall(SYS_munmap, a, n);
}

#pragma GCC visibility pop
