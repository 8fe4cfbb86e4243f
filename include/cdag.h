/* cdag — a just-in-time compiler for communication graphs.
 *
 * This header is the whole public API: if it is not declared here, it is not API.
 * A program describes one communication phase as a graph of sends, receives and local
 * operations (a distributed graph, one per MPI process, or a global graph describing every
 * rank); cdag matches the messages, computes where every byte comes from (Static Single
 * Transfer form), recognises the collectives in that dataflow and compiles a schedule that
 * runs them as fast collectives, any number of times.
 *
 * Every function returns CDAG_OK (0) or a CDAG_ERR_* code; cdag_error_message() returns the
 * message of the last error of the calling thread (it names rank, operation and file line
 * where they apply). Handles are opaque; cdag_*_free(&h) sets h = NULL and accepts NULL.
 * The names and behaviours below are stable: programs outside cdag rely on them; later additions
 * are marked "(cdag addition)". What a graph means, what compiling keeps, the options and the
 * environment: docs/semantics.md. The file format and the report: docs/format.md.
 * Threads: calls on one handle are not thread-safe; different handles may be used from
 * different threads (two cdag_compile calls that find the same cached schedule get two
 * handles of their own, sharing only immutable data; they work on the same buffers, so they
 * run one after the other); cdag_analyze keeps all its state per
 * call. Distributed graphs and schedules of different communicators may be built, compiled
 * and run from different threads at once under MPI_THREAD_MULTIPLE (two threads must not use
 * one communicator at once: MPI's own rule). Under MPI_THREAD_SINGLE or FUNNELED, a call that would use MPI from
 * another thread than MPI's main one returns CDAG_ERR_STATE. Where cdag can see such an
 * overlap it returns CDAG_ERR_STATE with its own message instead of racing, blocking or
 * reaching MPI: cdag_start/test/wait/run while another thread is inside a call on the same
 * schedule; cdag_start or cdag_run on a schedule already started (by any thread) and not yet
 * completed; a start while another handle of the same compiled schedule runs; cdag_compile
 * or cdag_graph_dump while another thread is in one of them on the same graph (under
 * MPI_THREAD_MULTIPLE its communicator is its own duplicate, and graphs created on one
 * communicator may be compiled at once; below it, graphs of one communicator share cdag's
 * duplicate). That last check is local, before any MPI call: the program is erroneous (as in
 * MPI), and on other ranks the other thread may be the one refused. */
#ifndef CDAG_H
#define CDAG_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cdag_version.h"   /* CDAG_VERSION_MAJOR, _MINOR, _PATCH, CDAG_VERSION, CDAG_VERSION_NUMBER */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CDAG_BUILDING) && defined(__GNUC__)
#define CDAG_API __attribute__((visibility("default")))
#else
#define CDAG_API
#endif

typedef struct cdag_graph    cdag_graph;     /* opaque */
typedef struct cdag_schedule cdag_schedule;  /* opaque: a compiled plan, runnable with MPI */
typedef struct cdag_plan     cdag_plan;      /* opaque: a compiled plan of a global graph (no MPI) */
typedef int64_t cdag_op;                     /* id of an operation in its graph, >= 0 */
#define CDAG_OP_NULL ((cdag_op)-1)           /* no operation: a send/recv with peer MPI_PROC_NULL */

enum {
  CDAG_OK = 0,
  CDAG_ERR_ARG,         /* bad argument: NULL, negative size, rank out of range, bad handle */
  CDAG_ERR_NOMEM,       /* out of memory */
  CDAG_ERR_UNMATCHED,   /* a send or receive has no partner */
  CDAG_ERR_CYCLE,       /* dependencies and matches form a cycle (the graph would deadlock) */
  CDAG_ERR_TRUNCATE,    /* a receive is smaller than the send it matches */
  CDAG_ERR_FORMAT,      /* malformed graph file */
  CDAG_ERR_IO,          /* a file could not be read or written */
  CDAG_ERR_MPI,         /* an MPI call failed */
  CDAG_ERR_STATE,       /* call not allowed now (e.g. adding to a compiled graph) */
  CDAG_ERR_UNSUPPORTED, /* a feature this version does not provide */
  CDAG_ERR_MISMATCH,    /* (cdag addition) verification: plan and graph leave different bytes */
  CDAG_ERR_PLAN,        /* (cdag addition) a plan breaks its own rules: a bug in cdag, please report */
  CDAG_ERR_RACE         /* one-sided accesses conflict inside one epoch (cdag_get, cdag_put) */
};
/* (cdag addition) The version of the library the program runs with, "MAJOR.MINOR.PATCH"
   (static text), and as CDAG_VERSION_NUMBER counts it; the macros of cdag_version.h give the
   version the program was compiled with. */
