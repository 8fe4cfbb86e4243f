/* cdag tests — tests/record/rec_persistent.c: persistent requests, probes, matched receives
 * and cancel.
 *
 * A halo exchange with Send_init/Recv_init started ITERS times (Start and Startall), each
 * start a new operation in the recording; the neighbour's message fetched with Probe +
 * Recv, Iprobe + Recv, Mprobe + Mrecv and Improbe + Imrecv (source and tag taken from the
 * probe); a message matched by Mprobe and received after a later message of the same route
 * (MPI took it off the queue at the probe: the recording must pair it there); a matched
 * receive whose buffer the program clears between probe and receive (as MPICH's mprobe.c
 * does: the receive writes it at Mrecv, so that is no race), and an Imrecv the same way
 * with a later message of its route received between; a receive that is cancelled (it
 * records nothing) and Request_free. */
#include <string.h>

#include "rec_test.h"

enum { B = 32, ITERS = 3 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int right = (rt_rank + 1) % rt_size, left = (rt_rank + rt_size - 1) % rt_size;
  uint8_t out[ITERS][B], probed[4][B], never[B], opq[B], first[B], second[B], late[2][B], cleared[3][B];
  rt_fill(out, sizeof out);
  rt_fill(opq, sizeof opq);
  rt_fill(probed, sizeof probed);
  rt_fill(never, sizeof never);
  rt_fill(first, sizeof first);
  rt_fill(second, sizeof second);
  rt_fill(late, sizeof late);
  rt_fill(cleared, sizeof cleared);
  MPI_Request rq[2];
  uint8_t sbuf[B], rbuf[B];
  rt_fill(sbuf, sizeof sbuf);
  rt_fill(rbuf, sizeof rbuf);
  MPI_Send_init(sbuf, B, MPI_BYTE, right, 5, MPI_COMM_WORLD, &rq[0]);
  MPI_Recv_init(rbuf, B, MPI_BYTE, left, 5, MPI_COMM_WORLD, &rq[1]);
  for (int it = 0; it < ITERS; it++) {
    if (it % 2) MPI_Startall(2, rq);
    else {
      MPI_Start(&rq[1]);
      MPI_Start(&rq[0]);
    }
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  }
  MPI_Request_free(&rq[0]);
  MPI_Request_free(&rq[1]);
  /* sbuf computed on after it was sent: the recording must say so (a computation) */
  for (int i = 0; i < B; i++) sbuf[i] ^= 0x5a;
  MPI_Sendrecv(sbuf, B, MPI_BYTE, right, 6, opq, B, MPI_BYTE, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

  /* four messages to the right, fetched by the four kinds of probe */
  MPI_Request sq[4];
  for (int k = 0; k < 4; k++) MPI_Isend(out[k % ITERS], B, MPI_BYTE, right, 10 + k, MPI_COMM_WORLD, &sq[k]);
  MPI_Status st;
  MPI_Probe(MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &st);
  MT_REQUIRE(st.MPI_SOURCE == left);
  MPI_Recv(probed[0], B, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int flag = 0; !flag;) MPI_Iprobe(left, 11, MPI_COMM_WORLD, &flag, &st);
  MPI_Recv(probed[1], B, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Message m;
  MPI_Mprobe(MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &m, &st);
  MPI_Mrecv(probed[2], B, MPI_BYTE, &m, MPI_STATUS_IGNORE);
  int flag = 0;
  while (!flag) MPI_Improbe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st);
  MT_REQUIRE(st.MPI_TAG == 13);
  MPI_Request q;
  MPI_Imrecv(probed[3], B, MPI_BYTE, &m, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Waitall(4, sq, MPI_STATUSES_IGNORE);

  /* two messages on one route: the first matched by Mprobe, the second received before it */
  for (int k = 0; k < 2; k++) MPI_Isend(k ? second : first, B, MPI_BYTE, right, 14, MPI_COMM_WORLD, &sq[k]);
  MPI_Mprobe(left, 14, MPI_COMM_WORLD, &m, &st);
  MPI_Recv(late[1], B, MPI_BYTE, left, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Mrecv(late[0], B, MPI_BYTE, &m, MPI_STATUS_IGNORE);
  MPI_Waitall(2, sq, MPI_STATUSES_IGNORE);

  /* matched receives into buffers cleared after the probe */
  for (int k = 0; k < 3; k++) MPI_Isend(k == 2 ? out[0] : k ? second : first, B, MPI_BYTE, right, 15, MPI_COMM_WORLD, &sq[k]);
  MPI_Mprobe(left, 15, MPI_COMM_WORLD, &m, &st);
  memset(cleared[0], 0xab, B);
  MPI_Mrecv(cleared[0], B, MPI_BYTE, &m, MPI_STATUS_IGNORE);
  for (flag = 0; !flag;) MPI_Improbe(left, 15, MPI_COMM_WORLD, &flag, &m, &st);
  MPI_Recv(cleared[2], B, MPI_BYTE, left, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  memset(cleared[1], 0xcd, B);
  MPI_Imrecv(cleared[1], B, MPI_BYTE, &m, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Waitall(3, sq, MPI_STATUSES_IGNORE);

  /* a receive nobody sends to: cancelled */
  MPI_Irecv(never, B, MPI_BYTE, left, 99, MPI_COMM_WORLD, &q);
  MPI_Cancel(&q);
  MPI_Wait(&q, &st);
  int cancelled = 0;
  MPI_Test_cancelled(&st, &cancelled);
  MT_REQUIRE(cancelled);

  rt_keep(rbuf, sizeof rbuf);
  rt_keep(probed, sizeof probed);
  rt_keep(late, sizeof late);
  rt_keep(cleared, sizeof cleared);
  rt_keep(never, sizeof never);
  return rt_finish();
}
