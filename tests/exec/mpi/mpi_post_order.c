/* cdag tests — tests/exec/mpi/mpi_post_order.c: a graph run as written posts its messages in
 * program order (run with mpiexec -n 2).
 *
 * MPICH over UCX searches its posted receives one by one, oldest first, for each message that
 * arrives. The baseline engine kept its ready operations on a stack, so N receives that nothing
 * orders were posted last first, and each arriving message (sent in program order) matched the
 * newest: O(N) per message, O(N^2) per run (100,001 such receives took more than 300 s to
 * replay; 9 s posted in order). This program interposes MPI_Start and the large-count
 * MPI_Isend, MPI_Irecv, MPI_Send_init and MPI_Recv_init the engine calls to see the order the engine starts its messages in: rank 0
 * sends N pieces and rank 1 receives them, none ordered by anything, and each must start in the
 * order the program added them (buffers at ascending addresses), whether their requests are
 * persistent (N small) or drawn as they start. Messages of a rank to itself start no MPI
 * message at all: they are local copies (MPICH's path to the process itself is slower), the
 * receive posted first or the send (whose data is then kept until the receive runs).
 * The engine also waits on the requests in flight alone: a ping-pong of C messages, each
 * after the last, has one in flight at a time, and its MPI_Waitsome and MPI_Testsome calls
 * (interposed) are given about one request each, not all 2C (a coarray halo of 28,000 ops
 * replayed as written in 174 ms an iteration, 3.2 ms once Waitsome scanned only those). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "mpi_test.h"

enum { N = 64, MAXREQ = 4 * N };

/* The buffers of the requests created so far, and the buffers of messages started, in order. */
static struct {
  MPI_Request req[MAXREQ];
  const void *buf[MAXREQ];
  int nreq;
  const void *started[MAXREQ];
  int nstarted;
} seen;

static void note_request(MPI_Request r, const void *buf) {
  if (seen.nreq < MAXREQ) seen.req[seen.nreq] = r, seen.buf[seen.nreq++] = buf;
}

static void note_start(const void *buf) {
  if (seen.nstarted < MAXREQ) seen.started[seen.nstarted++] = buf;
}

int MPI_Send_init_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *r) {
  int rc = PMPI_Send_init_c(buf, count, type, dest, tag, comm, r);
  note_request(*r, buf);
  return rc;
}

int MPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *r) {
  int rc = PMPI_Recv_init_c(buf, count, type, source, tag, comm, r);
  note_request(*r, buf);
  return rc;
}

/* Requests handed to MPI_Waitsome and MPI_Testsome, and their calls. */
static long long scanned, scans;

int MPI_Waitsome(int n, MPI_Request reqs[], int *out, int idx[], MPI_Status st[]) {
  scanned += n, scans++;
  return PMPI_Waitsome(n, reqs, out, idx, st);
}

int MPI_Testsome(int n, MPI_Request reqs[], int *out, int idx[], MPI_Status st[]) {
  scanned += n, scans++;
  return PMPI_Testsome(n, reqs, out, idx, st);
}

int MPI_Start(MPI_Request *r) {
  for (int i = 0; i < seen.nreq; i++)
    if (seen.req[i] == *r) note_start(seen.buf[i]);
  return PMPI_Start(r);
}

int MPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *r) {
  note_start(buf);
  return PMPI_Isend_c(buf, count, type, dest, tag, comm, r);
}

int MPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *r) {
  note_start(buf);
  return PMPI_Irecv_c(buf, count, type, source, tag, comm, r);
}

/* Four messages of the rank to itself, receive first for the even ones, send first for the
   odd ones, run twice with other data: each receive gets its send's bytes, and no MPI
   message starts. */
static void to_itself(int rank, const cdag_options *o) {
  enum { M = 4 };
  static uint64_t out[M], in[M];
  cdag_graph *g = NULL;
  cdag_schedule *s = NULL;
  MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
  for (int i = 0; i < M; i++) {
    if (i % 2 == 0) MT_OK(cdag_recv(g, &in[i], sizeof in[i], rank, 3, NULL));
    MT_OK(cdag_send(g, &out[i], sizeof out[i], rank, 3, NULL));
    if (i % 2 == 1) MT_OK(cdag_recv(g, &in[i], sizeof in[i], rank, 3, NULL));
  }
  MT_OK(cdag_compile(g, o, &s));
  for (int run = 0; run < 2 && s; run++) {
    for (int i = 0; i < M; i++) out[i] = 100u * (uint64_t)run + (uint64_t)i + 7, in[i] = 0;
    seen.nstarted = 0;
    MT_OK(cdag_run(s));
    MT_EXPECT_INT(seen.nstarted, ==, 0);
    for (int i = 0; i < M; i++) MT_EXPECT_INT(in[i], ==, 100u * (uint64_t)run + (uint64_t)i + 7);
  }
  MT_OK(cdag_schedule_free(&s));
  MT_OK(cdag_graph_free(&g));
}

/* C messages back and forth, each after the one before (persistent requests: C is small). */
static void ping_pong(int rank, const cdag_options *o) {
  enum { C = 200 };
  static uint64_t ball;   /* one buffer: each message sends what the one before brought */
  cdag_graph *g = NULL;
  cdag_schedule *s = NULL;
  MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
  for (int i = 0; i < C; i++) {
    int mine = i % 2 == rank;
    MT_OK(mine ? cdag_send(g, &ball, sizeof ball, 1 - rank, 9, NULL) : cdag_recv(g, &ball, sizeof ball, 1 - rank, 9, NULL));
  }
  ball = rank ? 0 : 4242;
  MT_OK(cdag_compile(g, o, &s));
  scanned = scans = 0;
  MT_OK(cdag_run(s));
  MT_EXPECT_MSG(scans > 0 && scanned <= 2 * scans, "rank %d: %lld requests scanned in %lld waits for %d messages in a row",
                rank, scanned, scans, C);
  MT_EXPECT_INT(ball, ==, 4242);
  MT_OK(cdag_schedule_free(&s));
  MT_OK(cdag_graph_free(&g));
}

int main(int argc, char **argv) {
  int rank, p;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MT_REQUIRE(p == 2);
  static uint64_t piece[N];
  cdag_graph *g = NULL;
  cdag_schedule *s = NULL;
  cdag_options o;
  cdag_options_init(&o);
  o.detect = 0;
  MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
  for (int i = 0; i < N; i++) {
    piece[i] = rank ? 0 : 1000u + (uint64_t)i;
    MT_OK(rank ? cdag_recv(g, &piece[i], sizeof piece[i], 0, 5, NULL) : cdag_send(g, &piece[i], sizeof piece[i], 1, 5, NULL));
  }
  MT_OK(cdag_compile(g, &o, &s));
  seen.nstarted = 0;
  MT_OK(cdag_run(s));
  MT_EXPECT_INT(seen.nstarted, ==, N);
  for (int i = 0; i < seen.nstarted && i < N; i++)
    MT_EXPECT_MSG(seen.started[i] == (const void *)&piece[i], "message %d of rank %d started as the program's message %ld",
                  i, rank, (long)((const uint64_t *)seen.started[i] - piece));
  if (rank)
    for (int i = 0; i < N; i++) MT_EXPECT_INT(piece[i], ==, 1000u + (uint64_t)i);
  MT_OK(cdag_schedule_free(&s));
  MT_OK(cdag_graph_free(&g));
  to_itself(rank, &o);
  ping_pong(rank, &o);
  return mt_finish("mpi_post_order");
}
