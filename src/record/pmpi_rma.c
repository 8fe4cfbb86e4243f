/* cdag — src/record/pmpi_rma.c: one-sided communication (MPI-3.1 chapter 11), recorded as
 * the graph format's gets, puts, accumulates and fences (pmpi.h; the lines: record.h), in
 * fence, post/start/complete/wait and passive-target epochs.
 *  - Windows: MPI_Win_create, Win_allocate, Win_allocate_shared, Win_create_dynamic (with
 *    Win_attach/Win_detach) and Win_free. At creation the members exchange, with PMPI, the
 *    base address and disp_unit of each (a dynamic window's are 0 and 1: MPI's target
 *    displacement there is the target's address), so an origin writes every access with
 *    the target's address (`at A`, no segment): target displacement * its disp_unit + its
 *    base, in world ranks. Win_free writes a `winfree` line (record.h): it synchronises the
 *    members like a barrier (not with no_locks), a place for a passive target's fences.
 *  - Fence epochs: each MPI_Win_fence is a `fence`. On a window over every process of the
 *    run it is a plain fence (every rank's): several such windows fence in turn, each MPI
 *    fence one fence of the graph, so an access's epoch is never longer than MPI's. A window
 *    over fewer processes gets a communicator of its own (a duplicate of its communicator,
 *    with the id its members agree on): its fences and accesses name it (`comm C`), so its
 *    fences cut only its members' epochs (docs/semantics.md).
 *  - Put, Get: the origin's bytes are its datatype's ranges (through a packing area when
 *    there are several, as messages are), the target's the ranges of the target datatype
 *    at the target address: one put or get per run of them (ranges of one length at one
 *    ascending stride: `blocks N stride T`, a column of a matrix one line), each at a
 *    position of its own after the call's. A get's bytes are the program's when the epoch closes: the
 *    shadow gets them (and unpacks) at that fence.
 *  - Accumulate = `accumulate` (MPI_REPLACE: a put; MPI_NO_OP: nothing); Get_accumulate and
 *    Fetch_and_op = a get (with `wait`, so the origin's update is ordered after its fetch)
 *    then an accumulate: the fetched value is the target's at the epoch's start, exact when
 *    no other origin updates those bytes in the epoch (docs/semantics.md). Compare_and_swap
 *    = a get, and at the closing fence, when the fetched value equals the compare value
 *    (the swap took place), a put at the position the call reserved. MPI applies one
 *    origin's accumulate-family calls to the same bytes in program order, as the window's
 *    accumulate_ordering says (its default): a `wait` before a call names those it must
 *    follow (order_after); a fetch after an update, or a pair that info leaves unordered,
 *    is left out, counted.
 *  - Post/start/complete/wait: a communicator per origin and target (below): fences at
 *    start and complete on the origin, at post and wait (or a Win_test that succeeds) on
 *    the target, and the accesses name it. The target's recorder is not told what was put
 *    into it (no collective call to tell it at).
 *  - Passive target: an epoch of this rank o on member t is one of a communicator per
 *    pair and window slot (rec_passive_id, record.h), but t makes no call: o writes `lock` (at
 *    MPI_Win_lock; lock_all: at o's first access to t), `flush` (a flush: the accesses
 *    complete, the epoch goes on) and `unlock` lines of it, each with where t was when o
 *    read it (`tpos`: every process publishes where it is, pmpi.c), and the merger makes
 *    them fences and gives t its fences there, or drops the epoch with the reason
 *    (merge.c). Its `unlock` carries a ticket: the order in which MPI granted t's lock,
 *    which decides between two origins' epochs on the same bytes (passive_ticket). Under a
 *    shared lock, which orders nothing, every flush takes a ticket, the lock reads the
 *    counter (`seen`), and the recorder adds flushes where the program may have learnt of
 *    another origin's access (passive_reopen), so the pieces between markers are ordered
 *    by tickets as the program ordered them. A flush or unlock completes the gets and
 *    swaps to its target; flush_local too, without a fence; Win_sync is nothing. The
 *    request-based accesses (Rput, Rget, Raccumulate, Rget_accumulate, MPI allows them only
 *    there) are recorded as the access, their request kept (P_RMA) so that the completion
 *    call that sees it complete writes the `wait` naming it and an Rget's bytes are the
 *    program's from there. The target is not told of any of it (no call to tell it at).
 * The members' bases are kept per window (a member per rank of the window's group). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/imap.h"
#include "record/pmpi.h"

/* A get (or fetch) waiting for its epoch's closing fence: its ranges at the origin (ga/gl
   of the window from `first`, n of them), the packing area it landed in when n > 1. */
typedef struct { uint64_t area, seq; int64_t first, n; const char *type; int member, done, lines, phase; } rget;
/* A compare-and-swap waiting for the fence: the put written at `seq` if the swap happened. */
typedef struct { uint64_t seq, origin, result, target, bytes; int member, comm; unsigned char compare[32]; } rcas;

/* An access this rank made, for its target to learn at the fence: member, A_* kind, the
   target's bytes, the element type (cdag_type, -1 none). Words, as exchanged. */
typedef struct { uint64_t member, kind, addr, len, type; } racc;

/* What an accumulate-family access does to its target's bytes (its `sig`): reads (the fetch
   of a get-accumulate), replaces, or combines with one type and op (UPD_ACC + type << 8 | op).
   Two accesses to the same bytes commute when their sigs are equal and not UPD_REPLACE. */
enum { UPD_REPLACE = 0, UPD_READ = 1, UPD_ACC = 2 };
/* The tickets' window: per process its ticket counter, where it is, and the locks of the
   atomics run alone on it (atomic_enter), one per window slot modulo TICKET_LOCKS, so that
   atomics on two windows (of slots less than TICKET_LOCKS apart) do not wait for each other's
   lock (a process in an exclusive epoch of one window on a target, making an atomic of
   another there, while a third holds that lock and waits for the exclusive epoch to end,
   would wait forever); 16-byte aligned. */
enum { TICKET_LOCKS = 62, TICKET_WORDS = 2 + TICKET_LOCKS };
/* The orders a window's accumulate_ordering asks of MPI (read/write after read/write). */
enum { ORDER_RAW = 1, ORDER_WAR = 2, ORDER_WAW = 4, ORDER_RAR = 8 };

/* This rank's accumulate-family accesses to one member in the open epoch that no `wait`
   orders yet: the bytes they touched as disjoint spans (overlapping accesses of one sig merge
   into one span), and their positions, which a wait line names when a later access must
   follow them. */
typedef struct {
  base_imap at;                                   /* span start -> index in span */
  struct uspan { uint64_t lo, hi; uint32_t sig; } *span;
  int64_t nspan, spancap;
  uint64_t *seq;
  int64_t nseq, seqcap;
} rupd;

typedef struct {
  MPI_Comm comm;            /* a duplicate of the window's communicator: the fences' exchanges */
  MPI_Request dup;          /* the duplicate still being made (win_comm), else MPI_REQUEST_NULL */
  int *cnt;                 /* 4n: counts and displacements of an exchange */
  int n, me;                /* members, this rank's index */
  int *world;               /* member -> world rank */
  uint64_t *base;           /* member -> base address (0 in a dynamic window) */
  int64_t *unit;            /* member -> disp_unit */
  int whole;                /* every process of the run is a member: plain fences */
  int cid;                  /* else the id of `comm` (its fences and accesses name it), -1: none */
  MPI_Win win;              /* the window itself */
  uint8_t *pt;              /* member -> its passive-target epoch from this rank (PT_*), NULL: none yet */
  uint8_t *shared;          /* member -> that epoch's lock is shared (MPI_LOCK_SHARED, lock_all) */
  uint64_t *since;          /* member -> R->others at that epoch's last marker or access */
  int started;              /* an access epoch of MPI_Win_start is open */
  int *start, nstart;       /* its targets (world ranks) when it was recorded, else NULL */
  int *post, npost;         /* the origins of the open MPI_Win_post (world ranks), if recorded */
  rget *g; int64_t ng, gcap;          /* gets of the open epoch */
  uint64_t *ga, *gl; int64_t nr, rcap;/* their ranges */
  rcas *cas; int64_t ncas, cascap;    /* compare-and-swaps of the open epoch */
  racc *acc; int64_t nacc, acccap;    /* accesses of the open epoch, in order */
  uint64_t open;                      /* the position of the fence that opened it (0: none) */
  int open_phase;                     /* and its phase */
  int order;                          /* ORDER_* of accumulate_ordering (MPI's default: all) */
  int lockword;                       /* its atomics' lock in the tickets' window (atomic_enter) */
  int slot;                           /* its passive epochs' communicator slot (passive_pair) */
  rupd **upd;                         /* member -> its unordered accesses, NULL: none yet */
  rupd **plain;                       /* member -> its plain puts and gets in the open epoch
                                         (spans only), NULL: none yet */
  int64_t *gpend;                     /* member -> gets of w->g not done, NULL: none yet */
} rwin;

static rwin *win_of(MPI_Win w) {
  Word_t *v;
  if (!R) return NULL;
  JLG(v, R->wins, (Word_t)w);
  return v ? (rwin *)*v : NULL;
}

/* Forgets member t's unordered accumulate-family accesses (t -1: every member's), and with
   plain_too its plain puts and gets. */
static void upd_forget(rwin *w, int t, int plain_too) {
  for (int m = t < 0 ? 0 : t; m < (t < 0 ? w->n : t + 1); m++)
    for (int k = 0; k < 1 + plain_too; k++) {
      rupd *u = k ? (w->plain ? w->plain[m] : NULL) : (w->upd ? w->upd[m] : NULL);
      if (!u) continue;
      base_imap_clear(&u->at);
      u->nspan = u->nseq = 0;
    }
}

/* Forgets member t's accesses of both kinds (t -1: every member's): its epoch closed or was
   completed, which orders them before whatever follows. */
static void upd_clear(rwin *w, int t) { upd_forget(w, t, 1); }

/* Forgets the gets among member t's plain accesses: they completed at the origin (an Rget's
   wait, flush_local), so a later put of those bytes follows them. */
static void plain_forget_reads(rwin *w, int t) {
  rupd *u = w->plain ? w->plain[t] : NULL;
  if (!u || !u->nspan) return;
  int64_t kept = 0;
  for (int64_t i = 0; i < u->nspan; i++) {   /* live spans are those the map names */
    uint64_t k = u->span[i].lo;
    if (base_imap_find(&u->at, &k, BASE_IMAP_AT_OR_ABOVE) != i || k != u->span[i].lo) continue;
    if (u->span[i].sig != UPD_READ) u->span[kept++] = u->span[i];
  }
  base_imap_clear(&u->at);
  u->nspan = 0;
  for (int64_t i = 0; i < kept; i++)
    if (base_imap_put(&u->at, u->span[i].lo, u->nspan) == 0) u->nspan++;
}

