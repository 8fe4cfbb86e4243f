/* cdag tests — tests/record/rec_random.c SEED: a random program that computes between its
 * messages, for differential tests of recordings with computations.
 *
 * Every rank draws the same sequence of steps from SEED: a message from one rank to another
 * (blocking MPI_Send / MPI_Recv between two regions of their buffers), a computation on one
 * rank (a region rewritten from another, received bytes included), a broadcast or a sum
 * allreduce over all ranks. So each step involves only its ranks, every rank agrees on the
 * order, and nothing deadlocks. Buffers are reused all the time: later receives overwrite
 * what earlier computations read. The recording must analyse into stages whose plan verifies
 * in the simulator and replays under MPI with the same memory as written and compiled
 * (tests/record/CMakeLists.txt, record_random). Plain MPI, unaware of cdag. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { REGIONS = 4, SLOTS = 32, STEPS = 60 };

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static int pick(uint64_t *s, int n) { return (int)(next(s) % (uint64_t)n); }

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  uint64_t s = argc > 1 ? strtoull(argv[1], NULL, 10) * 0x9e3779b97f4a7c15ull + 1 : 1;
  static double buf[REGIONS][SLOTS];
  for (int r = 0; r < REGIONS; r++)
    for (int i = 0; i < SLOTS; i++) buf[r][i] = rank * 1000 + r * 100 + i;
  for (int step = 0; step < STEPS; step++) {
    int what = pick(&s, 20), a = pick(&s, size), b = pick(&s, size), x = pick(&s, REGIONS), y = pick(&s, REGIONS);
    int n = 1 + pick(&s, SLOTS / 2), off = pick(&s, SLOTS - n + 1);
    if (what < 11 && size > 1) {   /* a message */
      if (b == a) b = (a + 1) % size;
      if (rank == a) MPI_Send(&buf[x][off], n, MPI_DOUBLE, b, step % 3, MPI_COMM_WORLD);
      if (rank == b) MPI_Recv(&buf[y][off], n, MPI_DOUBLE, a, step % 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (what < 17) {        /* a computation on rank a, reading region x */
      if (rank == a && x != y)
        for (int i = 0; i < SLOTS; i++) buf[y][i] = buf[x][(i + step) % SLOTS] * 0.5 + step;
    } else if (what < 19) {        /* a broadcast from a */
      MPI_Bcast(&buf[x][off], n, MPI_DOUBLE, a, MPI_COMM_WORLD);
    } else if (x != y) {           /* a sum over all ranks */
      MPI_Allreduce(&buf[x][off], &buf[y][off], n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  }
  double sum = 0;
  for (int r = 0; r < REGIONS; r++)
    for (int i = 0; i < SLOTS; i++) sum += buf[r][i];
  if (rank == 0) printf("rec_random: checksum of rank 0 %.6g\n", sum);
  MPI_Finalize();
  return 0;
}