CDAG_API const char *cdag_version(void);
CDAG_API int cdag_version_number(void);

CDAG_API const char *cdag_strerror(int code);   /* static text; "unknown error code" otherwise */
CDAG_API const char *cdag_error_message(void);  /* last error of this thread, "" if none */

/* Element types and reduction ops used by local reductions (MPI-free, for global graphs).
   (cdag addition, after CDAG_DOUBLE) The (value, index) pairs of MAXLOC / MINLOC, laid out
   as MPI's pair types (C structs: MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT (64-bit long),
   MPI_2INT, MPI_SHORT_INT, Fortran's MPI_2REAL, MPI_2DOUBLE_PRECISION), and complex numbers
   (MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX: sum and prod only), and C's long double
   (MPI_LONG_DOUBLE) as the compiler stores it (x86-64: the 80-bit value in 16 bytes; a
   reduction writes the value and zeros the rest), and its pair with an int
   (MPI_LONG_DOUBLE_INT: MAXLOC / MINLOC, 32 bytes on x86-64), and a complex number of two
   long doubles (MPI_C_LONG_DOUBLE_COMPLEX: sum and prod; 32 bytes on x86-64, each part
   stored as a long double is). docs/semantics.md. */
typedef enum { CDAG_INT8, CDAG_INT16, CDAG_INT32, CDAG_INT64, CDAG_UINT8, CDAG_UINT16,
               CDAG_UINT32, CDAG_UINT64, CDAG_FLOAT, CDAG_DOUBLE,
               CDAG_FLOAT_INT, CDAG_DOUBLE_INT, CDAG_LONG_INT, CDAG_2INT, CDAG_SHORT_INT,
               CDAG_2FLOAT, CDAG_2DOUBLE, CDAG_COMPLEX_FLOAT, CDAG_COMPLEX_DOUBLE, CDAG_LONG_DOUBLE,
               CDAG_LONG_DOUBLE_INT, CDAG_COMPLEX_LONG_DOUBLE } cdag_type;
typedef enum { CDAG_SUM, CDAG_PROD, CDAG_MIN, CDAG_MAX, CDAG_BAND, CDAG_BOR, CDAG_BXOR,
               CDAG_LAND, CDAG_LOR, CDAG_LXOR,
               CDAG_MAXLOC, CDAG_MINLOC /* (cdag addition) pair types only */ } cdag_reduce_op;

/* ---- Distributed graphs: each process of comm describes its own operations. ---- */
CDAG_API int cdag_graph_create(MPI_Comm comm, cdag_graph **g);                   /* CONSTRUCTOR */
/* A peer of MPI_PROC_NULL adds nothing and sets *op = CDAG_OP_NULL, as in MPI. */
CDAG_API int cdag_send(cdag_graph *g, const void *buf, size_t bytes, int dest, int tag, cdag_op *op);
CDAG_API int cdag_recv(cdag_graph *g, void *buf, size_t bytes, int source, int tag, cdag_op *op);
/* (cdag addition) A message of any MPI datatype (vector, indexed, struct, subarray, resized,
   ...), as MPI_Send / MPI_Recv take it: the bytes it touches, in the order MPI packs them;
   buf may be MPI_BOTTOM with a datatype of absolute addresses (MPI_Get_address). Several ranges are packed and unpacked through a buffer cdag owns (scratch, so compiled
   schedules move the bytes directly). A receive datatype writing a byte twice, and a
   datatype not committed (MPI_Type_commit), are CDAG_ERR_ARG. *op: the send; for a
   receive, the last operation that writes buf. The other operations such a call adds (its
   packing copies, a receive's message) take op numbers too; an error about one of them says
   "part of the typed message returned as op N". */
CDAG_API int cdag_send_type(cdag_graph *g, const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                            cdag_op *op);
CDAG_API int cdag_recv_type(cdag_graph *g, void *buf, MPI_Count count, MPI_Datatype type, int source, int tag,
                            cdag_op *op);
