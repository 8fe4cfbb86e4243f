/* cdag tests — tests/record/rec_phases.c: phases (MPI_Pcontrol) and messages across them.
 *
 * Before the first Pcontrol(1) the program exchanges a message (not part of any phase: the
 * implicit phase is dropped); phase 0 is a ring shift; between Pcontrol(0) and the next
 * Pcontrol(1) a message goes unrecorded; phase 1 is a shift the other way plus a message
 * that is received only after the phase ended (its send counts as unreceived) and a
 * receive whose send came before the phase (a computation). */
#include "rec_test.h"

enum { B = 16 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int right = (rt_rank + 1) % rt_size, left = (rt_rank + rt_size - 1) % rt_size;
  uint8_t a[B], b[B], b2[B], c[B], early[B], late[B], x[B];
  rt_fill(a, B); rt_fill(b, B); rt_fill(b2, B); rt_fill(c, B); rt_fill(early, B); rt_fill(late, B); rt_fill(x, B);
  MPI_Sendrecv(x, B, MPI_BYTE, right, 1, c, B, MPI_BYTE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Pcontrol(1);
  MPI_Sendrecv(a, B, MPI_BYTE, right, 2, b, B, MPI_BYTE, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Pcontrol(0);
  MPI_Sendrecv(x, B, MPI_BYTE, right, 3, c, B, MPI_BYTE, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Request q;
  MPI_Isend(x, B, MPI_BYTE, left, 4, MPI_COMM_WORLD, &q);   /* received inside phase 1 */
  MPI_Pcontrol(1);
  MPI_Recv(early, B, MPI_BYTE, right, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Sendrecv(a, B, MPI_BYTE, left, 5, b2, B, MPI_BYTE, right, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Isend(a, B, MPI_BYTE, right, 6, MPI_COMM_WORLD, &q);   /* received after the phase */
  MPI_Pcontrol(0);
  MPI_Recv(late, B, MPI_BYTE, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  rt_keep(b, B);
  return rt_finish();
}
