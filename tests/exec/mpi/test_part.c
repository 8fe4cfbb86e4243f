/* cdag tests — tests/exec/mpi/test_part.c: the schedule part (src/exec/mpi/part.h), no MPI.
 *
 * Round trips: a plan part holding every record kind (a kernel collective on a member set,
 * an Alltoallw collective with its slot map, messages both ways, copies, reductions with
 * contributions, the cost model) and a graph part are written and read back field by field.
 * Damage: every truncation of a part and every one-byte change is CDAG_ERR_FORMAT or reads
 * back (never a crash: run under the sanitizers), another version is refused naming both
 * versions. Real plans: the parts sched_parts_from_plan writes for detected collectives
 * and a residual message read back, and the ranks' parts agree with each other (every
 * message out has its message in, every member holds the collective). A plan in stages: each
 * rank's part holds every stage's part, its computations in order and its staging buffer,
 * which binding maps into memory of the schedule's own; damaged, it fails cleanly too. */
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "exec/mpi/schedule.h"
#include "support/graphs.h"
#include "support/support.h"

static const det_piece SEND0[] = {{0x1000, 8}, {0x1010, 8}};
static const det_piece RECV0[] = {{0x2000, 16}};
static const int32_t MEMBERS[] = {3, 1, 2};
static const uint64_t COUNTS[] = {16, 16, 16};

/* Writes the plan part the round trip reads back. */
static void write_plan_part(wire_buf *out) {
  part_writer w = {0};
  part_coll k = {.method = SM_KERNEL, .kind = DET_ALLREDUCE, .type = CDAG_INT32, .op = CDAG_SUM, .rootm = -1,
                 .n = 3, .me = 1, .nsend = 1, .nrecv = 1, .setid = 0};
  part_coll_put(&w, &k, MEMBERS);
  part_slot_put(&w, SEND0, 2);
  part_slot_put(&w, RECV0, 1);
  part_kernel_put(&w, KERN_ALG_CENSUS, COUNTS, 3);
  part_coll a = {.method = SM_ALLTOALLW, .kind = DET_ALLTOALL, .type = 0, .op = 0, .rootm = -1,
                 .n = 2, .me = 0, .nsend = 2, .nrecv = 2, .setid = -1};
  part_coll_put(&w, &a, NULL);
  for (int s = 0; s < 4; s++) part_slot_put(&w, s % 2 ? RECV0 : SEND0, s % 2 ? 1 : 2);
  part_map_put(&w, 1, 0);
  part_map_put(&w, 2, 2);
  part_pair_put(&w, 1, 2, 5, 3);
  part_pair_piece(&w, 1, &(part_piece){SP_USER, 0x3000, 4, 1, 4});
  part_pair_piece(&w, 1, &(part_piece){SP_USER, 0x3008, 4, 1, 4});
  part_pair_piece(&w, 1, &(part_piece){SP_USER, 0x6000, 8, 100, 32});   /* a strided transfer's column */
  part_pair_put(&w, 0, 0, 0, 1);
  part_pair_piece(&w, 0, &(part_piece){SP_RED, 8, 4, 1, 4});
  part_copy_put(&w, &(part_copy){SP_USER, 0x4000, 0x4100, 32, 1, 32, 32});
  part_copy_put(&w, &(part_copy){SP_RED, 0, 0x3000, 4, 1, 4, 4});
  part_copy_put(&w, &(part_copy){SP_USER, 0x8000, 0x9000, 8, 16, 8, 64});
  w.redsize = 12;
  part_red_put(&w, &(part_red){.dst = 0x5000, .count = 1, .type = CDAG_INT32, .op = CDAG_MAX, .n = 3});
  part_contrib_put(&w, 0, 1);
  part_contrib_put(&w, 4, 2);
  part_contrib_put(&w, 8, 1);
  kern_model m = {2.5e-6, 3e-10, 7, 0, 0};   /* overhead and gamma stay at the compiling rank */
  ck_assert_int_eq(part_assemble(&w, &m, out), CDAG_OK);
  part_writer_free(&w);
}