static void win_free(rwin *w) {
  if (!w) return;
  upd_clear(w, -1);
  for (int m = 0; w->upd && m < w->n; m++)
    if (w->upd[m]) free(w->upd[m]->span), free(w->upd[m]->seq), free(w->upd[m]);
  for (int m = 0; w->plain && m < w->n; m++)
    if (w->plain[m]) free(w->plain[m]->span), free(w->plain[m]);
  free(w->upd);
  free(w->plain);
  free(w->gpend);
  free(w->world); free(w->base); free(w->unit); free(w->g); free(w->ga); free(w->gl); free(w->cas);
  free(w->acc); free(w->cnt); free(w->start); free(w->post); free(w->pt);
  free(w->shared); free(w->since);
  free(w);
}

void rma_free(void) {
  Word_t *v, k = 0;
  JLF(v, R->wins, k);
  while (v) {
    win_free((rwin *)*v);
    JLN(v, R->wins, k);
  }
  JudyLFreeArray(&R->wins, PJE0);
  Judy1FreeArray(&R->pairs, PJE0);
  free(R->trs.a);
  free(R->trs.l);
}

/* The duplicate of the window's communicator, made at its creation (an MPI_Comm_idup when
   every process is a member) and completed at its first use (MPI_Win_free or a fence; MPICH
   ends a program that never frees a window in MPI_Finalize, recorded or not). */
static MPI_Comm win_comm(rwin *w) {
  if (w->dup != MPI_REQUEST_NULL) PMPI_Wait(&w->dup, MPI_STATUS_IGNORE);
  return w->comm;
}

/* The orders MPI keeps between one origin's accumulate-family accesses to the same bytes:
   the window's accumulate_ordering, a list of rar, raw, war and waw (MPI's default: all) or
   "none". */
static int acc_order(MPI_Win win) {
  static const char *name[] = {"raw", "war", "waw", "rar"};
  MPI_Info info;
  int flag = 0, order = 0;
  char v[64] = "";
  if (PMPI_Win_get_info(win, &info) == MPI_SUCCESS) {
    PMPI_Info_get(info, "accumulate_ordering", (int)sizeof v - 1, v, &flag);
    PMPI_Info_free(&info);
  }
  if (!flag) return ORDER_RAW | ORDER_WAR | ORDER_WAW | ORDER_RAR;
  for (int k = 0; k < 4; k++)
    if (strstr(v, name[k])) order |= 1 << k;
  return order;
}

/* A window just created on comm: members agree that all keep it (or none), then exchange
   base and disp_unit. The duplicate of comm for the exchanges at fences (every member takes
   part, recorded or not, as comm_created does) is nonblocking when every process is a
   member: a program that creates a thousand windows and never fences them does not wait for
   a thousand duplicates (MPICH's rma/window_creation). A window of fewer processes names its
   communicator in the graph, which comm_created needs made now. */
static void win_created(MPI_Win win, MPI_Comm comm, const void *base, MPI_Aint unit) {
  if (!R || win == MPI_WIN_NULL) return;
  int n = 0, me = 0, inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return;   /* no window (MPI allows none on intercommunicators) */
  PMPI_Comm_size(comm, &n);
  PMPI_Comm_rank(comm, &me);
  void *mbase = NULL;   /* where MPI put it: MPICH 4.0.2 aligns a base down to 8 bytes, and its
                           accesses land there, not at the program's pointer */
  int flag = 0;
  if (PMPI_Win_get_attr(win, MPI_WIN_BASE, &mbase, &flag) == MPI_SUCCESS && flag) base = mbase;
  uint64_t mine[2] = {(uint64_t)(uintptr_t)base, (uint64_t)unit}, *all = malloc((size_t)n * sizeof mine);
  int *idx = malloc((size_t)n * sizeof *idx), *cnt = malloc(4 * (size_t)n * sizeof *cnt);
  rwin *w = calloc(1, sizeof *w);
  if (w) {
    w->dup = MPI_REQUEST_NULL;
    w->world = malloc((size_t)n * sizeof *w->world);
    w->base = malloc((size_t)n * sizeof *w->base);
    w->unit = malloc((size_t)n * sizeof *w->unit);
    w->cnt = cnt;
    cnt = NULL;
  }
  Word_t *v = NULL;
  if (all && idx && w && w->world && w->base && w->unit && w->cnt) JLI(v, R->wins, (Word_t)win);
  int ok = v && v != PJERR, rc, mine_[2] = {!ok, R->win_slots}, max[2] = {1, 0};
  if (ok) *v = (Word_t)w;
  PMPI_Allreduce(mine_, max, 2, MPI_INT, MPI_MAX, comm);   /* all keep the window, or none; its slot */
  int every = !max[0];
  R->win_slots = max[1] < INT32_MAX ? max[1] + 1 : 0;
  if (every) w->lockword = 2 + max[1] % TICKET_LOCKS, w->slot = max[1] % rec_passive_slots(R->nprocs);
  if (every) every = (n == R->nprocs ? PMPI_Comm_idup(comm, &w->comm, &w->dup) : PMPI_Comm_dup(comm, &w->comm)) ==
                     MPI_SUCCESS;
  if (!every) {
    if (!ok) nomem(OOM_COMMS);   /* its calls are then counted as lost to memory */
    if (ok) {
      *v = 0;   /* if the delete fails, the key stays naming no window */
      JLD(rc, R->wins, (Word_t)win);
      (void)rc;
    }
    win_free(w);
    free(all); free(idx); free(cnt);
    return;
  }
  PMPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, comm);
  w->n = n;
  w->me = me;
  MPI_Group g, wg;
  PMPI_Comm_group(comm, &g);
  PMPI_Comm_group(MPI_COMM_WORLD, &wg);
  for (int i = 0; i < n; i++) idx[i] = i;   /* the member indices (MPI's input and output must differ) */
  PMPI_Group_translate_ranks(g, n, idx, wg, w->world);
  PMPI_Group_free(&g);
  PMPI_Group_free(&wg);
  for (int i = 0; i < n; i++) {
    w->base[i] = all[2 * i];
    w->unit[i] = (int64_t)all[2 * i + 1];
  }
  w->whole = n == R->nprocs;
  w->win = win;
  w->cid = -1;
  w->order = acc_order(win);
  if (!w->whole) {   /* the graph's fences and accesses of this window name a communicator */
    comm_created(w->comm);
    rcomm *x = usable(w->comm, C_Win_create);
    if (x) w->cid = x->id;
  }
  free(all); free(idx);
}

/* The window if this call on it can be recorded now; else counts the call (unsupported,
   with the reason, or lost to memory) and returns NULL. access: an access call, refused
   inside passive-target and post/start epochs. */
static rwin *usable_win(MPI_Win win, int call, int access) {
  if (!recording()) return NULL;
  R->oom_now = 0;
  Word_t *v;
  JLG(v, R->wins, (Word_t)win);
  rwin *w = v ? (rwin *)*v : NULL;
  if (!w) {   /* memory failed when it was created (counted then), or a call made it that the recorder does not know */
    unsupported_because(call, "a window created by a call the recorder does not know, or lost to memory");
    return NULL;
  }
  if (!w->whole && w->cid < 0) {
    unsupported_because(call, "a window whose communicator could not be recorded");
    return NULL;
  }
  if (access && w->started && !w->start) {
    unsupported_because(call, "an access in a start epoch that was not recorded");
    return NULL;
  }
  return w;
}

/* ---- post/start/complete/wait: a communicator per origin and target ----
 * MPI matches the k-th start of origin o that names target t with the k-th post of t that
 * names o, and o's complete with t's wait. The recording gives each such pair a
 * communicator of two members (one when o = t) with an id both derive alone, PAIR_BASE +
 * o * nprocs + t: o fences on it at start and complete, t at post and wait, and o's
 * accesses to t in the epoch name it, so a put lands before t's wait and a get reads what t
 * held at its post (docs/recording.md). */

#define PAIR_BASE (1 << 29)

/* Communicator id of accesses from world rank o to t, declared in the part the first time
   this rank names it: post/start epochs' (PAIR_BASE), or passive target's (record.h). */
static int declared_pair(int id, int o, int t) {
  int rc;
  J1S(rc, R->pairs, (Word_t)id);
  if (rc == 0) return id;
  if (o == t) out("comm %d 1 %d\n", id, o);   /* JERR: declared again later, which the merger allows */
  else out("comm %d 2 %d %d\n", id, o, t);
  return id;
}

/* The world ranks of group g (malloc'd), NULL when memory fails (counted). */
static int *group_world(MPI_Group g, int *n) {
  MPI_Group wg;
  PMPI_Group_size(g, n);
  int *idx = malloc((size_t)(*n ? *n : 1) * sizeof *idx), *out = malloc((size_t)(*n ? *n : 1) * sizeof *out);
  if (!idx || !out) {
    free(idx);
    free(out);
    nomem(OOM_CALLS);
    return NULL;
  }
  for (int i = 0; i < *n; i++) idx[i] = i;
  PMPI_Comm_group(MPI_COMM_WORLD, &wg);
  PMPI_Group_translate_ranks(g, *n, idx, wg, out);
  PMPI_Group_free(&wg);
  free(idx);
  return out;
}

static int pair_comm(int o, int t) { return declared_pair(PAIR_BASE + o * R->nprocs + t, o, t); }

/* The communicator of this rank's passive-target epochs on member t of window w (record.h:
   one per window slot, so two windows' epochs on one target may be open at once). */
static int passive_pair(const rwin *w, int t) {
  return declared_pair(rec_passive_id(R->nprocs, w->slot, R->rank, w->world[t]), R->rank, w->world[t]);
}

/* A fence on the communicator of this rank with each of peers (world ranks), as the origin
   (start, complete) or the target (post, wait), at positions of their own. */
static void pair_fences(const int *peers, int n, int origin) {
  uint64_t seq = next_seq();
  for (int j = 0; j < n; j++) {
    ir_line l = line_of(IR_FENCE);
    l.comm = origin ? pair_comm(R->rank, peers[j]) : pair_comm(peers[j], R->rank);
    out_op(R->phase, seq + (uint64_t)j, &l);
  }
}

