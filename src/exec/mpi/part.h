/* cdag — src/exec/mpi/part.h: the schedule part, the bytes the compiling rank sends each rank.
 *
 * A part holds only what one rank does. The compiling rank writes it (schedule.c for plans,
 * baseline.c for graphs run as written) with the part_*_put functions below; each rank
 * decodes its own with part_read and builds its schedule from the decoded form (run.c,
 * baseline.c). Writer and reader of every record are side by side in part.c, so the schema
 * below is the only description of the bytes. No MPI here.
 *
 * Schema, version PART_VERSION. Every field is a LEB128 varint (wire/wire.h); (s) marks a
 * zigzag (signed) one, (f) a double's 64 bits. Counts come before the records they count.
 *
 *   part   := MAGIC VERSION mode (graph | plan | stages)
 *   graph  := nops tag* nbytes byte* ncomps comp*
 *                                       one tag per send and recv of the rank, in op order;
 *                                       bytes: empty, or the rank's ops themselves (wire/wire.h,
 *                                       when the graph's one-sided ops gave it ops the
 *                                       rank's own graph lacks); its computations
 *   stages := nstages (len part)* ncomps comp* ntemps (addr len)*
 *                                       a graph that computes (src/stage): per stage a whole
 *                                       plan part (len bytes), the rank's computations in
 *                                       the order it runs them, its staging buffers
 *   comp   := key pos after+1 cost raddr rlen waddr wlen nsince (addr len)*
 *                                       key: the op in the rank's own graph (its function);
 *                                       pos: its place in the rank's program order; after:
 *                                       the stage it follows (-1: none); rlen UINT64_MAX:
 *                                       reads all, namely the nsince ranges the rank wrote
 *                                       since its previous such computation
 *   plan   := model ncolls coll* nout pair* nin pair* ncopies copy* redsize nreds red*
 *   model  := alpha(f) beta(f) blocks   the cost model of cdag's kernels, the same on every rank
 *   coll   := method after kind type op rootm(s) setid(s) n member*n (only when setid >= 0)
 *             me nsend nrecv slot*(nsend + nrecv)
 *             [alg count*n]             method SM_KERNEL: algorithm, every member's send bytes
 *             [(send+1 recv+1)*n]       method SM_ALLTOALLW: per member, which of my send
 *                                       slots goes to it and which recv slot comes from it
 *                                       (0: none)
 *   slot   := npieces (addr_delta(s) len)*   addresses relative to the end of the previous
 *                                            piece of the slot
 *   pair   := peer tag npieces (space addr len n [stride])*   one message to (out) or from
 *                                       (in) peer, tag < PART_TAGS (a pair of ranks may have
 *                                       several); a piece is n blocks of len bytes, block j at
 *                                       addr + j*stride (stride only when n > 1: a residual
 *                                       strided transfer, in user memory, stride >= len)
 *   copy   := dst_space dst len src n [src_stride dst_stride]   a byte move at this rank, n
 *                                       blocks of len bytes (strides only when n > 1)
 *   red    := dst count type op n (off mult)*n   dst = op over contributions at off in the
 *                                       reduction buffer, each counted mult times
 *
 * Versions: 1 had no version field and no model; 2 adds both; 3 adds the pair's tag; 4 the
 * graph's ops; 5 the collective's `after` (1: a replication, started once the rest completed); 6 numbers
 * `kind` as ir/coll_kinds.h's table (IR_COLL_*); 7 computations (graph's comps, the stages mode); 8 the
 * blocks of message pieces and copies (a strided transfer is one piece, not a piece per block). A reader refuses every other
 * version with CDAG_ERR_FORMAT naming the two versions, so ranks running different builds of
 * the library fail together instead of misreading each other. Decoding checks every count
 * and bound: a corrupt part is CDAG_ERR_FORMAT, never a crash. Cost: O(part bytes); the
 * schedule built from it walks the blocks of strided pieces at most once or twice each,
 * PART_MAX_BLOCKS of them in a part at most. */
#ifndef CDAG_EXEC_MPI_PART_H
#define CDAG_EXEC_MPI_PART_H