/* inout = inout op in, count elements of type. Predefined ops on predefined types (pair
   types with MPI_MAXLOC / MPI_MINLOC, complex types with sum and prod), or (cdag addition) a
   user op of MPI_Op_create on any datatype without holes (size = extent): it runs in the
   written order, and is reassociated (collectives, trees) only when created commutative.
   Ranks must create and first use their user ops in the same order (docs/semantics.md). */
CDAG_API int cdag_reduce_local(cdag_graph *g, const void *in, void *inout, size_t count,
                               MPI_Datatype type, MPI_Op mpi_op, cdag_op *op);
/* dst = src, bytes bytes (memcpy: the two must not overlap, else CDAG_ERR_ARG; a memmove
   needs a temporary, ideally declared with cdag_scratch). */
CDAG_API int cdag_copy_local(cdag_graph *g, const void *src, void *dst, size_t bytes, cdag_op *op);
/* (cdag addition) A computation: fn(arg) runs at this point of the rank's order every time
   the schedule runs, once what it reads (read_bytes at read; read NULL with read_bytes
   CDAG_READS_ALL: every byte the rank's earlier operations wrote) is there, and before any
   later operation that touches what it reads or writes (write_bytes at write). The schedule
   runs in stages: communication the computation needs comes before it, communication that
   needs its result after it, and no collective joins the two. cost_ns, its time, is what
   cdag's models and `cdag replay` spend for it. fn must not call cdag or MPI on the graph's
   communicator. *op: the computation (cdag_depend and cdag_label take it). */
#define CDAG_READS_ALL SIZE_MAX
typedef void (*cdag_compute_fn)(void *arg);
CDAG_API int cdag_compute(cdag_graph *g, const void *read, size_t read_bytes, void *write, size_t write_bytes,
                          uint64_t cost_ns, cdag_compute_fn fn, void *arg, cdag_op *op);
CDAG_API int cdag_scratch(cdag_graph *g, void *buf, size_t bytes);  /* contents after a run: unspecified */
CDAG_API int cdag_depend(cdag_graph *g, cdag_op before, cdag_op after);  /* CDAG_OP_NULL: no-op */
/* Names an operation ("halo north"): errors, saved files and DOT show it (either graph kind;
   the text is copied; a later call replaces it). A saved file spells it as an identifier:
   other characters become '_' ("halo_north"), a leading digit gets a '_' before it, and a
   name another op of the rank has gets _2, _3, ... */
CDAG_API int cdag_label(cdag_graph *g, cdag_op op, const char *label);
CDAG_API int cdag_graph_free(cdag_graph **g);       /* DESTRUCTOR: sets *g = NULL; NULL is fine
                                                       (another copy of the handle is not cleared:
                                                       freeing through it is a double free) */

/* (cdag addition) M:N block-cyclic redistribution (ScaLAPACK's layout, docs/semantics.md).
   An M x N matrix of elem_bytes-byte elements is cut into MB x NB blocks dealt cyclically
   over a PR x PC process grid: block (I, J) lives on grid process (I mod PR, J mod PC), whose
   rank is first + row * PC + col (row-major). Each process keeps its blocks in a local
   column-major array: local rows LOCr = the rows of the blocks it holds, element (i, j) of
   the local array at byte (j * lld + i) * elem_bytes, with lld = LOCr when the field is 0. */
typedef struct {
  int64_t m, n;            /* global rows and columns, >= 1 */
  int64_t mb, nb;          /* rows and columns of a block, >= 1 */
  int     pr, pc;          /* process grid rows and columns, >= 1 */
  int     first;           /* rank of grid process (0, 0), >= 0; the grid's ranks are
                              first .. first + PR * PC - 1 */
  int64_t lld;             /* leading dimension of every local array in elements; 0: each
                              process's own local row count (>= it otherwise) */
} cdag_layout;
/* The tag of the messages cdag_redistribute adds (within MPI's smallest MPI_TAG_UB). It is
   reserved: cdag_send, cdag_recv, their _type forms and cdag_rank_send / cdag_rank_recv
   refuse it (CDAG_ERR_ARG), so a program's own messages never match a redistribution's.
   Every other tag from 0 to MPI_TAG_UB is the program's: what cdag sends at run time (its
   kernels' messages, tags from 0x6b00; residual messages, tags from 0; the graph run as
   written, a tag per channel) travels on cdag's private duplicate of the communicator and
   never meets the program's traffic. (cdag addition) */
