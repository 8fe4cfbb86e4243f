/* cdag tests — tests/record/rec_desched.c: a hand-written allreduce with a rank that stops
 * running mid-way.
 *
 * Every rank sums one integer over all ranks by recursive doubling (MPI_Sendrecv, then the
 * sum in the program: examples/record/solver_step.c's dot product). Between the two steps
 * the last rank sleeps 2 ms: it computes nothing, as a process an oversubscribed node
 * deschedules between two calls computes nothing. Timed by the wall clock, the recorder
 * writes that gap as a computation, which reads all, the partial sum too, and the analysis
 * rightly finds no allreduce; timed by the thread's CPU time (CDAG_RECORD_CLOCK=cpu, or auto
 * on a node with fewer CPUs than processes) there is no computation and the allreduce is
 * found. Run at 4 processes (a power of two). */
#include <time.h>

#include "rec_test.h"

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  MT_REQUIRE(rt_size == 4);
  double sum[1] = {rt_rank + 1.0}, tmp[1];   /* small integers: any order sums them exactly */
  for (int d = 1; d < rt_size; d <<= 1) {
    if (d == 2 && rt_rank == rt_size - 1) nanosleep(&(struct timespec){0, 2000000}, NULL);
    MPI_Sendrecv(sum, 1, MPI_DOUBLE, rt_rank ^ d, 0, tmp, 1, MPI_DOUBLE, rt_rank ^ d, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    sum[0] += tmp[0];
  }
  MT_REQUIRE(sum[0] == rt_size * (rt_size + 1) / 2);
  return rt_finish();
}
