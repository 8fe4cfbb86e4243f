/* cdag — src/choose/choose.h: the cost model and the choice of algorithm (no MPI).
 *
 * The alpha-beta model of messages (kernel_model.c), which predicts cdag's circulant
 * kernels and the algorithms MPI libraries use, and the choice, per collective of a plan,
 * between MPI's own collective and one of cdag's kernels (kernel_choice.c). Pure C: the
 * same choice is made offline (`cdag analyze`, `cdag goal --plan`, `cdag model`) and by the
 * MPI executor, so the report says what runs. Lowering a plan to messages, the GOAL writer
 * and the LogGP simulator are in the analysis library (src/model/lower.h). Nothing here
 * calls MPI. */
#ifndef CDAG_CHOOSE_CHOOSE_H
#define CDAG_CHOOSE_CHOOSE_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* The linear cost model: a message of m bytes costs alpha + beta * m seconds; each further
   message to a peer that one is already going to costs overhead; copying a byte in memory
   (packing) costs gamma. */
typedef struct {
  double alpha;     /* latency, s */
  double beta;      /* time per byte, s/B */
  int blocks;       /* block count of the n-block kernels; 0: the model chooses (kern_model_blocks) */
  double overhead;  /* time per further message to the same peer, s */
  double gamma;     /* time per byte copied in memory, s/B */
} kern_model;

typedef enum {
  KERN_ALG_AUTO = 0,    /* let the model choose */
  KERN_ALG_MPI,         /* MPI's own collective (kern_model_choose only) */
  KERN_ALG_CIRCULANT,   /* n-block circulant schedule (allreduce: reduce + bcast) */
  KERN_ALG_CENSUS       /* allreduce: q rounds of whole-vector exchanges (integers, min/max) */
} kern_alg;

/* ---- The cost model (kernel_model.c) ---- */

/* Defaults (shared-memory MPICH: alpha 1e-6 s, beta 2e-10 s/B, overhead KERN_OVERHEAD_DEFAULT,
   gamma KERN_GAMMA_DEFAULT; blocks chosen by the model), then the environment CDAG_ALPHA /
   CDAG_BETA / CDAG_OVERHEAD / CDAG_GAMMA / CDAG_BLOCKS where set. */
kern_model kern_model_default(void);
/* The built-in defaults alone, and the environment's overrides applied to m. */
kern_model kern_model_builtin(void);
void kern__model_env(kern_model *m);
/* Block count of an n-block circulant broadcast of `units` units of `unit` bytes over p
   ranks: n* = sqrt((q-1) beta m / alpha), in [1, units], at most KERN_BLOCKS_MAX (n* reaches
   it past some 200 TB on a fast network; a plan of 2^62 bytes broadcast with n* blocks, 2^24
   then, lowered to 64 M messages for ever). */
#define KERN_BLOCKS_MAX (1 << 16)
int kern_model_blocks(const kern_model *m, int p, uint64_t units, uint64_t unit);
/* Predicted seconds for kind, one that ir/coll_kinds.h marks `kernel` (IR_COLL_BCAST,
   _ALLGATHER, _ALLGATHERV, _REDUCE, _ALLREDUCE; bytes: the message of a bcast/reduce/
   allreduce, one member's block of an allgather, the total of an allgatherv). */
double kern_model_circulant(const kern_model *m, int kind, int p, uint64_t bytes);
double kern_model_census(const kern_model *m, int p, uint64_t bytes);
double kern_model_binomial(const kern_model *m, int kind, int p, uint64_t bytes);
double kern_model_scatter_allgather(const kern_model *m, int kind, int p, uint64_t bytes);
/* MPI's collective or cdag's kernel (KERN_ALG_MPI, _CIRCULANT or _CENSUS), with a one-line
   reason ("circulant 12.1 us < MPI binomial 15.0 us (p=8, 1048576 B)") in reason[len]. The
   kernel must win by 10%. KERN_ALG_CENSUS assumes an order-free op: kern_allreduce_init
   never picks it by itself for floating-point sums. */