#define CDAG_REDISTRIBUTE_TAG 32767
/* (cdag addition) Adds this process's part of moving the matrix from layout `from` (its
   local array at src) to layout `to` (its local array at dst): sends of the blocks' pieces
   other processes own in `to`, receives of the pieces it owns in `to`, and local copies of
   those it owns in both. Every process of the graph's communicator that is in either grid
   calls it, with the same layouts; the grids may differ in blocks and shape and may overlap
   or share processes (M:N). src is read only on processes of `from`, dst written only on
   processes of `to` (NULL elsewhere is fine); the two arrays must not overlap. Cost: one
   operation per contiguous piece (a column's run of rows common to a source and a
   destination block, merged where both sides are contiguous); building them is linear in
   that count, with no per-element work. CDAG_ERR_ARG for a bad layout (a zero size, a grid
   larger than the communicator, sizes that differ between from and to, lld too small),
   elem_bytes 0 (or above 2^20), overlapping arrays, or a NULL array on a process that holds
   part of the matrix. */
CDAG_API int cdag_redistribute(cdag_graph *g, const cdag_layout *from, const void *src, const cdag_layout *to,
                               void *dst, size_t elem_bytes);

/* One-sided (PGAS) accesses, docs/semantics.md. cdag_segment registers bytes other ranks may
   get from and put to; it is local, and its k-th call on every rank returns k (segment k may
   have another size on each rank). cdag_get reads `bytes` at offset of segment seg of rank
   target into dst; cdag_put writes src there. Fences cut the graph into epochs (every rank
   calls cdag_fence equally often): a get reads the target's bytes as they are when its
   epoch starts, a put's bytes are in the target's memory when its epoch ends; on the origin
   a get writes dst and a put reads src like a receive and a send. Conflicting accesses in one
   epoch are CDAG_ERR_RACE at compile, an access past a segment's end CDAG_ERR_ARG, both on
   every rank. target may be the calling rank. A distributed graph has no accumulate (graph
   files and recordings do, docs/semantics.md): an MPI_Accumulate into a segment ports as a
   put of each origin into a slot of its own, then after the fence cdag_reduce_local of the
   slots, which cdag can find as a reduce_scatter or allreduce. */
CDAG_API int cdag_segment(cdag_graph *g, void *base, size_t bytes, int *seg);
CDAG_API int cdag_get(cdag_graph *g, void *dst, size_t bytes, int target, int seg, size_t offset, cdag_op *op);
CDAG_API int cdag_put(cdag_graph *g, const void *src, size_t bytes, int target, int seg, size_t offset, cdag_op *op);
CDAG_API int cdag_fence(cdag_graph *g);

/* ---- Compile and run: collective over the graph's communicator. ---- */
/* As with MPI's collectives, every rank calls cdag_compile for its part of the same graph, in
   the same order as the other ranks: a rank that skips it leaves the others waiting, and
   graphs compiled in different orders on different ranks are taken for one graph (their
   messages then fail to match, or the run hangs). */
/* Who runs the collectives cdag has its own kernels for (bcast, allgather(v), reduce, allreduce). */
typedef enum { CDAG_KERNEL_AUTO = 0, CDAG_KERNEL_MPI, CDAG_KERNEL_CDAG } cdag_kernel_policy;
/* Options of cdag_compile and cdag_analyze. Initialise with cdag_options_init (it sets
   struct_size and every default), then change fields; or pass NULL, or a zeroed struct
   (struct_size 0 and every field 0), for all defaults. (cdag addition) struct_size lets the
   struct grow at its end without breaking built programs: cdag reads only the fields that
   fit in struct_size bytes and takes the defaults for the others (a program built against an
   older cdag.h); a struct larger than the library's own is accepted when its unknown bytes
   are all zero. struct_size 0 with a field set is CDAG_ERR_ARG (the struct was not
   initialised), as is every field outside its range (the message names the field and its
   value). All ranks must pass the same options.
   Environment (docs/semantics.md): CDAG_DETECT, CDAG_KERNEL, CDAG_MEASURE, CDAG_ALPHA,
   CDAG_BETA, CDAG_BLOCKS, CDAG_OVERHEAD, CDAG_GAMMA and CDAG_PRICE set their field only where the program
   left it at its default: a field that differs from its default is explicit and wins over
   the variable. */