static void check_piece(const sched_part *p, int64_t k, int space, uint64_t addr, uint64_t len) {
  ck_assert_int_eq(p->pieces[k].space, space);
  ck_assert_uint_eq(p->pieces[k].addr, addr);
  ck_assert_uint_eq(p->pieces[k].len, len);
}

START_TEST(plan_part_round_trip) {
  wire_buf out = {0};
  write_plan_part(&out);
  sched_part p;
  ck_assert_int_eq(part_read(out.buf, out.len, 4, &p), CDAG_OK);
  ck_assert_int_eq(p.mode, PART_PLAN);
  ck_assert(p.model.alpha == 2.5e-6 && p.model.beta == 3e-10 && p.model.blocks == 7);
  ck_assert_int_eq(p.ncolls, 2);
  const part_coll *k = &p.colls[0], *a = &p.colls[1];
  ck_assert(k->method == SM_KERNEL && k->kind == DET_ALLREDUCE && k->type == CDAG_INT32 && k->op == CDAG_SUM);
  ck_assert(k->rootm == -1 && k->n == 3 && k->me == 1 && k->nsend == 1 && k->nrecv == 1 && k->setid == 0);
  ck_assert_int_eq(k->alg, KERN_ALG_CENSUS);
  for (int j = 0; j < 3; j++) {
    ck_assert_int_eq(p.members[k->members_first + j], MEMBERS[j]);
    ck_assert_uint_eq(p.counts[k->counts_first + j], COUNTS[j]);
  }
  const part_slot *s0 = &p.slots[k->slot_first], *r0 = s0 + 1;
  ck_assert(s0->n == 2 && s0->bytes == 16 && r0->n == 1 && r0->bytes == 16);
  check_piece(&p, s0->first, SP_USER, 0x1000, 8);
  check_piece(&p, s0->first + 1, SP_USER, 0x1010, 8);
  check_piece(&p, r0->first, SP_USER, 0x2000, 16);
  ck_assert(a->method == SM_ALLTOALLW && a->kind == DET_ALLTOALL && a->n == 2 && a->setid == -1);
  ck_assert_int_eq(a->slot_first, 2);
  int32_t map[4] = {1, 0, 2, 2};
  for (int j = 0; j < 4; j++) ck_assert_int_eq(p.map[a->map_first + j], map[j]);
  ck_assert(p.nout == 1 && p.out[0].peer == 2 && p.out[0].tag == 5 && p.out[0].n == 3);
  check_piece(&p, p.out[0].first, SP_USER, 0x3000, 4);
  check_piece(&p, p.out[0].first + 1, SP_USER, 0x3008, 4);
  check_piece(&p, p.out[0].first + 2, SP_USER, 0x6000, 8);
  ck_assert(p.pieces[p.out[0].first].n == 1 && p.pieces[p.out[0].first + 2].n == 100 && p.pieces[p.out[0].first + 2].stride == 32);
  ck_assert(p.nin == 1 && p.in[0].peer == 0 && p.in[0].tag == 0 && p.in[0].n == 1);
  check_piece(&p, p.in[0].first, SP_RED, 8, 4);
  ck_assert_int_eq(p.ncopies, 3);
  ck_assert(p.copies[0].dst_space == SP_USER && p.copies[0].dst == 0x4000 && p.copies[0].src == 0x4100 &&
            p.copies[0].len == 32 && p.copies[0].n == 1);
  ck_assert(p.copies[2].dst == 0x8000 && p.copies[2].src == 0x9000 && p.copies[2].len == 8 && p.copies[2].n == 16 &&
            p.copies[2].src_stride == 8 && p.copies[2].dst_stride == 64);
  ck_assert(p.copies[1].dst_space == SP_RED && p.copies[1].dst == 0 && p.copies[1].src == 0x3000);
  ck_assert_uint_eq(p.redsize, 12);
  ck_assert(p.nreds == 1 && p.reds[0].dst == 0x5000 && p.reds[0].count == 1 && p.reds[0].type == CDAG_INT32 &&
            p.reds[0].op == CDAG_MAX && p.reds[0].n == 3 && p.reds[0].first == 0);
  ck_assert(p.ncontribs == 3 && p.contribs[1].off == 4 && p.contribs[1].mult == 2 && p.contribs[2].off == 8);
  part_free(&p);
  wire_free(&out);
}
END_TEST

