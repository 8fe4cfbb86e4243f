/* cdag tests — tests/ir/test_collective.c: native collectives, communicators and waits.
 *
 * Every kind, on random communicators (a random subset of the ranks in a random order,
 * random root), in place and not: the graph runs in the simulator and its memory must hold
 * what MPI's call defines, computed here from the initial memory by the definitions alone
 * (not from ir/collective.c's algorithms). Then the compiled plan must equal the graph
 * (exec_verify) and, on communicators of every rank, the report must call the collective
 * native. Also: waits order later ops; members that disagree or miss a call; a
 * communicator without the rank; ops in the reserved scratch range; text and wire round
 * trips (a distributed graph expands its calls on its own process). */
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "support/graphs.h"
#include "exec/sim/sim.h"
#include "format/format.h"
#include "wire/wire.h"

enum { IN = 0x1000, OUT = 0x100000 };

static uint64_t test_rand(uint64_t *s) {   /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

typedef struct {
  int kind, n, root, inplace, comm;   /* root: member index */
  int32_t ranks[8];
  uint64_t count, block;              /* count: bytes (blocks) or int32 elements */
} call_case;

static int reduces(int k) { return ir_coll_get(k)->reduces; }
static int rooted(int k) { return k == IR_COLL_BCAST || k == IR_COLL_GATHER || k == IR_COLL_SCATTER || k == IR_COLL_REDUCE; }

/* The in/out of member m: in place, the buffer MPI_IN_PLACE stands for. */
static void buffers(const call_case *c, int m, uint64_t *in, uint64_t *out) {
  *in = IN;
  *out = OUT;
  if (!c->inplace) return;
  switch (c->kind) {
    case IR_COLL_GATHER: if (m == c->root) *in = OUT + (uint64_t)m * c->block; break;
    case IR_COLL_ALLGATHER: *in = OUT + (uint64_t)m * c->block; break;
    case IR_COLL_SCATTER: if (m == c->root) *out = IN + (uint64_t)m * c->block; break;
    case IR_COLL_REDUCE: if (m == c->root) *in = OUT; break;
    default: *in = OUT; break;
  }
}

static cdag_graph *build(const call_case *c, int P) {
  cdag_graph *g;
  CK_OK(ir_graph_new(P, -1, &g));
  if (c->comm) CK_OK(ir_add_comm(g, c->comm, c->ranks, c->n));
  /* every byte the oracle reads is memory of the simulator (non-roots' unused buffers too);
     first, so that the calls' messages write the results last */
  for (int r = 0; r < P; r++) {
    CK_OK(ir_add_copy(g, r, IN, IN, (uint64_t)c->n * c->block, NULL));
    CK_OK(ir_add_copy(g, r, OUT, OUT, (uint64_t)c->n * c->block, NULL));
  }
  for (int m = 0; m < c->n; m++) {
    uint64_t in, out;
    buffers(c, m, &in, &out);
    CK_OK(ir_add_coll(g, c->ranks[m], c->kind, c->comm, rooted(c->kind) ? c->ranks[c->root] : -1, in, out, c->count,
                      CDAG_INT32, CDAG_SUM, NULL));
  }
  CK_OK(ir_finalize(g));
  return g;
}

static int32_t word(sim_mem *m, int rank, uint64_t a) {
  int32_t v;
  memcpy(&v, sim_mem_at(m, rank, a, 4), 4);
  return v;
}

/* Element e of the reduction of every member's block `blk` of its input, from init. */
static int32_t sum_of(const call_case *c, sim_mem *init, uint64_t blk, uint64_t e) {
  uint32_t s = 0;
  for (int j = 0; j < c->n; j++) {
    uint64_t in, out;
    buffers(c, j, &in, &out);
    s += (uint32_t)word(init, c->ranks[j], in + blk * c->block + 4 * e);
  }
  return (int32_t)s;
}

static void expect_bytes(sim_mem *after, int rank, uint64_t a, sim_mem *init, int from, uint64_t b, uint64_t len) {
  if (!len) return;
  ck_assert_msg(memcmp(sim_mem_at(after, rank, a, len), sim_mem_at(init, from, b, len), len) == 0,
                "rank %d at 0x%llx: not the bytes of rank %d at 0x%llx", rank, (unsigned long long)a, from,
                (unsigned long long)b);
}

/* What MPI's definition leaves in member m's receive buffer. */
static void check_member(const call_case *c, int m, sim_mem *init, sim_mem *after) {
  int r = c->ranks[m], root = c->ranks[c->root];
  uint64_t S = c->block, in, out, rin, rout;
  buffers(c, m, &in, &out);
  buffers(c, c->root, &rin, &rout);
  switch (c->kind) {
    case IR_COLL_BCAST: expect_bytes(after, r, OUT, init, root, OUT, S); break;   /* out is bcast's buffer */
    case IR_COLL_GATHER:
      for (int j = 0; m == c->root && j < c->n; j++) {
        uint64_t jin, jout;
        buffers(c, j, &jin, &jout);
        expect_bytes(after, r, OUT + (uint64_t)j * S, init, c->ranks[j], jin, S);
      }
      break;
    case IR_COLL_SCATTER: expect_bytes(after, r, out, init, root, rin + (uint64_t)m * S, S); break;
    case IR_COLL_ALLGATHER:
      for (int j = 0; j < c->n; j++) {
        uint64_t jin, jout;
        buffers(c, j, &jin, &jout);
        expect_bytes(after, r, OUT + (uint64_t)j * S, init, c->ranks[j], jin, S);
      }
      break;
    case IR_COLL_ALLTOALL:
      for (int j = 0; j < c->n; j++) {
        uint64_t jin, jout;
        buffers(c, j, &jin, &jout);
        expect_bytes(after, r, OUT + (uint64_t)j * S, init, c->ranks[j], jin + (uint64_t)m * S, S);
      }
      break;
    case IR_COLL_REDUCE:
    case IR_COLL_ALLREDUCE:
    case IR_COLL_REDUCE_SCATTER_BLOCK: {
      if (c->kind == IR_COLL_REDUCE && m != c->root) break;
      uint64_t blk = c->kind == IR_COLL_REDUCE_SCATTER_BLOCK ? (uint64_t)m : 0;
      for (uint64_t e = 0; e < c->count; e++)
        ck_assert_msg(word(after, r, OUT + 4 * e) == sum_of(c, init, blk, e), "%s: rank %d element %llu",
                      ir_coll_name(c->kind), r, (unsigned long long)e);
      break;
    }
    case IR_COLL_SCAN:     /* members 0..m */
    case IR_COLL_EXSCAN:   /* members 0..m-1; member 0's out as it was */
      for (uint64_t e = 0; e < c->count; e++) {
        uint32_t s = 0;
        int last = c->kind == IR_COLL_SCAN ? m : m - 1;
        for (int j = 0; j <= last; j++) {
          uint64_t jin, jout;
          buffers(c, j, &jin, &jout);
          s += (uint32_t)word(init, c->ranks[j], jin + 4 * e);
        }
        int32_t want = last >= 0 ? (int32_t)s : word(init, r, OUT + 4 * e);
        ck_assert_msg(word(after, r, OUT + 4 * e) == want, "%s: rank %d element %llu", ir_coll_name(c->kind), r,
                      (unsigned long long)e);
      }
      break;
    default: break;
  }
}

static void random_case(uint64_t *s, int P, call_case *c) {
  memset(c, 0, sizeof *c);
  do c->kind = (int)(test_rand(s) % IR_COLL_NKINDS);   /* a kind a program may call */
  while (!ir_coll_get(c->kind)->native || ir_coll_get(c->kind)->vector);   /* vector kinds: below */
  c->comm = test_rand(s) % 2 ? 1 + (int)(test_rand(s) % 5) : 0;
  c->n = c->comm ? 1 + (int)(test_rand(s) % (uint64_t)P) : P;
  int32_t perm[8];
  for (int i = 0; i < P; i++) perm[i] = i;
  for (int i = P - 1; c->comm && i > 0; i--) {
    int j = (int)(test_rand(s) % (uint64_t)(i + 1)), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  memcpy(c->ranks, perm, sizeof perm);
  c->root = (int)(test_rand(s) % (uint64_t)c->n);
  c->inplace = (int)(test_rand(s) % 2);
  c->count = 1 + test_rand(s) % 5;
  if (!reduces(c->kind)) c->count *= 4;
  c->block = reduces(c->kind) ? 4 * c->count : c->count;
  if (c->kind == IR_COLL_BARRIER) c->block = c->count = 0;
}

START_TEST(every_kind_against_its_definition) {
  uint64_t s = 42;
  long iters = cdag_test_iterations(600);
  for (long it = 0; it < iters; it++) {
    int P = 1 + (int)(test_rand(&s) % 6);
    call_case c;
    random_case(&s, P, &c);
    cdag_graph *g = build(&c, P);
    sim_mem *init, *after;
    CK_OK(sim_mem_create(g, &init));
    sim_mem_fill_random(init, test_rand(&s));
    CK_OK(sim_mem_clone(init, &after));
    ck_assert_msg(sim_run_graph(g, after, test_rand(&s) | 1) == CDAG_OK, "%s", cdag_error_message());
    for (int m = 0; m < c.n; m++) check_member(&c, m, init, after);
    cdag_plan *p = NULL;
    CK_OK(cdag_analyze(g, NULL, &p));
    ck_assert_msg(exec_verify(g, p, test_rand(&s), 2) == CDAG_OK, "%s", cdag_error_message());
    for (int64_t i = 0; i < p->ncolls; i++) ck_assert(p->native && p->native[i]);
    ck_assert_int_eq(p->native_calls[c.kind], 1);
    cdag_plan_free(&p);
    sim_mem_free(init);
    sim_mem_free(after);
    cdag_graph_free(&g);
  }
}
END_TEST

/* On the whole communicator, the report names what the program called and nothing else. */
START_TEST(report_calls_them_native) {
  cdag_graph *g = cdag_test_text_graph("num_ranks 4\n"
                 "rank 0 { bcast 64b root 0 addr 0x100\n allreduce 4 int32 sum in 0x200 out 0x300\n"
                 "  recv 8b from 1 addr 0x400\n recv 8b from 2 addr 0x408\n recv 8b from 3 addr 0x410 }\n"
                 "rank 1 { bcast 64b root 0 addr 0x100\n allreduce 4 int32 sum in 0x200 out 0x300\n send 8b to 0 addr 0x500 }\n"
                 "rank 2 { bcast 64b root 0 addr 0x100\n allreduce 4 int32 sum in 0x200 out 0x300\n send 8b to 0 addr 0x500 }\n"
                 "rank 3 { bcast 64b root 0 addr 0x100\n allreduce 4 int32 sum in 0x200 out 0x300\n send 8b to 0 addr 0x500 }\n");
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, NULL, &p));
  ck_assert_int_eq(p->ncolls, 3);
  int kinds = 0;
  for (int64_t i = 0; i < p->ncolls; i++) {
    ck_assert_int_eq(p->native[i], p->colls[i].kind != DET_GATHER);   /* the gather is hand-written */
    kinds |= 1 << p->colls[i].kind;
  }
  ck_assert_int_eq(kinds, 1 << DET_BCAST | 1 << DET_ALLREDUCE | 1 << DET_GATHER);
  char buf[4096] = {0};
  FILE *f = fmemopen(buf, sizeof buf - 1, "w");
  CK_OK(cdag_plan_report(p, f, 0));
  fclose(f);
  ck_assert_ptr_nonnull(strstr(buf, "native collective calls: 2 (1 bcast, 1 allreduce); hand-written collectives found: 1"));
  ck_assert_ptr_nonnull(strstr(buf, "hand-written: the program built it from messages"));
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* A call on a derived datatype is recorded as the call on a packed buffer and copies in and
   out of it: the collective found from the column to the columns is still the program's call,
   and a piece it leaves residual is a native call's data (a user's review of recordings: a
   bcast of an MPI_Type_vector column was "hand-written"). */
