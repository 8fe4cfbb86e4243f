/* cdag tests — tests/record/rec_gap_free.c: received buffers freed unread, around a long gap.
 *
 * Rank 1 receives into a buffer it frees without reading (the program read it, as far as
 * the recorder can tell, in the gap before its next call), computes for 200 us, receives
 * into a second buffer and frees that too, then computes briefly before a barrier. The
 * recorder sees each free as the next call starts, before it knows that gap's time; the
 * long gap's time became a computation, and the phase's end wrote a second one at the same
 * position for the first free: the merge refused the part file ("sequence number ...
 * again") and `cdag record` exited 1 for a program that passed (MPICH's coll/nonblocking3,
 * about one run in ten). Rank 0 sends both messages and keeps what it sent. */
#include <time.h>

#include "rec_test.h"

enum { N = 256 };

/* Computation the recorder sees only as time between calls. */
static void spin_us(long us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  MT_REQUIRE(rt_size == 2);
  uint8_t sent[2][N];
  if (rt_rank == 0) {
    for (int k = 0; k < 2; k++) {
      rt_fill(sent[k], N);
      MPI_Send(sent[k], N, MPI_BYTE, 1, k, MPI_COMM_WORLD);
    }
    rt_keep(sent, sizeof sent);
  } else {
    uint8_t *t = malloc(N), *u = malloc(N);
    MT_REQUIRE(t && u);
    MPI_Recv(t, N, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    free(t);
    spin_us(200);
    MPI_Recv(u, N, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    free(u);
    spin_us(2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return rt_finish();
}