START_TEST(graph_part_round_trip) {
  int32_t tags[] = {0, 5, 32767, 1};
  wire_buf out = {0};
  ck_assert_int_eq(part_graph_write(&out, 9, tags, 4, NULL, NULL), CDAG_OK);
  sched_part p;
  ck_assert_int_eq(part_read(out.buf, out.len, 2, &p), CDAG_OK);
  ck_assert(p.mode == PART_GRAPH && p.nops == 9 && p.ntags == 4 && p.ops == NULL);
  for (int k = 0; k < 4; k++) ck_assert_int_eq(p.tags[k], tags[k]);
  part_free(&p);
  wire_free(&out);
  wire_buf ops = {0};   /* with the rank's ops carried along */
  wire_put_bytes(&ops, "\x01\x02\x03", 3);
  ck_assert_int_eq(part_graph_write(&out, 9, tags, 4, &ops, NULL), CDAG_OK);
  ck_assert_int_eq(part_read(out.buf, out.len, 2, &p), CDAG_OK);
  ck_assert(p.ops_len == 3 && memcmp(p.ops, "\x01\x02\x03", 3) == 0);
  part_free(&p);
  wire_free(&out);
  wire_free(&ops);
}
END_TEST

/* A message piece of blocks that overlap, wrap the address space or lie in the reduction
   buffer is refused, as a copy of such blocks is. */
/* part_read of a part holding only what put writes. */
static int read_one(void (*put)(part_writer *, const void *), const void *arg) {
  part_writer w = {0};
  put(&w, arg);
  wire_buf out = {0};
  kern_model m = {2.5e-6, 3e-10, 7, 0, 0};
  ck_assert_int_eq(part_assemble(&w, &m, &out), CDAG_OK);
  part_writer_free(&w);
  sched_part p;
  int rc = part_read(out.buf, out.len, 4, &p);
  part_free(&p);
  wire_free(&out);
  return rc;
}

static void put_piece(part_writer *w, const void *pc) {
  part_pair_put(w, 1, 1, 0, 1);
  part_pair_piece(w, 1, pc);
}

static void put_copy(part_writer *w, const void *c) { part_copy_put(w, c); }

START_TEST(bad_blocks_refused) {
  static const part_piece bad[] = {{SP_USER, 0x1000, 8, 2, 4}, {SP_USER, UINT64_MAX - 64, 8, 16, 8},
                                   {SP_RED, 0, 8, 2, 8}, {SP_USER, 0x1000, 8, 0, 8}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) ck_assert_int_eq(read_one(put_piece, &bad[i]), CDAG_ERR_FORMAT);
  ck_assert_int_eq(read_one(put_piece, &(part_piece){SP_USER, 0x1000, 8, 2, 8}), CDAG_OK);
  /* more blocks than a part may hold: a process would walk them one by one */
  ck_assert_int_eq(read_one(put_piece, &(part_piece){SP_USER, 0x1000, 1, PART_MAX_BLOCKS + 1, 1}), CDAG_ERR_FORMAT);
  ck_assert_int_eq(read_one(put_copy, &(part_copy){SP_USER, 0x8000, 0x9000, 8, 16, 8, 4}), CDAG_ERR_FORMAT);
}
END_TEST

/* A plan's strided residual transfer is one message piece on each side (its 64 blocks kept
   together, as the plan keeps them), a strided transfer of a rank to itself one copy. */