START_TEST(packed_call_stays_native) {
  const char *rank_text[3] = {
      "rank 0 { copy 64b from 0x1000 to 0x9000 blocks 8 from_stride 64\n bcast 64b root 0 addr 0x9000\n"
      " scratch 0x9000 64 }\n",
      "rank 1 { bcast 64b root 0 addr 0x9000\n copy 64b from 0x9000 to 0x1000 blocks 8 to_stride 64\n"
      " scratch 0x9000 64 }\n",
      "rank 2 { bcast 64b root 0 addr 0x9000\n copy 64b from 0x9000 to 0x1000 blocks 8 to_stride 64\n"
      " scratch 0x9000 64 }\n"};
  char text[1024];
  snprintf(text, sizeof text, "num_ranks 3\n%s%s%s", rank_text[0], rank_text[1], rank_text[2]);
  cdag_graph *g = cdag_test_text_graph(text);
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, NULL, &p));
  ck_assert_int_eq(p->ncolls, 1);
  ck_assert_int_eq(p->colls[0].kind, DET_BCAST);
  ck_assert(p->native && p->native[0]);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  /* at 2 ranks the one transfer stays residual: a native call's data, counted so */
  g = cdag_test_text_graph("num_ranks 2\n"
                           "rank 0 { copy 64b from 0x1000 to 0x9000 blocks 8 from_stride 64\n bcast 64b root 0 addr 0x9000\n"
                           " scratch 0x9000 64 }\n"
                           "rank 1 { bcast 64b root 0 addr 0x9000\n copy 64b from 0x9000 to 0x1000 blocks 8 to_stride 64\n"
                           " copy 8b from 0x2000 to 0x1008\n scratch 0x9000 64 }\n");
  CK_OK(cdag_analyze(g, NULL, &p));
  ck_assert_int_eq(p->ncolls, 0);
  ck_assert_int_gt(p->nxfers, 1);
  int64_t from_call = 0;
  for (int64_t i = 0; i < p->nxfers; i++) from_call += p->xfers[i].src == 0;
  ck_assert_int_eq(p->native_residual, from_call);   /* the blocks the call brought; not the local copy over one */
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

