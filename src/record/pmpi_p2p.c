/* cdag — src/record/pmpi_p2p.c: point-to-point calls, persistent requests, completions and
 * probes, recorded (pmpi.h; the lines they write: record.h).
 *  - sends (every mode) when issued, receives when complete (a wildcard's source and tag,
 *    and the bytes that arrived, come from the status), both in MPI_COMM_WORLD ranks, with
 *    the communicator's agreed id so the merger keeps tags of communicators apart;
 *  - blocking calls carry `wait`; Wait/Test and their -all/-any/-some forms write the
 *    completions they observed as one `wait` line; persistent requests record an operation
 *    at every Start; matched probes carry their communicator to Mrecv/Imrecv; a cancelled
 *    operation is dropped. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/pmpi.h"

/* An operation laid out later (a receive when it completes, a persistent one at each
   start) holds its datatype's decoding, which MPI_Type_free may drop meanwhile; one whose
   datatype cannot be decoded is not recorded, and counted now. */
static void pend_held(MPI_Request rq, pend x, int call) {
  if (!(x.held = type_hold(x.type))) {
    not_recorded(call);
    return;
  }
  pend_put(rq, x);
}

#pragma GCC visibility push(default)

/* ---- sends ---- */

#define BLOCKING_SEND(NAME)                                                                       \
  int MPI_##NAME(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) { \
    COUNT(C_##NAME);                                                                              \
    record_send(buf, count, t, NULL, dest, tag, comm, NULL, C_##NAME, 1);                               \
    return PMPI_##NAME(buf, count, t, dest, tag, comm);                                           \
  }
BLOCKING_SEND(Send)
BLOCKING_SEND(Ssend)
BLOCKING_SEND(Rsend)
BLOCKING_SEND(Bsend)

/* A nonblocking send MPI accepted (rc), its request kept until a completion names it. */
static int isent(int rc, MPI_Request *rq, const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
                 int call) {
  uint64_t seq = rc == MPI_SUCCESS ? record_send(buf, count, t, NULL, dest, tag, comm, NULL, call, 0) : 0;
  if (seq) pend_put(*rq, (pend){P_SEND, 0, 1, 1, -1, -1, R->phase, seq, buf, count, dest, tag, t, comm, NULL, NULL, NULL, 0, 0});
  return rc;
}

#define NONBLOCKING_SEND(NAME)                                                                    \
  int MPI_##NAME(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,   \
                 MPI_Request *rq) {                                                               \
    COUNT(C_##NAME);                                                                              \
    return isent(PMPI_##NAME(buf, count, t, dest, tag, comm, rq), rq, buf, count, t, dest, tag, comm, C_##NAME); \
  }
NONBLOCKING_SEND(Isend)
NONBLOCKING_SEND(Issend)
NONBLOCKING_SEND(Irsend)
NONBLOCKING_SEND(Ibsend)

/* A persistent send made (rc): each start records a send. */
static int send_made(int rc, MPI_Request *rq, const void *buf, int count, MPI_Datatype t, int dest, int tag,
                     MPI_Comm comm, int call) {
  if (rc == MPI_SUCCESS && R && dest != MPI_PROC_NULL)
    pend_held(*rq, (pend){P_SEND, 1, 0, 1, -1, -1, 0, 0, buf, count, dest, tag, t, comm, NULL, NULL, NULL, 0, 0}, call);
  return rc;
}

#define PERSISTENT_SEND(NAME)                                                                     \
  int MPI_##NAME(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,   \
                 MPI_Request *rq) {                                                               \
    COUNT(C_##NAME);                                                                              \
    return send_made(PMPI_##NAME(buf, count, t, dest, tag, comm, rq), rq, buf, count, t, dest, tag, comm, C_##NAME); \
  }
PERSISTENT_SEND(Send_init)
PERSISTENT_SEND(Ssend_init)
PERSISTENT_SEND(Rsend_init)
PERSISTENT_SEND(Bsend_init)

/* ---- receives ---- */

/* A blocking receive MPI completed (rc) into status s. */
static int received(int rc, void *buf, int count, MPI_Datatype t, MPI_Comm comm, const MPI_Status *s, int call) {
  if (rc == MPI_SUCCESS && recording()) {
    uint64_t seq = next_seq();
    record_recv(R->phase, seq, buf, count, t, NULL, comm, NULL, s, seq, 1, call);
  }
  return rc;
}

/* A nonblocking receive MPI accepted (rc): written when a completion sees it complete. */
static int irecvd(int rc, MPI_Request *rq, void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
                  int call) {
  if (rc == MPI_SUCCESS && recording() && src != MPI_PROC_NULL)
    pend_held(*rq, (pend){P_RECV, 0, 1, 1, -1, -1, R->phase, next_seq(), buf, count, src, tag, t, comm, NULL, NULL, NULL, 0, 0}, call);
  return rc;
}

/* A persistent receive made (rc): each start posts a receive. */
static int recv_made(int rc, MPI_Request *rq, void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
                     int call) {
  if (rc == MPI_SUCCESS && R && src != MPI_PROC_NULL)
    pend_held(*rq, (pend){P_RECV, 1, 0, 1, -1, -1, 0, 0, buf, count, src, tag, t, comm, NULL, NULL, NULL, 0, 0}, call);
  return rc;
}

int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Status *st) {
  COUNT(C_Recv);
  MPI_Status own;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &own : st;
  return received(PMPI_Recv(buf, count, t, src, tag, comm, s), buf, count, t, comm, s, C_Recv);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Irecv);
  return irecvd(PMPI_Irecv(buf, count, t, src, tag, comm, rq), rq, buf, count, t, src, tag, comm, C_Irecv);
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Recv_init);
  return recv_made(PMPI_Recv_init(buf, count, t, src, tag, comm, rq), rq, buf, count, t, src, tag, comm, C_Recv_init);
}

