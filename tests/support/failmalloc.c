/* cdag tests — tests/support/failmalloc.c: a malloc fault-injection library (LD_PRELOAD).
 *
 * It replaces malloc, calloc, realloc, aligned_alloc, posix_memalign, memalign and valloc (glibc
 * routes its own strdup, stdio buffers, ... through them) and counts the calls made once it is
 * armed; with CDAG_FAILMALLOC_N=N the N-th counted call fails (returns NULL / ENOMEM) and every
 * other call succeeds, so a test can fail each allocation of a run in turn. Armed from main:
 * it wraps __libc_start_main, so the loader's and libraries' start-up allocations are not
 * counted. CDAG_FAILMALLOC_ARM=call leaves it unarmed until the program calls
 * failmalloc_arm() (found with dlsym: an MPI test arms after MPI_Init). Optionally
 * CDAG_FAILMALLOC_CALLER=A,B,... counts only calls whose immediate caller lies in a loaded
 * object whose path contains one of the names (dladdr), "exe" naming the main program: an
 * MPI program's sweep fails cdag's allocations (linked into the program) and Judy's, not
 * MPICH's, whose own out-of-memory paths crash (a failed malloc inside MPI_Finalize or a
 * request is a segfault in UCX); libc's functions that allocate for cdag (strdup,
 * open_memstream) are then not counted either. CDAG_FAILMALLOC_UNTRACKED=A,B,... (same
 * syntax) leaves those callers' blocks out of the live figure below.
 *
 * At exit, CDAG_FAILMALLOC_REPORT=FILE (%p in it: the process id) receives one line: "calls C failed F live L" (counted
 * calls, whether the N-th was failed, allocations made after arming and not freed, a crude
 * leak figure the driver compares with the unfailed run). CDAG_FAILMALLOC_TRAP=1 raises
 * SIGTRAP at the failing call, so a debugger shows who made it; =bt prints its call stack. Memory comes from glibc's own
 * __libc_* entry points, so no dlsym bootstrap is needed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <execinfo.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

/* The library's whole state (one process, set up before main). */
static int armed;              /* counting (set at main or by failmalloc_arm) */
static int arm_at_call;        /* CDAG_FAILMALLOC_ARM=call */
static long fail_at;           /* CDAG_FAILMALLOC_N; 0: never fail */
static long calls;             /* counted calls */
static long failed;            /* 1 once the fail_at-th call failed */
static long live;              /* counted successful allocations minus frees of them */
static const char *caller_sub; /* CDAG_FAILMALLOC_CALLER */
static const char *untracked;  /* CDAG_FAILMALLOC_UNTRACKED: callers whose blocks the live figure skips */
static int trap;               /* CDAG_FAILMALLOC_TRAP: 1 SIGTRAP, 2 (=bt) a call stack */
static void *main_base;        /* where the main program is loaded (its dladdr dli_fbase) */
static int notag = -1;         /* CDAG_FAILMALLOC_ARM=load: no headers (valgrind checks the blocks);
                                  -1 until read: other libraries' constructors allocate first */
static int (*real_main)(int, char **, char **);

/* Each block made after arming carries a 16-byte header just below it, so free knows to
   count it and where glibc's block starts: the word at p - 8 is TAG (for a block glibc made
   before arming, that word is its chunk's size field, never TAG), the word at p - 16 the
   distance back to glibc's pointer. */
#define TAG 0x6661696c6d616c6cull
#define HDR 16

/* Is the object holding code address ra one of list's names? */
static int caller_in(const void *ra, const char *list) {
  Dl_info info;
  if (!dladdr(ra, &info) || !info.dli_fname) return 0;
  for (const char *c = list; *c;) {
    size_t len = strcspn(c, ",");
    if (len == 3 && strncmp(c, "exe", 3) == 0) {
      if (info.dli_fbase == main_base) return 1;
    } else if (len) {
      for (const char *f = info.dli_fname; (f = strchr(f, *c)) != NULL; f++)
        if (strncmp(f, c, len) == 0) return 1;
    }
    c += len + (c[len] == ',');
  }
  return 0;
}