static int has_pred(const cdag_graph *g, int32_t op, int32_t before) {
  for (int32_t k = g->pred_start[op]; k < g->pred_start[op + 1]; k++)
    if (g->pred[k] == before) return 1;
  return 0;
}

/* isend a; isend b; wait a b; send c: c depends on the wait, the wait on a and b; two
   sends with no wait between stay concurrent; `wait` on a blocking op orders what follows. */
START_TEST(waits_order_what_follows) {
  cdag_graph *g = cdag_test_text_graph("num_ranks 2\n"
                                       "rank 0 {\n a: send 8b to 1 addr 0\n b: send 8b to 1 tag 1 addr 8\n wait a b\n"
                                       " c: send 8b to 1 tag 2 addr 16\n d: send 8b to 1 tag 3 addr 24 wait\n e: send 8b to 1 tag 4 addr 32\n}\n"
                                       "rank 1 {\n recv 8b from 0 addr 0\n recv 8b from 0 tag 1 addr 8\n recv 8b from 0 tag 2 addr 16\n"
                                       " recv 8b from 0 tag 3 addr 24\n recv 8b from 0 tag 4 addr 32\n}\n");
  int32_t a = 0, b = 1, w = 2, c = 3, d = 4, e = 5;
  ck_assert_int_eq(g->os[w], IR_OS_WAIT);
  ck_assert(has_pred(g, w, a) && has_pred(g, w, b) && has_pred(g, c, w) && has_pred(g, e, d));
  ck_assert(!has_pred(g, b, a) && !has_pred(g, d, c));
  ck_assert(has_pred(g, d, w));
  cdag_graph_free(&g);
}
END_TEST