kern_alg kern_model_choose(const kern_model *m, int kind, int p, uint64_t bytes, char *reason,
                           size_t len);

/* Residual messages: the largest piece worth packing with others into one message. Packing
   a piece of m bytes costs a copy at each end (2 gamma m) and saves a message (overhead),
   so pieces of at most overhead / (2 gamma) bytes are packed and larger ones travel alone,
   as the graph wrote them. */
uint64_t kern_model_pack_limit(const kern_model *m);
/* The one rule of the split, for the pieces of one pair of ranks taken in plan order: does a
   piece of len bytes travel alone? Those over `limit` do, up to KERN_MAX_ALONE per pair (a
   message tag each); *nalone counts them (start at 0 for each pair). */
#define KERN_MAX_ALONE 4095
int kern_travels_alone(uint64_t len, uint64_t limit, int64_t *nalone);
/* The same for n pieces of len bytes in a row (a strided transfer's blocks): how many of the
   first ones travel alone, counted in *nalone. O(1). */
uint64_t kern_alone_of(uint64_t len, uint64_t n, uint64_t limit, int64_t *nalone);

/* ---- Choosing for a plan's collectives (pure: no MPI call) ---- */

typedef enum { KERN_POLICY_AUTO, KERN_POLICY_MPI, KERN_POLICY_CDAG } kern_policy;
/* The algorithm collective c of pl runs with, and why (one line in reason[len]). Kinds
   without a cdag kernel (scatter, gather, alltoall(v), scatterv, gatherv, reduce_scatter,
   barrier) and reductions the kernels cannot do always run as MPI's collective.
   KERN_POLICY_MPI / _CDAG force the choice where a kernel exists; _AUTO asks the model.
   Census is chosen only for order-free reductions (integers, or min/max). */
struct cdag_plan;
kern_alg kern_choose_coll(const struct cdag_plan *pl, int64_t c, const kern_model *m, kern_policy policy,
                          char *reason, size_t len);
/* How one collective runs and why. */
typedef struct {
  int alg;                 /* kern_alg: MPI's collective or one of cdag's kernels */
  char name[16];           /* "mpi", "circulant", "census" */
  char why[208];           /* one line: the model's comparison, the policy, or what prevents a kernel */
} kern_choice;

/* The most sizes a table of measured costs holds (loggp_params, machine files). */
#define LOGGP_TAB_MAX 32
#define LOGGP_TAB_STR "32"

/* The LogGOPS parameters (LogGOPSim's names; src/model/loggp.c runs graphs under them). */
typedef struct {
  double L;      /* latency, us */
  double o;      /* CPU overhead per message (send and receive), us */
  double g;      /* gap between messages on one NIC (sending and receiving apart), us */
  double G;      /* gap per byte, us/B */
  double O;      /* CPU overhead per byte, us/B */
  uint64_t S;    /* messages above S bytes use rendezvous */
  double copy;   /* local copy / reduce, us/B */
  double rcopy;  /* a copy that fills the send buffer of a message above S or empties the receive
                    buffer of one, us/B (the peer reads or wrote those bytes in place, so the copy
                    meets them in the other core's cache: 6 times copy on this machine); 0: copy */
  double queue;  /* per receive posted and waiting on the rank, what handling a message costs its
                    CPU more, us (MPI searches its queues: a rank with 2,000 receives posted
                    handles each message slower than one with 16); 0 in LogGOPSim */
  /* Measured costs by message size (`cdag calibrate`'s table; ntab = 0: none). A table
     replaces the linear terms (s-1)G and (s-1)O, and L, which lines cannot fit on a real MPI
     (shared memory: a step from 64 B to 128 B, a jump where the protocol changes). At
     tab_size[i] bytes, tab_pair[i] is the time per message pair of a stream of exchanges
     (each rank sends one and receives one) and tab_round[i] the time of one exchange alone;
     linear between sizes. A table also prices a message a rank sends itself as cdag runs it,
     a local copy, not as MPI would move it. */
  int ntab;
  double tab_size[LOGGP_TAB_MAX];    /* bytes, ascending */
  double tab_pair[LOGGP_TAB_MAX];    /* us */
  double tab_round[LOGGP_TAB_MAX];   /* us */
} loggp_params;

