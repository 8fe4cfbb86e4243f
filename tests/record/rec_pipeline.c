/* cdag tests — tests/record/rec_pipeline.c: a panel pipeline, computation between messages.
 *
 * Panel k is computed by rank k mod P from panel k-1 (it spins SPIN_US microseconds, then
 * fills the panel with values derived from the received one) and sent to every other rank
 * with MPI_Send; the others receive it in order. Panel 0 is computed before any receive, so
 * the recording keeps it as rank 0's initial data; every later panel must be recorded as a
 * computation on its owner (`compute ... reads all writes`), never as data that existed at
 * the start, and the computations' costs must add up to about the time spun.
 * DIR/panels-R.txt (DIR: argv[1]) lists `K ADDR BYTES SPUN_NS` for the panels rank R
 * computed, and DIR/elapsed-R.txt the ns from its first MPI call's return to its last
 * call (a bound on the time the recorder can find between calls, however loaded the
 * machine); tests/record/check_pipeline.py reads them.
 * Built with UPFRONT (rec_pipeline_upfront), every rank computes its panels from its own data
 * before any message, then sends them all (Isend and Irecv, one Waitall): a computation that
 * read nothing received orders nothing, and the panels are one allgather. */
#include <time.h>

#include "rec_test.h"

enum { K = 8, N = 64, SPIN_US = 200 };

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Busy for SPIN_US microseconds of wall time (what the recorder measures); returns the ns spun. */
static uint64_t spin(void) {
  uint64_t t0 = now_ns(), t;
  while ((t = now_ns()) - t0 < SPIN_US * 1000u) {}
  return t - t0;
}

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  uint64_t start = now_ns();
  static double panel[K][N];
  FILE *own = NULL;
  if (argc > 1) {
    char path[4096];
    snprintf(path, sizeof path, "%s/panels-%d.txt", argv[1], rt_rank);
    own = fopen(path, "w");
    MT_REQUIRE(own != NULL);
  }
  rt_fill(panel, sizeof panel);
#ifdef UPFRONT
  for (int k = rt_rank; k < K; k += rt_size) {   /* from the rank's own data only */
    uint64_t spun = spin();
    for (int i = 0; i < N; i++) panel[k][i] = panel[k][(i + 1) % N] * 0.5 + k + i;
    if (own) fprintf(own, "%d 0x%llx %zu %llu\n", k, (unsigned long long)(uintptr_t)panel[k], sizeof panel[k],
                     (unsigned long long)spun);
  }
  MPI_Request rq[2 * K * 4];   /* every panel to or from every other rank, at most 4 ranks */
  int n = 0;
  MT_REQUIRE(rt_size <= 4);
  for (int k = 0; k < K; k++)
    for (int r = 0; r < rt_size; r++) {
      if (k % rt_size == rt_rank && r != rt_rank) MPI_Isend(panel[k], N, MPI_DOUBLE, r, k, MPI_COMM_WORLD, &rq[n++]);
      if (k % rt_size == r && r != rt_rank) MPI_Irecv(panel[k], N, MPI_DOUBLE, r, k, MPI_COMM_WORLD, &rq[n++]);
    }
  MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
#else
  for (int k = 0; k < K; k++) {
    int owner = k % rt_size;
    if (owner == rt_rank) {
      uint64_t spun = spin();
      if (k > 0)
        for (int i = 0; i < N; i++) panel[k][i] = panel[k - 1][(i + 1) % N] * 0.5 + k + i;
      if (own) fprintf(own, "%d 0x%llx %zu %llu\n", k, (unsigned long long)(uintptr_t)panel[k], sizeof panel[k],
                       (unsigned long long)spun);
      for (int r = 0; r < rt_size; r++)
        if (r != rt_rank) MPI_Send(panel[k], N, MPI_DOUBLE, r, k, MPI_COMM_WORLD);
    } else {
      MPI_Recv(panel[k], N, MPI_DOUBLE, owner, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  for (int k = 1; k < K; k++)   /* every rank holds what the owners computed */
    for (int i = 0; i < N; i++) MT_REQUIRE(panel[k][i] == panel[k - 1][(i + 1) % N] * 0.5 + k + i);
  rt_keep(panel[0], sizeof panel[0]);   /* rank 0's own data, sent: the replay ends with it too */
#endif
  if (own) {
    fclose(own);
    char path[4096];
    snprintf(path, sizeof path, "%s/elapsed-%d.txt", argv[1], rt_rank);
    FILE *f = fopen(path, "w");
    MT_REQUIRE(f != NULL);
    fprintf(f, "%llu\n", (unsigned long long)(now_ns() - start));
    fclose(f);
  }
  return rt_finish();
}