START_TEST(disagreements_are_errors) {
  const char *kind = "num_ranks 2\nrank 0 { bcast 8b root 0 addr 0 }\nrank 1 { gather 8b root 0 in 0 }\n";
  ck_assert_int_eq(cdag_test_load_rc(kind), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "disagree on the call"));
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "has bcast"));
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "has gather"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 { bcast 8b root 0 addr 0 }\nrank 1 { bcast 8b root 1 addr 0 }\n"),
                   CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "disagree on the root"));
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "has root 0"));
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "has root 1"));
  /* each difference names both values (a user editing a recording met "(type or op)") */
  const char *differ[][3] = {
      {"allreduce 2 int32 sum", "elements", "has 1 elements"},
      {"allreduce 1 int64 sum", "type", "has int64"},
      {"allreduce 1 int32 max", "op", "has max"},
  };
  for (int k = 0; k < 3; k++) {
    char text[256];
    snprintf(text, sizeof text, "num_ranks 2\nrank 0 { allreduce 1 int32 sum in 0 out 8 }\nrank 1 { %s in 0 out 8 }\n",
             differ[k][0]);
    ck_assert_int_eq(cdag_test_load_rc(text), CDAG_ERR_FORMAT);
    ck_assert_msg(strstr(cdag_error_message(), differ[k][1]) && strstr(cdag_error_message(), differ[k][2]), "%s",
                  cdag_error_message());
  }
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 3\nrank 0 { barrier\n barrier }\nrank 1 { barrier\n barrier }\nrank 2 { barrier }\n"),
                   CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "native collective 2 on communicator 0"));
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "not called by rank 2"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 3\ncomm 1 ranks 0 2\nrank 1 { barrier comm 1 }\n"), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "does not contain rank 1"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 3\nrank 1 { barrier comm 4 }\n"), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "not declared"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 3\ncomm 1 ranks 0 2 0\n"), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "twice"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 { reduce 2 int32 sum root 0 in 0 out 8\n"
                                     " copy 8b from 0 to 0x7fff000000000000 }\nrank 1 { reduce 2 int32 sum root 0 in 0 }\n"),
                   CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "scratch of native collectives"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 { wait nowhere }\n"), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "unknown label 'nowhere'"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 { wait }\n"), CDAG_ERR_FORMAT);
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 { gather 8b root 0 in 0 }\nrank 1 { gather 8b root 0 in 0 }\n"),
                   CDAG_ERR_FORMAT);   /* the root names its out */
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "expected 'out'"));
}
END_TEST

