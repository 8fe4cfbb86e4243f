/* cdag tests — tests/exec/kernels/kernel_measure_errors.c: the cost model's measurement
 * checks every MPI return code.
 *
 * This program defines MPI_Isend, MPI_Waitall and MPI_Test over PMPI: they do their work,
 * then report failure when told to (run() names the call and the rank that fails),
 * as an MPI library with MPI_ERRORS_RETURN would after a fault. kern_model_measure must
 * return CDAG_ERR_MPI on every rank (the failing one naming the call), never a figure; with
 * no failure it must succeed. Run at 3 processes, so rank 2 waits in MPI_Test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kernels/kernel.h"

static const char *fail_call;
static int fail_rank = -1, me;

static int result(const char *call, int rc) {
  return rc == MPI_SUCCESS && fail_call && me == fail_rank && !strcmp(fail_call, call) ? MPI_ERR_OTHER : rc;
}

int MPI_Isend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *r) {
  return result("MPI_Isend", PMPI_Isend(b, n, t, d, tag, c, r));
}
int MPI_Waitall(int n, MPI_Request r[], MPI_Status s[]) { return result("MPI_Waitall", PMPI_Waitall(n, r, s)); }
int MPI_Test(MPI_Request *r, int *flag, MPI_Status *s) { return result("MPI_Test", PMPI_Test(r, flag, s)); }

static int run(const char *call, int rank) {
  kern_model m;
  fail_call = call;
  fail_rank = rank;
  int rc = kern_model_measure(MPI_COMM_WORLD, &m), bad = 0;
  if (!call && rc != CDAG_OK) bad = 1;
  if (call && rc != CDAG_ERR_MPI) bad = 1;
  if (call && me == rank && !strstr(cdag_error_message(), call)) bad = 1;
  if (bad) fprintf(stderr, "rank %d: failing %s on rank %d: rc %d: %s\n", me, call ? call : "nothing", rank, rc,
                   cdag_error_message());
  fail_call = NULL;
  return bad;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int bad = run(NULL, -1);
  bad += run("MPI_Isend", 1);
  bad += run("MPI_Waitall", 0);
  if (n > 2) bad += run("MPI_Test", 2);
  int all = 0;
  MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("kernel_measure_errors: %s\n", all ? "FAILED" : "ok");
  MPI_Finalize();
  return all != 0;
}