/* Sendrecv: a send and a receive issued together, both complete on return. A communicator
   the recorder does not know was counted once, by the send (unless it sent to no one). */
static void sendrecv_done(uint64_t sseq, uint64_t rseq, void *rbuf, int rcount, MPI_Datatype rt, int dest,
                          MPI_Comm comm, const MPI_Status *s, int call) {
  if (!recording() || (dest != MPI_PROC_NULL && !comm_known(comm))) return;
  uint64_t done = next_seq();
  int got = record_recv(R->phase, rseq, rbuf, rcount, rt, NULL, comm, NULL, s, done, 0, call);
  if (sseq || got) {
    out("%d %llu wait", R->phase, (unsigned long long)done);
    if (sseq) out(" %llu", (unsigned long long)sseq);
    if (got) out(" %llu", (unsigned long long)rseq);
    out("\n");
  }
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype st_, int dest, int stag, void *rbuf, int rcount,
                 MPI_Datatype rt, int src, int rtag, MPI_Comm comm, MPI_Status *st) {
  COUNT(C_Sendrecv);
  MPI_Status own;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &own : st;
  uint64_t sseq = record_send(sbuf, scount, st_, NULL, dest, stag, comm, NULL, C_Sendrecv, 0);
  uint64_t rseq = recording() ? next_seq() : 0;
  int rc = PMPI_Sendrecv(sbuf, scount, st_, dest, stag, rbuf, rcount, rt, src, rtag, comm, s);
  if (rc == MPI_SUCCESS) sendrecv_done(sseq, rseq, rbuf, rcount, rt, dest, comm, s, C_Sendrecv);
  return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype t, int dest, int stag, int src, int rtag, MPI_Comm comm,
                         MPI_Status *st) {
  COUNT(C_Sendrecv_replace);
  MPI_Status own;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &own : st;
  uint64_t sseq = record_send(buf, count, t, NULL, dest, stag, comm, NULL, C_Sendrecv_replace, 0);
  uint64_t rseq = recording() ? next_seq() : 0;
  int rc = PMPI_Sendrecv_replace(buf, count, t, dest, stag, src, rtag, comm, s);
  if (rc == MPI_SUCCESS) sendrecv_done(sseq, rseq, buf, count, t, dest, comm, s, C_Sendrecv_replace);
  return rc;
}