START_TEST(text_round_trip) {
  const char *text = "num_ranks 3\ncomm 2 ranks 2 0\n"
                     "rank 0 {\n  x: send 4b to 1 addr 0x10\n  wait x\n  alltoall 4b in 0x100 out 0x200 comm 2\n"
                     "  reduce_scatter_block 2 int64 max in 0x300 out 0x300\n  scatter 8b root 1 out 0x400\n}\n"
                     "rank 1 {\n  recv 4b from 0 addr 0x10 wait\n  reduce_scatter_block 2 int64 max in 0x300 out 0x400\n"
                     "  scatter 8b root 1 in 0x500 out 0x400\n}\n"
                     "rank 2 {\n  alltoall 4b in 0x100 out 0x200 comm 2\n  reduce_scatter_block 2 int64 max in 0x300 out 0x400\n"
                     "  scatter 8b root 1 out 0x400\n}\n";
  cdag_graph *g = cdag_test_text_graph(text);
  char *a = cdag_test_save_str(g);
  ck_assert_ptr_nonnull(strstr(a, "comm 2 ranks 2 0\n"));
  ck_assert_ptr_nonnull(strstr(a, "  x: send 4b to 1 addr 0x10\n  wait x\n"));
  ck_assert_ptr_nonnull(strstr(a, "  recv 4b from 0 addr 0x10 wait\n"));
  ck_assert_ptr_nonnull(strstr(a, "  scatter 8b root 1 in 0x500 out 0x400\n"));
  ck_assert_ptr_null(strstr(a, "0x7fff"));   /* the calls' scratch is theirs, not the file's */
  cdag_graph *h = cdag_test_text_graph(a);
  char *b = cdag_test_save_str(h);
  ck_assert_str_eq(a, b);
  ck_assert_int_eq(h->nops, g->nops);
  free(a);
  free(b);
  cdag_graph_free(&g);
  cdag_graph_free(&h);
}
END_TEST

/* Each process expands its own calls (scratch of the graph's own for the reduce); the
   gathered graph is the same collective. */
START_TEST(distributed_calls_cross_the_wire) {
  enum { P = 4 };
  static int32_t in[P][4], out[P][4];
  cdag_graph *global;
  CK_OK(ir_graph_new(P, -1, &global));
  int32_t members[3] = {3, 1, 2};
  for (int r = 0; r < P; r++) {
    cdag_graph *g;
    CK_OK(ir_graph_new(P, r, &g));
    CK_OK(ir_add_comm(g, 5, members, 3));
    CK_OK(ir_add_coll(g, r, IR_COLL_ALLREDUCE, 0, -1, (uint64_t)(uintptr_t)in[r], (uint64_t)(uintptr_t)out[r], 4,
                      CDAG_INT32, CDAG_SUM, NULL));
    if (r) CK_OK(ir_add_coll(g, r, IR_COLL_BARRIER, 5, -1, 0, 0, 0, 0, 0, NULL));
    wire_buf w = {0};
    CK_OK(wire_encode_rank(g, &w));
    CK_OK(wire_decode_rank(global, w.buf, w.len, NULL));
    wire_free(&w);
    cdag_graph_free(&g);
  }
  CK_OK(ir_finalize(global));
  ck_assert_int_eq(global->ncalls, 2 * P - 1);
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(global, NULL, &p));
  ck_assert_int_eq(p->native_calls[IR_COLL_ALLREDUCE], 1);
  ck_assert_int_eq(p->native_calls[IR_COLL_BARRIER], 1);
  int found = 0;
  for (int64_t i = 0; i < p->ncolls; i++) found += p->colls[i].kind == DET_ALLREDUCE && p->native[i];
  ck_assert_int_eq(found, 1);
  CK_OK(exec_verify(global, p, 3, 2));
  cdag_plan_free(&p);
  cdag_graph_free(&global);
}
END_TEST

/* ---- the vector kinds: blocks of random sizes at random displacements ---- */

enum { VSPAN = 512 };   /* bytes of in and out every member has */

/* alltoallv's lists: alltoallv and the neighbourhood kinds */
static int a2a(int kind) { return ir_coll_lists(kind, 0) == 4; }

typedef struct {
  int kind, n, root, inplace;         /* root: member index; comm 0, ranks 0..n-1 */
  uint64_t cnt[8][8];                 /* cnt[i][j]: bytes i sends j (reduce_scatter: elements of block j) */
  uint64_t sd[8][8], rd[8][8];        /* i's displacement of its block for / from j */
} vcase;