static int no_tags(void) {
  if (notag < 0) {
    const char *arm = getenv("CDAG_FAILMALLOC_ARM");
    notag = arm && strcmp(arm, "load") == 0;
  }
  return notag;
}

/* Counts one call: 1 if it must fail, 0 if it is counted and its block gets a header (the
   live figure counts only the allocations the sweep fails, less CDAG_FAILMALLOC_UNTRACKED's:
   other libraries' vary from run to run under MPI, and Judy loses a node of its own when an
   allocation fails inside JudyLIns), -1 if not counted or not tracked. */
static int tick(const void *ra) {
  if (!__atomic_load_n(&armed, __ATOMIC_RELAXED) || (caller_sub && !caller_in(ra, caller_sub))) return -1;
  long n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
  if (n != fail_at) return untracked && caller_in(ra, untracked) ? -1 : 0;
  failed = 1;
  if (trap == 1) raise(SIGTRAP);  /* under a debugger: stop at the failing call */
  if (trap == 2) {                /* or print the call stack */
    void *frames[32];
    __atomic_store_n(&armed, 0, __ATOMIC_RELAXED);
    backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
    __atomic_store_n(&armed, 1, __ATOMIC_RELAXED);
  }
  return 1;
}

/* raw: glibc's block; off: where the caller's block starts in it (>= HDR). */
static void *tag(char *raw, size_t off) {
  if (!raw) return NULL;
  char *p = raw + off;
  ((uint64_t *)p)[-1] = TAG;
  ((uint64_t *)p)[-2] = off;
  __atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
  return p;
}

static int tagged(const void *p) {
  return !no_tags() && p && ((uintptr_t)p & 7) == 0 && ((const uint64_t *)p)[-1] == TAG;
}

/* glibc's pointer for p (untagging it). */
static void *untag(void *p) {
  if (!tagged(p)) return p;
  ((uint64_t *)p)[-1] = 0;
  __atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
  return (char *)p - ((uint64_t *)p)[-2];
}

/* malloc for a caller at ra (realloc of NULL is a malloc of its caller's). */
static void *malloc_at(size_t n, const void *ra) {
  int t = tick(ra);
  if (t > 0) return errno = ENOMEM, NULL;
  if (t < 0 || no_tags()) return __libc_malloc(n);
  return n > SIZE_MAX - HDR ? (errno = ENOMEM, NULL) : tag(__libc_malloc(n + HDR), HDR);
}

void *calloc(size_t k, size_t n) {
  int t = tick(__builtin_return_address(0));
  if (t > 0) return errno = ENOMEM, NULL;
  if (t < 0 || no_tags()) return __libc_calloc(k, n);
  if (n && k > (SIZE_MAX - HDR) / n) return errno = ENOMEM, NULL;
  return tag(__libc_calloc(1, k * n + HDR), HDR);
}

void *malloc(size_t n) { return malloc_at(n, __builtin_return_address(0)); }

void free(void *p) { __libc_free(untag(p)); }

void *realloc(void *p, size_t n) {
  if (!p) return malloc_at(n, __builtin_return_address(0));
  if (n == 0) return free(p), NULL;
  if (tick(__builtin_return_address(0)) > 0) return errno = ENOMEM, NULL;
  if (!tagged(p)) return __libc_realloc(p, n);  /* made before arming: stays untagged */
  size_t off = ((uint64_t *)p)[-2];
  if (n > SIZE_MAX - off) return errno = ENOMEM, NULL;
  char *q = __libc_realloc((char *)p - off, n + off);
  return q ? q + off : NULL;
}

static void *aligned(size_t align, size_t n, const void *ra) {
  int t = tick(ra);
  if (t > 0) return NULL;
  if (t < 0 || no_tags()) return __libc_memalign(align, n);
  size_t a = align < HDR ? HDR : align;  /* the header fits in the first `a` bytes */
  if (n > SIZE_MAX - a) return NULL;
  return tag(__libc_memalign(a, n + a), a);
}