#include "detect/detect.h"
#include "choose/choose.h"
#include "stage/stage.h"
#include "wire/wire.h"

#define PART_MAGIC 0xcd5cu
#define PART_VERSION 8u
/* Blocks of strided pieces and copies in one part, at most (the analysis takes 2^26 in a graph) */
#define PART_MAX_BLOCKS (1ull << 26)
/* Tags of residual messages: 0 .. PART_TAGS-1 (below cdag's kernels' tags, kernel.h) */
#define PART_TAGS (KERN_MAX_ALONE + 1)

enum { PART_GRAPH = 0, PART_PLAN = 1, PART_STAGES = 2 };
/* How a collective runs (decided at the root from its kind and slot sizes: the `exec` column of
   ir/coll_kinds.h names the method when the slots fit, else SM_ALLTOALLW). */
enum { SM_BARRIER, SM_BCAST, SM_ALLREDUCE, SM_REDUCE, SM_REDSCAT, SM_ALLTOALLW, SM_ALLGATHERV,
       SM_KERNEL /* one of cdag's kernels (kernel.h), as plan->chosen says */,
       SM_NONE /* a native-only kind (coll_kinds.h): never in a plan */ };
/* Where a piece lives on its rank: user memory or the schedule's reduction buffer. */
enum { SP_USER = 0, SP_RED = 1 };

/* n >= 1 blocks of len bytes, block j at addr + j*stride (n > 1: stride >= len, SP_USER) */
typedef struct { int space; uint64_t addr, len, n, stride; } part_piece;
static inline uint64_t part_piece_bytes(const part_piece *p) { return p->n * p->len; }
/* The bytes from the first block's start to the last block's end. */
static inline uint64_t part_piece_span(const part_piece *p) { return (p->n - 1) * p->stride + p->len; }
typedef struct { int64_t first, n; uint64_t bytes; } part_slot;   /* pieces[first..+n) */
typedef struct {
  int method, kind, type, op, rootm, n, me, nsend, nrecv;
  int after;                     /* 1: a replication (det_coll.after): its root sends what an
                                    earlier collective wrote, so it starts after the others */
  int64_t setid;                 /* member set (-1: the whole communicator) */
  int64_t members_first;         /* into members (setid >= 0) */
  int64_t slot_first;            /* nsend send slots, then nrecv recv slots */
  int64_t map_first;             /* SM_ALLTOALLW: 2 entries per member into map */
  int alg;                       /* SM_KERNEL: kern_alg */
  int64_t counts_first;          /* SM_KERNEL: n entries into counts */
} part_coll;
typedef struct { int peer, tag; int64_t first, n; } part_pair;     /* pieces[first..+n) */
/* n >= 1 blocks of len bytes from src + j*src_stride to dst + j*dst_stride */
typedef struct { int dst_space; uint64_t dst, src, len, n, src_stride, dst_stride; } part_copy;
/* From the first block's start to the last one's end on the side of `stride`. */
static inline uint64_t part_copy_span(const part_copy *c, uint64_t stride) { return (c->n - 1) * stride + c->len; }
typedef struct { uint64_t dst, count; int type, op; int64_t first, n; } part_red;  /* contribs */
typedef struct { uint64_t off; uint32_t mult; } part_contrib;

/* A computation as the rank runs it (comp above). */
typedef struct {
  int64_t key, pos;
  int after;
  uint64_t cost, raddr, rlen, waddr, wlen;
  int64_t since_first, nsince;   /* into since (pairs addr, len) */
  int64_t wfirst, nw;            /* nw > 0: it writes blocks, since[wfirst ..] (pairs); else wlen at waddr */
} part_compute;