START_TEST(strided_transfer_one_piece) {
  df_xfer x[2] = {{.src = 0, .dst = 1, .src_addr = 0x1000, .dst_addr = 0x2000, .len = 8, .blocks = 64, .src_stride = 32,
                   .dst_stride = 8},
                  {.src = 1, .dst = 1, .src_addr = 0x3000, .dst_addr = 0x4000, .len = 4, .blocks = 16, .src_stride = 4,
                   .dst_stride = 12}};
  det_msg m[2] = {{.src = 0, .dst = 1, .first = 0, .n = 1, .bytes = 512}, {.src = 1, .dst = 1, .first = 1, .n = 1, .bytes = 64}};
  cdag_plan p = {.nprocs = 2, .nxfers = 2, .xfers = x, .nmsgs = 2, .msgs = m};
  kern_model km = kern_model_default();
  wire_buf parts[2] = {{0}};
  CK_OK(sched_parts_from_plan(&p, &km, NULL, parts));
  sched_part a, b;
  CK_OK(part_read(parts[0].buf, parts[0].len, 2, &a));
  CK_OK(part_read(parts[1].buf, parts[1].len, 2, &b));
  ck_assert(a.nout == 1 && a.out[0].n == 1 && b.nin == 1 && b.in[0].n == 1);
  const part_piece *s = &a.pieces[a.out[0].first], *r = &b.pieces[b.in[0].first];
  ck_assert(s->addr == 0x1000 && s->len == 8 && s->n == 64 && s->stride == 32);
  ck_assert(r->addr == 0x2000 && r->len == 8 && r->n == 64 && r->stride == 8);
  ck_assert(b.ncopies == 1 && b.copies[0].n == 16 && b.copies[0].src_stride == 4 && b.copies[0].dst_stride == 12);
  part_free(&a);
  part_free(&b);
  wire_free(&parts[0]);
  wire_free(&parts[1]);
}
END_TEST

/* Every prefix fails; every one-byte change fails cleanly or reads (no crash, no leak). */
START_TEST(damaged_parts_fail_cleanly) {
  wire_buf out = {0};
  write_plan_part(&out);
  sched_part p;
  for (int64_t n = 0; n < out.len; n++) {
    ck_assert_int_eq(part_read(out.buf, n, 4, &p), CDAG_ERR_FORMAT);
    part_free(&p);
  }
  ck_assert_int_lt(out.len, 4096);
  uint8_t copy[4096];
  for (int64_t i = 0; i < out.len; i++)
    for (int v = 0; v < 256; v += 17) {
      memcpy(copy, out.buf, (size_t)out.len);
      copy[i] = (uint8_t)v;
      int rc = part_read(copy, out.len, 4, &p);
      ck_assert(rc == CDAG_OK || rc == CDAG_ERR_FORMAT);
      part_free(&p);
    }
  /* more members than ranks */
  ck_assert_int_eq(part_read(out.buf, out.len, 2, &p), CDAG_ERR_FORMAT);
  part_free(&p);
  wire_free(&out);
}
END_TEST

START_TEST(other_versions_are_refused) {
  wire_buf out = {0};
  wire_put_u(&out, PART_MAGIC);
  wire_put_u(&out, PART_VERSION + 1);
  wire_put_u(&out, PART_GRAPH);
  wire_put_u(&out, 0);
  wire_put_u(&out, 0);
  sched_part p;
  ck_assert_int_eq(part_read(out.buf, out.len, 1, &p), CDAG_ERR_FORMAT);
  char want[64];
  snprintf(want, sizeof want, "version %u, this library reads version %u", PART_VERSION + 1, PART_VERSION);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), want));
  part_free(&p);
  wire_free(&out);
  wire_put_u(&out, 0xbeef);
  ck_assert_int_eq(part_read(out.buf, out.len, 1, &p), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "not a schedule part"));
  part_free(&p);
  wire_free(&out);
}
END_TEST