void *aligned_alloc(size_t align, size_t n) {
  void *p = aligned(align, n, __builtin_return_address(0));
  if (!p) errno = ENOMEM;
  return p;
}
void *memalign(size_t align, size_t n) {
  void *p = aligned(align, n, __builtin_return_address(0));
  if (!p) errno = ENOMEM;
  return p;
}
void *valloc(size_t n) { return memalign((size_t)sysconf(_SC_PAGESIZE), n); }
void *pvalloc(size_t n) { return memalign((size_t)sysconf(_SC_PAGESIZE), n); }
int posix_memalign(void **out, size_t align, size_t n) {
  void *p = aligned(align, n, __builtin_return_address(0));
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

/* libudev (through MPICH's hwloc) asks how large its blocks are. */
size_t malloc_usable_size(void *p) {
  static size_t (*next)(void *);
  if (!next) next = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
  if (!p) return 0;
  if (!tagged(p)) return next(p);
  size_t off = ((uint64_t *)p)[-2];
  return next((char *)p - off) - off;
}

static void report(void) {
  const char *env = getenv("CDAG_FAILMALLOC_REPORT"), *pid = env ? strstr(env, "%p") : NULL;
  if (!env) return;
  char path[4096];
  if (pid) snprintf(path, sizeof path, "%.*s%ld%s", (int)(pid - env), env, (long)getpid(), pid + 2);
  else snprintf(path, sizeof path, "%s", env);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  char line[96];
  int len = snprintf(line, sizeof line, "calls %ld failed %ld live %ld\n", calls, failed, live);
  if (len > 0 && write(fd, line, (size_t)len) < 0) {
  }
  close(fd);
}

/* The first object dl_iterate_phdr reports is the main program. */
static int first_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_LOAD) {   /* the lowest segment starts the mapping */
      *(void **)data = (void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr - info->dlpi_phdr[i].p_offset);
      break;
    }
  return 1;
}

void failmalloc_arm(void) {
  if (!main_base) dl_iterate_phdr(first_object, &main_base);
  __atomic_store_n(&armed, 1, __ATOMIC_RELAXED);
}

static int wrapped_main(int argc, char **argv, char **envp) {
  if (!arm_at_call) failmalloc_arm();
  int rc = real_main(argc, argv, envp);
  return rc;
}

/* CDAG_FAILMALLOC_ARM=load arms when the library loads, for valgrind (run it with
   --soname-synonyms=somalloc=nouserintercepts, so that its allocator sits under this one):
   valgrind starts a program without the __libc_start_main below, so pair it with
   CDAG_FAILMALLOC_CALLER (only the program's own allocations count); blocks get no header
   (no live count: valgrind counts leaks itself). */
__attribute__((constructor)) static void at_load(void) {
  const char *arm = getenv("CDAG_FAILMALLOC_ARM");
  if (!arm || strcmp(arm, "load") != 0) return;
  const char *n = getenv("CDAG_FAILMALLOC_N");
  fail_at = n ? strtol(n, NULL, 10) : 0;
  caller_sub = getenv("CDAG_FAILMALLOC_CALLER");
  untracked = getenv("CDAG_FAILMALLOC_UNTRACKED");
  failmalloc_arm();
}

__attribute__((destructor)) static void at_exit_report(void) {
  __atomic_store_n(&armed, 0, __ATOMIC_RELAXED);
  report();
}

typedef int (*start_fn)(int (*)(int, char **, char **), int, char **, void (*)(void), void (*)(void),
                        void (*)(void), void *);

int __libc_start_main(int (*main_fn)(int, char **, char **), int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end) {
  const char *n = getenv("CDAG_FAILMALLOC_N");
  fail_at = n ? strtol(n, NULL, 10) : 0;
  const char *arm = getenv("CDAG_FAILMALLOC_ARM");
  arm_at_call = arm && strcmp(arm, "call") == 0;
  caller_sub = getenv("CDAG_FAILMALLOC_CALLER");
  untracked = getenv("CDAG_FAILMALLOC_UNTRACKED");
  const char *t = getenv("CDAG_FAILMALLOC_TRAP");
  trap = !t ? 0 : strcmp(t, "bt") == 0 ? 2 : 1;
  real_main = main_fn;
  start_fn next = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
  return next(wrapped_main, argc, argv, init, fini, rtld_fini, stack_end);
}
