/* cdag tests — tests/record/rec_shared.c: nonblocking collectives that MPI completes at once,
 * waited for out of their order.
 *
 * On one process MPICH completes a nonblocking collective when it starts and gives all such
 * requests one handle. Here two MPI_Iallreduce calls write buffers of their own, each mapped
 * for it; the program waits for the second first, unmaps its buffer, then waits for the
 * first, and reads both results. A recorder that took a completion of the shared handle as
 * the oldest operation's read the second's unmapped buffer at the second wait: the program
 * died of SIGSEGV under `cdag record` (with malloc'd buffers it read freed memory, which the
 * sanitizer build reports). The replay of the recording must leave the first's output and
 * the byte copied out of the second's. */
#define _GNU_SOURCE   /* MAP_ANONYMOUS */
#include <sys/mman.h>
#include <unistd.h>

#include "rec_test.h"

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  int64_t v[2], kept = 0;
  int64_t *out[2];
  MPI_Request rq[2];
  rt_fill(v, sizeof v);
  for (int k = 0; k < 2; k++) {
    out[k] = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    MT_REQUIRE(out[k] != MAP_FAILED);
    rt_fill(out[k], page);
    MPI_Iallreduce(&v[k], out[k], 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &rq[k]);
  }
  MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
  int64_t want1 = 0;
  MPI_Allreduce(&v[1], &want1, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MT_REQUIRE(*out[1] == want1);
  kept = *out[1];
  munmap(out[1], page);
  MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
  int64_t want0 = 0;
  MPI_Allreduce(&v[0], &want0, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MT_REQUIRE(*out[0] == want0);
  rt_keep(out[0], sizeof *out[0]);
  rt_keep(&kept, sizeof kept);
  munmap(out[0], page);
  return rt_finish();
}
