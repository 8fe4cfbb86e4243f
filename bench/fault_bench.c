/* cdag bench — bench/fault_bench.c: what first-touching memory costs on this machine.
 *
 * The scale bench's sys column is mostly the kernel zeroing pages the analysis touches for
 * the first time. On a virtual machine that returns freed memory to its host (free page
 * reporting), a page the guest has not used for a few seconds also faults on the host,
 * and costs several times more than one it freed a moment ago. This maps, advises for huge
 * pages (as base_malloc does), touches and unmaps MIB mebibytes four times in a row, then
 * once more after a pause of PAUSE seconds, and prints seconds per GB touched.
 * Usage: fault_bench [MIB=2048] [PAUSE=5]. Not a test. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Seconds per GB to map, first-touch and unmap n bytes; < 0 if the mapping failed. */
static double touch(size_t n) {
  double t0 = now();
  char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return -1;
#ifdef MADV_HUGEPAGE
  madvise(p, n, MADV_HUGEPAGE);
#endif
  for (size_t i = 0; i < n; i += 4096) p[i] = 1;
  double s = (now() - t0) / ((double)n / 1e9);
  munmap(p, n);
  return s;
}

int main(int argc, char **argv) {
  size_t n = (size_t)(argc > 1 ? atol(argv[1]) : 2048) << 20;
  int pause = argc > 2 ? atoi(argv[2]) : 5;
  for (int round = 1; round <= 4; round++) printf("round %d: %.3f s/GB\n", round, touch(n));
  sleep((unsigned)pause);
  printf("after %d s: %.3f s/GB\n", pause, touch(n));
  return 0;
}