/* The parts of a real plan: a bcast, an allreduce and a residual message on 5 ranks. */
START_TEST(parts_of_a_real_plan_agree) {
  enum { P = 5 };
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(P, &g));
  gen_set all = {0, 1, P};
  gen_bufs b = {0x1000, 0x2000, 0x3000, 1};
  CK_OK(gen_bcast_binomial(g, &all, 0, 4096, &b));
  gen_bufs b2 = {0x10000, 0x20000, 0x30000, 2};
  CK_OK(gen_allreduce_ring(g, &all, 16, &b2));
  CK_OK(cdag_rank_send(g, 1, 0x50000, 24, 3, 9, NULL));
  CK_OK(cdag_rank_recv(g, 3, 0x60000, 24, 1, 9, NULL));
  cdag_plan *pl;
  kern_model m = kern_model_builtin();
  pipeline_tune t = pipeline_tune_of(&m, KERN_POLICY_CDAG);
  t.price = 0;   /* every collective the rules find, whatever the model says of it */
  CK_OK(pipeline_plan(g, NULL, &t, &pl));
  ck_assert_int_ge(pl->ncolls, 2);
  wire_buf parts[P] = {{0}};
  CK_OK(sched_parts_from_plan(pl, &m, NULL, parts));
  int64_t colls = 0, out = 0, in = 0, kernels = 0, out_bytes = 0, in_bytes = 0;
  for (int r = 0; r < P; r++) {
    sched_part p;
    CK_OK(part_read(parts[r].buf, parts[r].len, P, &p));
    ck_assert(p.model.alpha == m.alpha && p.model.beta == m.beta);
    colls += p.ncolls;
    out += p.nout;
    in += p.nin;
    for (int64_t c = 0; c < p.ncolls; c++) kernels += p.colls[c].method == SM_KERNEL;
    for (int64_t k = 0; k < p.nout; k++)
      for (int64_t q = 0; q < p.out[k].n; q++) out_bytes += (int64_t)p.pieces[p.out[k].first + q].len;
    for (int64_t k = 0; k < p.nin; k++)
      for (int64_t q = 0; q < p.in[k].n; q++) in_bytes += (int64_t)p.pieces[p.in[k].first + q].len;
    part_free(&p);
    wire_free(&parts[r]);
  }
  int64_t members = 0;
  for (int64_t c = 0; c < pl->ncolls; c++) members += pl->colls[c].nranks;
  ck_assert_int_eq(colls, members);
  ck_assert_int_eq(kernels, members);   /* policy cdag: both run as cdag kernels */
  ck_assert_int_eq(out, in);
  ck_assert_int_eq(out_bytes, in_bytes);
  ck_assert_int_ge(out_bytes, 24);
  cdag_plan_free(&pl);
  cdag_graph_free(&g);
}
END_TEST

/* Messages from rank 0 to rank 1 of a global graph: n sends of the lengths len[k % nlen]. */
static cdag_plan *pair_plan(int64_t n, const uint64_t *len, int nlen) {
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(2, &g));
  uint64_t off = 0;
  for (int64_t k = 0; k < n; k++) {
    uint64_t l = len[k % nlen];
    CK_OK(cdag_rank_send(g, 0, 0x100000 + 2 * off, l, 1, 0, NULL));
    CK_OK(cdag_rank_recv(g, 1, 0x100000 + 2 * off, l, 0, 0, NULL));
    off += l;
  }
  cdag_plan *pl;
  CK_OK(pipeline_plan(g, NULL, (pipeline_tune[]){pipeline_tune_of(NULL, KERN_POLICY_AUTO)}, &pl));
  cdag_graph_free(&g);
  return pl;
}

/* Both sides' messages: equal tags, piece lengths and order; returns the message count. */
static int64_t check_sides(const wire_buf *parts, int64_t *packed_pieces, uint64_t *first_alone_len) {
  sched_part a, b;
  CK_OK(part_read(parts[0].buf, parts[0].len, 2, &a));
  CK_OK(part_read(parts[1].buf, parts[1].len, 2, &b));
  ck_assert_int_eq(a.nin, 0);
  ck_assert_int_eq(b.nout, 0);
  ck_assert_int_eq(a.nout, b.nin);
  for (int64_t k = 0; k < a.nout; k++) {
    ck_assert(a.out[k].peer == 1 && b.in[k].peer == 0 && a.out[k].tag == k && b.in[k].tag == k);
    ck_assert_int_eq(a.out[k].n, b.in[k].n);
    for (int64_t q = 0; q < a.out[k].n; q++)
      ck_assert_uint_eq(a.pieces[a.out[k].first + q].len, b.pieces[b.in[k].first + q].len);
  }
  *packed_pieces = a.nout ? a.out[0].n : 0;
  *first_alone_len = a.nout > 1 ? a.pieces[a.out[1].first].len : 0;
  int64_t n = a.nout;
  part_free(&a);
  part_free(&b);
  return n;
}

/* The cost model splits a pair's residual pieces: up to the pack limit packed into message
   0, each larger piece alone (tags 1, 2, ... in plan order); past PART_TAGS - 1 pieces
   alone, the rest join the packed message. */