#if MPI_VERSION >= 4
/* MPI_Isendrecv(_replace): a send and a receive under one request, issued as Sendrecv's
   (the send read before MPI may write the buffer the _replace form shares); the completion
   that sees the request complete writes the receive and names both. MPICH 4.0.2 leaves the
   status of a completed Isendrecv meaningless (source 0, tag 0, no bytes, or what an earlier
   call left), so the receive is what was posted: a receive larger than its message takes the
   bytes sent (the graph's rule too), and one with a wildcard source or tag, which nothing
   then says, is counted instead. A communicator the recorder does not know was counted by
   the send. */
static int isendrecv_wild(int src, int rtag, int call) {
  if (src != MPI_ANY_SOURCE && rtag != MPI_ANY_TAG) return 0;
  if (recording()) unsupported_because(call, "a wildcard source or tag: MPI's status does not say which message arrived");
  return 1;
}

static void isendrecv_posted(MPI_Request *rq, uint64_t sseq, uint64_t rseq, void *rbuf, int rcount, MPI_Datatype rt,
                             int src, int rtag, MPI_Comm comm, const void *sbuf, int scount, MPI_Datatype st,
                             int dest, int stag, int call) {
  if (!rseq || (dest != MPI_PROC_NULL && !comm_known(comm))) return;
  if (src == MPI_PROC_NULL) {   /* nothing to receive: the request holds the send */
    if (sseq) pend_put(*rq, (pend){P_SEND, 0, 1, 1, -1, -1, R->phase, sseq, sbuf, scount, dest, stag, st, comm, NULL, NULL, NULL, 0, 0});
    return;
  }
  pend x = {P_RECV, 0, 1, 1, -1, -1, R->phase, rseq, rbuf, rcount, src, rtag, rt, comm, NULL, NULL, NULL, sseq, 1};
  pend_held(*rq, x, call);
}

int MPI_Isendrecv(const void *sbuf, int scount, MPI_Datatype st, int dest, int stag, void *rbuf, int rcount,
                  MPI_Datatype rt, int src, int rtag, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Isendrecv);
  if (isendrecv_wild(src, rtag, C_Isendrecv))
    return PMPI_Isendrecv(sbuf, scount, st, dest, stag, rbuf, rcount, rt, src, rtag, comm, rq);
  uint64_t sseq = record_send(sbuf, scount, st, NULL, dest, stag, comm, NULL, C_Isendrecv, 0);
  uint64_t rseq = recording() ? next_seq() : 0;
  int rc = PMPI_Isendrecv(sbuf, scount, st, dest, stag, rbuf, rcount, rt, src, rtag, comm, rq);
  if (rc == MPI_SUCCESS)
    isendrecv_posted(rq, sseq, rseq, rbuf, rcount, rt, src, rtag, comm, sbuf, scount, st, dest, stag, C_Isendrecv);
  return rc;
}

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype t, int dest, int stag, int src, int rtag, MPI_Comm comm,
                          MPI_Request *rq) {
  COUNT(C_Isendrecv_replace);
  if (isendrecv_wild(src, rtag, C_Isendrecv_replace))
    return PMPI_Isendrecv_replace(buf, count, t, dest, stag, src, rtag, comm, rq);
  uint64_t sseq = record_send(buf, count, t, NULL, dest, stag, comm, NULL, C_Isendrecv_replace, 0);
  uint64_t rseq = recording() ? next_seq() : 0;
  int rc = PMPI_Isendrecv_replace(buf, count, t, dest, stag, src, rtag, comm, rq);
  if (rc == MPI_SUCCESS)
    isendrecv_posted(rq, sseq, rseq, buf, count, t, src, rtag, comm, buf, count, t, dest, stag, C_Isendrecv_replace);
  return rc;
}

