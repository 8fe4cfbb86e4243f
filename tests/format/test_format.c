/* cdag tests — tests/format/test_format.c: graph files (docs/format.md), reading and writing.
 *
 * Round trips (graphs built with the API, every op kind, labels, cpu/nic, dependencies,
 * scratch: save then load gives the same graph), GOAL files as LogGOPSim/Schedgen write them
 * (tests/data/goal), the three meanings of GOAL ops without addr (follow, the default;
 * shared; fresh), `requires`
 * naming later labels and reordering program order, the shipped examples. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "format/format.h"

/* ---- helpers ---- */

/* fresh: 1 IR_GOAL_FRESH, 0 IR_GOAL_SHARED (GOAL ops without addr at address 0). */
static cdag_graph *load_str(const char *text, int fresh) {
  ir_load_opts o = {0};
  o.goal_buffers = fresh ? IR_GOAL_FRESH : IR_GOAL_SHARED;
  cdag_graph *g = NULL;
  int rc = ir_load_mem(text, strlen(text), "test.cdag", &o, &g);
  ck_assert_msg(rc == CDAG_OK, "load failed (%d): %s", rc, cdag_error_message());
  ck_assert_ptr_nonnull(g);
  return g;
}

static cdag_graph *load_path(const char *path) {
  cdag_graph *g = NULL;
  int rc = ir_load_file(path, NULL, &g);
  ck_assert_msg(rc == CDAG_OK, "load %s failed (%d): %s", path, rc, cdag_error_message());
  return g;
}

/* The graph as text (malloc'd). */
static char *save_str(const cdag_graph *g) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(ir_save_file(g, f), CDAG_OK);
  fclose(f);
  return buf;
}

/* Saves g and loads the text back. */
static cdag_graph *round_trip(const cdag_graph *g) {
  char *text = save_str(g);
  cdag_graph *h = load_str(text, 0);
  free(text);
  return h;
}