START_TEST(residual_pieces_split_by_the_model) {
  static const uint64_t mixed[] = {8, 4000, 100, 4000};
  kern_model m = kern_model_builtin();   /* limit 1000 bytes */
  cdag_plan *pl = pair_plan(40, mixed, 4);
  wire_buf parts[2] = {{0}};
  int64_t packed;
  uint64_t alone_len;
  CK_OK(sched_parts_from_plan(pl, &m, NULL, parts));
  ck_assert_int_eq(check_sides(parts, &packed, &alone_len), 1 + 20);
  ck_assert(packed == 20 && alone_len == 4000);
  wire_free(&parts[0]);
  wire_free(&parts[1]);
  m.overhead = 1e-12;   /* limit 0: every piece alone, as written */
  CK_OK(sched_parts_from_plan(pl, &m, NULL, parts));
  ck_assert_int_eq(check_sides(parts, &packed, &alone_len), 40);
  ck_assert(packed == 1 && alone_len == 4000);
  wire_free(&parts[0]);
  wire_free(&parts[1]);
  cdag_plan_free(&pl);
  static const uint64_t big[] = {64};
  pl = pair_plan(PART_TAGS + 100, big, 1);
  m.overhead = 1e-12;
  CK_OK(sched_parts_from_plan(pl, &m, NULL, parts));
  ck_assert_int_eq(check_sides(parts, &packed, &alone_len), PART_TAGS);
  ck_assert_int_eq(packed, 101);
  wire_free(&parts[0]);
  wire_free(&parts[1]);
  cdag_plan_free(&pl);
}
END_TEST

/* Three stages (tests/data/fault/compute_stages3.cdag): rank 0's receive from rank 2 lands
   a stage late, in a staging buffer. */
static const char STAGED[] = "num_ranks 3\n"
    "rank 0 {\n compute 100 reads all writes 16b at 0x100\n send 16b to 1 addr 0x100\n send 16b to 2 addr 0x100\n"
    " recv 8b from 1 addr 0x200\n compute 50 reads all writes 8b at 0x300\n recv 8b from 2 addr 0x200\n}\n"
    "rank 1 {\n recv 16b from 0 addr 0x100\n compute 70 reads 16b at 0x100 writes 8b at 0x180\n"
    " send 8b to 0 addr 0x180\n send 8b to 2 addr 0x180\n}\n"
    "rank 2 {\n recv 16b from 0 addr 0x100\n recv 8b from 1 addr 0x180\n send 8b to 0 addr 0x100\n"
    " compute 10 reads all\n}\n";