/* ---- MPI-4's large-count forms: recorded as the forms above where every count fits an
   int (what a line holds); else passed on and counted ---- */

#define BLOCKING_SEND_C(NAME)                                                                     \
  int MPI_##NAME##_c(const void *buf, MPI_Count count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) { \
    COUNT(C_##NAME##_c);                                                                          \
    if (count_fits(count, C_##NAME##_c, 0)) record_send(buf, (int)count, t, NULL, dest, tag, comm, NULL, C_##NAME##_c, 1); \
    return PMPI_##NAME##_c(buf, count, t, dest, tag, comm);                                       \
  }
BLOCKING_SEND_C(Send)
BLOCKING_SEND_C(Ssend)
BLOCKING_SEND_C(Rsend)
BLOCKING_SEND_C(Bsend)

/* A send with a request: AFTER (isent, or send_made for a persistent one, whose init is
   counted even outside a phase: INIT) once MPI returned. */
#define REQUEST_SEND_C(NAME, AFTER, INIT)                                                         \
  int MPI_##NAME##_c(const void *buf, MPI_Count count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, \
                     MPI_Request *rq) {                                                           \
    COUNT(C_##NAME##_c);                                                                          \
    int rc = PMPI_##NAME##_c(buf, count, t, dest, tag, comm, rq);                                 \
    return count_fits(count, C_##NAME##_c, INIT) ? AFTER(rc, rq, buf, (int)count, t, dest, tag, comm, C_##NAME##_c) : rc; \
  }
REQUEST_SEND_C(Isend, isent, 0)
REQUEST_SEND_C(Issend, isent, 0)
REQUEST_SEND_C(Irsend, isent, 0)
REQUEST_SEND_C(Ibsend, isent, 0)
REQUEST_SEND_C(Send_init, send_made, 1)
REQUEST_SEND_C(Ssend_init, send_made, 1)
REQUEST_SEND_C(Rsend_init, send_made, 1)
REQUEST_SEND_C(Bsend_init, send_made, 1)

int MPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Status *st) {
  COUNT(C_Recv_c);
  MPI_Status own;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &own : st;
  int rc = PMPI_Recv_c(buf, count, t, src, tag, comm, s);
  return count_fits(count, C_Recv_c, 0) ? received(rc, buf, (int)count, t, comm, s, C_Recv_c) : rc;
}

int MPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Irecv_c);
  int rc = PMPI_Irecv_c(buf, count, t, src, tag, comm, rq);
  return count_fits(count, C_Irecv_c, 0) ? irecvd(rc, rq, buf, (int)count, t, src, tag, comm, C_Irecv_c) : rc;
}

int MPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Recv_init_c);
  int rc = PMPI_Recv_init_c(buf, count, t, src, tag, comm, rq);
  return count_fits(count, C_Recv_init_c, 1) ? recv_made(rc, rq, buf, (int)count, t, src, tag, comm, C_Recv_init_c) : rc;
}

int MPI_Sendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype st_, int dest, int stag, void *rbuf,
                   MPI_Count rcount, MPI_Datatype rt, int src, int rtag, MPI_Comm comm, MPI_Status *st) {
  COUNT(C_Sendrecv_c);
  MPI_Status own;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &own : st;
  int ok = count_fits(scount, C_Sendrecv_c, 0) && count_fits(rcount, C_Sendrecv_c, 0);
  uint64_t sseq = ok ? record_send(sbuf, (int)scount, st_, NULL, dest, stag, comm, NULL, C_Sendrecv_c, 0) : 0;
  uint64_t rseq = ok && recording() ? next_seq() : 0;
  int rc = PMPI_Sendrecv_c(sbuf, scount, st_, dest, stag, rbuf, rcount, rt, src, rtag, comm, s);
  if (rc == MPI_SUCCESS && ok) sendrecv_done(sseq, rseq, rbuf, (int)rcount, rt, dest, comm, s, C_Sendrecv_c);
  return rc;
}

int MPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype t, int dest, int stag, int src, int rtag,
                           MPI_Comm comm, MPI_Status *st) {
  COUNT(C_Sendrecv_replace_c);
  MPI_Status own;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &own : st;
  int ok = count_fits(count, C_Sendrecv_replace_c, 0);
  uint64_t sseq = ok ? record_send(buf, (int)count, t, NULL, dest, stag, comm, NULL, C_Sendrecv_replace_c, 0) : 0;
  uint64_t rseq = ok && recording() ? next_seq() : 0;
  int rc = PMPI_Sendrecv_replace_c(buf, count, t, dest, stag, src, rtag, comm, s);
  if (rc == MPI_SUCCESS && ok) sendrecv_done(sseq, rseq, buf, (int)count, t, dest, comm, s, C_Sendrecv_replace_c);
  return rc;
}
#endif

/* ---- persistent requests, cancel, free ---- */

static void start_one(MPI_Request rq) {
  int64_t i = pend_find(rq);
  if (i < 0 || !recording() || R->p[i].kind == P_COLL) return;   /* a persistent collective: pcoll_started */
  pend *p = &R->p[i];
  p->phase = R->phase;
  p->active = 1;
  if (p->kind == P_SEND) {
    p->seq = record_send(p->buf, p->count, p->type, p->held, p->peer, p->tag, p->comm, p->xc, C_Start, 0);
    p->active = p->seq != 0;
  } else {
    p->seq = next_seq();
  }
}

/* A persistent collective is described before MPI may write its output (pmpi_pcoll.c). */
int MPI_Start(MPI_Request *rq) {
  COUNT(C_Start);
  struct pcoll_starts *pc = pcoll_describe(rq, 1);
  int rc = PMPI_Start(rq);
  pcoll_started(pc, rc);
  if (rc == MPI_SUCCESS && R) start_one(*rq);
  return rc;
}

int MPI_Startall(int n, MPI_Request rq[]) {
  COUNT(C_Startall);
  struct pcoll_starts *pc = pcoll_describe(rq, n);
  int rc = PMPI_Startall(n, rq);
  pcoll_started(pc, rc);
  for (int k = 0; rc == MPI_SUCCESS && R && k < n; k++) start_one(rq[k]);
  return rc;
}

int MPI_Request_free(MPI_Request *rq) {
  COUNT(C_Request_free);
  if (R) pend_drop(*rq);
  return PMPI_Request_free(rq);
}

int MPI_Cancel(MPI_Request *rq) {
  COUNT(C_Cancel);
  return PMPI_Cancel(rq);   /* the completion's status says whether it was cancelled */
}

/* ---- completion ---- */

int MPI_Wait(MPI_Request *rq, MPI_Status *st) {
  COUNT(C_Wait);
  MPI_Status own;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &own : st;
  MPI_Request h = *rq;
  int rc = PMPI_Wait(rq, s);
  if (rc == MPI_SUCCESS && R) completed(&h, NULL, 1, s, C_Wait);
  return rc;
}

int MPI_Test(MPI_Request *rq, int *flag, MPI_Status *st) {
  COUNT(C_Test);
  MPI_Status own;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &own : st;
  MPI_Request h = *rq;
  int rc = PMPI_Test(rq, flag, s);
  if (rc == MPI_SUCCESS && R && *flag) completed(&h, NULL, 1, s, C_Test);
  return rc;
}

int MPI_Waitall(int n, MPI_Request rq[], MPI_Status sts[]) {
  COUNT(C_Waitall);
  if (!R) return PMPI_Waitall(n, rq, sts);
  MPI_Request *h = save_requests(rq, n);
  MPI_Status *s = statuses(sts, n);
  if (!h || !s) return forget_requests(rq, n), PMPI_Waitall(n, rq, sts);
  int rc = PMPI_Waitall(n, rq, s);
  if (rc == MPI_SUCCESS && h) completed(h, NULL, n, s, C_Waitall);
  return rc;
}