/* Places n blocks of len[j] bytes in a random order with random gaps: at[j]. */
static void place(uint64_t *s, int n, const uint64_t *len, uint64_t *at) {
  int order[8];
  for (int j = 0; j < n; j++) order[j] = j;
  for (int j = n - 1; j > 0; j--) {
    int k = (int)(test_rand(s) % (uint64_t)(j + 1)), t = order[j];
    order[j] = order[k];
    order[k] = t;
  }
  uint64_t end = 0;
  for (int k = 0; k < n; k++) {
    end += 4 * (test_rand(s) % 2);
    at[order[k]] = end;
    end += len[order[k]];
  }
}

static void random_vcase(uint64_t *s, vcase *c) {
  static const int kinds[] = {IR_COLL_GATHERV, IR_COLL_SCATTERV, IR_COLL_ALLGATHERV, IR_COLL_ALLTOALLV,
                              IR_COLL_REDUCE_SCATTER, IR_COLL_ALLTOALLW, IR_COLL_NEIGHBOR_ALLGATHER, IR_COLL_NEIGHBOR_ALLGATHERV,
                              IR_COLL_NEIGHBOR_ALLTOALL, IR_COLL_NEIGHBOR_ALLTOALLV, IR_COLL_NEIGHBOR_ALLTOALLW};
  memset(c, 0, sizeof *c);
  c->kind = kinds[test_rand(s) % (sizeof kinds / sizeof *kinds)];
  c->n = 1 + (int)(test_rand(s) % 6);
  c->root = (int)(test_rand(s) % (uint64_t)c->n);
  c->inplace = !a2a(c->kind) && (int)(test_rand(s) % 2);
  for (int i = 0; i < c->n; i++)
    for (int j = 0; j < c->n; j++) {   /* gatherv, scatterv, allgatherv, reduce_scatter: member j's size, alike */
      int each = a2a(c->kind);
      uint64_t fresh = c->kind == IR_COLL_REDUCE_SCATTER ? test_rand(s) % 5 : 4 * (test_rand(s) % 5);
      c->cnt[i][j] = each || i == 0 ? fresh : c->cnt[0][j];
    }
  for (int i = 0; i < c->n; i++) {
    uint64_t col[8];
    for (int j = 0; j < c->n; j++) col[j] = c->cnt[j][i];   /* what i receives from j */
    place(s, c->n, c->cnt[i], c->sd[i]);
    place(s, c->n, a2a(c->kind) ? col : c->cnt[i], c->rd[i]);
  }
}

/* Member m's in and out (in place: the block MPI_IN_PLACE stands for), its lists. */
static void vbuffers(const vcase *c, int m, uint64_t *in, uint64_t *out, uint64_t *v) {
  int n = c->n, root = m == c->root;
  *in = IN;
  *out = OUT;
  switch (c->kind) {
    case IR_COLL_GATHERV:
      if (c->inplace && root) *in = OUT + c->rd[m][m];
      for (int j = 0; j < n; j++) v[j] = c->cnt[m][j], v[n + j] = c->rd[m][j];
      break;
    case IR_COLL_SCATTERV:
      if (c->inplace && root) *out = IN + c->sd[m][m];
      for (int j = 0; j < n; j++) v[j] = c->cnt[m][j], v[n + j] = c->sd[m][j];
      break;
    case IR_COLL_ALLGATHERV:
      if (c->inplace) *in = OUT + c->rd[m][m];
      for (int j = 0; j < n; j++) v[j] = c->cnt[m][j], v[n + j] = c->rd[m][j];
      break;
    case IR_COLL_ALLTOALLV:
    case IR_COLL_ALLTOALLW:
    case IR_COLL_NEIGHBOR_ALLGATHER:
    case IR_COLL_NEIGHBOR_ALLGATHERV:
    case IR_COLL_NEIGHBOR_ALLTOALL:
    case IR_COLL_NEIGHBOR_ALLTOALLV:
    case IR_COLL_NEIGHBOR_ALLTOALLW:
      for (int j = 0; j < n; j++)
        v[j] = c->cnt[m][j], v[n + j] = c->sd[m][j], v[2 * n + j] = c->cnt[j][m], v[3 * n + j] = c->rd[m][j];
      break;
    default:   /* reduce_scatter: in place only where the own block comes first */
      if (c->inplace && m == 0) *in = OUT;
      for (int j = 0; j < n; j++) v[j] = c->cnt[m][j];
  }
}

