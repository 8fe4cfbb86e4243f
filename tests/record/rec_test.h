/* cdag tests — tests/record/rec_test.h: what the recorder's test programs share.
 *
 * Each program (tests/record/rec_*.c) runs one family of MPI calls as an ordinary MPI
 * program would, unaware of cdag, and checks its own results. Run under `cdag record`, it
 * also leaves its live memory for the recording's replay to be compared with: its buffers
 * start with the bytes `cdag replay` starts from (replay_fill_byte of rank and address), and
 * at the end DIR/live-R.mem (DIR: argv[1]) lists, as `ADDR LEN HEX` lines, the buffers
 * whose final bytes the recording must explain; tests/record/record.sh compares them with
 * `cdag replay --dump`. */
#ifndef CDAG_TESTS_REC_TEST_H
#define CDAG_TESTS_REC_TEST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "exec/mpi/replay.h"
#include "../exec/mpi/mpi_test.h"   /* MT_REQUIRE: a failed check ends every rank */

/* gcc takes MPICH's MPI_STATUSES_IGNORE for an array of no status */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

static int rt_rank, rt_size;
static FILE *rt_live;

static inline void rt_init(int *argc, char ***argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rt_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &rt_size);
  if (*argc > 1) {
    char path[4096];
    snprintf(path, sizeof path, "%s/live-%d.mem", (*argv)[1], rt_rank);
    rt_live = fopen(path, "w");
    MT_REQUIRE(rt_live != NULL);
  }
}

/* The bytes replay starts from, for n bytes at p. */
static inline void rt_fill(void *p, size_t n) {
  for (size_t i = 0; i < n; i++) ((uint8_t *)p)[i] = replay_fill_byte(rt_rank, (uint64_t)(uintptr_t)p + i);
}

/* These n bytes at p must end as the recording's replay leaves them. */
static inline void rt_keep(const void *p, size_t n) {
  if (!rt_live) return;
  fprintf(rt_live, "0x%llx %zu ", (unsigned long long)(uintptr_t)p, n);
  for (size_t i = 0; i < n; i++) fprintf(rt_live, "%02x", ((const uint8_t *)p)[i]);
  fprintf(rt_live, "\n");
}

/* n bytes of a (filled as replay starts) to the right neighbour, into b from the left. */
static inline void rt_ring(uint8_t *a, uint8_t *b, int n) {
  rt_fill(a, (size_t)n);
  MPI_Sendrecv(a, n, MPI_BYTE, (rt_rank + 1) % rt_size, 0, b, n, MPI_BYTE, (rt_rank + rt_size - 1) % rt_size, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static inline int rt_finish(void) {
  if (rt_live) fclose(rt_live);
  MPI_Finalize();
  return 0;
}

#endif