int MPI_Testall(int n, MPI_Request rq[], int *flag, MPI_Status sts[]) {
  COUNT(C_Testall);
  if (!R) return PMPI_Testall(n, rq, flag, sts);
  MPI_Request *h = save_requests(rq, n);
  MPI_Status *s = statuses(sts, n);
  if (!h || !s) return forget_requests(rq, n), PMPI_Testall(n, rq, flag, sts);
  int rc = PMPI_Testall(n, rq, flag, s);
  if (rc == MPI_SUCCESS && *flag && h) completed(h, NULL, n, s, C_Testall);
  return rc;
}

int MPI_Waitany(int n, MPI_Request rq[], int *idx, MPI_Status *st) {
  COUNT(C_Waitany);
  if (!R) return PMPI_Waitany(n, rq, idx, st);
  MPI_Status own;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &own : st;
  MPI_Request *h = save_requests(rq, n);
  if (!h) return forget_requests(rq, n), PMPI_Waitany(n, rq, idx, st);
  int rc = PMPI_Waitany(n, rq, idx, s);
  if (rc == MPI_SUCCESS && h && *idx != MPI_UNDEFINED) completed(h, idx, 1, s, C_Waitany);
  return rc;
}

int MPI_Testany(int n, MPI_Request rq[], int *idx, int *flag, MPI_Status *st) {
  COUNT(C_Testany);
  if (!R) return PMPI_Testany(n, rq, idx, flag, st);
  MPI_Status own;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &own : st;
  MPI_Request *h = save_requests(rq, n);
  if (!h) return forget_requests(rq, n), PMPI_Testany(n, rq, idx, flag, st);
  int rc = PMPI_Testany(n, rq, idx, flag, s);
  if (rc == MPI_SUCCESS && h && *flag && *idx != MPI_UNDEFINED) completed(h, idx, 1, s, C_Testany);
  return rc;
}

int MPI_Waitsome(int n, MPI_Request rq[], int *outn, int idx[], MPI_Status sts[]) {
  COUNT(C_Waitsome);
  if (!R) return PMPI_Waitsome(n, rq, outn, idx, sts);
  MPI_Request *h = save_requests(rq, n);
  MPI_Status *s = statuses(sts, n);
  if (!h || !s) return forget_requests(rq, n), PMPI_Waitsome(n, rq, outn, idx, sts);
  int rc = PMPI_Waitsome(n, rq, outn, idx, s);
  if (rc == MPI_SUCCESS && h && *outn != MPI_UNDEFINED) completed(h, idx, *outn, s, C_Waitsome);
  return rc;
}

int MPI_Testsome(int n, MPI_Request rq[], int *outn, int idx[], MPI_Status sts[]) {
  COUNT(C_Testsome);
  if (!R) return PMPI_Testsome(n, rq, outn, idx, sts);
  MPI_Request *h = save_requests(rq, n);
  MPI_Status *s = statuses(sts, n);
  if (!h || !s) return forget_requests(rq, n), PMPI_Testsome(n, rq, outn, idx, sts);
  int rc = PMPI_Testsome(n, rq, outn, idx, s);
  if (rc == MPI_SUCCESS && h && *outn != MPI_UNDEFINED) completed(h, idx, *outn, s, C_Testsome);
  return rc;
}

/* ---- probes and matched receives ---- */

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *st) {
  COUNT(C_Probe);
  return PMPI_Probe(src, tag, comm, st);
}

int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *st) {
  COUNT(C_Iprobe);
  return PMPI_Iprobe(src, tag, comm, flag, st);
}

/* A message a probe matched: MPI took it off the queue there, so the merger pairs its receive
   as if it stood at the probe's position (the receive itself is where the program made it,
   since that is when it writes its buffer): the `probed SEQ PSEQ` line (record.h). */