/* The window if a post/start/complete/wait call on it can be recorded, else NULL (counted). */
static rwin *pscw_win(MPI_Win win, int call) {
  rwin *w = usable_win(win, call, 0);
  if (w && R->nprocs > REC_PAIR_MAX_PROCS) {
    unsupported_because(call, "post/start/complete/wait on more than " REC_PAIR_MAX_PROCS_TEXT " processes");
    return NULL;
  }
  return w;
}

/* ---- passive target: an epoch of this rank (origin o) on member t ----
 * is an epoch of the communicator of o and t for the window's slot (record.h: members o and
 * t, one when o = t). The origin writes its fences as `lock`, `flush` and `unlock` lines of that
 * communicator (record.h); the merger writes them as fences and adds the target's, where
 * a collective orders them in MPI (docs/recording.md). */

enum { PT_NONE, PT_OPEN, PT_LAZY, PT_LOST };   /* no epoch; open, its `lock` written; open by
                                                  lock_all, no access yet; open, not recorded */

/* Starts reading word k of world rank wt in the tickets' window (0: its ticket counter, 1:
   where it is) into *out; the next flush of wt on that window completes it. 1, or 0 on an
   MPI error. */
static int read_word(int wt, int k, uint64_t *out) {
  uint64_t none = 0;
  return PMPI_Fetch_and_op(&none, out, MPI_UINT64_T, wt, k, MPI_NO_OP, R->tickets) == MPI_SUCCESS;
}

/* Where member t is now (record.h, `tpos`): 1, or 0 when it cannot be read (no such window,
   an MPI error, or t is this process). */
static int target_at(const rwin *w, int t, uint64_t *tpos) {
  if (R->tickets == MPI_WIN_NULL || w->world[t] == R->rank) return 0;
  return read_word(w->world[t], 1, tpos) && PMPI_Win_flush(w->world[t], R->tickets) == MPI_SUCCESS;
}

/* A passive-target marker (`lock`, `flush`, `unlock`) of the epoch on member t at seq, with
   its ticket (0: none), where t was (known: 1) and, on a `lock`, `shared` and the ticket
   counter it saw (seen: 1 + its value, 0 unknown). */
static void passive_line(const rwin *w, int t, const char *what, uint64_t seq, uint64_t ticket, int known,
                         uint64_t tpos, int shared, uint64_t seen) {
  int id = passive_pair(w, t);
  char tail[96] = "";
  int n = snprintf(tail, sizeof tail, "%s", shared ? " shared" : "");
  if (seen) n += snprintf(tail + n, sizeof tail - (size_t)n, " seen %llu", (unsigned long long)(seen - 1));
  if (ticket) n += snprintf(tail + n, sizeof tail - (size_t)n, " ticket %llu", (unsigned long long)ticket);
  if (known) snprintf(tail + n, sizeof tail - (size_t)n, " tpos %llu", (unsigned long long)tpos);
  out("%d %llu %s comm %d%s\n", R->phase, (unsigned long long)seq, what, id, tail);
}

/* The `lock` marker of the epoch on member t at seq (shared: MPI_LOCK_SHARED or lock_all):
   t's fence goes where t is now, before this rank's accesses can reach it. A shared lock
   also reads t's ticket counter in the same round trip (`seen`): the pieces of other
   origins' shared epochs that closed with a ticket up to it ran before its accesses. */
static void passive_lock_mark(const rwin *w, int t, uint64_t seq, int shared) {
  uint64_t tpos = 0, seen = 0;
  int known = 0, wt = w->world[t];
  if (R->tickets != MPI_WIN_NULL && wt != R->rank)
    known = (!shared || read_word(wt, 0, &seen)) && read_word(wt, 1, &tpos) && PMPI_Win_flush(wt, R->tickets) == MPI_SUCCESS;
  passive_line(w, t, "lock", seq, 0, known, tpos, shared, known && shared ? seen + 1 : 0);
}

/* Each process's ticket counter: an origin takes the next ticket of its target while it
   holds the target's lock (passive_ticket), so the tickets give the order in which MPI
   granted it, which the merger keeps for epochs of two origins on the same bytes. Beside it
   where the process is (tpos) and the lock of its atomics (atomic_enter). One window
   over every process, for all windows (one per window ran MPICH out of communicator contexts
   in rma/window_creation's 1,000 windows). The counter is 16-byte aligned: MPICH over UCX
   took a base 8 bytes off 16 as the 16 below it. */