static uint64_t vcount(const vcase *c, int m) {
  uint64_t sum = 0;
  for (int j = 0; j < c->n; j++) sum += c->cnt[m][j];
  return a2a(c->kind) ? sum : c->cnt[m][m];
}

static cdag_graph *vbuild(const vcase *c) {
  cdag_graph *g;
  CK_OK(ir_graph_new(c->n, -1, &g));
  for (int r = 0; r < c->n; r++) {
    CK_OK(ir_add_copy(g, r, IN, IN, VSPAN, NULL));
    CK_OK(ir_add_copy(g, r, OUT, OUT, VSPAN, NULL));
  }
  for (int m = 0; m < c->n; m++) {
    uint64_t in, out, v[32];
    vbuffers(c, m, &in, &out, v);
    int rooted = c->kind == IR_COLL_GATHERV || c->kind == IR_COLL_SCATTERV;
    CK_OK(ir_add_collv(g, m, c->kind, 0, rooted ? c->root : -1, in, out, vcount(c, m), CDAG_INT32, CDAG_SUM,
                       rooted && m != c->root ? NULL : v, NULL));
  }
  ck_assert_msg(ir_finalize(g) == CDAG_OK, "%s %d: %s", ir_coll_name(c->kind), c->inplace, cdag_error_message());
  return g;
}

/* What MPI's definition leaves in member m's receive buffer. */
static void check_vmember(const vcase *c, int m, sim_mem *init, sim_mem *after) {
  uint64_t in, out, v[32], jin, jout, jv[32];
  vbuffers(c, m, &in, &out, v);
  for (int j = 0; j < c->n; j++) {
    vbuffers(c, j, &jin, &jout, jv);
    switch (c->kind) {
      case IR_COLL_GATHERV:
        if (m == c->root) expect_bytes(after, m, OUT + c->rd[m][j], init, j, jin, c->cnt[m][j]);
        break;
      case IR_COLL_SCATTERV:
        if (j == c->root) expect_bytes(after, m, out, init, j, IN + c->sd[j][m], c->cnt[j][m]);
        break;
      case IR_COLL_ALLGATHERV: expect_bytes(after, m, OUT + c->rd[m][j], init, j, jin, c->cnt[m][j]); break;
      case IR_COLL_ALLTOALLV:
      case IR_COLL_ALLTOALLW:
      case IR_COLL_NEIGHBOR_ALLGATHER:
      case IR_COLL_NEIGHBOR_ALLGATHERV:
      case IR_COLL_NEIGHBOR_ALLTOALL:
      case IR_COLL_NEIGHBOR_ALLTOALLV:
      case IR_COLL_NEIGHBOR_ALLTOALLW: expect_bytes(after, m, OUT + c->rd[m][j], init, j, IN + c->sd[j][m], c->cnt[j][m]); break;
      default: break;
    }
  }
  if (c->kind != IR_COLL_REDUCE_SCATTER) return;
  uint64_t first = 0;
  for (int j = 0; j < m; j++) first += c->cnt[m][j];
  for (uint64_t e = 0; e < c->cnt[m][m]; e++) {
    uint32_t sum = 0;
    for (int j = 0; j < c->n; j++) {
      vbuffers(c, j, &jin, &jout, jv);
      sum += (uint32_t)word(init, j, jin + 4 * (first + e));
    }
    ck_assert_msg(word(after, m, OUT + 4 * e) == (int32_t)sum, "reduce_scatter: rank %d element %llu", m,
                  (unsigned long long)e);
  }
}

START_TEST(vector_kinds_against_their_definition) {
  uint64_t s = 7;
  long iters = cdag_test_iterations(400);
  for (long it = 0; it < iters; it++) {
    vcase c;
    random_vcase(&s, &c);
    cdag_graph *g = vbuild(&c);
    sim_mem *init, *after;
    CK_OK(sim_mem_create(g, &init));
    sim_mem_fill_random(init, test_rand(&s));
    CK_OK(sim_mem_clone(init, &after));
    ck_assert_msg(sim_run_graph(g, after, test_rand(&s) | 1) == CDAG_OK, "%s", cdag_error_message());
    for (int m = 0; m < c.n; m++) check_vmember(&c, m, init, after);
    cdag_plan *p = NULL;
    CK_OK(cdag_analyze(g, NULL, &p));
    ck_assert_msg(exec_verify(g, p, test_rand(&s), 2) == CDAG_OK, "%s", cdag_error_message());
    for (int64_t i = 0; i < p->ncolls; i++) ck_assert(p->native && p->native[i]);
    ck_assert_int_eq(p->native_calls[c.kind], 1);
    char *text = cdag_test_save_str(g);   /* the lists survive the file */
    cdag_graph *back = cdag_test_text_graph(text);
    char *again = cdag_test_save_str(back);
    ck_assert_str_eq(text, again);
    free(text);
    free(again);
    cdag_graph_free(&back);
    cdag_plan_free(&p);
    sim_mem_free(init);
    sim_mem_free(after);
    cdag_graph_free(&g);
  }
}
END_TEST