static int cmp_i64x3(const void *x, const void *y) {
  const int64_t *a = x, *b = y;
  for (int i = 0; i < 3; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

/* Explicit dependencies as sorted (rank, pos before, pos after) triples. */
static int64_t *dep_triples(const cdag_graph *g) {
  int64_t *t = malloc((size_t)(3 * g->ndeps + 1) * sizeof *t);
  for (int64_t i = 0; i < g->ndeps; i++) {
    int32_t b = g->dep[2 * i], a = g->dep[2 * i + 1];
    t[3 * i] = g->rank[a];
    t[3 * i + 1] = g->pos[b];
    t[3 * i + 2] = g->pos[a];
  }
  qsort(t, (size_t)g->ndeps, 3 * sizeof *t, cmp_i64x3);
  return t;
}

/* Scratch regions as (rank, order of addition, addr) ... compared rank by rank in order. */
static void assert_same_scratch(const cdag_graph *a, const cdag_graph *b) {
  ck_assert_int_eq(a->nscratch, b->nscratch);
  for (int r = 0; r < a->nprocs; r++) {
    int64_t j = 0;
    for (int64_t i = 0; i < a->nscratch; i++) {
      if (a->scr_rank[i] != r) continue;
      while (j < b->nscratch && b->scr_rank[j] != r) j++;
      ck_assert_int_lt(j, b->nscratch);
      ck_assert_uint_eq(a->scr_addr[i], b->scr_addr[j]);
      ck_assert_uint_eq(a->scr_len[i], b->scr_len[j]);
      j++;
    }
  }
}

static int32_t goal_field(const int32_t *arr, int32_t op) { return arr ? arr[op] : -1; }

/* Same ranks, same ops per rank in program order with the same fields, same explicit
   dependencies and scratch; labels equal where a has one. Both graphs finalized. */
static void assert_same_graph(const cdag_graph *a, const cdag_graph *b) {
  ck_assert_int_eq(a->nprocs, b->nprocs);
  ck_assert_int_eq(a->nops, b->nops);
  for (int r = 0; r <= a->nprocs; r++) ck_assert_int_eq(a->rank_start[r], b->rank_start[r]);
  for (int64_t i = 0; i < a->nops; i++) {
    int32_t x = a->rank_ops[i], y = b->rank_ops[i];
    ck_assert_int_eq(a->kind[x], b->kind[y]);
    ck_assert_int_eq(a->rank[x], b->rank[y]);
    ck_assert_int_eq(a->peer[x], b->peer[y]);
    ck_assert_int_eq(a->tag[x], b->tag[y]);
    CK_HOT(a->addr[x] == b->addr[y]);
    CK_HOT((a->addr2 ? a->addr2[x] : 0) == (b->addr2 ? b->addr2[y] : 0));
    CK_HOT(a->bytes[x] == b->bytes[y]);
    ir_blocks ka = ir_copy_blocks(a, x), kb = ir_copy_blocks(b, y);
    CK_HOT(ka.n == kb.n && ka.len == kb.len && !ka.from_at == !kb.from_at && !ka.to_at == !kb.to_at);
    for (uint64_t j = 0; j < ka.n; j++) CK_HOT(ir_block_from(&ka, j) == ir_block_from(&kb, j) && ir_block_to(&ka, j) == ir_block_to(&kb, j));
    CK_HOT(goal_field(a->cpu, x) == goal_field(b->cpu, y));
    CK_HOT(goal_field(a->nic, x) == goal_field(b->nic, y));
    if (ir_label(a, x) && strchr(ir_label(a, x), ' ') == NULL) ck_assert_str_eq(ir_label(a, x), ir_label(b, y));
  }
  ck_assert_int_eq(a->ndeps, b->ndeps);
  int64_t *da = dep_triples(a), *db = dep_triples(b);
  for (int64_t i = 0; i < 3 * a->ndeps; i++) ck_assert_int_eq(da[i], db[i]);
  free(da);
  free(db);
  assert_same_scratch(a, b);
}

/* The op of rank r at program position k. */
/* `saved` (g as written) loads as g again; both freed. */
static void reloads_same(cdag_graph *g, char *saved) {
  cdag_graph *again = load_str(saved, 0);
  assert_same_graph(g, again);
  ir_graph_free(again);
  free(saved);
  ir_graph_free(g);
}

static int32_t op_at(const cdag_graph *g, int r, int k) {
  ck_assert_int_lt(k, g->rank_start[r + 1] - g->rank_start[r]);
  return g->rank_ops[g->rank_start[r] + k];
}

/* The op of rank r labelled l. */
static int32_t op_label(const cdag_graph *g, int r, const char *l) {
  for (int32_t i = g->rank_start[r]; i < g->rank_start[r + 1]; i++) {
    const char *x = ir_label(g, g->rank_ops[i]);
    if (x && strcmp(x, l) == 0) return g->rank_ops[i];
  }
  ck_abort_msg("no op labelled %s on rank %d", l, r);
  return -1;
}

static int has_pred(const cdag_graph *g, int32_t op, int32_t before) {
  for (int32_t k = g->pred_start[op]; k < g->pred_start[op + 1]; k++)
    if (g->pred[k] == before) return 1;
  return 0;
}

/* after irequires before: a start dependency, not a dependency of completion. */
static int has_start_dep(const cdag_graph *g, int32_t after, int32_t before) {
  for (int64_t d = 0; d < g->nsdeps; d++)
    if (g->sdep[2 * d] == before && g->sdep[2 * d + 1] == after) return 1;
  return 0;
}

/* An API graph with every kind of op, labels, GOAL fields, deps (one backward) and scratch. */
static cdag_graph *api_graph(void) {
  cdag_graph *g;
  int32_t s0, r1, red, cp, calc, s1, r0, other;
  ck_assert_int_eq(ir_graph_new(3, -1, &g), CDAG_OK);
  ck_assert_int_eq(ir_add_send(g, 0, 0x1000, 64, 1, 5, &s0), CDAG_OK);
  ck_assert_int_eq(ir_add_recv(g, 1, 0x2000, 64, 0, 5, &r1), CDAG_OK);
  ck_assert_int_eq(ir_add_reduce(g, 1, 0x2000, 0x3000, 16, CDAG_INT32, CDAG_SUM, &red), CDAG_OK);
  ck_assert_int_eq(ir_add_copy(g, 1, 0x3000, 0x4000, 64, &cp), CDAG_OK);
  ck_assert_int_eq(ir_add_calc(g, 0, 12345, &calc), CDAG_OK);
  ck_assert_int_eq(ir_add_send(g, 1, 0x4000, 64, 2, 0, &s1), CDAG_OK);
  ck_assert_int_eq(ir_add_recv(g, 2, 0x0, 64, 1, 0, &r0), CDAG_OK);
  ck_assert_int_eq(ir_add_reduce(g, 2, 0x100, 0x0, 8, CDAG_DOUBLE, CDAG_MAX, &other), CDAG_OK);
  ck_assert_int_eq(ir_set_label(g, s0, "first", 5), CDAG_OK);
  ck_assert_int_eq(ir_set_label(g, red, "acc_1", 5), CDAG_OK);
  ck_assert_int_eq(ir_set_label(g, cp, "l5", 2), CDAG_OK); /* the name the writer would generate for s1 */
  ck_assert_int_eq(ir_set_goal(g, calc, 2, -1), CDAG_OK);
  ck_assert_int_eq(ir_set_goal(g, s1, -1, 4), CDAG_OK);
  ck_assert_int_eq(ir_add_dep(g, calc, s0, 0), CDAG_OK); /* backward: reorders rank 0 */
  ck_assert_int_eq(ir_add_dep(g, r1, s1, 0), CDAG_OK);
  ck_assert_int_eq(ir_add_dep(g, r0, other, 0), CDAG_OK);
  ck_assert_int_eq(ir_add_scratch(g, 1, 0x8000, 4096), CDAG_OK);
  ck_assert_int_eq(ir_add_scratch(g, 1, 0x100, 16), CDAG_OK);
  ck_assert_int_eq(ir_add_scratch(g, 2, 0x9000, 1), CDAG_OK);
  return g;
}

/* ---- round trips ---- */

START_TEST(test_round_trip_api_graph) {
  cdag_graph *g = api_graph();
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  cdag_graph *h = round_trip(g);
  assert_same_graph(g, h);
  /* the backward dependency made calc come first on rank 0, in both */
  ck_assert_int_eq(h->kind[op_at(h, 0, 0)], IR_CALC);
  ck_assert_str_eq(ir_label(h, op_at(h, 0, 1)), "first");
  ck_assert_int_eq(h->cpu[op_at(h, 0, 0)], 2);
  ck_assert_int_eq(h->nic[op_at(h, 0, 0)], -1);
  ir_graph_free(g);
  ir_graph_free(h);
}
END_TEST

/* A graph that was never finalized is written in the order of ids. */
START_TEST(test_round_trip_unfinalized) {
  cdag_graph *g = api_graph();
  char *text = save_str(g);
  ck_assert_ptr_nonnull(strstr(text, "num_ranks 3"));
  ck_assert_ptr_nonnull(strstr(text, "l5: copy 64b from 0x3000 to 0x4000"));
  ck_assert_ptr_nonnull(strstr(text, "l5_1: send 64b to 2 addr 0x4000 nic 4")); /* generated, made unique; tag 0 left out */
  ck_assert_ptr_nonnull(strstr(text, "l5_1 requires l1"));
  ck_assert_ptr_nonnull(strstr(text, "scratch 0x8000 4096b"));
  cdag_graph *h = load_str(text, 0);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  assert_same_graph(g, h);
  free(text);
  ir_graph_free(g);
  ir_graph_free(h);
}
END_TEST

/* Saving what was loaded and loading it again is a fixed point of the text too. */
START_TEST(test_round_trip_text_fixpoint) {
  const char *files[] = {"goal/binomial_bcast16.goal", "goal/binomial_reduce8.goal", "goal/dissemination8.goal",
                         "goal/calc_cpu_nic.goal", "replay/native_vector4.cdag"};   /* lists of vector calls too */
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", CDAG_TEST_DATA, files[i]);
    cdag_graph *g = load_path(path);
    char *t1 = save_str(g);
    cdag_graph *h = load_str(t1, 0);
    assert_same_graph(g, h);
    char *t2 = save_str(h);
    ck_assert_str_eq(t1, t2);
    free(t1);
    free(t2);
    ir_graph_free(g);
    ir_graph_free(h);
  }
}
END_TEST

/* Strided copies: `blocks`, `from_stride`, `to_stride` load into the op's pattern, are
   written back (a stride equal to the block length left out), and the text is a fixed
   point. One block, or strides equal to the length, is an ordinary copy. */
START_TEST(test_round_trip_strided) {
  const char *text = "num_ranks 1\nrank 0 {\n"
                     "  pack: copy 32b from 0x1010 to 0x3000 blocks 4 from_stride 32\n"
                     "  unpack: copy 32b from 0x3000 to 0x5018 blocks 4 to_stride 32\n"
                     "  both: copy 64b from 0x8000 to 0x9000 blocks 2 from_stride 100 to_stride 48\n"
                     "  plain: copy 32b from 0xa000 to 0xb000 blocks 4\n"
                     "  one: copy 32b from 0xc000 to 0xd000 blocks 1\n"
                     "}\n";
  cdag_graph *g = load_str(text, 0);
  ck_assert_int_eq(g->nops, 5);
  ir_blocks k = ir_copy_blocks(g, 0);
  ck_assert(k.n == 4 && k.len == 8 && k.from == 32 && k.to == 8);
  k = ir_copy_blocks(g, 1);
  ck_assert(k.n == 4 && k.len == 8 && k.from == 8 && k.to == 32);
  k = ir_copy_blocks(g, 2);
  ck_assert(k.n == 2 && k.len == 32 && k.from == 100 && k.to == 48);
  ck_assert(!ir_is_strided(g, 3) && !ir_is_strided(g, 4));
  char *t1 = save_str(g);
  ck_assert_ptr_nonnull(strstr(t1, "copy 32b from 0x1010 to 0x3000 blocks 4 from_stride 32\n"));
  ck_assert_ptr_nonnull(strstr(t1, "copy 32b from 0x3000 to 0x5018 blocks 4 to_stride 32\n"));
  ck_assert_ptr_nonnull(strstr(t1, "copy 64b from 0x8000 to 0x9000 blocks 2 from_stride 100 to_stride 48\n"));
  ck_assert_ptr_nonnull(strstr(t1, "copy 32b from 0xa000 to 0xb000\n"));
  cdag_graph *h = load_str(t1, 0);
  assert_same_graph(g, h);
  char *t2 = save_str(h);
  ck_assert_str_eq(t1, t2);
  free(t1);
  free(t2);
  ir_graph_free(g);
  ir_graph_free(h);
}
END_TEST

/* Blocks the loader makes an op each of: a computation whose blocks overlap. Strides both
   negative turn forwards from the last block; a copy at strides of both signs lists its
   backwards side; a copy at listed steps and a computation's blocks (at a stride or listed)
   are one op each, offsets from the lowest block. The line writer writes them as the recorder does (negative strides
   signed, listed blocks as steps), and what it writes loads as the same ops. */
START_TEST(test_blocks_expanded) {
  const char *text = "num_ranks 1\nrank 0 {\n"
                     "  c1: compute 7 reads all writes 48b at 0x1000 blocks 3 stride 32\n"
                     "  compute 0 reads all writes 48b at 0x2000 blocks 3 steps 40 -100\n"
                     "  back: copy 32b from 0x3030 to 0x4030 blocks 4 from_stride -16 to_stride -16\n"
                     "  copy 24b from 0x5000 to 0x6040 blocks 3 to_stride -32\n"
                     "  copy 24b from 0x7000 to 0x8000 blocks 3 from_steps 100 -50\n"
                     "  copy 24b from 0x9100 to 0xa000 blocks 3 from_steps -32 -200\n"
                     "  compute 5 reads all writes 32b at 0xc000 blocks 2 steps 8\n"
                     "}\n";
  cdag_graph *g = load_str(text, 0);
  ck_assert_int_eq(g->nops, 1 + 1 + 1 + 1 + 1 + 1 + 2);
  for (int i = 0; i < 2; i++) {
    ck_assert(ir_is_compute(g, i) && ir_reads_all(g, i) && g->cw_len[i] == 48 && g->bytes[i] == (i ? 0u : 7u));
    ir_blocks w = ir_write_blocks(g, i);
    ck_assert(w.n == 3 && w.len == 16);
  }
  ir_blocks w = ir_write_blocks(g, 0);   /* at a stride */
  ck_assert(g->addr[0] == 0x1000 && !w.to_at && w.to == 32 && w.to_last == 64);
  w = ir_write_blocks(g, 1);             /* listed, from the lowest block, 0x2028 - 100 */
  ck_assert(g->addr[1] == 0x2028 - 100 && w.to_at && w.to_at[0] == 60 && w.to_at[1] == 100 && w.to_at[2] == 0);
  ck_assert_str_eq(ir_label(g, 0), "c1");
  ck_assert_ptr_null(ir_label(g, 1));
  for (int i = 6; i < 8; i++)   /* blocks that overlap: a computation each, the cost on the first */
    ck_assert(ir_is_compute(g, i) && !ir_is_strided(g, i) && g->cw_len[i] == 16 && g->addr[i] == 0xc000 + 8u * (unsigned)(i - 6) &&
              g->bytes[i] == (i == 6 ? 5u : 0u));
  ir_blocks k = ir_copy_blocks(g, 2);   /* backwards on both sides: one strided copy from the last */
  ck_assert(k.n == 4 && k.len == 8 && k.from == 16 && k.to == 16);
  ck_assert(g->addr2[2] == 0x3000 && g->addr[2] == 0x4000);
  k = ir_copy_blocks(g, 3);   /* forwards from 0x5000 into 0x6040, 0x6020, 0x6000: that side listed */
  ck_assert(ir_is_listed(g, 3) && g->addr2[3] == 0x5000 && g->addr[3] == 0x6000 && !k.from_at && k.from == 8);
  ck_assert(k.to_at && k.to_at[0] == 0x40 && k.to_at[1] == 0x20 && k.to_at[2] == 0);
  ck_assert(ir_is_listed(g, 4) && g->addr2[4] == 0x7000 && g->addr[4] == 0x8000 && g->bytes[4] == 24);
  k = ir_copy_blocks(g, 4);
  ck_assert(k.n == 3 && k.len == 8 && k.from_at && !k.to_at && k.to == 8 && k.from_last == 0x64 && k.to_last == 16);
  ck_assert(k.from_at[0] == 0 && k.from_at[1] == 0x64 && k.from_at[2] == 0x64 - 50);
  ck_assert(ir_is_listed(g, 5) && g->addr2[5] == 0x9100 - 232);   /* block 0 is not the lowest: its offset is 232 */
  k = ir_copy_blocks(g, 5);
  ck_assert(k.from_at[0] == 232 && k.from_at[1] == 200 && k.from_at[2] == 0 && k.from_last == 232);
  char *saved = save_str(g);   /* saved and loaded again: the same ops, the listed ones' steps written from block 0 */
  ck_assert_ptr_nonnull(strstr(saved, "copy 24b from 0x7000 to 0x8000 blocks 3 from_steps 100 -50\n"));
  ck_assert_ptr_nonnull(strstr(saved, "copy 24b from 0x9100 to 0xa000 blocks 3 from_steps -32 -200\n"));
  ck_assert_ptr_nonnull(strstr(saved, "compute 0 reads all writes 48b at 0x2000 blocks 3 steps 40 -100\n"));
  ck_assert_ptr_nonnull(strstr(saved, "c1: compute 7 reads all writes 48b at 0x1000 blocks 3 stride 32\n"));
  reloads_same(g, saved);
  /* the writer's forms of them load as the same ops */
  uint64_t at[3] = {0x2000, 0x2028, 0x2028 - 100}, from[3] = {0x7000, 0x7064, 0x7064 - 50};
  ir_line c = {.kind = IR_CALC, .bytes = 0, .rlen = IR_READS_ALL, .wlen = 48, .addr = 0x2000, .blocks = 3, .to_at = at,
               .seg = -1, .cpu = -1, .nic = -1, .comm = -1};
  ir_line s1 = {.kind = IR_CALC, .bytes = 7, .rlen = IR_READS_ALL, .wlen = 48, .addr = 0x1000, .blocks = 3,
                .to_stride = 32, .seg = -1, .cpu = -1, .nic = -1, .comm = -1};
  ir_line neg = {.kind = IR_COPY, .bytes = 24, .addr2 = 0x5000, .addr = 0x6040, .blocks = 3, .from_stride = 8,
                 .to_stride = (uint64_t)-32, .seg = -1, .cpu = -1, .nic = -1, .comm = -1};
  ir_line lst = {.kind = IR_COPY, .bytes = 24, .addr2 = 0x7000, .addr = 0x8000, .blocks = 3, .from_at = from,
                 .to_stride = 8, .seg = -1, .cpu = -1, .nic = -1, .comm = -1};
  char b1[128], b2[128], b3[128], b4[128];
  ir_format_line(b1, sizeof b1, NULL, &s1);
  ck_assert_str_eq(b1, "compute 7 reads all writes 48b at 0x1000 blocks 3 stride 32");
  ir_format_line(b2, sizeof b2, NULL, &c);
  ck_assert_str_eq(b2, "compute 0 reads all writes 48b at 0x2000 blocks 3 steps 40 -100");
  ir_format_line(b3, sizeof b3, NULL, &neg);
  ck_assert_str_eq(b3, "copy 24b from 0x5000 to 0x6040 blocks 3 to_stride -32");
  ir_format_line(b4, sizeof b4, NULL, &lst);
  ck_assert_str_eq(b4, "copy 24b from 0x7000 to 0x8000 blocks 3 from_steps 100 -50");
}
END_TEST

/* Listed steps written as runs (`S*N`, `S+D*N`) load as the steps they stand for, and the
   writer uses them: an indexed type's growing displacements are a few words, not thousands. */
START_TEST(test_step_runs) {
  const char *runs = "num_ranks 1\nrank 0 {\n"
                     "  copy 64b from 0x1000 to 0x9000 blocks 8 to_steps 48+16*3 8*2 -8 100\n"
                     "  compute 0 reads all writes 32b at 0x20000 blocks 4 steps 0*2 -300+300*1\n}\n";
  const char *flat = "num_ranks 1\nrank 0 {\n"
                     "  copy 64b from 0x1000 to 0x9000 blocks 8 to_steps 48 64 80 8 8 -8 100\n"
                     "  compute 0 reads all writes 32b at 0x20000 blocks 4 steps 0 0 -300\n}\n";
  cdag_graph *g = load_str(runs, 0), *h = load_str(flat, 0);
  char *a = save_str(g), *b = save_str(h);
  ck_assert_str_eq(a, b);
  ck_assert_int_eq(g->nops, 8 + 4);
  free(a), free(b);
  cdag_graph_free(&g), cdag_graph_free(&h);
  uint64_t at[9] = {0x9000};
  const int64_t step[8] = {48, 64, 80, 96, 8, 8, 8, -8};
  for (int i = 1; i < 9; i++) at[i] = at[i - 1] + (uint64_t)step[i - 1];
  ir_line l = {.kind = IR_COPY, .bytes = 72, .addr2 = 0x1000, .addr = 0x9000, .blocks = 9, .from_stride = 8, .to_at = at,
               .seg = -1, .cpu = -1, .nic = -1, .comm = -1};
  char buf[160];
  ir_format_line(buf, sizeof buf, NULL, &l);
  ck_assert_str_eq(buf, "copy 72b from 0x1000 to 0x9000 blocks 9 to_steps 48+16*4 8*3 -8");
  /* blocks listed one stride apart are written as the stride: the loader keeps one copy */
  uint64_t back[3] = {0x9040, 0x9020, 0x9000}, up[3] = {0x100, 0x120, 0x140};
  l = (ir_line){.kind = IR_COPY, .bytes = 24, .addr2 = 0x1000, .addr = 0x9040, .blocks = 3, .from_stride = 8,
                .to_at = back, .seg = -1, .cpu = -1, .nic = -1, .comm = -1};
  ir_format_line(buf, sizeof buf, NULL, &l);
  ck_assert_str_eq(buf, "copy 24b from 0x1000 to 0x9040 blocks 3 to_stride -32");
  l = (ir_line){.kind = IR_CALC, .rlen = IR_READS_ALL, .wlen = 24, .addr = 0x100, .blocks = 3, .to_at = up, .seg = -1,
                .cpu = -1, .nic = -1, .comm = -1};
  ir_format_line(buf, sizeof buf, NULL, &l);
  ck_assert_str_eq(buf, "compute 0 reads all writes 24b at 0x100 blocks 3 stride 32");
  struct { const char *steps, *err; } bad[] = {
      {"8*0 8 8", "a run of 0 steps: N is at least 1"},
      {"8* 8", "a run of steps is 'S*N' or 'S+D*N'"},
      {"8+*3", "a run of steps is 'S*N' or 'S+D*N'"},
      {"8+1*3x", "a run of steps is 'S*N' or 'S+D*N'"},
      {"8*3*2", "a run of steps is 'S*N' or 'S+D*N'"},
      {"1+9000000000000000000*3", "the run's last step is out of range"},
      {"8*999999999999999999", "a run of 999999999999999999 steps: more than the 67108864 blocks the loader"},
      {"8*4", "4 blocks need 3 steps, found 4"},
      {"8 8 8 8", "4 blocks need 3 steps, found 4"},
      {"8+9223372036854775807*2", "the run's last step is out of range"},
      {"8+92233720368547758070*2", "a run of steps is 'S*N' or 'S+D*N'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char text[256];
    snprintf(text, sizeof text, "num_ranks 1\nrank 0 {\n  copy 32b from 0x1000 to 0x9000 blocks 4 to_steps %s\n}\n",
             bad[i].steps);
    ck_assert_int_eq(ir_load_mem(text, strlen(text), "runs.cdag", NULL, &g), CDAG_ERR_FORMAT);
    ck_assert_msg(strstr(cdag_error_message(), bad[i].err) && strstr(cdag_error_message(), "runs.cdag:3:"),
                  "%s: %s", bad[i].steps, cdag_error_message());
  }
}
END_TEST

/* Blocks at the top of the address space: a block whose last byte is 2^63-1 loads (the
   loader once refused a block ending at 2^63, and named an unset position for a copy of one
   block), a copy of one block may reach past it as a send may, and a run whose step
   difference has 19 digits, as the writer writes it, loads back. */
START_TEST(test_blocks_at_the_top) {
  const char *text = "num_ranks 1\nrank 0 {\n"
                     "  copy 8b from 0x7ffffffffffffff8 to 0x1000\n"
                     "  copy 16b from 0x7ffffffffffffff8 to 0x1040\n"
                     "  copy 16b from 0x7fffffffffffffe0 to 0x2000 blocks 2 from_stride 16\n"
                     "  copy 16b from 0x3000 to 0x7fffffffffffffe8 blocks 2 to_steps -16\n"
                     "  compute 1 writes 16b at 0x7ffffffffffffff0 blocks 2 stride 8\n"
                     "  copy 64b from 0x1000 to 0x100 blocks 4 from_steps 100000000000000000 1100000000000000000 "
                     "2100000000000000000\n"
                     "  copy 2b from 0x7fffffffffffffff to 0x10 blocks 2 from_stride -9223372036854775807\n"
                     "}\n";
  cdag_graph *g = load_str(text, 0);   /* the last: blocks at 0 and 2^63-1, a span of 2^63 (UBSan once) */
  ck_assert_int_eq(g->nops, 7);
  ck_assert(ir_is_listed(g, 3) && g->addr[3] == 0x7fffffffffffffd8);
  char *saved = save_str(g);
  ck_assert_ptr_nonnull(strstr(saved, "from_steps 100000000000000000+1000000000000000000*3\n"));
  reloads_same(g, saved);
}
END_TEST

/* A line loaded as one op per block (its blocks overlap) with `wait`: every later op follows
   every block, not the first alone (the send here once followed block 0 only). */
START_TEST(test_split_line_waits) {
  const char *text = "num_ranks 2\nrank 0 {\n"
                     "  c: copy 32b from 0x400 to 0x1000 blocks 4 from_steps 16 16 -48 to_steps 4 4 -10 wait\n"
                     "  s: send 8b to 1 addr 0x900\n"
                     "}\nrank 1 {\n  recv 8b from 0 addr 0x10\n}\n";
  cdag_graph *g = load_str(text, 0);
  ck_assert_int_eq(g->nops, 6);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  int32_t send = 4;
  ck_assert_int_eq(g->kind[send], IR_SEND);
  int last = 0;
  for (int32_t e = g->pred_start[send]; e < g->pred_start[send + 1]; e++) last |= g->pred[e] == 3;
  ck_assert_msg(last, "the send does not follow the line's last block");
  ck_assert_str_eq(ir_label(g, 0), "c");   /* the label names the first */
  ir_graph_free(g);
}
END_TEST

/* Labels that are not identifiers are saved spelled as one ("halo north" as halo_north, a
   taken name with a suffix), repeated ones on one rank are replaced; the graph is otherwise
   kept. */
START_TEST(test_round_trip_odd_labels) {
  cdag_graph *g;
  int32_t a, b, c, d, e;
  ck_assert_int_eq(ir_graph_new(2, -1, &g), CDAG_OK);
  ck_assert_int_eq(ir_add_send(g, 0, 0, 8, 1, 0, &a), CDAG_OK);
  ck_assert_int_eq(ir_add_send(g, 0, 8, 8, 1, 0, &b), CDAG_OK);
  ck_assert_int_eq(ir_add_send(g, 0, 16, 8, 1, 1, &d), CDAG_OK);
  ck_assert_int_eq(ir_add_send(g, 0, 24, 8, 1, 1, &e), CDAG_OK);
  ck_assert_int_eq(ir_add_recv(g, 1, 0, 16, 0, 0, &c), CDAG_OK);
  ck_assert_int_eq(ir_add_recv(g, 1, 16, 8, 0, 1, NULL), CDAG_OK);
  ck_assert_int_eq(ir_add_recv(g, 1, 24, 8, 0, 1, NULL), CDAG_OK);
  ck_assert_int_eq(ir_set_label(g, a, "halo north", 10), CDAG_OK);
  ck_assert_int_eq(ir_set_label(g, b, "same", 4), CDAG_OK);
  ck_assert_int_eq(ir_set_label(g, c, "same", 4), CDAG_OK); /* other rank: fine */
  ck_assert_int_eq(ir_set_label(g, d, "halo_north", 10), CDAG_OK); /* the spelling of a's */
  ck_assert_int_eq(ir_set_label(g, e, "9 lives", 7), CDAG_OK);
  ck_assert_int_eq(ir_add_dep(g, a, b, 1), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  cdag_graph *h = round_trip(g);
  assert_same_graph(g, h);
  ck_assert_str_eq(ir_label(h, op_at(h, 0, 0)), "halo_north_2");
  ck_assert_str_eq(ir_label(h, op_at(h, 0, 1)), "same");
  ck_assert_str_eq(ir_label(h, op_at(h, 0, 2)), "halo_north");
  ck_assert_str_eq(ir_label(h, op_at(h, 0, 3)), "_9_lives");
  ck_assert_str_eq(ir_label(h, op_at(h, 1, 0)), "same");
  ir_graph_free(g);
  ir_graph_free(h);
}
END_TEST

/* The public pair cdag_graph_save / cdag_graph_load through a real file. */
START_TEST(test_public_save_load) {
  cdag_graph *g = api_graph(), *h = NULL;
  char path[] = "/tmp/cdag_test_formatXXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(cdag_graph_save(g, path), CDAG_OK);
  ck_assert_int_eq(cdag_graph_load(path, &h), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  assert_same_graph(g, h);
  remove(path);
  ir_graph_free(g);
  cdag_graph_free(&h);
  ck_assert_ptr_null(h);
  ck_assert_int_eq(cdag_graph_save(NULL, path), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_graph_load("/nonexistent/dir/x.cdag", &h), CDAG_ERR_IO);
  ck_assert_ptr_null(h);
}
END_TEST

/* A few thousand ops with many deps and scratch: the round trip scales and stays exact. */
START_TEST(test_round_trip_larger) {
  cdag_graph *g;
  int p = 64;
  ck_assert_int_eq(ir_graph_new(p, -1, &g), CDAG_OK);
  for (int r = 0; r < p; r++) {
    int32_t prev = -1, id;
    for (int k = 0; k < 40; k++) {
      int peer = (r + 1 + k) % p, src = (r + p - 1 - k % (p - 1)) % p;
      ck_assert_int_eq(ir_add_send(g, r, (uint64_t)k * 64, 64, peer, k, &id), CDAG_OK);
      if (prev >= 0 && k % 3 == 0) ck_assert_int_eq(ir_add_dep(g, prev, id, 1), CDAG_OK);
      ck_assert_int_eq(ir_add_recv(g, r, 0x100000 + (uint64_t)k * 64, 64, src, k, &prev), CDAG_OK);
    }
    ck_assert_int_eq(ir_add_scratch(g, r, 0x900000, (uint64_t)r + 1), CDAG_OK);
  }
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  cdag_graph *h = round_trip(g);
  assert_same_graph(g, h);
  ir_graph_free(g);
  ir_graph_free(h);
}
END_TEST

/* ---- GOAL files ---- */

START_TEST(test_goal_binomial_bcast) {
  cdag_graph *g = load_path(CDAG_TEST_DATA "/goal/binomial_bcast16.goal");
  ck_assert_int_eq(g->nprocs, 16);
  ck_assert_int_eq(g->nops, 30);
  ck_assert_int_eq(g->ndeps, 11);
  /* rank 1: receives from 0, then sends to 3, 5, 9, each requiring the receive */
  int32_t rv = op_at(g, 1, 0);
  ck_assert_int_eq(g->kind[rv], IR_RECV);
  ck_assert_int_eq(g->peer[rv], 0);
  ck_assert_str_eq(ir_label(g, rv), "l1");
  ck_assert_uint_eq(g->line[rv], 11);
  for (int k = 1; k <= 3; k++) {
    int32_t s = op_at(g, 1, k);
    ck_assert_int_eq(g->kind[s], IR_SEND);
    ck_assert_int_eq(g->peer[s], 1 + (1 << k));
    ck_assert_uint_eq(g->bytes[s], 8);
    ck_assert_uint_eq(g->addr[s], g->addr[rv]);   /* follow: a send requiring a receive forwards it */
    ck_assert(has_pred(g, s, rv));
  }
  ir_graph_free(g);
}
END_TEST

/* follow (the default): receives get regions of their own; a send requiring a receive
   forwards it, others read the rank's own bytes; no ordering beyond the file's requires. */
START_TEST(test_goal_follow_buffers) {
  const char *t = "num_ranks 2\nrank 0 {\n a: send 8b to 1\n b: send 8b to 1 tag 1\n c: recv 16b from 1\n}\n"
                  "rank 1 {\n r: recv 8b from 0\n q: recv 8b from 0 tag 1\n x: calc 5\n x requires r\n"
                  " s: send 16b to 0\n s requires x\n}\n";
  cdag_graph *g = NULL;
  ck_assert_msg(ir_load_mem(t, strlen(t), "f.goal", NULL, &g) == CDAG_OK, "%s", cdag_error_message());
  int32_t a = op_at(g, 0, 0), b = op_at(g, 0, 1), c = op_at(g, 0, 2), r = op_at(g, 1, 0), q = op_at(g, 1, 1),
          s = op_at(g, 1, 3);
  ck_assert_uint_eq(g->addr[a], g->addr[b]);   /* the rank's own bytes, read twice */
  ck_assert(g->addr[c] != g->addr[a] && g->addr[r] != g->addr[q]);
  ck_assert_uint_ne(g->addr[s], g->addr[r]);   /* 16 bytes do not fit the 8 received: own bytes */
  ck_assert_int_eq(g->nedges, 2);              /* x after r, s after x: the file's, nothing more */
  ir_graph_free(g);
  const char *t3 = "num_ranks 2\nrank 0 {\n a: send 8b to 1\n z: recv 8b from 1\n}\nrank 1 {\n r: recv 8b from 0\n"
                   " x: calc 5\n x requires r\n s: send 8b to 0\n s requires x\n}\n";
  ck_assert_msg(ir_load_mem(t3, strlen(t3), "f3.goal", NULL, &g) == CDAG_OK, "%s", cdag_error_message());
  ck_assert_uint_eq(g->addr[op_at(g, 1, 2)], g->addr[op_at(g, 1, 0)]);   /* forwarded through the calc */
  ck_assert_int_eq(g->nedges, 3);   /* r -> x, x -> s, and r -> s, which those two imply */
  ir_graph_free(g);
}
END_TEST

START_TEST(test_goal_dissemination) {
  cdag_graph *g = load_path(CDAG_TEST_DATA "/goal/dissemination8.goal");
  ck_assert_int_eq(g->nprocs, 8);
  ck_assert_int_eq(g->nops, 48);
  for (int r = 0; r < 8; r++) {
    ck_assert_int_eq(g->rank_start[r + 1] - g->rank_start[r], 6);
    for (int k = 0; k < 3; k++) {
      int32_t s = op_at(g, r, 2 * k), v = op_at(g, r, 2 * k + 1);
      ck_assert_int_eq(g->kind[s], IR_SEND);
      ck_assert_int_eq(g->peer[s], (r + (1 << k)) % 8);
      ck_assert_int_eq(g->kind[v], IR_RECV);
      ck_assert_int_eq(g->peer[v], (r + 8 - (1 << k)) % 8);
      if (k > 0) ck_assert(has_pred(g, s, op_at(g, r, 2 * k - 1)));
    }
  }
  ir_graph_free(g);
}
END_TEST

START_TEST(test_goal_calc_cpu_nic) {
  cdag_graph *g = load_path(CDAG_TEST_DATA "/goal/calc_cpu_nic.goal");
  ck_assert_int_eq(g->nprocs, 4);
  ck_assert_int_eq(g->nops, 9);
  ck_assert_int_eq(g->rank_start[4] - g->rank_start[3], 0); /* rank 3 omitted */
  int32_t c = op_at(g, 0, 0), s1 = op_at(g, 0, 1), s2 = op_at(g, 0, 2);
  ck_assert_int_eq(g->kind[c], IR_CALC);
  ck_assert_uint_eq(g->bytes[c], 1000);
  ck_assert_int_eq(g->cpu[c], 0);
  ck_assert_int_eq(g->nic[c], -1);
  ck_assert_int_eq(g->tag[s1], 7);
  ck_assert_int_eq(g->cpu[s1], 0);
  ck_assert_int_eq(g->nic[s1], 0);
  ck_assert_uint_eq(g->bytes[s2], 64); /* "64 b" */
  ck_assert_int_eq(g->cpu[s2], 1);
  ck_assert_int_eq(g->nic[s2], 1);
  ck_assert(has_start_dep(g, s1, c) && !has_pred(g, s1, c)); /* irequires: a start dependency */
  ck_assert(has_pred(g, s2, c));
  int32_t unl = op_at(g, 1, 2);
  ck_assert_ptr_null(ir_label(g, unl));
  ck_assert_int_eq(g->kind[unl], IR_SEND);
  ck_assert_int_eq(g->tag[unl], 9);
  ck_assert_int_eq(g->cpu[unl], -1);
  ck_assert_int_eq(g->nic[unl], 0);
  ck_assert_int_eq(g->cpu[op_at(g, 2, 2)], 3);
  ir_graph_free(g);
}
END_TEST

/* Schedgen's reduce writes a send before the receives it requires: program order follows. */
START_TEST(test_goal_backward_requires_reorder) {
  cdag_graph *g = load_path(CDAG_TEST_DATA "/goal/binomial_reduce8.goal");
  /* rank 1 wrote: l1 send to 0, l2 recv from 3, l3 recv from 5, l1 requires l2, l1 requires l3 */
  ck_assert_str_eq(ir_label(g, op_at(g, 1, 0)), "l2");
  ck_assert_str_eq(ir_label(g, op_at(g, 1, 1)), "l3");
  int32_t s = op_at(g, 1, 2);
  ck_assert_str_eq(ir_label(g, s), "l1");
  ck_assert_int_eq(g->kind[s], IR_SEND);
  ck_assert(has_pred(g, s, op_at(g, 1, 0)));
  ck_assert(has_pred(g, s, op_at(g, 1, 1)));
  ir_graph_free(g);
}
END_TEST

/* A requires may name a label defined later in the block. */
START_TEST(test_requires_later_label) {
  cdag_graph *g = load_str("num_ranks 2\n"
                           "rank 0 {\n"
                           "  b requires a\n"
                           "  a: send 8b to 1 addr 0x0\n"
                           "  b: send 8b to 1 addr 0x100\n"
                           "}\n"
                           "rank 1 { x: recv 16b from 0 addr 0 }\n",
                           0);
  ck_assert_int_eq(g->ndeps, 1);
  int32_t a = op_at(g, 0, 0), b = op_at(g, 0, 1);
  ck_assert_str_eq(ir_label(g, a), "a");
  ck_assert_int_eq(g->dep[0], a);
  ck_assert_int_eq(g->dep[1], b);
  ck_assert(has_pred(g, b, a));
  ck_assert_uint_eq(g->line[b], 5);
  ir_graph_free(g);
}
END_TEST

/* ---- buffers of GOAL ops ---- */

static const char *forward_goal = "num_ranks 3\n"
                                  "rank 0 { send 8b to 1 }\n"
                                  "rank 1 {\n recv 8b from 0\n send 8b to 2\n}\n"
                                  "rank 2 {\n recv 8b from 1\n copy 8b from 0x10 to 0x20\n}\n";

/* Default: every op without addr uses address 0, so a forwarding rank gets recv -> send. */
START_TEST(test_goal_default_address_zero) {
  cdag_graph *g = load_str(forward_goal, 0);
  int32_t rv = op_at(g, 1, 0), sd = op_at(g, 1, 1);
  ck_assert_uint_eq(g->addr[rv], 0);
  ck_assert_uint_eq(g->addr[sd], 0);
  ck_assert(has_pred(g, sd, rv));
  ir_graph_free(g);
}
END_TEST

/* fresh_buffers: each such op its own region above the explicit ones; no dependency. */
START_TEST(test_goal_fresh_buffers) {
  cdag_graph *g = load_str(forward_goal, 1);
  int32_t rv = op_at(g, 1, 0), sd = op_at(g, 1, 1), cp = op_at(g, 2, 1);
  ck_assert_uint_ne(g->addr[rv], g->addr[sd]);
  ck_assert_uint_ge(g->addr[rv], 0x28);
  ck_assert_uint_ge(g->addr[sd], 0x28);
  ck_assert_uint_eq(g->addr[cp], 0x20);
  ck_assert_uint_eq(g->addr2[cp], 0x10);
  ck_assert(!has_pred(g, sd, rv));
  ck_assert_int_eq(g->nedges, 0);
  /* distinct regions do not overlap */
  for (int64_t i = 0; i < g->nops; i++)
    for (int64_t j = i + 1; j < g->nops; j++)
      if (g->kind[i] <= IR_RECV && g->kind[j] <= IR_RECV)
        ck_assert(g->addr[i] + g->bytes[i] <= g->addr[j] || g->addr[j] + g->bytes[j] <= g->addr[i]);
  ir_graph_free(g);
}
END_TEST

/* ---- syntax details ---- */

START_TEST(test_syntax_details) {
  cdag_graph *g = load_str("// line comment\n"
                           "# hash comment\n"
                           "/* block\n   comment */ num_ranks 0x2 /* inline */\n"
                           "rank 1 {}\n"
                           "rank 0 {\r\n"
                           "  l_1: send 0x40 b to 1 tag 0x10 addr 0X1000 // hex size, suffix after a space\r\n"
                           "  L2: recv 64 from 1 tag 2147483647\n"
                           "  send: calc 9223372036854775807\n"   /* a keyword as a label */
                           "  scratch 0x7ffffffffffff000 4096b\n"
                           "  reduce 3 uint8 lxor in 0 inout 0x3\n"
                           "  reduce 2 double min inout 0x100 in 0x200 cpu 1 nic 2\n"
                           "  copy 8b to 0x30 from 0x38\n"
                           "  rank: calc 1\n"                       /* 'rank' as a label */
                           "  l_1 irequires send\n"
                           "  rank requires l_1\n"
                           "}\n",
                           0);
  ck_assert_int_eq(g->nprocs, 2);
  ck_assert_int_eq(g->nops, 7);
  int32_t s = op_label(g, 0, "l_1"), r = op_label(g, 0, "L2"), c = op_label(g, 0, "send");
  int32_t m = op_at(g, 0, 4), cp = op_at(g, 0, 5);
  /* the backward irequires puts the calc before the send that irequires it */
  ck_assert_int_lt(g->pos[c], g->pos[s]);
  ck_assert(has_start_dep(g, s, c));
  ck_assert_int_eq(g->kind[c], IR_CALC);
  ck_assert_uint_eq(g->bytes[c], 9223372036854775807ULL);
  ck_assert_int_eq(g->kind[s], IR_SEND);
  ck_assert_uint_eq(g->bytes[s], 64);
  ck_assert_int_eq(g->tag[s], 16);
  ck_assert_uint_eq(g->addr[s], 0x1000);
  ck_assert_uint_eq(g->line[s], 7);
  ck_assert_int_eq(g->tag[r], 2147483647);
  ck_assert_uint_eq(g->bytes[r], 64);
  ck_assert_int_eq(g->kind[m], IR_REDUCE);
  ck_assert_int_eq(g->peer[m], CDAG_DOUBLE);
  ck_assert_int_eq(g->tag[m], CDAG_MIN);
  ck_assert_uint_eq(g->addr[m], 0x100);
  ck_assert_uint_eq(g->addr2[m], 0x200);
  ck_assert_uint_eq(g->bytes[m], 16);
  ck_assert_int_eq(g->cpu[m], 1);
  ck_assert_int_eq(g->nic[m], 2);
  ck_assert_int_eq(g->kind[cp], IR_COPY);
  ck_assert_uint_eq(g->addr[cp], 0x30);
  ck_assert_uint_eq(g->addr2[cp], 0x38);
  ck_assert_int_eq(g->nscratch, 1);
  ck_assert_uint_eq(g->scr_addr[0], 0x7ffffffffffff000ULL);
  ir_graph_free(g);
}
END_TEST

/* The smallest files: no blocks at all; a block closed at the end of its line; no final newline. */
START_TEST(test_syntax_minimal) {
  cdag_graph *g = load_str("num_ranks 1", 0);
  ck_assert_int_eq(g->nprocs, 1);
  ck_assert_int_eq(g->nops, 0);
  ir_graph_free(g);
  g = load_str("num_ranks 2\nrank 0 {\nl1: send 1b to 1\n}\nrank 1 { l1: recv 1b from 0 }", 0);
  ck_assert_int_eq(g->nops, 2);
  ir_graph_free(g);
}
END_TEST

/* ---- shipped files ---- */

START_TEST(test_examples_load) {
  static const char *names[] = {"bcast_binomial8.cdag", "alltoall_butterfly4.cdag", "allreduce_ring4.cdag",
                                "halo1d8.cdag"};
  static const int nops[] = {14, 48, 60, 32};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/examples/graphs/%s", CDAG_SOURCE_DIR, names[i]);
    cdag_graph *g = load_path(path);
    ck_assert_int_eq(g->nops, nops[i]);
    cdag_graph *h = round_trip(g);
    assert_same_graph(g, h);
    ir_graph_free(g);
    ir_graph_free(h);
  }
}
END_TEST

/* Every .cdag and .goal under tests/data loads or fails cleanly (files named bad_* fail). */
START_TEST(test_data_files) {
  const char *dirs[] = {CDAG_TEST_DATA, CDAG_TEST_DATA "/goal"};
  int seen = 0;
  for (size_t d = 0; d < 2; d++) {
    DIR *dir = opendir(dirs[d]);
    ck_assert_ptr_nonnull(dir);
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
      size_t n = strlen(e->d_name);
      if (n < 5 || (strcmp(e->d_name + n - 5, ".cdag") != 0 && strcmp(e->d_name + n - 5, ".goal") != 0)) continue;
      char path[1024];
      snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
      cdag_graph *g = NULL;
      int rc = ir_load_file(path, NULL, &g);
      if (strncmp(e->d_name, "bad_", 4) == 0) {
        ck_assert_msg(rc != CDAG_OK, "%s should fail", path);
        ck_assert_ptr_nonnull(strstr(cdag_error_message(), e->d_name));
      } else {
        ck_assert_msg(rc == CDAG_OK, "%s: %s", path, cdag_error_message());
      }
      ir_graph_free(g);
      seen++;
    }
    closedir(dir);
  }
  ck_assert_int_ge(seen, 4);
}
END_TEST

/* The one op-line writer as the recorder uses it: into a buffer, snprintf-style (the length
   it needs, the buffer cut and terminated), a part file's `comm`, a collective, a wait; and
   the compact labels, which the loader reads back as labels. */
START_TEST(test_line_writer) {
  ir_line l = {.kind = IR_SEND, .bytes = 64, .peer = 3, .tag = 5, .addr = 0x40, .seg = -1, .cpu = -1, .nic = -1,
               .comm = 7, .wait = 1};
  char buf[80], tiny[8];
  size_t n = ir_format_line(buf, sizeof buf, "o1", &l);
  ck_assert_str_eq(buf, "o1: send 64b to 3 tag 5 comm 7 addr 0x40 wait");
  ck_assert_uint_eq(n, strlen(buf));
  ck_assert_uint_eq(ir_format_line(tiny, sizeof tiny, "o1", &l), n);
  ck_assert_str_eq(tiny, "o1: sen");
  ck_assert_uint_eq(ir_format_line(NULL, 0, "o1", &l), n);
  ir_call c = {.op = -1, .kind = IR_COLL_REDUCE, .comm = 2, .root = 1, .type = CDAG_2INT, .rop = CDAG_MINLOC,
               .in = 0x100, .out = 0x200, .count = 4};
  ir_line coll = {.kind = IR_LINE_COLL, .seg = -1, .cpu = -1, .nic = -1, .comm = -1, .call = &c, .rank = 0};
  ir_format_line(buf, sizeof buf, NULL, &coll);
  ck_assert_str_eq(buf, "reduce 4 2int minloc root 1 in 0x100 comm 2");   /* not the root: no out */
  coll.rank = 1;
  ir_format_line(buf, sizeof buf, NULL, &coll);
  ck_assert_str_eq(buf, "reduce 4 2int minloc root 1 in 0x100 out 0x200 comm 2");
  char a[IR_COMPACT_LABEL], b[IR_COMPACT_LABEL], z[IR_COMPACT_LABEL];
  ck_assert_str_eq(ir_compact_label(0, a), "o0");
  ck_assert_str_eq(ir_compact_label(62, b), "o10");
  ck_assert_str_eq(ir_compact_label(UINT32_MAX, z), "o4GFfc3");
  const char *waits[] = {a, b, z};
  ir_line w = {.kind = IR_LINE_WAIT, .seg = -1, .cpu = -1, .nic = -1, .comm = -1, .waits = waits, .nwaits = 3};
  char text[512];
  int len = snprintf(text, sizeof text, "num_ranks 2\nrank 0 {\n");
  ir_line s0 = {.kind = IR_SEND, .bytes = 8, .peer = 1, .seg = -1, .cpu = -1, .nic = -1, .comm = -1};
  for (int k = 0; k < 3; k++) {
    len += (int)ir_format_line(text + len, sizeof text - (size_t)len, waits[k], &s0);
    text[len++] = '\n';
    s0.addr += 8;
  }
  len += (int)ir_format_line(text + len, sizeof text - (size_t)len, NULL, &w);
  len += snprintf(text + len, sizeof text - (size_t)len, "\n}\nrank 1 {\n recv 8b from 0 addr 0\n recv 8b from 0 addr 8\n"
                  " recv 8b from 0 addr 16\n}\n");
  cdag_graph *g = NULL;
  ck_assert_msg(ir_load_mem(text, (size_t)len, "lines", NULL, &g) == CDAG_OK, "%s\n%s", cdag_error_message(), text);
  cdag_graph_free(&g);
}
END_TEST

/* Ranks stored once: `rank R like M` is rank M's block with peers at the same distance and
   addresses moved; cdag_graph_load reads it as the graph written in full. */
START_TEST(test_folded_ranks_load) {
  const char *folded = "num_ranks 4\n\nrank 0 {\n  send 8b to 1 tag 0 addr 0x1000\n"
                       "  recv 8b from 3 tag 0 addr 0x2000\n}\nrank 1 like 0\n"
                       "rank 2 like 0 a 0x1000 0x2000 16\nrank 3 like 0\n";
  char full[1024];
  int n = snprintf(full, sizeof full, "num_ranks 4\n\n");
  for (int r = 0; r < 4; r++)
    n += snprintf(full + n, sizeof full - (size_t)n, "rank %d {\n  send 8b to %d tag 0 addr 0x%x\n  recv 8b from %d tag 0 "
                  "addr 0x%x\n}\n", r, (r + 1) % 4, r == 2 ? 0x1010 : 0x1000, (r + 3) % 4, r == 2 ? 0x2010 : 0x2000);
  /* the same written by hand with CRLF lines, indented blocks and a trailing blank */
  const char *crlf = "num_ranks 4\r\n\r\n  rank 0 {\r\n    send 8b to 1 tag 0 addr 0x1000\r\n"
                     "    recv 8b from 3 tag 0 addr 0x2000\r\n  }\r\n  rank 1 like 0\r\n"
                     "rank 2 like 0 a 0x1000 0x2000 16 \r\nrank 3 like 0\r\n";
  /* ranks and folded lines inside a block comment are the comment's, not the file's (one
     after `//` opens none) */
  const char *commented = "num_ranks 4\n/* rank 3 like 0\nrank 1 {\n  calc 5\n}\nrank 2 like 1 */\n"
                          "rank 0 {\n  send 8b to 1 tag 0 addr 0x1000\n  recv 8b from 3 tag 0 addr 0x2000\n}\n"
                          "/*\nrank 1 like 0\n*/\n// /* opens nothing\nrank 1 like 0 // as rank 0\n"
                          "rank 2 like 0 a 0x1000 0x2000 16\t# its buffers 16 bytes up\nrank 3 like 0 /* the same */\n";
  cdag_graph *g = load_str(folded, 0), *h = load_str(full, 0), *k = load_str(crlf, 0);
  char *a = save_str(g), *b = save_str(h), *c = save_str(k);
  ck_assert_str_eq(a, b);
  ck_assert_str_eq(c, b);
  free(a), free(b), free(c);
  cdag_graph_free(&g), cdag_graph_free(&h), cdag_graph_free(&k);
  ck_assert_int_eq(ir_load_mem(commented, strlen(commented), "commented.cdag", NULL, &g), CDAG_OK);
  ck_assert_int_eq(g->nops, 8);
  cdag_graph_free(&g);
  /* a rank like one not written in full before it: an error naming the line */
  const char *bad = "num_ranks 2\nrank 1 like 0\nrank 0 {\n  calc 1\n}\n";
  ck_assert_int_eq(ir_load_mem(bad, strlen(bad), "bad.cdag", NULL, &g), CDAG_ERR_FORMAT);
  ck_assert_ptr_null(g);
  ck_assert_msg(strstr(cdag_error_message(), "bad.cdag: line 2: `rank R like M` of no rank written in full before it"),
                "%s", cdag_error_message());
  /* each rank once: a rank given twice would unfold its model again and again */
  const char *twice = "num_ranks 3\nrank 0 {\n  calc 1\n}\nrank 1 like 0\nrank 1 like 0\nrank 2 like 0\n";
  ck_assert_int_eq(ir_load_mem(twice, strlen(twice), "twice.cdag", NULL, &g), CDAG_ERR_FORMAT);
  ck_assert_msg(strstr(cdag_error_message(), "twice.cdag: line 6: rank 1 was given before"), "%s", cdag_error_message());
  /* an address moved (modulo 2^64) below 0 or past 2^63-1: an error naming the like line,
     not a line of the unfolded text */
  const char *wrap = "num_ranks 2\nrank 0 {\n  copy 8b from 0x1000 to 0x2000\n}\nrank 1 like 0 a 0x1000 0x1000 -4112\n";
  ck_assert_int_eq(ir_load_mem(wrap, strlen(wrap), "wrap.cdag", NULL, &g), CDAG_ERR_FORMAT);
  ck_assert_msg(strstr(cdag_error_message(), "wrap.cdag: line 5: `rank 1 like ...` moves 0x1000 below 0"),
                "%s", cdag_error_message());
  const char *past = "num_ranks 2\nrank 0 {\n  copy 8b from 0x1000 to 0x2000\n}\nrank 1 like 0 a 0x1000 0x1000 9223372036854771712\n";
  ck_assert_int_eq(ir_load_mem(past, strlen(past), "past.cdag", NULL, &g), CDAG_ERR_FORMAT);
  ck_assert_msg(strstr(cdag_error_message(), "past.cdag: line 5: `rank 1 like ...` moves 0x1000 past 2^63-1"), "%s",
                cdag_error_message());
  /* a file naming 2^27 ranks and giving two is refused as the loader refuses it unfolded, without
     the unfolder allocating per rank first (12.9 s and 1.2 GB before) */
  const char *sparse = "num_ranks 134217728\nrank 0 {\n  calc 1\n}\nrank 1 like 0\n";
  ck_assert_int_eq(ir_load_mem(sparse, strlen(sparse), "sparse.cdag", NULL, &g), CDAG_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(cdag_error_message(), "134217728 ranks but only 2 operations"), "%s", cdag_error_message());
  /* what the loader finds after unfolding names a line of the unfolded text */
  const char *after = "num_ranks 3\nrank 0 {\n  calc 1\n}\nrank 1 like 0\nrank 2 like 0\nrank 1 {\n  calc 2\n}\n";
  ck_assert_int_eq(ir_load_mem(after, strlen(after), "after.cdag", NULL, &g), CDAG_ERR_FORMAT);
  ck_assert_msg(strstr(cdag_error_message(), "after.cdag (unfolded):"), "%s", cdag_error_message());
}
END_TEST

Suite *cdag_format_suite(void) {
  Suite *s = suite_create("format");
  TCase *tc = tcase_create("round_trip");
  tcase_add_test(tc, test_round_trip_api_graph);
  tcase_add_test(tc, test_line_writer);
  tcase_add_test(tc, test_round_trip_unfinalized);
  tcase_add_test(tc, test_round_trip_strided);
  tcase_add_test(tc, test_blocks_expanded);
  tcase_add_test(tc, test_step_runs);
  tcase_add_test(tc, test_blocks_at_the_top);
  tcase_add_test(tc, test_split_line_waits);
  tcase_add_test(tc, test_round_trip_text_fixpoint);
  tcase_add_test(tc, test_round_trip_odd_labels);
  tcase_add_test(tc, test_public_save_load);
  tcase_add_test(tc, test_round_trip_larger);
  suite_add_tcase(s, tc);
  tc = tcase_create("goal");
  tcase_add_test(tc, test_goal_binomial_bcast);
  tcase_add_test(tc, test_goal_dissemination);
  tcase_add_test(tc, test_goal_calc_cpu_nic);
  tcase_add_test(tc, test_goal_backward_requires_reorder);
  tcase_add_test(tc, test_requires_later_label);
  tcase_add_test(tc, test_goal_default_address_zero);
  tcase_add_test(tc, test_goal_fresh_buffers);
  tcase_add_test(tc, test_goal_follow_buffers);
  suite_add_tcase(s, tc);
  tc = tcase_create("syntax");
  tcase_add_test(tc, test_syntax_details);
  tcase_add_test(tc, test_syntax_minimal);
  tcase_add_test(tc, test_examples_load);
  tcase_add_test(tc, test_data_files);
  tcase_add_test(tc, test_folded_ranks_load);
  suite_add_tcase(s, tc);
  return s;
}

CDAG_CHECK_MAIN(cdag_format_suite)