void rma_tickets_open(void) {
  uint64_t *c = R ? aligned_alloc(16, TICKET_WORDS * sizeof *c) : NULL;
  if (c) memset(c, 0, TICKET_WORDS * sizeof *c);
  else if (R) nomem(OOM_TICKETS);
  int made = c != NULL, all = 0;   /* collective: every process (recorded or not), or none */
  PMPI_Allreduce(&made, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  MPI_Win win = MPI_WIN_NULL;
  if (all && PMPI_Win_create(c, TICKET_WORDS * sizeof *c, sizeof *c, MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS)
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  else
    win = MPI_WIN_NULL;
  if (R)
    R->tickets = win, R->counter = c;
  else
    free(c);
}

void rma_tickets_close(void) {
  if (!R) return;
  if (R->tickets != MPI_WIN_NULL) {
    PMPI_Win_unlock_all(R->tickets);
    PMPI_Win_free(&R->tickets);
  }
  free(R->counter);
  R->counter = NULL;
}

/* The ticket of this rank's epoch on member t of win, about to close (0: none). The flush
   completes its accesses at t, so MPI holds t's lock for it now (MPICH may take a lock only
   at the first access or at the unlock); the counter's increment then falls between those
   of the epochs granted before and after it. An epoch without accesses takes a ticket too
   (its order is then any: it conflicts with nothing), as does an epoch of lock_all. Where t
   is (*tpos, *known 1) comes in the same round trip. */
static uint64_t passive_ticket(rwin *w, int t, int *known, uint64_t *tpos) {
  uint64_t one = 1, was = 0;
  *known = 0;
  if (R->tickets == MPI_WIN_NULL) return 0;
  int wt = w->world[t], self = wt == R->rank;
  if (PMPI_Win_flush(t, w->win) != MPI_SUCCESS ||
      PMPI_Fetch_and_op(&one, &was, MPI_UINT64_T, wt, 0, MPI_SUM, R->tickets) != MPI_SUCCESS ||
      (!self && !read_word(wt, 1, tpos)) || PMPI_Win_flush(wt, R->tickets) != MPI_SUCCESS)
    return 0;
  *known = !self;
  return was + 1;
}

/* The `unlock` or `flush` marker of the epoch on member t: its accesses complete at t first
   (the flush), then t's ticket (unlock, and flush under a shared lock: in the same round
   trip) and where t is are read, so t's fence goes after what they wrote and read. A shared
   epoch's tickets order its pieces between markers against other origins' (merge.c). */
static void passive_close_mark(rwin *w, int t, const char *what, uint64_t seq) {
  int known = 0;
  uint64_t ticket = 0, tpos = 0;
  if (!strcmp(what, "unlock") || w->shared[t]) {
    ticket = passive_ticket(w, t, &known, &tpos);
  } else {
    PMPI_Win_flush(t, w->win);
    known = target_at(w, t, &tpos);
  }
  passive_line(w, t, what, seq, ticket, known, tpos, 0, 0);
}

/* The communicator of an access to member t in its passive epoch: the epoch of lock_all
   opens with the first access to t, where t is then (-3: not recorded). */
static int passive_comm(rwin *w, int t) {
  if (w->pt[t] == PT_LOST) return -3;
  if (w->pt[t] == PT_LAZY) {
    passive_lock_mark(w, t, next_seq(), 1);
    w->pt[t] = PT_OPEN;
    w->since[t] = R->others;
  }
  return passive_pair(w, t);
}

/* The communicator an access of this rank to member `target` names now: its start epoch's
   pair, or the window's (-1: none, plain fences); -2 when the target is not in the group
   of the open start epoch. */
static int access_comm(rwin *w, int target) {
  if (w->pt && w->pt[target] != PT_NONE) return passive_comm(w, target);
  if (!w->started) return w->whole ? -1 : w->cid;
  for (int j = 0; j < w->nstart; j++)
    if (w->start[j] == w->world[target]) return pair_comm(R->rank, w->world[target]);
  return -2;
}

/* ---- accesses ---- */

enum { A_PUT, A_GET, A_ACC };

static void passive_reopen(rwin *w, int t, int call);
static int atomic_enter(rwin *w, int t, int call);
static void atomic_leave(rwin *w, int t, int call);

static uint64_t ranges_bytes(const ranges *r) {
  uint64_t n = 0;
  for (int64_t i = 0; i < r->n; i++) n += r->l[i];
  return n;
}

/* An accumulate's ranges as whole elements of type. A pair type with padding inside or
   after it (MPI_SHORT_INT: a short, then an int at 4; MPI_LONG_DOUBLE_INT: 20 bytes of 32)
   lays out as ranges that stop at the padding, and adjacent elements' parts merge (one
   element's int with the next one's short). Ranges of whole elements stay as they are.
   Otherwise the walk goes up the addresses from the first byte: an element starts where
   the walk is and takes the bytes up to its size, splitting a range that runs on into the
   next element. Each element becomes one range of its size, padding included (the graph
   combines whole elements; MPI leaves the target's padding alone, and padding holds no
   value), adjacent ones merged. 0, or -1 when the ranges do not fall into elements so (not
   ascending, an element would start inside the previous one, or the elements hold other
   than their MPI size each). In place: an element is written at an index no later than the range
   it starts in, whose end the walk keeps (cur) before it may be overwritten. */
static int whole_elements(ranges *r, int type) {
  uint64_t size = (uint64_t)ir_type_size(type);
  int64_t i = 0, n = 0;
  while (i < r->n && r->l[i] % size == 0) i++;
  if (i == r->n) return 0;
  int value = 0;   /* the bytes MPI moves of one element */
  MPI_Datatype m = mpig_mpi_type(type);
  if (m == MPI_DATATYPE_NULL || PMPI_Type_size(m, &value) != MPI_SUCCESS || value <= 0) return -1;
  uint64_t pos = r->a[0], cur = r->a[0] + r->l[0], end = 0, bytes = ranges_bytes(r);
  for (i = 0; i < r->n;) {
    uint64_t a = pos, stop = a + size;
    if (n && a < end) return -1;
    while (cur <= stop) {   /* range i ends inside this element: the next one, if it starts inside too */
      if (++i == r->n || r->a[i] >= stop) break;
      if (r->a[i] < cur) return -1;
      cur = r->a[i] + r->l[i];
    }
    if (n && r->a[n - 1] + r->l[n - 1] == a) r->l[n - 1] += size;
    else r->a[n] = a, r->l[n] = size, n++;
    end = stop;
    if (i < r->n && cur > stop) pos = stop;   /* range i runs on into the next element */
    else if (i < r->n) pos = r->a[i], cur = r->a[i] + r->l[i];
  }
  r->n = n;
  return ranges_bytes(r) / size * (uint64_t)value != bytes ? -1 : 0;   /* not every element whole */
}

static int accumulates(int call) {
  return call == C_Accumulate || call == C_Raccumulate || call == C_Get_accumulate || call == C_Rget_accumulate ||
         call == C_Fetch_and_op || call == C_Compare_and_swap;
}

/* The orders (ORDER_*) an access of sig to ranges r of member t needs against this rank's
   unordered accesses to t: of each span it overlaps whose sig does not commute with its own,
   a read after a write, a write after a read or a write after a write. 0: it commutes with
   them all. O(log n + k) per range, k spans overlapped. */
/* The first of u's spans that reaches past lo (its start in *k), -1 none: the span covering
   lo, else the first starting above it. Spans from there on start in order. */
static int64_t first_span(const rupd *u, uint64_t lo, uint64_t *k) {
  *k = lo;
  int64_t i = base_imap_find(&u->at, k, BASE_IMAP_AT_OR_BELOW);
  if (i < 0 || u->span[i].hi <= lo) *k = lo, i = base_imap_find(&u->at, k, BASE_IMAP_AT_OR_ABOVE);
  return i;
}

static int needs_order(const rupd *u, const ranges *r, uint32_t sig) {
  int need = 0;
  for (int64_t j = 0; j < r->n; j++) {
    uint64_t hi = r->a[j] + r->l[j], k;
    for (int64_t i = first_span(u, r->a[j], &k); i >= 0 && k < hi; i = base_imap_find(&u->at, &k, BASE_IMAP_ABOVE)) {
      uint32_t was = u->span[i].sig;
      if (was == sig && sig != UPD_REPLACE) continue;
      need |= was == UPD_READ ? ORDER_WAR : sig == UPD_READ ? ORDER_RAW : ORDER_WAW;
    }
  }
  return need;
}

/* Before an accumulate-family access of sig to ranges r of member t: when it does not commute
   with this rank's unordered accesses to t in the epoch, MPI applies them in program order if
   the window's accumulate_ordering says so (its default): a wait line names them, so every
   later op follows them; else MPI applies them in either order, and the access is left out,
   counted (-1). A fetch after an update is left out too: MPI gives it the updated bytes, the
   graph's get the epoch's start (docs/semantics.md). */
static int order_after(rwin *w, int t, const ranges *r, uint32_t sig, int call, int passive) {
  rupd *u = w->upd ? w->upd[t] : NULL;
  int need = u && u->nseq ? needs_order(u, r, sig) : 0;
  if (!need) return 0;
  if (need & ORDER_RAW) {   /* the graph's get reads the epoch's start, whatever MPI's order */
    unsupported_because(call, "a fetch of bytes this origin updated earlier in the epoch: a get reads the epoch's start");
    return -1;
  }
  if (need & ~w->order) {
    unsupported_because(call, "accumulates to the same bytes in one epoch that accumulate_ordering leaves unordered");
    return -1;
  }
  R->quiet = passive;
  uint64_t seq = next_seq();
  R->quiet = 0;
  out("%d %llu wait", R->phase, (unsigned long long)seq);
  for (int64_t k = 0; k < u->nseq; k++) out(" %llu", (unsigned long long)u->seq[k]);
  out("\n");
  upd_forget(w, t, 0);   /* the wait orders the accumulates, not the plain accesses */
  return 0;
}

/* Span [lo, hi) of sig into u, merged with the spans it overlaps (all of sig: order_after
   cleared u otherwise). */
static int add_span(rupd *u, uint64_t lo, uint64_t hi, uint32_t sig) {
  uint64_t k;
  for (int64_t i = first_span(u, lo, &k); i >= 0 && k < hi; i = base_imap_find(&u->at, &k, BASE_IMAP_ABOVE)) {
    if (u->span[i].lo < lo) lo = u->span[i].lo;
    if (u->span[i].hi > hi) hi = u->span[i].hi;
    if (base_imap_del(&u->at, k)) return -1;
  }
  if (base_grow((void **)&u->span, u->nspan, &u->spancap, 1, sizeof *u->span, "recorder")) return -1;
  u->span[u->nspan] = (struct uspan){lo, hi, sig};
  return base_imap_put(&u->at, lo, u->nspan++) ? -1 : 0;
}

/* Does an access of sig to ranges r overlap a span of u whose sig does not commute with it
   (reads commute with reads; replace_only: only spans of replacements count)? */
static int overlaps(const rupd *u, const ranges *r, uint32_t sig, int replace_only) {
  for (int64_t j = 0; u && u->nspan && j < r->n; j++) {
    uint64_t hi = r->a[j] + r->l[j], k;
    for (int64_t i = first_span(u, r->a[j], &k); i >= 0 && k < hi; i = base_imap_find(&u->at, &k, BASE_IMAP_ABOVE)) {
      uint32_t was = u->span[i].sig;
      if ((was == UPD_READ && sig == UPD_READ) || (replace_only && was != UPD_REPLACE)) continue;
      return 1;
    }
  }
  return 0;
}

/* MPI orders no plain put or get of an origin after its other accesses to the same bytes in
   one epoch (accumulate_ordering is about accumulates): a put of bytes this origin read or
   wrote earlier in the epoch, a get of bytes it wrote, or an accumulate of bytes it put, has
   an outcome MPI leaves undefined. Such an access is left out, counted (-1); the graph would
   race there, and the merger would drop the epochs of the whole target. */
static int conflicts(const rwin *w, int t, const ranges *r, uint32_t sig, int call, int plain) {
  const rupd *p = w->plain ? w->plain[t] : NULL, *u = w->upd ? w->upd[t] : NULL;
  if (plain ? !overlaps(p, r, sig, 0) && !overlaps(u, r, sig, 0) : !overlaps(p, r, sig, 1)) return 0;
  unsupported_because(call, plain ? "a put or get of bytes this origin accessed earlier in the epoch: MPI does not order them"
                                  : "an accumulate of bytes this origin put earlier in the epoch: MPI does not order them");
  return -1;
}

/* A plain put or get to ranges r of member t, for conflicts. Memory failing: counted. */
static void note_plain(rwin *w, int t, const ranges *r, uint32_t sig) {
  rupd *u = NULL;
  if (w->plain || (w->plain = calloc((size_t)w->n, sizeof *w->plain)))
    u = w->plain[t] ? w->plain[t] : (w->plain[t] = calloc(1, sizeof *u));
  int64_t j = 0;
  for (; u && j < r->n; j++)
    if (add_span(u, r->a[j], r->a[j] + r->l[j], sig)) break;
  if (j < r->n) nomem(OOM_CALLS);
}

/* The ranges r[i ..] of one length at one ascending stride, at least the length: the
   blocks of one access line (a get's target ranges may overlap; they then stay lines of
   their own). */
static int64_t target_run(const ranges *r, int64_t i) {
  int64_t j = i + 1;
  if (j < r->n && r->l[j] == r->l[i] && r->a[j] > r->a[i] && r->a[j] - r->a[i] >= r->l[i]) {
    uint64_t d = r->a[j] - r->a[i];
    while (j + 1 < r->n && r->l[j + 1] == r->l[i] && r->a[j + 1] - r->a[j] == d) j++;
    j++;
  }
  return j - i;
}

/* The access just written at positions seq.. (one per run of r: target_run) is one of this
   rank's unordered accesses to member t. Memory failing: counted, and the access may race. */
static void note_access(rwin *w, int t, const ranges *r, uint32_t sig, uint64_t seq) {
  rupd *u = NULL;
  if (w->upd || (w->upd = calloc((size_t)w->n, sizeof *w->upd))) u = w->upd[t] ? w->upd[t] : (w->upd[t] = calloc(1, sizeof *u));
  int64_t j = 0;
  if (u && !base_grow((void **)&u->seq, u->nseq, &u->seqcap, r->n, sizeof *u->seq, "recorder"))
    for (int64_t k = 0, m; j < r->n; j += m, k++) {
      m = target_run(r, j);
      u->seq[u->nseq++] = seq + (uint64_t)k;
      for (int64_t i = j; i < j + m; i++)
        if (add_span(u, r->a[i], r->a[i] + r->l[i], sig)) goto fail;
    }
fail:
  if (j < r->n) nomem(OOM_CALLS);
}

/* The lines of an access to target ranges t: one per run (target_run); more than the
   positions after a call hold (REC_MAX_LINES) is -1, the reason counted for call. */
enum { REC_MAX_LINES = REC_SEQ_STEP / 4 - 1 };
static int64_t access_lines(const ranges *t, int call) {
  int64_t n = 0;
  for (int64_t i = 0; i < t->n && n <= REC_MAX_LINES; n++) i += target_run(t, i);
  if (n <= REC_MAX_LINES) return n;
  char why[128];
  snprintf(why, sizeof why, "a target datatype of more than %d runs (ranges of one length at one stride are one)",
           REC_MAX_LINES);
  unsupported_because(call, why);
  return -1;
}

/* One access: the origin's `count` elements of ot at buf, the target's tcount of tt at
   displacement disp of member `target`. For A_ACC, type and rop name the reduction. Writes
   one line per run of target ranges (blocks of one length at one stride); returns the call's position (0: nothing recorded). `wait`:
   every later op of the rank depends on the access (a fetch before its update). */
static uint64_t access_of(rwin *w, int kind, const void *buf, int count, MPI_Datatype ot, int target, MPI_Aint disp,
                          int tcount, MPI_Datatype tt, int type, int rop, int call, int wait) {
  if (target == MPI_PROC_NULL) return 0;
  if (target < 0 || target >= w->n) return unsupported_because(call, "a target outside the window's group"), 0;
  int comm = access_comm(w, target), passive = comm >= REC_PASSIVE_BASE || comm == -3;
  if (comm == -2) return unsupported_because(call, "a target outside the group of the start epoch"), 0;
  if (comm == -3) return unsupported_because(call, "an access in a passive-target epoch that was not recorded"), 0;
  uint64_t bytes = type_bytes(count, ot), tbase = w->base[target] + (uint64_t)((int64_t)disp * w->unit[target]);
  ranges *o = &R->rs, *t = &R->trs;
  if (!bytes) return 0;
  if (layout(buf, count, ot, NULL, bytes, o) || layout_ranges((const void *)(uintptr_t)tbase, tcount, tt, NULL, bytes, t)) {
    not_recorded(call);
    return 0;
  }
  if (kind == A_ACC && (whole_elements(o, type) || whole_elements(t, type) || ranges_bytes(o) != ranges_bytes(t))) {
    unsupported_because(call, "an accumulate whose datatype splits an element");
    return 0;
  }
  if (kind == A_ACC && ranges_copies(o)) {   /* the copies that pack whole elements, counted again */
    not_recorded(call);
    return 0;
  }
  if (access_lines(t, call) < 0) return 0;
  if (kind == A_ACC) bytes = ranges_bytes(o);   /* with padding, if its elements have some */
  if (kind == A_GET && w->nr + o->n > w->rcap) {   /* room for the get's ranges until the fence */
    int64_t c = 2 * (w->nr + o->n);
    uint64_t *a = realloc(w->ga, (size_t)c * 8), *l = a ? realloc(w->gl, (size_t)c * 8) : NULL;
    if (a) w->ga = a;
    if (l) w->gl = l, w->rcap = c;
    if (!l) return nomem(OOM_CALLS), 0;
  }
  if (kind == A_GET && base_grow((void **)&w->g, w->ng, &w->gcap, 1, sizeof *w->g, "recorder"))
    return nomem(OOM_CALLS), 0;
  uint32_t sig = kind == A_GET ? UPD_READ : kind == A_PUT ? UPD_REPLACE : UPD_ACC + (uint32_t)(type << 8 | rop);
  int ordered = accumulates(call) && recording(), plain = !accumulates(call) && recording();
  if ((ordered || plain) && conflicts(w, target, t, sig, call, plain)) return 0;
  if (ordered && order_after(w, target, t, sig, call, passive)) return 0;
  if (passive && w->shared[target] && w->since[target] != R->others && R->tickets != MPI_WIN_NULL)
    passive_reopen(w, target, call);
  R->quiet = passive;
  uint64_t seq = next_seq(), src = o->n ? o->a[0] : (uint64_t)(uintptr_t)buf;
  R->quiet = 0;
  if (passive) w->since[target] = R->others;
  if (kind != A_GET) check_sent(o, seq, type_name(ot));
  if (o->n > 1) {
    src = pack_area(bytes);
    if (kind != A_GET) pack_copies(o, src, seq - REC_SEQ_STEP / 4, 1);
  }
  if (passive) {   /* its target makes no call: it is not told (docs/recording.md) */
  } else if (base_grow((void **)&w->acc, w->nacc, &w->acccap, t->n, sizeof *w->acc, "recorder")) {
    nomem(OOM_CALLS);   /* the target will not learn of it: its shadow sees the bytes as computed */
  } else {
    int et = kind == A_ACC ? type : t->n == 1 ? mpig_type_of(tt) : -1;
    for (int64_t j = 0; j < t->n; j++)
      w->acc[w->nacc++] = (racc){(uint64_t)target, (uint64_t)kind, t->a[j], t->l[j], (uint64_t)(int64_t)et};
  }
  uint64_t off = 0;
  R->access_lines = 0;
  for (int64_t j = 0, k = 0, m; j < t->n; j += m, k++, R->access_lines++) {   /* a line per run of the target's ranges */
    m = target_run(t, j);
    ir_line l = line_of(kind == A_PUT ? IR_PUT : kind == A_GET ? IR_GET : IR_ACC);
    l.bytes = t->l[j] * (uint64_t)m;
    l.peer = kind == A_ACC ? type << 8 | rop : w->world[target];
    if (kind == A_ACC) l.tag = w->world[target];
    l.addr2 = t->a[j];
    l.addr = src + off;
    l.blocks = (uint64_t)m;
    l.to_stride = m > 1 ? t->a[j + 1] - t->a[j] : l.bytes;
    l.wait = wait;   /* every line: the update that follows reads each one's old bytes */
    l.comm = comm;
    out_op(R->phase, seq + (uint64_t)k, &l);
    off += l.bytes;
  }
  if (ordered && !wait) note_access(w, target, t, sig, seq);   /* a wait orders it already */
  if (plain) note_plain(w, target, t, sig);
  if (kind == A_GET) {
    w->g[w->ng++] = (rget){o->n > 1 ? src : 0, seq, w->nr, o->n, type_name(ot), target, 0, (int)R->access_lines, R->phase};
    if (w->gpend || (w->gpend = calloc((size_t)w->n, sizeof *w->gpend))) w->gpend[target]++;
    memcpy(w->ga + w->nr, o->a, (size_t)o->n * 8);
    memcpy(w->gl + w->nr, o->l, (size_t)o->n * 8);
    w->nr += o->n;
  }
  return seq;
}

/* The element type of the reduction an accumulate does (predefined type, or the one its
   derived type is made of); -1 with the reason counted when cdag cannot do it. */
static int acc_reduction(MPI_Datatype t, MPI_Op op, int call, int *type, int *rop) {
  char why[96];
  MPI_Datatype b = t;
  int ni, na, nt, comb;
  for (int depth = 0; depth < 32; depth++) {   /* to the predefined type it is made of */
    PMPI_Type_get_envelope(b, &ni, &na, &nt, &comb);
    if (comb == MPI_COMBINER_NAMED || nt < 1) break;
    int *ints = malloc((size_t)(ni ? ni : 1) * sizeof *ints);
    MPI_Aint *aints = malloc((size_t)(na ? na : 1) * sizeof *aints);
    MPI_Datatype *types = malloc((size_t)nt * sizeof *types);
    if (!ints || !aints || !types) {
      free(ints); free(aints); free(types);
      return nomem(OOM_CALLS), -1;
    }
    PMPI_Type_get_contents(b, ni, na, nt, ints, aints, types);
    for (int k = 1; k < nt; k++) {   /* handles MPI made for us, freed (predefined ones are not) */
      int i2, a2, t2, c2;
      PMPI_Type_get_envelope(types[k], &i2, &a2, &t2, &c2);
      if (c2 != MPI_COMBINER_NAMED) PMPI_Type_free(&types[k]);
    }
    if (b != t) PMPI_Type_free(&b);
    b = types[0];
    free(ints); free(aints); free(types);
  }
  PMPI_Type_get_envelope(b, &ni, &na, &nt, &comb);
  int r = mpig_reduction(b, op, type, rop, why, sizeof why);
  if (b != t && comb != MPI_COMBINER_NAMED) PMPI_Type_free(&b);
  if (r != MPIG_REDUCTION_OK) {
    unsupported_because(call, why);
    return -1;
  }
  return 0;
}

/* An update of the target (accumulate, or the update of a get-accumulate): a put for
   MPI_REPLACE, nothing for MPI_NO_OP, else an accumulate. */
static uint64_t update(rwin *w, const void *buf, int count, MPI_Datatype ot, int target, MPI_Aint disp, int tcount,
                       MPI_Datatype tt, MPI_Op op, int call) {
  int type = 0, rop = 0;
  if (op == MPI_NO_OP) return 0;
  if (op == MPI_REPLACE) return access_of(w, A_PUT, buf, count, ot, target, disp, tcount, tt, 0, 0, call, 0);
  if (acc_reduction(ot, op, call, &type, &rop)) return 0;
  return access_of(w, A_ACC, buf, count, ot, target, disp, tcount, tt, type, rop, call, 0);
}

/* ---- fences ---- */

static int acc_cmp(const void *pa, const void *pb) {
  const racc *a = pa, *b = pb;
  return (a->member > b->member) - (a->member < b->member);
}

/* What the members did to this rank's memory in the epoch that closed at seq: each sends
   member j the accesses it made to j (over the window's duplicate communicator; nothing more
   when no member made any). The bytes a put or accumulate wrote are the program's now (the
   shadow takes them as received); the bytes a get read were read at the opening fence, so
   the shadow checks them there: a computation that wrote them is placed before that fence.
   recorded: this fence was recorded. Every member calls it alike (the window is known on
   all or none); memory that fails on one skips the exchange on all, counted. */
static void exchange(rwin *w, uint64_t seq, int recorded) {
  int n = w->n, *sc = w->cnt, *sd = sc + n, *rc = sd + n, *rd = rc + n, flag[2] = {w->nacc > 0, 0}, got[2];
  PMPI_Allreduce(flag, got, 1, MPI_INT, MPI_MAX, win_comm(w));
  if (!got[0]) return;
  if (w->nacc > 1) qsort(w->acc, (size_t)w->nacc, sizeof *w->acc, acc_cmp);
  memset(sc, 0, (size_t)n * sizeof *sc);
  for (int64_t i = 0; i < w->nacc; i++) sc[w->acc[i].member] += 5;   /* words of a racc */
  PMPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, w->comm);
  int64_t total = 0, sent = 0;
  for (int j = 0; j < n; j++) {
    sd[j] = (int)sent;
    sent += sc[j];
    rd[j] = (int)total;
    total += rc[j];
  }
  uint64_t *in = total <= INT32_MAX && sent <= INT32_MAX ? malloc((size_t)(total ? total : 1) * 8) : NULL;
  flag[1] = !in;
  PMPI_Allreduce(&flag[1], &got[1], 1, MPI_INT, MPI_MAX, w->comm);
  if (got[1]) {
    if (!in) nomem(OOM_CALLS);
    free(in);
    return;
  }
  PMPI_Alltoallv(w->acc, sc, sd, MPI_UINT64_T, in, rc, rd, MPI_UINT64_T, w->comm);
  for (int pass = 0; recorded && pass < 2; pass++)   /* gets (at the opening fence), then writes */
    for (int64_t k = 0; k < total; k += 5) {
      const racc *a = (const racc *)(in + k);
      int type = (int)(int64_t)a->type;
      const char *tn = type >= 0 ? ir_type_name(type) : NULL;
      if (pass == 0 && a->kind == A_GET && w->open && w->open_phase == R->phase)
        check_sent(&(ranges){1, 1, (uint64_t *)&a->addr, (uint64_t *)&a->len, 1}, w->open, tn);
      else if (pass == 1 && a->kind != A_GET)
        noted_recv(&a->addr, &a->len, 1, seq, 0, tn);   /* others' writes: when read, unknown */
    }
  free(in);
}

/* An epoch closed at position seq (0: not recorded) on member `member` (-1: every
   member): each compare-and-swap to it that swapped writes its put (at the position its
   call reserved). */
static void swaps_done(rwin *w, uint64_t seq, int member) {
  int64_t kept = 0;
  for (int64_t i = 0; i < w->ncas; i++) {
    const rcas *c = &w->cas[i];
    if (member >= 0 && c->member != member) {
      w->cas[kept++] = *c;
      continue;
    }
    if (!seq || memcmp((const void *)(uintptr_t)c->result, c->compare, c->bytes)) continue;   /* no swap */
    ir_line l = line_of(IR_PUT);
    l.bytes = c->bytes;
    l.peer = w->world[c->member];
    l.addr2 = c->target;
    l.addr = c->origin;
    l.comm = c->comm;
    l.wait = 1;   /* MPI applies the origin's later accumulates to these bytes after it */
    out_op(R->phase, c->seq, &l);
    if (c->comm >= REC_PASSIVE_BASE) continue;   /* a passive target is not told */
    if (!base_grow((void **)&w->acc, w->nacc, &w->acccap, 1, sizeof *w->acc, "recorder"))
      w->acc[w->nacc++] = (racc){(uint64_t)c->member, A_PUT, c->target, c->bytes, (uint64_t)(int64_t)-1};
  }
  w->ncas = kept;
}

static uint64_t mix_word(uint64_t h, uint64_t v) {
  h = (h ^ v) * 0x100000001b3ull;
  return h ^ h >> 29;
}

/* A hash of the bytes of ranges r as one stream, 8 bytes at a time: the same bytes give the
   same hash however the ranges cut them (a contiguous buffer, a vector's blocks). */
static uint64_t content_hash(const ranges *r) {
  uint64_t h = 0x9e3779b97f4a7c15ull, v;
  unsigned char carry[8];
  size_t held = 0;
  for (int64_t i = 0; i < r->n; i++) {
    const unsigned char *p = (const unsigned char *)(uintptr_t)r->a[i];
    uint64_t n = r->l[i];
    for (; held && n; n--) {   /* the word a range boundary cut */
      carry[held & 7] = *p++;   /* held < 8: the mask tells the compiler */
      if (++held == 8) memcpy(&v, carry, 8), h = mix_word(h, v), held = 0;
    }
    for (; n >= 8; n -= 8, p += 8) memcpy(&v, p, 8), h = mix_word(h, v);
    for (; n; n--) carry[held++] = *p++;
  }
  for (size_t k = 0; k < held; k++) h = mix_word(h, carry[k] | 0x100u);
  return h;
}

/* A get completed at seq (0: not recorded): its bytes are the program's now (unpacked from
   its area first). A passive-target epoch's get of one line says what it fetched (`got`):
   its target made no call, so whether the target computed those bytes between two such reads is known
   to the merger only from what the reads fetched. */
static void get_done(rwin *w, rget *g, uint64_t seq) {
  ranges r = {g->n, g->n, w->ga + g->first, w->gl + g->first, g->n};
  if (seq && g->seq && g->lines == 1 && w->pt && w->pt[g->member] == PT_OPEN)
    out("%d got %llu %llu\n", g->phase, (unsigned long long)g->seq, (unsigned long long)content_hash(&r));
  if (seq && g->n > 1) {
    uint64_t first = rec_shadow_reserve(R->sh, seq, (uint32_t)g->n);
    if (first) pack_copies(&r, g->area, first, 0);
  }
  if (seq) noted_recv(r.a, r.l, g->n, seq, g->seq, g->type);
  g->done = 1;
  if (w->gpend && --w->gpend[g->member] == 0) plain_forget_reads(w, g->member);   /* a put may follow them now */
}

/* The gets of the epoch completed at seq on member `member` (-1: every member), those a
   request did not complete before. */
static void gets_done(rwin *w, uint64_t seq, int member) {
  int left = 0;
  for (int64_t i = 0; i < w->ng; i++) {
    rget *g = &w->g[i];
    if (!g->done && (member < 0 || g->member == member)) get_done(w, g, seq);
    left |= !g->done;
  }
  if (!left) w->ng = w->nr = 0;
}

/* The fence epoch closed at position seq (0: the fence was not recorded): swaps, then the
   members learn what was done to them, then the gets. */
static void epoch_closed(rwin *w, uint64_t seq) {
  swaps_done(w, seq, -1);
  exchange(w, seq, seq != 0);
  gets_done(w, seq, -1);
  upd_clear(w, -1);
  w->nacc = 0;
  w->open = seq;
  w->open_phase = seq ? R->phase : -1;
}

/* The MPI functions below replace MPI's; everything above stays inside the library. */
#pragma GCC visibility push(default)

/* ---- windows ---- */

int MPI_Win_create(void *base, MPI_Aint size, int unit, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
  COUNT(C_Win_create);
  int rc = PMPI_Win_create(base, size, unit, info, comm, win);
  if (rc == MPI_SUCCESS) win_created(*win, comm, base, unit);
  return rc;
}

int MPI_Win_allocate(MPI_Aint size, int unit, MPI_Info info, MPI_Comm comm, void *base, MPI_Win *win) {
  COUNT(C_Win_allocate);
  int rc = PMPI_Win_allocate(size, unit, info, comm, base, win);
  if (rc == MPI_SUCCESS) win_created(*win, comm, *(void **)base, unit);
  return rc;
}

int MPI_Win_allocate_shared(MPI_Aint size, int unit, MPI_Info info, MPI_Comm comm, void *base, MPI_Win *win) {
  COUNT(C_Win_allocate_shared);
  int rc = PMPI_Win_allocate_shared(size, unit, info, comm, base, win);
  if (rc == MPI_SUCCESS) win_created(*win, comm, *(void **)base, unit);
  return rc;
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) {
  COUNT(C_Win_create_dynamic);
  int rc = PMPI_Win_create_dynamic(info, comm, win);
  if (rc == MPI_SUCCESS) win_created(*win, comm, NULL, 1);   /* displacements are addresses */
  return rc;
}

/* Attached memory needs nothing: a dynamic window's displacement is the target's address. */
int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size) {
  COUNT(C_Win_attach);
  return PMPI_Win_attach(win, base, size);
}