/* Members whose lists disagree, and lists that do not fit, are refused. */
START_TEST(vector_disagreements_are_errors) {
  /* the root says member 1 sends 8 bytes, member 1 sends 4 */
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 { gatherv 4b root 0 in 0 out 0x100 counts 4 8 displs 0 4 }\n"
                                     "rank 1 { gatherv 4b root 0 in 0 }\n"), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "disagree (counts)"));
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "gives member 1 8"));
  /* what 0 sends 1 is not what 1 receives from 0 */
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\n"
                                     "rank 0 { alltoallv 8b in 0 out 0x100 counts 4 4 displs 0 4 recvcounts 4 4 recvdispls 0 4 }\n"
                                     "rank 1 { alltoallv 8b in 0 out 0x100 counts 4 4 displs 0 4 recvcounts 8 4 recvdispls 0 8 }\n"),
                   CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "disagree (counts)"));
  /* reduce_scatter: the members' counts differ */
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 { reduce_scatter 1 int32 sum in 0 out 0x100 counts 1 1 }\n"
                                     "rank 1 { reduce_scatter 2 int32 sum in 0 out 0x100 counts 1 2 }\n"), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "disagree (counts)"));
  /* its own size differs from its counts' */
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 { allgatherv 8b in 0 out 0x100 counts 4 4 displs 0 4 }\n"),
                   CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "its counts give member 0 (itself) 4"));
  /* a displacement into cdag's addresses */
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 1\nrank 0 { allgatherv 4b in 0 out 0x100 counts 4 displs "
                                     "9223090561878065152 }\n"), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "leaves the address space"));
  /* in place with the own block elsewhere */
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 1 { reduce_scatter 2 int32 sum in 0 out 0 counts 1 2 }\n"),
                   CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "overlaps out"));
}
END_TEST

/* A distributed graph's vector call crosses the wire with its lists. */
START_TEST(vector_calls_cross_the_wire) {
  enum { P = 3 };
  static int32_t in[P][8], out[P][8];
  cdag_graph *global;
  CK_OK(ir_graph_new(P, -1, &global));
  for (int r = 0; r < P; r++) {
    cdag_graph *g;
    CK_OK(ir_graph_new(P, r, &g));
    uint64_t v[2 * P] = {4, 8, 0, 8, 0, 20};
    CK_OK(ir_add_collv(g, r, IR_COLL_ALLGATHERV, 0, -1, (uint64_t)(uintptr_t)in[r], (uint64_t)(uintptr_t)out[r],
                       v[r], 0, 0, v, NULL));
    wire_buf w = {0};
    CK_OK(wire_encode_rank(g, &w));
    CK_OK(wire_decode_rank(global, w.buf, w.len, NULL));
    wire_free(&w);
    cdag_graph_free(&g);
  }
  CK_OK(ir_finalize(global));
  ck_assert_int_eq(global->ncalls, P);
  for (int c = 0; c < P; c++) {
    const uint64_t *v = ir_call_lists(global, &global->calls[c]);
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(ir_call_nvalues(global, &global->calls[c]), 2 * P);
    ck_assert_int_eq(v[1], 8);
    ck_assert_int_eq(v[3], 8);
  }
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(global, NULL, &p));
  ck_assert_int_eq(p->native_calls[IR_COLL_ALLGATHERV], 1);
  CK_OK(exec_verify(global, p, 3, 2));
  cdag_plan_free(&p);
  cdag_graph_free(&global);
}
END_TEST

Suite *cdag_collective_suite(void) {
  Suite *s = suite_create("collective");
  TCase *t = tcase_create("native");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, every_kind_against_its_definition);
  tcase_add_test(t, report_calls_them_native);
  tcase_add_test(t, packed_call_stays_native);
  tcase_add_test(t, waits_order_what_follows);
  tcase_add_test(t, disagreements_are_errors);
  tcase_add_test(t, text_round_trip);
  tcase_add_test(t, distributed_calls_cross_the_wire);
  tcase_add_test(t, vector_kinds_against_their_definition);
  tcase_add_test(t, vector_disagreements_are_errors);
  tcase_add_test(t, vector_calls_cross_the_wire);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_collective_suite)
