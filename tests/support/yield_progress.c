/* cdag tests — tests/support/yield_progress.c: MPI that waits gives its core away (LD_PRELOAD).
 *
 * The suite runs 3, 4 and 8 MPI processes on a machine of 2 cores. MPICH over UCX waits by
 * polling (ucp_worker_progress in a loop) and never yields, so a process that waits for
 * another keeps its core until the scheduler takes it: a barrier of 4 such processes took
 * 8 ms, and the tests at 3 processes and more spent most of their time so. This library,
 * preloaded into the tests by scripts/test.sh, yields after 64 calls in a row that progressed
 * nothing (MPICH's ch3 has the same rule, MPIR_CVAR_POLLS_BEFORE_YIELD; ch4 does not). It
 * changes when processes run, never what they compute. Processes without UCX never call it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef unsigned (*progress_fn)(void *worker);

unsigned ucp_worker_progress(void *worker);

unsigned ucp_worker_progress(void *worker) {
  static progress_fn next;
  static __thread unsigned idle;
  progress_fn f = __atomic_load_n(&next, __ATOMIC_RELAXED);
  if (!f) {
    f = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    __atomic_store_n(&next, f, __ATOMIC_RELAXED);
  }
  unsigned n = f(worker);
  if (n) idle = 0;
  else if (++idle >= 64) {
    idle = 0;
    sched_yield();
  }
  return n;
}