int MPI_Win_detach(MPI_Win win, const void *base) {
  COUNT(C_Win_detach);
  return PMPI_Win_detach(win, base);
}

/* MPI_Win_free synchronises the members like a barrier, unless the window has no locks
   (MPI-3.1 11.2.5): a `winfree` line, where the merger may place a passive target's fences. */
static void win_free_mark(MPI_Win win) {
  rwin *w = win_of(win);
  if (!w || !recording() || (!w->whole && w->cid < 0)) return;
  MPI_Info info;
  int flag = 0;
  char v[16] = "";
  if (PMPI_Win_get_info(win, &info) == MPI_SUCCESS) {
    PMPI_Info_get(info, "no_locks", (int)sizeof v - 1, v, &flag);
    PMPI_Info_free(&info);
  }
  if (flag && !strcmp(v, "true")) return;
  out("%d %llu winfree comm %d\n", R->phase, (unsigned long long)next_seq(), w->whole ? 0 : w->cid);
}

int MPI_Win_free(MPI_Win *win) {
  COUNT(C_Win_free);
  win_free_mark(*win);
  if (R) {
    Word_t *v;
    int rc;
    JLG(v, R->wins, (Word_t)*win);
    if (v) {
      rwin *w = (rwin *)*v;
      JLD(rc, R->wins, (Word_t)*win);
      if (rc == JERR) *v = 0, nomem(OOM_COMMS);   /* the key stays, naming no window */
      if (w && !w->whole) comm_drop(w->comm);
      if (w) win_comm(w), PMPI_Comm_free(&w->comm);
      win_free(w);
    }
  }
  return PMPI_Win_free(win);
}