/* A decoded part. */
typedef struct sched_part {
  int mode;                      /* PART_GRAPH, PART_PLAN or PART_STAGES */
  /* graph and stages: computations; stages: per-stage plan parts and staging buffers */
  part_compute *comps;   int64_t ncomps;
  uint64_t *since;       int64_t nsince;       /* pairs */
  struct sched_part *stages; int64_t nstages;
  uint64_t *temps;       int64_t ntemps;       /* pairs (addr, len), sorted by addr */
  /* graph */
  int64_t nops, ntags;  int32_t *tags;
  uint8_t *ops;  int64_t ops_len;   /* the rank's ops (wire encoding), or none: its graph's */
  /* plan */
  kern_model model;
  part_piece *pieces;    int64_t npieces, cap_pieces;
  part_slot *slots;      int64_t nslots, cap_slots;
  part_coll *colls;      int64_t ncolls;
  int32_t *members;      int64_t nmembers, cap_members;
  int32_t *map;          int64_t nmap, cap_map;
  uint64_t *counts;      int64_t ncounts, cap_counts;
  part_pair *out, *in;   int64_t nout, nin;
  part_copy *copies;     int64_t ncopies;
  uint64_t redsize;      /* bytes of the reduction buffer */
  part_red *reds;        int64_t nreds;
  part_contrib *contribs; int64_t ncontribs, cap_contribs;
  uint64_t nblocks;      /* blocks of strided pieces and copies (PART_MAX_BLOCKS) */
} sched_part;

/* Decodes a part written for one of nprocs ranks into *p (zeroed first; part_free it, also
   on error). graph parts of a rank with nops ops: the caller checks p->nops. */
int part_read(const uint8_t *buf, int64_t len, int nprocs, sched_part *p);
void part_free(sched_part *p);
/* A deep copy of from into *to (nothing to free on error). */
int part_clone(const sched_part *from, sched_part *to);

/* ---- writing ---- */

/* A plan part while it is written: its sections grow independently (a collective touches
   every member's colls, a message its sender's out and its receiver's in). */
typedef struct {
  wire_buf colls, out, in, copies, reds;
  int64_t ncolls, nout, nin, ncopies, nreds;
  uint64_t redsize;
} part_writer;

/* coll: the header up to nrecv (counted); then nsend + nrecv part_slot_put, then
   part_kernel_put or n part_map_put as the method asks. */
void part_coll_put(part_writer *w, const part_coll *c, const int32_t *members);
void part_slot_put(part_writer *w, const det_piece *pieces, int32_t n);
void part_kernel_put(part_writer *w, int alg, const uint64_t *counts, int n);
void part_map_put(part_writer *w, int send_slot1, int recv_slot1);
/* pair: out (1) or in (0), then npieces part_pair_piece calls on the same direction. */
void part_pair_put(part_writer *w, int out, int peer, int64_t tag, int64_t npieces);
void part_pair_piece(part_writer *w, int out, const part_piece *pc);
void part_copy_put(part_writer *w, const part_copy *c);
/* red: the header with r->n (counted), then r->n part_contrib_put. */
void part_red_put(part_writer *w, const part_red *r);
void part_contrib_put(part_writer *w, uint64_t off, uint32_t mult);
/* The whole part, with the model its kernels use: CDAG_OK or CDAG_ERR_NOMEM. */
int part_assemble(const part_writer *w, const kern_model *m, wire_buf *out);
void part_writer_free(part_writer *w);

/* One rank's computations (and, for stages, staging buffers) while they are written. */
typedef struct {
  wire_buf comps, temps;
  int64_t ncomps, ntemps;
} part_steps;
/* Computation i of st, key: its op in the rank's own graph (st->since: what it reads anew). */
void part_compute_put(part_steps *w, const stage_steps *st, int64_t i, int64_t key);
void part_temp_put(part_steps *w, uint64_t addr, uint64_t len);
void part_steps_free(part_steps *w);

/* A graph part: nops ops, the tags of its sends and recvs, the ops themselves when ops
   is not NULL (a rank encoding, wire_encode_rank), and its computations (NULL: none). */
int part_graph_write(wire_buf *out, int64_t nops, const int32_t *tags, int64_t ntags, const wire_buf *ops,
                     const part_steps *comps);
/* A stages part: nstages plan parts (part_assemble's), the rank's computations and temps. */
int part_stages_write(wire_buf *out, const wire_buf *stages, int32_t nstages, const part_steps *w);

#endif