START_TEST(stages_part_round_trip) {
  enum { P = 3 };
  cdag_graph *g = cdag_test_text_graph(STAGED);
  cdag_plan *pl;
  kern_model m = kern_model_builtin();
  CK_OK(pipeline_plan(g, NULL, (pipeline_tune[]){pipeline_tune_of(&m, KERN_POLICY_MPI)}, &pl));
  ck_assert_ptr_nonnull(pl->steps);
  ck_assert_int_eq(pl->steps->nstages, 3);
  int64_t base[P + 1] = {0};   /* the file lists its ranks one after the other */
  for (int64_t i = 0; i < g->nops; i++) base[g->rank[i] + 1] = i + 1;
  wire_buf parts[P] = {{0}};
  CK_OK(sched_parts_from_plan(pl, &m, base, parts));
  int64_t comps = 0, temps = 0;
  for (int r = 0; r < P; r++) {
    sched_core *c = sched_core_new();
    ck_assert_ptr_nonnull(c);
    CK_OK(part_read(parts[r].buf, parts[r].len, P, &c->part));
    sched_part *p = &c->part;
    ck_assert_int_eq(p->mode, PART_STAGES);
    ck_assert_int_eq(p->nstages, 3);
    for (int64_t k = 0; k < p->nstages; k++) ck_assert_int_eq(p->stages[k].mode, PART_PLAN);
    for (int64_t k = 0; k < p->ncomps; k++) {   /* in the order the rank runs them */
      ck_assert(k == 0 || p->comps[k].after >= p->comps[k - 1].after);
      ck_assert(k == 0 || p->comps[k].after > p->comps[k - 1].after || p->comps[k].pos > p->comps[k - 1].pos);
      ck_assert_int_lt(p->comps[k].key, base[r + 1] - base[r]);
    }
    if (r == 0) {   /* reads all, then reads all again: the second hashes what came since */
      ck_assert_int_eq(p->ncomps, 2);
      ck_assert(p->comps[0].rlen == UINT64_MAX && p->comps[0].after == -1 && p->comps[0].wlen == 16);
      ck_assert(p->comps[1].rlen == UINT64_MAX && p->comps[1].nsince >= 1 && p->comps[1].waddr == 0x300);
    }
    comps += p->ncomps;
    temps += p->ntemps;
    for (int64_t k = 0; k < p->ntemps; k++) {   /* bound: every address inside a temp is the core's memory now */
      uint64_t lo = p->temps[2 * k], hi = lo + p->temps[2 * k + 1];
      ck_assert_uint_ge(lo, STAGE_TEMP_BASE);
      CK_OK(sched_temps_bind(c));
      int64_t moved = 0;
      for (int64_t s = 0; s < p->nstages; s++) {
        const sched_part *sp = &p->stages[s];
        for (int64_t q = 0; q < sp->npieces; q++) {
          ck_assert(sp->pieces[q].addr < lo || sp->pieces[q].addr >= hi);
          moved += sp->pieces[q].addr >= (uint64_t)(uintptr_t)c->temps &&
                   sp->pieces[q].addr < (uint64_t)(uintptr_t)c->temps + (hi - lo);
        }
        for (int64_t q = 0; q < sp->ncopies; q++) {   /* here the message is rank 0's own bytes: copies */
          const part_copy *cp = &sp->copies[q];
          ck_assert(cp->src < lo || cp->src >= hi);
          ck_assert(cp->dst < lo || cp->dst >= hi);
          moved += cp->src >= (uint64_t)(uintptr_t)c->temps && cp->src < (uint64_t)(uintptr_t)c->temps + (hi - lo);
          moved += cp->dst >= (uint64_t)(uintptr_t)c->temps && cp->dst < (uint64_t)(uintptr_t)c->temps + (hi - lo);
        }
      }
      ck_assert_int_eq(moved, 2);   /* into the staging buffer in stage 0, out of it in stage 2 */
      break;
    }
    sched_core_unref(c);
  }
  ck_assert_int_eq(comps, 4);
  ck_assert_int_eq(temps, 1);
  /* damaged: every prefix fails, every one-byte change fails cleanly or reads */
  sched_part p;
  for (int64_t n = 0; n < parts[0].len; n++) {
    ck_assert_int_eq(part_read(parts[0].buf, n, P, &p), CDAG_ERR_FORMAT);
    part_free(&p);
  }
  uint8_t copy[4096];
  ck_assert_int_lt(parts[0].len, 4096);
  for (int64_t i = 0; i < parts[0].len; i++)
    for (int v = 0; v < 256; v += 51) {
      memcpy(copy, parts[0].buf, (size_t)parts[0].len);
      copy[i] = (uint8_t)v;
      int rc = part_read(copy, parts[0].len, P, &p);
      ck_assert(rc == CDAG_OK || rc == CDAG_ERR_FORMAT);
      part_free(&p);
    }
  for (int r = 0; r < P; r++) wire_free(&parts[r]);
  cdag_plan_free(&pl);
  cdag_graph_free(&g);
}
END_TEST

Suite *cdag_part_suite(void) {
  Suite *s = suite_create("part");
  TCase *t = tcase_create("part");
  tcase_add_test(t, plan_part_round_trip);
  tcase_add_test(t, bad_blocks_refused);
  tcase_add_test(t, strided_transfer_one_piece);
  tcase_add_test(t, graph_part_round_trip);
  tcase_add_test(t, damaged_parts_fail_cleanly);
  tcase_add_test(t, other_versions_are_refused);
  tcase_add_test(t, parts_of_a_real_plan_agree);
  tcase_add_test(t, residual_pieces_split_by_the_model);
  tcase_add_test(t, stages_part_round_trip);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_part_suite)