typedef struct {
  size_t struct_size;      /* sizeof(cdag_options) as the program was compiled; set by cdag_options_init */
  int    detect;           /* 1 (default): rewrite collectives; 0: run the graph as written */
  double density;          /* tau for vector collectives, default 1.0 (only complete patterns) */
  int    exact_float;      /* 1: never reassociate floating-point reductions (default 0) */
  int    root;             /* rank that compiles, default 0 */
  int    min_group;        /* fewest ranks for a collective on a proper subset, >= 1, default 4 */
  /* Kernel choice and its cost model (a message of m bytes costs alpha + beta m). Zero means
     "not set" for each (the default): the built-in or measured model, or the variable. */
  cdag_kernel_policy kernel;  /* AUTO (default): the cost model chooses per collective */
  double alpha;            /* seconds per message, in (0, 1000]; 0: built in (1e-6) or measured */
  double beta;             /* seconds per byte, in (0, 1000]; 0: built in (2e-10) or measured */
  int    blocks;           /* block count of cdag's n-block kernels, 1..2^30; 0: the model's */
  int    measure;          /* 1: measure the model (ping-pong, bursts, memcpy) at the first compile */
  /* Residual messages: pieces of at most overhead / (2 gamma) bytes between two ranks are
     packed into one message, larger ones travel alone as written (CDAG_OVERHEAD, CDAG_GAMMA). */
  double overhead;         /* seconds per further message to the same peer; 0: built in (2e-7) */
  double gamma;            /* seconds per byte copied in memory; 0: built in (1e-10) */
  /* 1 (default): the plan runs only where the LogGOPS model of this machine says it is faster
     than the graph as written (a tie keeps the graph; the report gives both times);
     0: the plan always runs (CDAG_PRICE). */
  int    price;
  /* New fields go here, at the end, with their default in cdag_options_init. */
} cdag_options;
/* (cdag addition) Sets the first `size` bytes of *o: struct_size = size, every field that
   fits to its default, bytes past the fields this library knows to zero. */
CDAG_API void cdag_options_init_size(cdag_options *o, size_t size);
/* cdag_options_init(o) passes the size of the struct the program was compiled with (the
   function of that name, for callers that cannot use the macro, assumes this header's). */
CDAG_API void cdag_options_init(cdag_options *o);
#define cdag_options_init(o) cdag_options_init_size((o), sizeof(cdag_options))
CDAG_API int cdag_compile(cdag_graph *g, const cdag_options *o, cdag_schedule **s);  /* o may be NULL */
CDAG_API int cdag_run(cdag_schedule *s);            /* blocking; may be called any number of times */
CDAG_API int cdag_start(cdag_schedule *s);          /* nonblocking run ... */
CDAG_API int cdag_wait(cdag_schedule *s);           /* ... completed by this (CDAG_ERR_STATE with no
                                                       run in progress: a forgotten cdag_start,
                                                       unlike MPI_Wait on an inactive request) */
/* (cdag addition) Advances a started run without blocking (messages, and cdag's kernels
   round by round) and sets *done = 1 once it has completed: the results are in place, as
   after cdag_wait (which then returns CDAG_OK at once, and may be skipped). Call it now and
   then while computing between cdag_start and cdag_wait, as with MPI_Test. On a schedule
   that is not running (never started, or already completed) it sets *done = 1 and returns
   CDAG_OK, as MPI_Test does on an inactive request, so `while (!done) cdag_test(s, &done)`
   ends. */
CDAG_API int cdag_test(cdag_schedule *s, int *done);
CDAG_API int cdag_schedule_report(const cdag_schedule *s, FILE *out, int json);  /* what was detected */
/* Frees *s and sets it to NULL. A run started and not completed is completed first (as
   cdag_wait: it blocks until the run completes). CDAG_ERR_STATE, freeing nothing, while
   another thread is inside a call on *s. */
CDAG_API int cdag_schedule_free(cdag_schedule **s);
/* (cdag addition) Other buffers, same schedule: *copy runs s's compiled schedule with every
   address in [moves[i].from, +bytes) moved to moves[i].to (a double-buffered code compiles
   once and swaps A and B). Collective over the graph's communicator; each rank passes its
   own moves (n may differ). Checked on every rank, and an error on one is returned by all:
   each range the schedule touches must lie wholly inside one `from` buffer or outside all,
   `from` buffers must not overlap each other, nor `to` buffers, and a range left in place
   must not overlap a `to` buffer (that would change which bytes alias). Buffers the graph
   declared with cdag_scratch and not moved are shared by s and *copy, so the two must not
   run at the same time. Moves of 0 bytes are ignored. *copy is independent of s (free both). */