/* ---- fence epochs ---- */

int MPI_Win_fence(int assert_, MPI_Win win) {
  COUNT(C_Win_fence);
  rwin *w = usable_win(win, C_Win_fence, 0), *known = win_of(win);
  uint64_t seq = 0;
  if (w) {
    seq = next_seq();
    ir_line l = line_of(IR_FENCE);
    l.comm = w->whole ? -1 : w->cid;
    out_op(R->phase, seq, &l);
  }
  int rc = PMPI_Win_fence(assert_, win);
  if (known && rc == MPI_SUCCESS) epoch_closed(known, seq);   /* on every member alike */
  return rc;
}

int MPI_Put(const void *obuf, int ocount, MPI_Datatype ot, int target, MPI_Aint disp, int tcount, MPI_Datatype tt,
            MPI_Win win) {
  COUNT(C_Put);
  rwin *w = usable_win(win, C_Put, 1);
  if (w) access_of(w, A_PUT, obuf, ocount, ot, target, disp, tcount, tt, 0, 0, C_Put, 0);
  return PMPI_Put(obuf, ocount, ot, target, disp, tcount, tt, win);
}

int MPI_Get(void *obuf, int ocount, MPI_Datatype ot, int target, MPI_Aint disp, int tcount, MPI_Datatype tt,
            MPI_Win win) {
  COUNT(C_Get);
  rwin *w = usable_win(win, C_Get, 1);
  if (w) access_of(w, A_GET, obuf, ocount, ot, target, disp, tcount, tt, 0, 0, C_Get, 0);
  return PMPI_Get(obuf, ocount, ot, target, disp, tcount, tt, win);
}

int MPI_Accumulate(const void *obuf, int ocount, MPI_Datatype ot, int target, MPI_Aint disp, int tcount,
                   MPI_Datatype tt, MPI_Op op, MPI_Win win) {
  COUNT(C_Accumulate);
  rwin *w = usable_win(win, C_Accumulate, 1);
  int alone = w && op == MPI_REPLACE && atomic_enter(w, target, C_Accumulate);
  if (w) update(w, obuf, ocount, ot, target, disp, tcount, tt, op, C_Accumulate);
  int rc = PMPI_Accumulate(obuf, ocount, ot, target, disp, tcount, tt, op, win);
  if (alone) atomic_leave(w, target, C_Accumulate);
  return rc;
}

int MPI_Get_accumulate(const void *obuf, int ocount, MPI_Datatype ot, void *rbuf, int rcount, MPI_Datatype rt,
                       int target, MPI_Aint disp, int tcount, MPI_Datatype tt, MPI_Op op, MPI_Win win) {
  COUNT(C_Get_accumulate);
  rwin *w = usable_win(win, C_Get_accumulate, 1);
  int alone = w && atomic_enter(w, target, C_Get_accumulate);
  if (w && access_of(w, A_GET, rbuf, rcount, rt, target, disp, tcount, tt, 0, 0, C_Get_accumulate, op != MPI_NO_OP))
    update(w, obuf, ocount, ot, target, disp, tcount, tt, op, C_Get_accumulate);
  int rc = PMPI_Get_accumulate(obuf, ocount, ot, rbuf, rcount, rt, target, disp, tcount, tt, op, win);
  if (alone) atomic_leave(w, target, C_Get_accumulate);
  return rc;
}