/* The LogGOPS parameters of the alpha-beta model m: o = g = overhead, L = alpha - 2o (at least
   0), G = beta, copy = gamma, O = 0, S = 65535. The inverse of what `cdag model` does with its
   flags (alpha = L + 2o, beta = G). */
loggp_params kern_model_loggp(const kern_model *m);

/* Room for where a model's parameters came from (src/exec/machine.h), NUL included. */
#define KERN_SOURCE_LEN 160

/* The last choice (src/model/price.c): the plan as a whole against the graph as written, both
   run through the LogGOPS model; the plan runs only when it is faster. */
typedef struct {
  int priced;              /* 1: the times below are the model's; 0: not priced (why says why) */
  double written_us;       /* the graph as written */
  double plan_us;          /* the plan lowered to the messages it sends, computations included */
  int bound;               /* 1: plan_us is a lower bound, not lowered (its residual reductions alone
                              keep one rank receiving longer than the graph as written takes) */
  loggp_params params;     /* what they were computed with */
  char source[KERN_SOURCE_LEN];  /* where params came from: "built in", "measured", "machine file PATH", "options" */
  char why[200];           /* not priced: the reason (options.price = 0, the model's error) */
} kern_price;

/* The choice stage's results for one plan, kept beside it (pl->chosen): the plan is
   detect's, these are ours. */
typedef struct kern_choices {
  kern_choice *coll;       /* per collective of the plan */
  /* How the residual messages run: per pair of ranks, pieces up to pack_limit bytes share
     one message, larger ones travel alone; msgs_sent messages carry the transfers then. */
  uint64_t pack_limit;
  int64_t msgs_sent;
  int64_t msgs_alone;      /* pieces larger than pack_limit, each a message of its own */
  double msgs_overhead, msgs_gamma;   /* the model's per-message overhead (s) and copy cost (s/B) */
  kern_price *price;       /* the first plan of a chain only (the whole graph's); NULL on the
                              others (a stage's choices are 200 B, the price 1.2 KB more) */
} kern_choices;

/* Chooses for every collective of pl (kern_choose_coll), then checks that a kernel can run
   the plan's slots as they are (reductions: a type/op the kernels do; every recv slot empty
   or of the size the kernel delivers there); where not, MPI's collective, and the reason
   says why. Sets pl->chosen (replaced if set), with a
   zeroed price when pl is the first plan of its chain (stage 0). Pure: the same on every rank.
   CDAG_OK or CDAG_ERR_NOMEM. */
int kern_choose_plan(struct cdag_plan *pl, const kern_model *m, kern_policy policy);
/* Why the residual messages travel as they do, as the report says it ("per pair of ranks,
   pieces up to ... packed into one message, ..."), into buf (n bytes): formatted when read,
   not for every stage of a plan of thousands. */
void kern_msgs_why(const kern_choices *c, char *buf, size_t n);
/* Frees pl->chosen and sets it to NULL (pl NULL: nothing). */
void kern_choices_free(struct cdag_plan *pl);
/* "mpi", "circulant", "census" ("auto" for KERN_ALG_AUTO). */
const char *kern_alg_name(kern_alg alg);

/* Block count of an n-block schedule moving `units` units of `unit` bytes over p ranks:
   `forced` when > 0, else m->blocks when > 0, else kern_model_blocks; capped to
   [1, units]. The kernels and lowering use this one rule, so both split alike. */
int kern_model_nblocks(const kern_model *m, int forced, int p, uint64_t units, uint64_t unit);
/* Block b of n over `units` units of `unit` bytes: the first units % n blocks get one unit
   more. Offset and length in bytes. */
void kern_block(uint64_t units, uint64_t unit, int n, int64_t b, uint64_t *off, uint64_t *len);

#endif