typedef struct {
  const void *from;        /* a buffer the graph was built on */
  void *to;                /* where the copy reads and writes instead (same layout) */
  size_t bytes;
} cdag_rebind;
CDAG_API int cdag_schedule_rebind(const cdag_schedule *s, int n, const cdag_rebind *moves, cdag_schedule **copy);

/* ---- Global graphs: one process describes every rank (replay, generation, analysis). ----
   Addresses are plain integers in each rank's own address space. */
CDAG_API int cdag_graph_create_global(int nprocs, cdag_graph **g);
CDAG_API int cdag_rank_send(cdag_graph *g, int rank, uint64_t addr, uint64_t bytes, int dest, int tag, cdag_op *op);
CDAG_API int cdag_rank_recv(cdag_graph *g, int rank, uint64_t addr, uint64_t bytes, int source, int tag, cdag_op *op);
CDAG_API int cdag_rank_reduce_local(cdag_graph *g, int rank, uint64_t in, uint64_t inout, uint64_t count,
                                    cdag_type type, cdag_reduce_op rop, cdag_op *op);
CDAG_API int cdag_rank_copy_local(cdag_graph *g, int rank, uint64_t src, uint64_t dst, uint64_t bytes, cdag_op *op);
/* (cdag addition) cdag_compute of a global graph: reads rlen bytes at raddr (raddr 0 and rlen
   CDAG_READS_ALL: all the rank wrote before it), writes wlen at waddr, costs cost_ns. With no
   function to call, the simulator and `cdag replay` make its output a hash of what it read
   (docs/semantics.md). */
CDAG_API int cdag_rank_compute(cdag_graph *g, int rank, uint64_t raddr, uint64_t rlen, uint64_t waddr, uint64_t wlen,
                               uint64_t cost_ns, cdag_op *op);
CDAG_API int cdag_rank_scratch(cdag_graph *g, int rank, uint64_t addr, uint64_t bytes);
/* One-sided accesses of a global graph: target_addr is an address of rank target. */
CDAG_API int cdag_rank_get(cdag_graph *g, int rank, uint64_t dst, uint64_t bytes, int target, uint64_t target_addr,
                           cdag_op *op);
CDAG_API int cdag_rank_put(cdag_graph *g, int rank, uint64_t src, uint64_t bytes, int target, uint64_t target_addr,
                           cdag_op *op);
CDAG_API int cdag_rank_fence(cdag_graph *g, int rank);
/* (cdag addition) cdag_redistribute's part of one rank of a global graph: src and dst are
   addresses of that rank's local arrays (ignored where the rank is not in the grid). */
CDAG_API int cdag_rank_redistribute(cdag_graph *g, int rank, const cdag_layout *from, uint64_t src,
                                    const cdag_layout *to, uint64_t dst, size_t elem_bytes);
/* cdag_depend works on global graphs too (both ops must belong to the same rank). */

CDAG_API int cdag_graph_load(const char *path, cdag_graph **g);          /* docs/format.md; "-" = stdin */
/* Saves a global graph. A distributed graph is CDAG_ERR_ARG (each rank holds only its own
   operations): cdag_graph_dump writes it. */
CDAG_API int cdag_graph_save(const cdag_graph *g, const char *path);
CDAG_API int cdag_graph_dump(cdag_graph *g, const char *path);           /* distributed graph: collective,
                                                                            writes one global file at rank 0 */
/* What detection finds (no MPI needed): every candidate the rules accept, not priced. cdag_compile
   and the `cdag` tool's analyze, verify and model then price it (docs/semantics.md, "What pays"). */
CDAG_API int cdag_analyze(cdag_graph *g, const cdag_options *o, cdag_plan **p);
CDAG_API int cdag_plan_report(const cdag_plan *p, FILE *out, int json);           /* schema in docs/format.md */
CDAG_API int cdag_plan_verify(const cdag_graph *g, const cdag_plan *p);           /* simulate both, compare */
CDAG_API int cdag_plan_free(cdag_plan **p);

/* (cdag addition) Facts about a graph: number of ranks and of operations. */
CDAG_API int cdag_graph_info(const cdag_graph *g, int *nprocs, int64_t *nops);

#ifdef __cplusplus
}
#endif
#endif /* CDAG_H */
