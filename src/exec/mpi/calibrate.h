/* cdag — src/exec/mpi/calibrate.h: the machine's LogGOPS parameters, measured (`cdag calibrate`).
 *
 * Between ranks 0 and 1 of MPI_COMM_WORLD (others wait, sleeping, so an oversubscribed node
 * leaves the cores to the two that measure): ping-pongs at sizes from 8 B to 256 KiB (the
 * one-way time T(s) of each, the median of repeated batches), bursts of small messages one
 * way (the time per message of the burst: g; the time to post one send), exchanges both
 * ways, a memcpy (copy).
 * From them: the eager/rendezvous threshold S where T(s) jumps above the line through the
 * smaller sizes (two lines fitted from 512 B on, split where they fit best; a jump of half the
 * smallest message's time at the split: S is the last size before it; else S keeps its
 * default and s_seen says so), G the slope of the first line (least squares over 512 B .. S),
 * then from rounds of an exchange both ways with nonblocking calls (receive posted, send,
 * wait for all), as a phase of neighbour messages runs: one message of 8 B (E), of 4 KiB
 * (E4) and 16 of 8 B (E16) each way. LogGOPS charges each further pair of messages 2o
 * (a send and a receive on each CPU): o = (E16 - E) / 30 (at least the time to post a
 * send). It gives a round of one message of s bytes 2o + max(L, (s-1)O) + (s-1)G when
 * O <= G (each CPU copies its own send out, then the other's in), where one way takes
 * 2o + L + (s-1)G; so L = E - 2o - 7G and O = (E4 - 2o) / 4095 - G (in [0, G]). (A real MPI spends about twice the ping-pong's
 * one-way time on such a round: from T(8), every phase would look faster than it runs.)
 * LogGOPS's rendezvous adds no time to a ping-pong, so S only says when a send waits for
 * its receive. Then the table of costs by size and queue (choose.h, loggp_params), which
 * replace L, G and O where a machine file has them: streams of k exchanges run by cdag's
 * engine as a graph written one message at a time runs (cdag_compile with detect = 0 on a
 * communicator of ranks 0 and 1, each receive just before its send), the best batch of each;
 * one exchange E1 and a stream of 16 (4 from 256 KiB) at every power of 2 from 8 B to 64 KiB,
 * 256 KiB and 1 MiB, and streams of 16 and 512 of 8 B for queue; the figures follow by
 * inverting the model (src/model/lower.h: loggp_fit_queue, loggp_fit_row). rcopy: one
 * exchange of 256 KiB packed from and unpacked into 32 pieces, less the exchange alone, per
 * byte copied. The first stream is timed again at the end (stream_first_us, stream_last_us):
 * a machine that changed speed meanwhile shows there. Rank 0's result is broadcast. The header is MPI-free: the `cdag` tool calls
 * it (tools may not call MPI). */
#ifndef CDAG_EXEC_MPI_CALIBRATE_H
#define CDAG_EXEC_MPI_CALIBRATE_H

#include "choose/choose.h"

#define CAL_NSIZES 14

typedef struct {
  loggp_params lp;           /* the parameters, as machine files hold them */
  int nprocs;                /* processes of MPI_COMM_WORLD */
  int s_seen;                /* 1: S is the last size before T(s) jumped; 0: not visible (S = 65535) */
  double size[CAL_NSIZES];   /* the ping-pong's sizes, B */
  double oneway[CAL_NSIZES]; /* their one-way times (half a round trip), us, medians */
  double post_us;            /* the time to post one 8 B MPI_Isend in a burst (o's floor) */
  double burst_us;           /* per message of a burst of 8 B messages: g */
  double exchange_us;        /* a round of an 8 B exchange both ways (Irecv, Isend, Waitall): E */
  double exchange4k_us;      /* the same of 4 KiB: E4 */
  double exchange16_us;      /* a round of 16 messages of 8 B each way: E16 */
  double stream_first_us;    /* the table's first stream (16 exchanges of 8 B), and the same */
  double stream_last_us;     /* again at the end: a machine that changed speed shows here */
  double seconds;            /* how long measuring took */
  char library[160];         /* MPI_Get_library_version's first line */
} exec_calibration;

/* Measures on MPI_COMM_WORLD (collective; MPI initialised by the caller, at least 2
   processes). quick: fewer repeats, for tests (well under a second). CDAG_OK, CDAG_ERR_ARG
   (one process), or CDAG_ERR_MPI naming the call that failed, the same on every rank. */
int exec_calibrate(int quick, exec_calibration *c);

#endif