int MPI_Fetch_and_op(const void *obuf, void *rbuf, MPI_Datatype t, int target, MPI_Aint disp, MPI_Op op,
                     MPI_Win win) {
  COUNT(C_Fetch_and_op);
  rwin *w = usable_win(win, C_Fetch_and_op, 1);
  int alone = w && atomic_enter(w, target, C_Fetch_and_op);
  if (w && access_of(w, A_GET, rbuf, 1, t, target, disp, 1, t, 0, 0, C_Fetch_and_op, op != MPI_NO_OP))
    update(w, obuf, 1, t, target, disp, 1, t, op, C_Fetch_and_op);
  int rc = PMPI_Fetch_and_op(obuf, rbuf, t, target, disp, op, win);
  if (alone) atomic_leave(w, target, C_Fetch_and_op);
  return rc;
}

int MPI_Compare_and_swap(const void *obuf, const void *cbuf, void *rbuf, MPI_Datatype t, int target, MPI_Aint disp,
                         MPI_Win win) {
  COUNT(C_Compare_and_swap);
  rwin *w = usable_win(win, C_Compare_and_swap, 1);
  uint64_t bytes = type_bytes(1, t);
  int alone = w && atomic_enter(w, target, C_Compare_and_swap);
  if (w && target != MPI_PROC_NULL && target >= 0 && target < w->n) {
    rcas c = {0};
    if (bytes > sizeof c.compare || base_grow((void **)&w->cas, w->ncas, &w->cascap, 1, sizeof *w->cas, "recorder")) {
      if (bytes > sizeof c.compare) unsupported_because(C_Compare_and_swap, "a compare-and-swap of more than 32 bytes");
      else nomem(OOM_CALLS);
    } else {
      uint64_t seq = access_of(w, A_GET, rbuf, 1, t, target, disp, 1, t, 0, 0, C_Compare_and_swap, 1);
      if (seq) {   /* the swap's put, if it happens, takes the next position but one */
        R->quiet = 1;
        next_seq();
        R->quiet = 0;
        check_sent(&(ranges){1, 1, (uint64_t[]){(uint64_t)(uintptr_t)obuf}, (uint64_t[]){bytes}, 1}, R->seq, type_name(t));
        c = (rcas){R->seq, (uint64_t)(uintptr_t)obuf, (uint64_t)(uintptr_t)rbuf,
                   w->base[target] + (uint64_t)((int64_t)disp * w->unit[target]), bytes, target,
                   access_comm(w, target), {0}};
        memcpy(c.compare, cbuf, bytes);
        w->cas[w->ncas++] = c;
      }
    }
  }
  int rc = PMPI_Compare_and_swap(obuf, cbuf, rbuf, t, target, disp, win);
  if (alone) atomic_leave(w, target, C_Compare_and_swap);
  return rc;
}

/* ---- post/start/complete/wait ---- */

int MPI_Win_post(MPI_Group g, int assert_, MPI_Win win) {
  COUNT(C_Win_post);
  rwin *w = pscw_win(win, C_Win_post);
  int n = 0, *p = w ? group_world(g, &n) : NULL;
  if (p) {
    pair_fences(p, n, 0);
    free(w->post);
    w->post = p;
    w->npost = n;
  }
  return PMPI_Win_post(g, assert_, win);
}

int MPI_Win_start(MPI_Group g, int assert_, MPI_Win win) {
  COUNT(C_Win_start);
  rwin *w = pscw_win(win, C_Win_start), *known = win_of(win);
  int n = 0, *p = w ? group_world(g, &n) : NULL;
  if (known) {   /* the epoch is open, recorded (start) or not */
    known->started = 1;
    free(known->start);
    known->start = p;
    known->nstart = n;
  }
  if (p) pair_fences(p, n, 1);
  return PMPI_Win_start(g, assert_, win);
}

int MPI_Win_complete(MPI_Win win) {
  COUNT(C_Win_complete);
  rwin *w = win_of(win);
  int rec = w && w->start && recording();
  if (rec) pair_fences(w->start, w->nstart, 1);
  int rc = PMPI_Win_complete(win);
  if (w && rc == MPI_SUCCESS) {   /* the epoch's gets and swaps are done; its targets learn nothing */
    uint64_t seq = rec ? next_seq() : 0;
    swaps_done(w, seq, -1);
    gets_done(w, seq, -1);
    upd_clear(w, -1);
    w->ng = w->nr = w->ncas = w->nacc = 0;
    w->started = 0;
    free(w->start);
    w->start = NULL;
  }
  return rc;
}

/* The exposure epoch ends: fences with each origin of the post. */
static void exposure_done(MPI_Win win) {
  rwin *w = win_of(win);
  if (!w || !w->post) return;
  if (recording()) pair_fences(w->post, w->npost, 0);
  free(w->post);
  w->post = NULL;
}

int MPI_Win_wait(MPI_Win win) {
  COUNT(C_Win_wait);
  int rc = PMPI_Win_wait(win);
  if (rc == MPI_SUCCESS) exposure_done(win);
  return rc;
}

int MPI_Win_test(MPI_Win win, int *flag) {
  COUNT(C_Win_test);
  int rc = PMPI_Win_test(win, flag);
  if (rc == MPI_SUCCESS && *flag) exposure_done(win);
  return rc;
}

/* ---- passive target (the epochs: above, PT_*) ---- */

/* The passive-target state of win (every member PT_NONE at first), NULL when the window
   is unknown or memory fails (counted). */
static rwin *passive_win(MPI_Win win) {
  rwin *w = win_of(win);
  if (w && !w->pt) {
    w->pt = calloc((size_t)w->n, 1);
    w->shared = calloc((size_t)w->n, 1);
    w->since = calloc((size_t)w->n, sizeof *w->since);
    if (!w->pt || !w->shared || !w->since) {
      free(w->pt), free(w->shared), free(w->since);
      w->pt = w->shared = NULL, w->since = NULL;
      nomem(OOM_CALLS);
      return NULL;
    }
  }
  return w;
}

/* Whether an epoch opened on a member by `call` can be recorded (else counted). */
static int passive_ok(MPI_Win win, int call) {
  rwin *w = usable_win(win, call, 0);
  if (w && R->nprocs > REC_PAIR_MAX_PROCS) {
    unsupported_because(call, "passive-target epochs on more than " REC_PAIR_MAX_PROCS_TEXT " processes");
    return 0;
  }
  return w != NULL;
}

/* The epoch on member t closes (unlock) or is completed and goes on (flush) at the call
   made now: the marker, then the call, then its gets and swaps are the program's. The
   marker's position (0: none written). */
static uint64_t passive_close(rwin *w, int t, const char *what, int call) {
  uint64_t seq = 0;
  if (w->pt[t] == PT_LOST) {
    if (recording()) unsupported_because(call, "the end of a passive-target epoch that was not recorded");
  } else if (w->pt[t] == PT_OPEN && recording()) {
    seq = next_seq();
    passive_close_mark(w, t, what, seq);
    w->since[t] = R->others;
  }
  return seq;
}

/* The epoch on member t (-1: every member) closed or flushed at seq: its swaps and gets are
   the program's, and its accesses ordered before whatever follows (order_after). */
static void passive_done(rwin *w, int t, uint64_t seq) {
  swaps_done(w, seq, t);
  gets_done(w, seq, t);
  upd_clear(w, t);
}

/* Before an access of a shared epoch on member t when this rank recorded anything but
   passive-target accesses since the epoch's last marker or access (it may have heard of
   another origin's access to t): a flush, as if the program called MPI_Win_flush, so the
   access's piece of the epoch opens where t is now and after the tickets of the pieces that
   completed before it. Two origins' accesses to the same bytes are then ordered as the
   messages between them ordered them. Only with the tickets' window (the flush's ticket and
   t's position are what place it). */
static void passive_reopen(rwin *w, int t, int call) {
  uint64_t seq = passive_close(w, t, "flush", call);
  passive_done(w, t, seq);
}

/* An atomic that races by design under a shared lock (a fetch, a compare-and-swap, an
   accumulate that replaces) runs alone among such atomics on its target, in a piece of its
   own: this rank takes the target's lock word of the window's slot in the tickets' window
   (a compare-and-swap until it is free), flushes (a ticket), makes the access, flushes
   again (its ticket) and frees the word. Two origins' atomics on the same bytes then have tickets in the order
   they ran, which MPI decided and the merger keeps (two compare-and-swaps racing for a
   list's tail). Accumulates that combine (a sum) are not serialised: they commute with each
   other, and a histogram makes millions of them. Nor are puts and gets: MPI leaves two of
   them on the same bytes at once undefined. 1 when entered (atomic_leave must follow the
   call), 0 when not a recorded shared epoch's atomic. */
static int atomic_enter(rwin *w, int t, int call) {
  if (!w->pt || t < 0 || t >= w->n || w->pt[t] == PT_NONE || w->pt[t] == PT_LOST || !w->shared[t] ||
      R->tickets == MPI_WIN_NULL || !recording())
    return 0;
  uint64_t me = (uint64_t)R->rank + 1, free_ = 0, was = 0;
  int wt = w->world[t];
  passive_comm(w, t);   /* lock_all's lock marker first, where t is before the wait */
  do {
    if (PMPI_Compare_and_swap(&me, &free_, &was, MPI_UINT64_T, wt, w->lockword, R->tickets) != MPI_SUCCESS ||
        PMPI_Win_flush(wt, R->tickets) != MPI_SUCCESS)
      return 0;
  } while (was != free_);
  passive_reopen(w, t, call);
  return 1;
}

static void atomic_leave(rwin *w, int t, int call) {
  uint64_t free_ = 0;
  int wt = w->world[t];
  passive_reopen(w, t, call);
  PMPI_Accumulate(&free_, 1, MPI_UINT64_T, wt, w->lockword, 1, MPI_UINT64_T, MPI_REPLACE, R->tickets);
  PMPI_Win_flush(wt, R->tickets);
}

