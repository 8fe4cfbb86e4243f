/* cdag — src/ir/coll_kinds.h: the one table of collective kinds, which every stage reads.
 *
 * A collective kind is one row of CDAG_COLL_KINDS. From it come the kind numbers (IR_COLL_*
 * here, detect.h's DET_* with the same values), the names the report, the JSON, the file
 * format and the recorder print, the slot layout of a plan collective (detect.h), which
 * kinds a program may call natively (the file format, ir_add_coll, the recorder), which
 * have a kernel of cdag's own, how the MPI executor runs a kind and how lowering expands it.
 * Stages hold no list of kinds of their own: they read a column, or paste a token column
 * into names of their own (SM_ methods, LOWER_ families), so that a token without a handler
 * fails to compile. tests/ir/test_coll_kinds.c walks the table and checks every mapping.
 *
 * Adding a kind: one row below (its position gives its number; numbers are internal, never
 * written to files). Then what the columns cannot say, each in the one place that owns it:
 * a detector that proposes it (detect); if its blocks do not move as the slot columns say
 * (det_slot_pair in detect/kinds.c; plan.c and the simulator follow it), that rule; if it
 * is native, its flat expansion (ir/collective.c), its fields in the file format when they
 * are not in/out (format_read.c, format_write.c) and a wrapper in record/pmpi.c; if `kernel`,
 * the kernel (exec/kernels), its start (exec/mpi/compile_kernel.c) and its cost
 * (src/choose/kernel_model.c). A new `exec` or `lower` token needs its SM_ method
 * (exec/mpi/part.h, schedule.c, run.c) or its lowering (src/model/lower.c); the build fails
 * until it exists. An existing token needs nothing.
 *
 * Native-only kinds (scan, exscan, alltoallw, the neighbourhood collectives): a program calls
 * them, detection never proposes them (a prefix reduction is no pattern cdag rewrites; what
 * the others move is found as the patterns it makes), so no plan collective
 * has their kind; their `exec` and `lower` token NONE fails as a plan error where a plan
 * would run or lower one. An alltoallw or neighbourhood call is written with an alltoallv's
 * lists over its communicator (its blocks to one member back to back, in bytes; ir.h),
 * whichever datatypes, topology and form the program used.
 *
 * Columns of X(ID, name, mpi, exec, lower, rooted, vector, reduces, send, recv, send_root,
 *              recv_root, native, kernel):
 *   ID        IR_COLL_<ID>, DET_<ID>
 *   name      as every output spells it (report text and JSON, the file format and so the
 *             recorder's phase files, messages)
 *   mpi       MPI's function for the kind, without MPI_ (index.json counts calls by it)
 *   exec      how the MPI executor runs it when its slots fit: SM_<exec> (exec/mpi/part.h);
 *             a collective whose slots do not fit runs as MPI_Alltoallw
 *   lower     how lowering (src/model/lower.c) expands it into messages: LOWER_<lower>
 *   rooted    has a root                  vector   the v-form: blocks differ per member
 *   reduces   combines members' data element-wise
 *   send/recv a plan member's send / recv slots: NONE, ONE, or MEMBER (one per member)
 *   send_root only the root's send slots carry data; recv_root: only the root's recv slots
 *   native    a program calls it as one operation (file format, ir_add_coll, recorder)
 *   kernel    cdag has a kernel of its own for it (exec/kernels; kernel_choice.c) */
#ifndef CDAG_IR_COLL_KINDS_H
#define CDAG_IR_COLL_KINDS_H

#include <stddef.h>
#include <stdint.h>