typedef struct { MPI_Comm comm; int phase; uint64_t seq; } matched;

static void message_matched(MPI_Message m, MPI_Comm comm) {
  if (!R || m == MPI_MESSAGE_NULL || m == MPI_MESSAGE_NO_PROC) return;
  Word_t *v;
  matched *x = malloc(sizeof *x);
  if (!x) { nomem(OOM_CALLS); return; }
  *x = (matched){comm, R->phase, recording() ? next_seq() : 0};
  JLI(v, R->msgs, (Word_t)m);
  if (v == PJERR) { nomem(OOM_CALLS); free(x); return; }   /* the matched receive will not be recorded */
  free((matched *)*v);   /* a handle MPI handed out again (the old message was never received) */
  *v = (Word_t)x;
}

/* The probe that matched m, taken out of the map (0: none recorded). */
static int message_probe(MPI_Message m, matched *out) {
  Word_t *v;
  int rc;
  JLG(v, R->msgs, (Word_t)m);
  if (!v || !*v) return 0;
  *out = *(matched *)*v;
  free((matched *)*v);
  *v = 0;
  JLD(rc, R->msgs, (Word_t)m);
  if (rc == JERR) nomem(OOM_REQUESTS);   /* a stale key naming nothing (0) */
  return 1;
}

int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *m, MPI_Status *st) {
  COUNT(C_Mprobe);
  int rc = PMPI_Mprobe(src, tag, comm, m, st);
  if (rc == MPI_SUCCESS) message_matched(*m, comm);
  return rc;
}

int MPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *m, MPI_Status *st) {
  COUNT(C_Improbe);
  int rc = PMPI_Improbe(src, tag, comm, flag, m, st);
  if (rc == MPI_SUCCESS && *flag) message_matched(*m, comm);
  return rc;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype t, MPI_Message *m, MPI_Status *st) {
  COUNT(C_Mrecv);
  MPI_Status own;
  MPI_Status *s = st == MPI_STATUS_IGNORE ? &own : st;
  matched p;
  int known = R ? message_probe(*m, &p) : 0;
  int rc = PMPI_Mrecv(buf, count, t, m, s);
  if (rc == MPI_SUCCESS && known && recording()) {
    uint64_t seq = next_seq();
    if (record_recv(R->phase, seq, buf, count, t, NULL, p.comm, NULL, s, seq, 1, C_Mrecv) && p.seq && p.phase == R->phase)
      out("%d probed %llu %llu\n", R->phase, (unsigned long long)seq, (unsigned long long)p.seq);
  }
  return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype t, MPI_Message *m, MPI_Request *rq) {
  COUNT(C_Imrecv);
  matched p;
  int known = R ? message_probe(*m, &p) : 0;
  int rc = PMPI_Imrecv(buf, count, t, m, rq);
  if (rc == MPI_SUCCESS && known && recording()) {
    uint64_t seq = next_seq();
    pend_held(*rq, (pend){P_RECV, 0, 1, 1, -1, -1, R->phase, seq, buf, count, MPI_ANY_SOURCE, MPI_ANY_TAG, t, p.comm, NULL, NULL, NULL, 0, 0},
              C_Imrecv);
    Word_t *v;
    if (p.seq && p.phase == R->phase) {
      JLI(v, R->probed, (Word_t)seq);
      if (v == PJERR) nomem(OOM_REQUESTS);   /* paired at its own position: the MPI order may differ */
      else *v = (Word_t)p.seq;
    }
  }
  return rc;
}

void probed_written(const pend *p) {
  Word_t *v;
  int rc;
  JLG(v, R->probed, (Word_t)p->seq);
  if (!v) return;
  out("%d probed %llu %llu\n", p->phase, (unsigned long long)p->seq, (unsigned long long)*v);
  JLD(rc, R->probed, (Word_t)p->seq);
  (void)rc;
}