int MPI_Win_lock(int type, int rank, int assert_, MPI_Win win) {
  COUNT(C_Win_lock);
  rwin *w = passive_win(win);
  if (w && rank >= 0 && rank < w->n) {
    w->pt[rank] = passive_ok(win, C_Win_lock) ? PT_OPEN : PT_LOST;
    w->shared[rank] = type == MPI_LOCK_SHARED;
    if (w->pt[rank] == PT_OPEN) passive_lock_mark(w, rank, next_seq(), w->shared[rank]);
    w->since[rank] = R->others;
  }
  return PMPI_Win_lock(type, rank, assert_, win);
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  COUNT(C_Win_unlock);
  rwin *w = passive_win(win);
  int ok = w && rank >= 0 && rank < w->n;
  uint64_t seq = ok ? passive_close(w, rank, "unlock", C_Win_unlock) : 0;
  int rc = PMPI_Win_unlock(rank, win);
  if (ok) {
    passive_done(w, rank, seq);
    w->pt[rank] = PT_NONE;
  }
  return rc;
}

int MPI_Win_lock_all(int assert_, MPI_Win win) {
  COUNT(C_Win_lock_all);
  rwin *w = passive_win(win);
  if (w) {
    int ok = passive_ok(win, C_Win_lock_all);
    memset(w->pt, ok ? PT_LAZY : PT_LOST, (size_t)w->n);
    memset(w->shared, 1, (size_t)w->n);
  }
  return PMPI_Win_lock_all(assert_, win);
}

/* Every member's epoch closes or goes on (unlock_all, flush_all): markers at positions of
   their own, the completions at the next; *seq: that one (0: none). */
static void passive_close_all(rwin *w, const char *what, int call, uint64_t *seq) {
  int lost = 0, open = 0;
  for (int t = 0; t < w->n; t++) lost |= w->pt[t] == PT_LOST, open |= w->pt[t] == PT_OPEN;
  *seq = 0;
  if (lost && recording()) unsupported_because(call, "the end of a passive-target epoch that was not recorded");
  if (!open || !recording()) return;
  uint64_t at = next_seq();
  for (int t = 0, j = 0; t < w->n; t++) {
    if (w->pt[t] != PT_OPEN) continue;
    passive_close_mark(w, t, what, at + (uint64_t)j++);
  }
  *seq = next_seq();
  for (int t = 0; t < w->n; t++) w->since[t] = R->others;
}

int MPI_Win_unlock_all(MPI_Win win) {
  COUNT(C_Win_unlock_all);
  rwin *w = passive_win(win);
  uint64_t seq = 0;
  if (w) passive_close_all(w, "unlock", C_Win_unlock_all, &seq);
  int rc = PMPI_Win_unlock_all(win);
  if (w) {
    passive_done(w, -1, seq);
    memset(w->pt, PT_NONE, (size_t)w->n);
  }
  return rc;
}

int MPI_Win_flush(int rank, MPI_Win win) {
  COUNT(C_Win_flush);
  rwin *w = passive_win(win);
  int ok = w && rank >= 0 && rank < w->n;
  uint64_t seq = ok ? passive_close(w, rank, "flush", C_Win_flush) : 0;
  int rc = PMPI_Win_flush(rank, win);
  if (ok) passive_done(w, rank, seq);
  return rc;
}

int MPI_Win_flush_all(MPI_Win win) {
  COUNT(C_Win_flush_all);
  rwin *w = passive_win(win);
  uint64_t seq = 0;
  if (w) passive_close_all(w, "flush", C_Win_flush_all, &seq);
  int rc = PMPI_Win_flush_all(win);
  if (w) passive_done(w, -1, seq);
  return rc;
}

/* The origin's side completes (gets landed, swaps known); the target is not synchronised:
   no fence. */
static void local_done(MPI_Win win, int rank) {
  rwin *w = passive_win(win);
  if (!w || (rank >= 0 && rank >= w->n)) return;
  int pending = 0;
  for (int64_t i = 0; i < w->ng; i++) pending |= !w->g[i].done && (rank < 0 || w->g[i].member == rank);
  for (int64_t i = 0; i < w->ncas; i++) pending |= rank < 0 || w->cas[i].member == rank;
  if (pending) {   /* completed at the origin only: MPI still orders the target's accesses */
    uint64_t seq = recording() ? next_seq() : 0;
    swaps_done(w, seq, rank);
    gets_done(w, seq, rank);
  }
}

int MPI_Win_flush_local(int rank, MPI_Win win) {
  COUNT(C_Win_flush_local);
  int rc = PMPI_Win_flush_local(rank, win);
  if (rc == MPI_SUCCESS && rank >= 0) local_done(win, rank);
  return rc;
}

int MPI_Win_flush_local_all(MPI_Win win) {
  COUNT(C_Win_flush_local_all);
  int rc = PMPI_Win_flush_local_all(win);
  if (rc == MPI_SUCCESS) local_done(win, -1);
  return rc;
}

/* The public and private copies of the window agree: no transfer, nothing in the graph. */
int MPI_Win_sync(MPI_Win win) {
  COUNT(C_Win_sync);
  return PMPI_Win_sync(win);
}

/* ---- request-based accesses (passive-target epochs only): recorded as the access; the
   completion call that sees the request complete writes a `wait` naming it, and an Rget's
   bytes are the program's from there (the program may reuse them before the unlock). ---- */

/* The request of an access recorded at seq on win in `lines` lines (0: nothing recorded): its
   completion names each (a get's bytes are the program's after all of them). */
static void access_request(MPI_Win win, uint64_t seq, int64_t lines, MPI_Request *rq) {
  if (seq && *rq != MPI_REQUEST_NULL)
    pend_put(*rq, (pend){.kind = P_RMA, .active = 1, .live = 1, .newer = -1, .oldest = -1, .phase = R->phase,
                         .seq = seq, .count = (int)lines, .buf = (const void *)(uintptr_t)win, .comm = MPI_COMM_NULL});
}

/* A request-based get (or fetch) completed at done: its bytes are the program's. Under a
   shared lock its piece of the epoch then closes (rma_completions_done, once the
   completion's line is written): the program may tell another origin now. */
void rma_completed(pend *p, uint64_t done) {
  rwin *w = win_of((MPI_Win)(uintptr_t)p->buf);
  for (int64_t i = 0; w && i < w->ng; i++)
    if (w->g[i].seq == p->seq && !w->g[i].done) {
      int m = w->g[i].member, now = p->phase == R->phase && R->active;
      get_done(w, &w->g[i], now ? done : 0);
      if (now && w->pt && w->pt[m] == PT_OPEN && w->shared[m] && R->tickets != MPI_WIN_NULL) w->shared[m] |= 2, R->reclose = 1;
      break;
    }
}

void rma_completions_done(void) {
  if (!R->reclose) return;
  R->reclose = 0;
  Word_t *v, k = 0;
  JLF(v, R->wins, k);
  while (v) {
    rwin *w = (rwin *)*v;
    for (int t = 0; w && w->pt && t < w->n; t++)
      if (w->shared[t] & 2) {
        w->shared[t] &= 1;
        if (w->pt[t] == PT_OPEN) passive_reopen(w, t, C_Wait);
      }
    JLN(v, R->wins, k);
  }
}

int MPI_Rput(const void *obuf, int ocount, MPI_Datatype ot, int target, MPI_Aint disp, int tcount, MPI_Datatype tt,
             MPI_Win win, MPI_Request *rq) {
  COUNT(C_Rput);
  rwin *w = usable_win(win, C_Rput, 1);
  uint64_t seq = w ? access_of(w, A_PUT, obuf, ocount, ot, target, disp, tcount, tt, 0, 0, C_Rput, 0) : 0;
  int64_t lines = R ? R->access_lines : 0;
  int rc = PMPI_Rput(obuf, ocount, ot, target, disp, tcount, tt, win, rq);
  if (rc == MPI_SUCCESS) access_request(win, seq, lines, rq);
  return rc;
}

int MPI_Rget(void *obuf, int ocount, MPI_Datatype ot, int target, MPI_Aint disp, int tcount, MPI_Datatype tt,
             MPI_Win win, MPI_Request *rq) {
  COUNT(C_Rget);
  rwin *w = usable_win(win, C_Rget, 1);
  uint64_t seq = w ? access_of(w, A_GET, obuf, ocount, ot, target, disp, tcount, tt, 0, 0, C_Rget, 0) : 0;
  int64_t lines = R ? R->access_lines : 0;
  int rc = PMPI_Rget(obuf, ocount, ot, target, disp, tcount, tt, win, rq);
  if (rc == MPI_SUCCESS) access_request(win, seq, lines, rq);
  return rc;
}

int MPI_Raccumulate(const void *obuf, int ocount, MPI_Datatype ot, int target, MPI_Aint disp, int tcount,
                    MPI_Datatype tt, MPI_Op op, MPI_Win win, MPI_Request *rq) {
  COUNT(C_Raccumulate);
  rwin *w = usable_win(win, C_Raccumulate, 1);
  int alone = w && op == MPI_REPLACE && atomic_enter(w, target, C_Raccumulate);
  uint64_t seq = w ? update(w, obuf, ocount, ot, target, disp, tcount, tt, op, C_Raccumulate) : 0;
  int64_t lines = R ? R->access_lines : 0;
  int rc = PMPI_Raccumulate(obuf, ocount, ot, target, disp, tcount, tt, op, win, rq);
  if (alone) atomic_leave(w, target, C_Raccumulate);
  if (rc == MPI_SUCCESS) access_request(win, seq, lines, rq);
  return rc;
}

int MPI_Rget_accumulate(const void *obuf, int ocount, MPI_Datatype ot, void *rbuf, int rcount, MPI_Datatype rt,
                        int target, MPI_Aint disp, int tcount, MPI_Datatype tt, MPI_Op op, MPI_Win win,
                        MPI_Request *rq) {
  COUNT(C_Rget_accumulate);
  rwin *w = usable_win(win, C_Rget_accumulate, 1);
  int alone = w && atomic_enter(w, target, C_Rget_accumulate);
  uint64_t seq = w ? access_of(w, A_GET, rbuf, rcount, rt, target, disp, tcount, tt, 0, 0, C_Rget_accumulate,
                               op != MPI_NO_OP) : 0;
  int64_t lines = R ? R->access_lines : 0;   /* the fetch's: its result is what completes */
  if (seq) update(w, obuf, ocount, ot, target, disp, tcount, tt, op, C_Rget_accumulate);
  int rc = PMPI_Rget_accumulate(obuf, ocount, ot, rbuf, rcount, rt, target, disp, tcount, tt, op, win, rq);
  if (alone) atomic_leave(w, target, C_Rget_accumulate);
  if (rc == MPI_SUCCESS) access_request(win, seq, lines, rq);
  return rc;
}