/* clang-format off */
#define CDAG_COLL_KINDS(X) \
  X(BARRIER,              "barrier",              Barrier,              BARRIER,    BARRIER,   0, 0, 0, NONE,   NONE,   0, 0, 1, 0) \
  X(BCAST,                "bcast",                Bcast,                BCAST,      BCAST,     1, 0, 0, ONE,    ONE,    1, 0, 1, 1) \
  X(GATHER,               "gather",               Gather,               ALLTOALLW,  ROOTED,    1, 0, 0, ONE,    MEMBER, 0, 1, 1, 0) \
  X(SCATTER,              "scatter",              Scatter,              ALLTOALLW,  ROOTED,    1, 0, 0, MEMBER, ONE,    1, 0, 1, 0) \
  X(ALLGATHER,            "allgather",            Allgather,            ALLGATHERV, ALLGATHER, 0, 0, 0, ONE,    MEMBER, 0, 0, 1, 1) \
  X(ALLTOALL,             "alltoall",             Alltoall,             ALLTOALLW,  PAIRWISE,  0, 0, 0, MEMBER, MEMBER, 0, 0, 1, 0) \
  X(REDUCE,               "reduce",               Reduce,               REDUCE,     REDUCE,    1, 0, 1, ONE,    ONE,    0, 1, 1, 1) \
  X(ALLREDUCE,            "allreduce",            Allreduce,            ALLREDUCE,  ALLREDUCE, 0, 0, 1, ONE,    ONE,    0, 0, 1, 1) \
  X(REDUCE_SCATTER_BLOCK, "reduce_scatter_block", Reduce_scatter_block, REDSCAT,    PAIRWISE,  0, 0, 1, MEMBER, ONE,    0, 0, 1, 0) \
  X(SCATTERV,             "scatterv",             Scatterv,             ALLTOALLW,  ROOTED,    1, 1, 0, MEMBER, ONE,    1, 0, 1, 0) \
  X(GATHERV,              "gatherv",              Gatherv,              ALLTOALLW,  ROOTED,    1, 1, 0, ONE,    MEMBER, 0, 1, 1, 0) \
  X(ALLGATHERV,           "allgatherv",           Allgatherv,           ALLGATHERV, ALLGATHER, 0, 1, 0, ONE,    MEMBER, 0, 0, 1, 1) \
  X(ALLTOALLV,            "alltoallv",            Alltoallv,            ALLTOALLW,  PAIRWISE,  0, 1, 0, MEMBER, MEMBER, 0, 0, 1, 0) \
  X(REDUCE_SCATTER,       "reduce_scatter",       Reduce_scatter,       REDSCAT,    PAIRWISE,  0, 1, 1, MEMBER, ONE,    0, 0, 1, 0) \
  X(SCAN,                 "scan",                 Scan,                 NONE,       NONE,      0, 0, 1, ONE,    ONE,    0, 0, 1, 0) \
  X(EXSCAN,               "exscan",               Exscan,               NONE,       NONE,      0, 0, 1, ONE,    ONE,    0, 0, 1, 0) \
  X(ALLTOALLW,            "alltoallw",            Alltoallw,            NONE,       NONE,      0, 1, 0, MEMBER, MEMBER, 0, 0, 1, 0) \
  X(NEIGHBOR_ALLGATHER,   "neighbor_allgather",   Neighbor_allgather,   NONE,       NONE,      0, 1, 0, MEMBER, MEMBER, 0, 0, 1, 0) \
  X(NEIGHBOR_ALLGATHERV,  "neighbor_allgatherv",  Neighbor_allgatherv,  NONE,       NONE,      0, 1, 0, MEMBER, MEMBER, 0, 0, 1, 0) \
  X(NEIGHBOR_ALLTOALL,    "neighbor_alltoall",    Neighbor_alltoall,    NONE,       NONE,      0, 1, 0, MEMBER, MEMBER, 0, 0, 1, 0) \
  X(NEIGHBOR_ALLTOALLV,   "neighbor_alltoallv",   Neighbor_alltoallv,   NONE,       NONE,      0, 1, 0, MEMBER, MEMBER, 0, 0, 1, 0) \
  X(NEIGHBOR_ALLTOALLW,   "neighbor_alltoallw",   Neighbor_alltoallw,   NONE,       NONE,      0, 1, 0, MEMBER, MEMBER, 0, 0, 1, 0)
/* clang-format on */

#define IR_COLL_ENUM_(ID, ...) IR_COLL_##ID,
enum { CDAG_COLL_KINDS(IR_COLL_ENUM_) IR_COLL_NKINDS };
#undef IR_COLL_ENUM_

/* A plan member's slots of one side (detect.h). */
enum { IR_SLOTS_NONE, IR_SLOTS_ONE, IR_SLOTS_MEMBER };

/* The value columns of one row. */
typedef struct {
  const char *name;        /* as every output spells it */
  const char *mpi;         /* "MPI_Bcast" */
  uint8_t rooted;          /* has a root */
  uint8_t vector;          /* the v-form: blocks may differ in size per member */
  uint8_t reduces;         /* combines members' data element-wise */
  uint8_t send, recv;      /* slots per member: IR_SLOTS_* */
  uint8_t send_root;       /* only the root's send slots carry data */
  uint8_t recv_root;       /* only the root's recv slots carry data */
  uint8_t native;          /* a program calls it as one op: file format, ir_add_coll, recorder */
  uint8_t kernel;          /* cdag has a kernel of its own for it */
} ir_coll_info;

const ir_coll_info *ir_coll_get(int kind);       /* NULL out of range */
const char *ir_coll_name(int kind);              /* "bcast", ...; NULL out of range */
int ir_coll_kind(const char *name, size_t len);  /* IR_COLL_* of any kind by name, or -1 */
/* Blocks the in and out buffers of a native call span on one member (root: the member is
   the root) over n members: n where a side has a slot per member, else 1. */
void ir_coll_spans(int kind, int root, int32_t n, uint64_t *in_blocks, uint64_t *out_blocks);

#endif
