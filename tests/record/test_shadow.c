/* cdag tests — tests/record/test_shadow.c: the recorder's shadow (src/record/shadow.c).
 *
 * Hand-written cases: the rank's own bytes, real forwarding, computation the recording
 * must state (changed bytes; bytes never seen, once the rank has received), reductions and
 * copies proven by content (one receive, several into one temporary, part of a buffer), the
 * datatype hint, the budget, the time between calls and its threshold. Then a randomized oracle
 * written apart from the shadow: random programs of receives, invisible local computation
 * (sums, maxima, xors, copies, overwrites) and sends over a memory of slots; the recorded
 * events and the shadow's fixes, replayed in position order on a model memory, must give
 * every byte each send sends, and at the end of the phase every byte of memory the recording
 * saw, except bytes a computation wrote. */
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check_main.h"

#include "record/record.h"

enum { MAXFIX = 64, MAXAT = 8 };
typedef struct { rec_fix f[MAXFIX]; uint64_t at[MAXFIX][MAXAT]; int n; } fixes;

/* Keeps each fix, and the first addresses of listed blocks (the shadow's memory). */
static void collect(void *ctx, const rec_fix *f) {
  fixes *x = ctx;
  ck_assert_int_lt(x->n, MAXFIX);
  for (uint64_t i = 0; f->at && i < f->blocks && i < MAXAT; i++) x->at[x->n][i] = f->at[i];
  x->f[x->n++] = *f;
}

#define A(p) ((uint64_t)(uintptr_t)(p))

/* A message of one range: the shadow's check, then its computations written (check_sent). */
static void send1(rec_shadow *sh, uint64_t addr, uint64_t len, uint64_t seq, const char *type, rec_fix_fn fix,
                  void *ctx) {
  rec_shadow_send(sh, addr, len, seq, type, fix, ctx);
  rec_shadow_flush(sh, fix, ctx);
}
#define STEP REC_SEQ_STEP

/* A receive complete at `done`, its posting not known (no check of what it overwrites). */
static void recv_at(rec_shadow *sh, uint64_t addr, uint64_t len, uint64_t done, const char *type) {
  rec_shadow_recv(sh, addr, len, done, 0, type, NULL, NULL);
}

static void fill(void *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) ((uint8_t *)p)[i] = (uint8_t)(seed * 31 + i * 7 + 1);
}

START_TEST(own_bytes_and_forwarding_need_nothing) {
  const char *ty = "uint8";   /* the messages' element type */
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  uint8_t a[64], t[64];
  fixes x = {.n = 0};
  fill(a, sizeof a, 1);
  send1(sh, A(a), sizeof a, 1 * STEP, ty, collect, &x);   /* never seen: its own */
  fill(t, sizeof t, 2);
  recv_at(sh, A(t), sizeof t, 2 * STEP, "uint8");
  send1(sh, A(t), sizeof t, 3 * STEP, ty, collect, &x);   /* forwarded unchanged */
  send1(sh, A(a), 16, 4 * STEP, ty, collect, &x);         /* part of what it sent */
  ck_assert_int_eq(x.n, 0);
  rec_shadow_free(sh);
}
END_TEST

START_TEST(computation_reads_all_and_writes) {
  const char *ty = NULL;   /* the messages' element type */
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  uint8_t t[64];
  fixes x = {.n = 0};
  fill(t, sizeof t, 3);
  recv_at(sh, A(t), sizeof t, 1 * STEP, NULL);
  t[10] ^= 1;   /* computed on */
  send1(sh, A(t), sizeof t, 2 * STEP, ty, collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_COMPUTE);
  ck_assert_uint_eq(x.f[0].addr, A(t));
  ck_assert_uint_eq(x.f[0].bytes, sizeof t);
  ck_assert_uint_eq(x.f[0].cost, 0);   /* no time was given */
  ck_assert(x.f[0].seq > 2 * STEP - STEP / 2 && x.f[0].seq < 2 * STEP - STEP / 4);
  uint64_t c[3];
  rec_shadow_counts(sh, c);
  ck_assert_uint_eq(c[REC_FIX_COMPUTE], 1);
  rec_shadow_free(sh);
}
END_TEST

START_TEST(a_sum_is_proven) {
  const char *ty = "int32";   /* the messages' element type */
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  int32_t a[8], t[8];
  fixes x = {.n = 0};
  fill(a, sizeof a, 4);
  fill(t, sizeof t, 5);
  send1(sh, A(a), sizeof a, 1 * STEP, ty, collect, &x);
  recv_at(sh, A(t), sizeof t, 2 * STEP, "int32");
  for (int i = 0; i < 8; i++) a[i] = (int32_t)((uint32_t)a[i] + (uint32_t)t[i]);
  send1(sh, A(a), sizeof a, 3 * STEP, ty, collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_REDUCE);
  ck_assert_str_eq(x.f[0].type, "int32");
  ck_assert_str_eq(x.f[0].op, "sum");
  ck_assert_uint_eq(x.f[0].count, 8);
  ck_assert_uint_eq(x.f[0].src, A(t));
  ck_assert_uint_eq(x.f[0].addr, A(a));
  ck_assert_uint_eq(x.f[0].seq, 2 * STEP + 1);   /* right after the receive completed */
  rec_shadow_free(sh);
}
END_TEST

START_TEST(a_root_folds_its_temporary) {
  const char *ty = "double";   /* the messages' element type */
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  double a[4], t[4];
  fixes x = {.n = 0};
  for (int i = 0; i < 4; i++) a[i] = i + 0.5;
  send1(sh, A(a), sizeof a, 1 * STEP, ty, collect, &x);
  for (int k = 0; k < 3; k++) {   /* three contributions arrive in one temporary */
    for (int i = 0; i < 4; i++) t[i] = k * 10.25 + i;
    recv_at(sh, A(t), sizeof t, (uint64_t)(2 + k) * STEP, "double");
    for (int i = 0; i < 4; i++) a[i] += t[i];
  }
  send1(sh, A(a), sizeof a, 6 * STEP, ty, collect, &x);
  ck_assert_int_eq(x.n, 3);
  for (int k = 0; k < 3; k++) {
    ck_assert_int_eq(x.f[k].kind, REC_FIX_REDUCE);
    ck_assert_str_eq(x.f[k].type, "double");
    ck_assert_uint_eq(x.f[k].seq, (uint64_t)(2 + k) * STEP + 1);
  }
  rec_shadow_free(sh);
}
END_TEST

START_TEST(part_of_a_reduced_buffer) {
  const char *ty = "int64";   /* the messages' element type */
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  int64_t a[8], t[8];
  fixes x = {.n = 0};
  for (int i = 0; i < 8; i++) a[i] = i % 2 ? -3 : 10, t[i] = i % 2 ? 7 : -1;   /* each wins half */
  send1(sh, A(a), sizeof a, 1 * STEP, ty, collect, &x);
  recv_at(sh, A(t), sizeof t, 2 * STEP, "int64");
  for (int i = 0; i < 8; i++) a[i] = a[i] > t[i] ? a[i] : t[i];
  send1(sh, A(&a[2]), 16, 3 * STEP, ty, collect, &x);   /* two elements of it */
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_REDUCE);
  ck_assert_str_eq(x.f[0].op, "max");
  ck_assert_uint_eq(x.f[0].src, A(&t[2]));
  ck_assert_uint_eq(x.f[0].addr, A(&a[2]));
  ck_assert_uint_eq(x.f[0].count, 2);
  rec_shadow_free(sh);
}
END_TEST

/* Candidates are looked up by length: a piece's own (16 bytes here) and its whole range's
   (64), newest first across both, past receives of other lengths. */
START_TEST(candidates_of_two_lengths) {
  const char *ty = "int64";
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  int64_t a[8], t[8], small[2], other[3];
  fixes x = {.n = 0};
  for (int i = 0; i < 8; i++) a[i] = i % 2 ? -3 : 10, t[i] = i % 2 ? 7 : -1;
  send1(sh, A(a), sizeof a, 1 * STEP, ty, collect, &x);
  recv_at(sh, A(t), sizeof t, 2 * STEP, "int64");
  for (int k = 0; k < 3; k++) {   /* newer receives: one of the piece's length, others of neither */
    small[0] = 100 + k, small[1] = -100 - k, other[0] = other[1] = other[2] = k;
    recv_at(sh, A(small), sizeof small, (uint64_t)(3 + 2 * k) * STEP, "int64");
    recv_at(sh, A(other), sizeof other, (uint64_t)(4 + 2 * k) * STEP, "int64");
  }
  for (int i = 0; i < 8; i++) a[i] = a[i] > t[i] ? a[i] : t[i];
  send1(sh, A(&a[2]), 16, 20 * STEP, ty, collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_REDUCE);
  ck_assert_str_eq(x.f[0].op, "max");
  ck_assert_uint_eq(x.f[0].src, A(&t[2]));
  ck_assert_uint_eq(x.f[0].seq, 2 * STEP + 1);
  rec_shadow_free(sh);
}
END_TEST

START_TEST(a_copy_of_a_receive_is_proven) {
  const char *ty = "uint8";   /* the messages' element type */
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  uint8_t t[40], b[40], z[40];
  fixes x = {.n = 0};
  fill(t, sizeof t, 8);
  recv_at(sh, A(t), sizeof t, 1 * STEP, "uint8");
  memcpy(b, t, sizeof b);   /* a tree broadcast forwarding through another buffer */
  send1(sh, A(b), sizeof b, 2 * STEP, ty, collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_COPY);
  ck_assert_uint_eq(x.f[0].src, A(t));
  ck_assert_uint_eq(x.f[0].addr, A(b));
  memset(t, 0, sizeof t);   /* all alike: no proof of a copy, so computed (never seen, after a receive) */
  memset(z, 0, sizeof z);
  recv_at(sh, A(t), sizeof t, 3 * STEP, NULL);
  send1(sh, A(z), sizeof z, 4 * STEP, ty, collect, &x);
  ck_assert_int_eq(x.n, 2);
  ck_assert_int_eq(x.f[1].kind, REC_FIX_COMPUTE);
  ck_assert_uint_eq(x.f[1].addr, A(z));
  rec_shadow_free(sh);
}
END_TEST

/* One buffer received into 40 times, 64 KiB each (2.5 MiB in all, the budget 1 MiB): the
   copies of earlier receives are given up as the arena is compacted, so the last one is still
   kept and a copy of it is proven. Without compaction the arena held every copy, and the last
   ones, over budget, only a hash: the copy was a computation. */
START_TEST(copies_no_longer_held_are_given_up) {
  enum { N = 64 << 10 };
  static uint8_t t[N], b[N];
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  fixes x = {.n = 0};
  for (unsigned k = 0; k < 40; k++) {
    fill(t, sizeof t, k);
    recv_at(sh, A(t), sizeof t, (1 + k) * STEP, "uint8");
  }
  memcpy(b, t, sizeof b);
  send1(sh, A(b), sizeof b, 50 * STEP, "uint8", collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_COPY);
  ck_assert_uint_eq(x.f[0].src, A(t));
  rec_shadow_reset(sh);   /* a second phase starts from the spare chunks */
  fill(t, sizeof t, 99);
  recv_at(sh, A(t), sizeof t, 60 * STEP, "uint8");
  memcpy(b, t, sizeof b);
  send1(sh, A(b), sizeof b, 61 * STEP, "uint8", collect, &x);
  ck_assert_int_eq(x.n, 2);
  ck_assert_int_eq(x.f[1].kind, REC_FIX_COPY);
  rec_shadow_free(sh);
}
END_TEST

/* 24 receives of 4 MiB into one buffer, the budget 256 MiB (copies kept for the last 8 MiB
   received): each compaction finds the last receives' chunks live and leaves them where they
   are (28 MiB moved). Moving every live copy instead copied nearly all that arrived again (92 of 96 MiB). The
   last receive's copy is still proven. */
START_TEST(live_chunks_stay_where_they_are) {
  enum { N = 4 << 20, K = 24 };
  static uint8_t t[N], b[N];
  rec_shadow *sh = rec_shadow_new(256u << 20, REC_COMPUTE_MIN_NS);
  fixes x = {.n = 0};
  for (unsigned k = 0; k < K; k++) {
    fill(t, sizeof t, k);
    recv_at(sh, A(t), sizeof t, (1 + k) * STEP, "uint8");
  }
  ck_assert_uint_le(rec_shadow_moved(sh), (uint64_t)K * N / 3);
  memcpy(b, t, sizeof b);
  send1(sh, A(b), sizeof b, (K + 1) * STEP, "uint8", collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_COPY);
  rec_shadow_free(sh);
}
END_TEST

/* A small receive into a buffer that stays, then one of 16 MiB into a buffer used again, 80
   times (budget 256 MiB): each compaction finds the chunk of the small copy live by what it
   holds and, when kept whole, nothing fills the rest of it; measured by what it can hold, it
   is moved with the others. The arena grew by a chunk a round before (672 MiB after 160). */
START_TEST(a_small_live_copy_does_not_keep_a_chunk) {
  enum { K = 80, BIG = 16 << 20, SMALL = 4096 };
  uint8_t *big = malloc(BIG), *small = malloc((size_t)K * SMALL);
  ck_assert(big && small);
  memset(big, 1, BIG), memset(small, 2, (size_t)K * SMALL);
  rec_shadow *sh = rec_shadow_new(256u << 20, REC_COMPUTE_MIN_NS);
  uint64_t most = 0;
  for (unsigned k = 0; k < K; k++) {
    recv_at(sh, A(small + (size_t)k * SMALL), SMALL, (1 + 2 * k) * STEP, "uint8");
    big[0] = (uint8_t)k;
    recv_at(sh, A(big), BIG, (2 + 2 * k) * STEP, "uint8");
    if (rec_shadow_footprint(sh) > most) most = rec_shadow_footprint(sh);
  }
  ck_assert_uint_le(most, 128u << 20);
  rec_shadow_free(sh);
  free(big), free(small);
}
END_TEST

/* Copies live in chunks 3/4 full, 54 MiB of a 120 MiB budget, then 200 receives of 2 MiB into
   one buffer: compactions go on under the budget, and the last receive's copy is kept, a
   copy of it proven. Before, the next compaction was set past the budget and never came: 172
   of the 200 were only hashed. */
START_TEST(compaction_goes_on_near_the_budget) {
  enum { M = 2 << 20 };
  uint8_t *a = calloc(24, M), *c = calloc(2, M), *d = calloc(1, M), *b = malloc(M);
  ck_assert(a && c && d && b);
  rec_shadow *sh = rec_shadow_new(120u << 20, REC_COMPUTE_MIN_NS);
  uint64_t seq = STEP;
  for (int i = 0; i < 24; i++, seq += STEP) a[(size_t)i * M]++, recv_at(sh, A(a + (size_t)i * M), M, seq, "uint8");
  for (int i = 0; i < 24; i += 4, seq += STEP) a[(size_t)i * M]++, recv_at(sh, A(a + (size_t)i * M), M, seq, "uint8");
  for (int i = 0; i < 2; i++, seq += STEP) c[(size_t)i * M]++, recv_at(sh, A(c + (size_t)i * M), M, seq, "uint8");
  for (int i = 0; i < 200; i++, seq += STEP) fill(d, M, (unsigned)i), recv_at(sh, A(d), M, seq, "uint8");
  memcpy(b, d, M);
  fixes x = {.n = 0};
  send1(sh, A(b), M, seq, "uint8", collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_COPY);
  ck_assert_uint_eq(x.f[0].src, A(d));
  rec_shadow_free(sh);
  free(a), free(c), free(d), free(b);
}
END_TEST

START_TEST(the_hint_chooses_the_type) {
  const char *ty = "int64";   /* the messages' element type */
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  int64_t a[2] = {5, 7}, t[2] = {1, 2};   /* no carry: an int32 sum would fit too */
  fixes x = {.n = 0};
  send1(sh, A(a), sizeof a, 1 * STEP, ty, collect, &x);
  recv_at(sh, A(t), sizeof t, 2 * STEP, "int64");
  a[0] += t[0];
  a[1] += t[1];
  send1(sh, A(a), sizeof a, 3 * STEP, ty, collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_str_eq(x.f[0].type, "int64");
  ck_assert_uint_eq(x.f[0].count, 2);
  rec_shadow_free(sh);
}
END_TEST

START_TEST(no_sum_into_bytes_of_another_type) {
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  int32_t a[8], t[8];
  fixes x = {.n = 0};
  fill(a, sizeof a, 15);
  fill(t, sizeof t, 16);
  send1(sh, A(a), sizeof a, 1 * STEP, "uint8", collect, &x);   /* sent as bytes */
  recv_at(sh, A(t), sizeof t, 2 * STEP, "int32");
  for (int i = 0; i < 8; i++) a[i] = (int32_t)((uint32_t)a[i] + (uint32_t)t[i]);
  send1(sh, A(a), sizeof a, 3 * STEP, "int32", collect, &x);
  ck_assert_int_eq(x.n, 1);   /* its bytes may have several origins inside an element */
  ck_assert_int_eq(x.f[0].kind, REC_FIX_COMPUTE);
  rec_shadow_free(sh);
}
END_TEST

START_TEST(over_budget_only_hashes) {
  const char *ty = NULL;   /* the messages' element type */
  rec_shadow *sh = rec_shadow_new(0, REC_COMPUTE_MIN_NS);
  uint8_t t[32], a[32];
  fixes x = {.n = 0};
  fill(t, sizeof t, 9);
  fill(a, sizeof a, 10);
  send1(sh, A(a), sizeof a, 1 * STEP, ty, collect, &x);   /* its own, before any receive */
  recv_at(sh, A(t), sizeof t, 2 * STEP, NULL);
  send1(sh, A(t), sizeof t, 3 * STEP, ty, collect, &x);   /* same hash: forwarded */
  ck_assert_int_eq(x.n, 0);
  a[0]++;
  send1(sh, A(a), sizeof a, 4 * STEP, ty, collect, &x);   /* changed: computed */
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_COMPUTE);
  recv_at(sh, A(t), sizeof t, 5 * STEP, NULL);
  send1(sh, A(t), 8, 6 * STEP, ty, collect, &x);   /* part of a receive: unknown */
  ck_assert_int_eq(x.n, 2);
  ck_assert_int_eq(x.f[1].kind, REC_FIX_COMPUTE);
  rec_shadow_free(sh);
}
END_TEST

START_TEST(the_end_of_a_phase_settles_memory) {
  const char *ty = "int32";   /* the messages' element type */
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  int32_t a[8], t[8], u[8];
  fixes x = {.n = 0};
  fill(a, sizeof a, 11);
  fill(t, sizeof t, 12);
  fill(u, sizeof u, 13);
  send1(sh, A(a), sizeof a, 1 * STEP, ty, collect, &x);
  recv_at(sh, A(t), sizeof t, 2 * STEP, "int32");
  recv_at(sh, A(u), sizeof u, 3 * STEP, "int32");
  for (int i = 0; i < 8; i++) a[i] = (int32_t)((uint32_t)a[i] + (uint32_t)t[i]);   /* after the last send */
  u[3] = 99;   /* a received buffer reused */
  rec_shadow_settle(sh, 4 * STEP, 1, collect, &x);   /* at MPI_Finalize: proven changes only */
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_REDUCE);
  x.n = 0;
  rec_shadow_settle(sh, 4 * STEP, 0, collect, &x);
  ck_assert_int_eq(x.n, 2);
  int r = x.f[0].kind == REC_FIX_REDUCE ? 0 : 1;   /* in address order */
  ck_assert_int_eq(x.f[r].kind, REC_FIX_REDUCE);
  ck_assert(x.f[r].seq > 2 * STEP && x.f[r].seq < 3 * STEP);   /* after its receive completed */
  ck_assert_uint_eq(x.f[r].addr, A(a));
  ck_assert_int_eq(x.f[1 - r].kind, REC_FIX_COMPUTE);
  ck_assert_uint_eq(x.f[1 - r].addr, A(u));
  rec_shadow_free(sh);
}
END_TEST

START_TEST(never_seen_bytes_are_computed_once_received) {
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  uint8_t own[32], t[32], b[32], c[64];
  fixes x = {.n = 0};
  fill(own, sizeof own, 20);
  fill(c, sizeof c, 21);
  send1(sh, A(own), sizeof own, 1 * STEP, NULL, collect, &x);   /* before any receive: its own data */
  send1(sh, A(c), 32, 2 * STEP, NULL, collect, &x);
  ck_assert_int_eq(x.n, 0);
  fill(t, sizeof t, 22);
  recv_at(sh, A(t), sizeof t, 3 * STEP, NULL);
  fill(b, sizeof b, 23);   /* never seen, no copy of the receive: computed here */
  send1(sh, A(b), sizeof b, 4 * STEP, NULL, collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_COMPUTE);
  ck_assert_uint_eq(x.f[0].addr, A(b));
  ck_assert_uint_eq(x.f[0].bytes, sizeof b);
  ck_assert(x.f[0].seq > 4 * STEP - STEP / 2 && x.f[0].seq < 4 * STEP - STEP / 4);
  /* c's first half as recorded, its second never seen: only the second is computed */
  send1(sh, A(c), sizeof c, 5 * STEP, NULL, collect, &x);
  ck_assert_int_eq(x.n, 2);
  ck_assert_uint_eq(x.f[1].addr, A(c + 32));
  ck_assert_uint_eq(x.f[1].bytes, 32);
  rec_shadow_free(sh);
  /* a changed range and the never-seen bytes after it are one computation */
  sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  x.n = 0;
  send1(sh, A(c), 16, 1 * STEP, NULL, collect, &x);
  recv_at(sh, A(t), sizeof t, 2 * STEP, NULL);
  c[3] ^= 0x55;
  send1(sh, A(c), sizeof c, 3 * STEP, NULL, collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_uint_eq(x.f[0].addr, A(c));
  ck_assert_uint_eq(x.f[0].bytes, sizeof c);
  rec_shadow_free(sh);
}
END_TEST

START_TEST(one_message_of_several_ranges) {
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  uint8_t t[16], buf[512];
  fixes x = {.n = 0};
  fill(t, sizeof t, 26);
  recv_at(sh, A(t), sizeof t, 1 * STEP, NULL);
  fill(buf, sizeof buf, 27);
  /* a derived datatype's ranges, sent at one position, each computed: blocks of one length
     at one stride, running backwards, are one computation forwards from the lowest; two
     of another length at no one stride, one at listed addresses, at a position of its own */
  for (int k = 3; k >= 0; k--) rec_shadow_send(sh, A(buf) + 64 * (uint64_t)k, 16, 2 * STEP, NULL, collect, &x);
  rec_shadow_send(sh, A(buf) + 300, 8, 2 * STEP, NULL, collect, &x);
  rec_shadow_send(sh, A(buf) + 330, 8, 2 * STEP, NULL, collect, &x);
  rec_shadow_send(sh, A(buf) + 310, 8, 2 * STEP, NULL, collect, &x);
  ck_assert_int_eq(x.n, 0);   /* gathered until the message's ranges are all checked */
  rec_shadow_flush(sh, collect, &x);
  ck_assert_int_eq(x.n, 2);
  ck_assert_uint_eq(x.f[0].addr, A(buf));
  ck_assert_uint_eq(x.f[0].bytes, 64);
  ck_assert_uint_eq(x.f[0].blocks, 4);
  ck_assert_uint_eq(x.f[0].stride, 64);
  ck_assert_ptr_null(x.f[0].at);
  ck_assert_uint_eq(x.f[1].bytes, 24);
  ck_assert_uint_eq(x.f[1].blocks, 3);
  ck_assert_uint_eq(x.at[1][0], A(buf) + 300);
  ck_assert_uint_eq(x.at[1][1], A(buf) + 330);
  ck_assert_uint_eq(x.at[1][2], A(buf) + 310);
  ck_assert_uint_ne(x.f[0].seq, x.f[1].seq);
  ck_assert(x.f[1].seq > 2 * STEP - STEP / 2 && x.f[1].seq < 2 * STEP - STEP / 4);
  /* adjacent blocks backwards: one range */
  x.n = 0;
  for (int k = 3; k >= 0; k--) {
    buf[400 + 16 * k] ^= 1;
    rec_shadow_send(sh, A(buf) + 400 + 16 * (uint64_t)k, 16, 3 * STEP, NULL, collect, &x);
  }
  rec_shadow_flush(sh, collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_uint_eq(x.f[0].addr, A(buf) + 400);
  ck_assert_uint_eq(x.f[0].bytes, 64);
  ck_assert_uint_eq(x.f[0].blocks, 1);
  rec_shadow_free(sh);
}
END_TEST

START_TEST(time_between_calls) {
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  uint8_t a[32], t[32];
  fixes x = {.n = 0};
  fill(a, sizeof a, 24);
  fill(t, sizeof t, 25);
  send1(sh, A(a), 16, 1 * STEP, NULL, collect, &x);
  recv_at(sh, A(t), sizeof t, 2 * STEP, NULL);
  /* 7 us before a send that needs a computation: that computation carries it */
  rec_shadow_time(sh, 3 * STEP, 7000, collect, &x);
  a[0] ^= 1;
  send1(sh, A(a), sizeof a, 3 * STEP, NULL, collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_uint_eq(x.f[0].cost, 7000);
  ck_assert_uint_eq(x.f[0].bytes, sizeof a);
  /* under the threshold, before a send that needs nothing: nothing */
  rec_shadow_time(sh, 4 * STEP, REC_COMPUTE_MIN_NS - 1, collect, &x);
  send1(sh, A(a), sizeof a, 4 * STEP, NULL, collect, &x);
  rec_shadow_time(sh, 5 * STEP, 0, collect, &x);
  ck_assert_int_eq(x.n, 1);
  /* at the threshold, before a send that needs nothing: a computation of its own that
     writes nothing, before the gap's other computations, written when the next gap comes */
  rec_shadow_time(sh, 6 * STEP, 3 * REC_COMPUTE_MIN_NS, collect, &x);
  send1(sh, A(t), sizeof t, 6 * STEP, NULL, collect, &x);
  ck_assert_int_eq(x.n, 1);
  rec_shadow_time(sh, 7 * STEP, REC_COMPUTE_MIN_NS, collect, &x);
  ck_assert_int_eq(x.n, 2);
  ck_assert_int_eq(x.f[1].kind, REC_FIX_COMPUTE);
  ck_assert_uint_eq(x.f[1].bytes, 0);
  ck_assert_uint_eq(x.f[1].cost, 3 * REC_COMPUTE_MIN_NS);
  ck_assert_uint_eq(x.f[1].seq, 6 * STEP - STEP / 2);
  /* two ranges of one length computed in one gap: one computation of two blocks, which
     carries the time; the end of the phase writes the last gap's time if nothing carried it */
  a[1] ^= 1;
  t[1] ^= 1;
  rec_shadow_settle(sh, 7 * STEP, 0, collect, &x);
  ck_assert_int_eq(x.n, 3);
  ck_assert_uint_le(x.f[2].blocks, 2);   /* 1 when the two arrays are adjacent */
  ck_assert_uint_eq(x.f[2].bytes, 2 * sizeof a);
  ck_assert_uint_eq(x.f[2].cost, REC_COMPUTE_MIN_NS);
  rec_shadow_reset(sh);   /* a new phase: nothing changed since, only time */
  rec_shadow_time(sh, 8 * STEP, 5 * REC_COMPUTE_MIN_NS, collect, &x);
  rec_shadow_settle(sh, 8 * STEP, 0, collect, &x);
  ck_assert_int_eq(x.n, 4);
  ck_assert_uint_eq(x.f[3].cost, 5 * REC_COMPUTE_MIN_NS);
  ck_assert_uint_eq(x.f[3].bytes, 0);
  rec_shadow_free(sh);
}
END_TEST

/* CDAG_RECORD_MIN_GAP: a shadow whose least gap is 1 ms writes no computation of its own for
   a 30 us gap (a process descheduled between two calls), and one for a 2 ms gap. */
START_TEST(the_least_gap_is_the_shadows) {
  rec_shadow *sh = rec_shadow_new(1 << 20, 1000000);
  uint8_t a[32];
  fixes x = {.n = 0};
  fill(a, sizeof a, 26);
  send1(sh, A(a), sizeof a, 1 * STEP, NULL, collect, &x);
  rec_shadow_time(sh, 2 * STEP, 3 * REC_COMPUTE_MIN_NS, collect, &x);
  send1(sh, A(a), sizeof a, 2 * STEP, NULL, collect, &x);
  rec_shadow_time(sh, 3 * STEP, 2000000, collect, &x);
  send1(sh, A(a), sizeof a, 3 * STEP, NULL, collect, &x);
  rec_shadow_settle(sh, 4 * STEP, 0, collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_COMPUTE);
  ck_assert_uint_eq(x.f[0].bytes, 0);
  ck_assert_uint_eq(x.f[0].cost, 2000000);
  ck_assert_uint_eq(x.f[0].seq, 3 * STEP - STEP / 2);
  rec_shadow_free(sh);
}
END_TEST

/* A receive into bytes an earlier receive wrote, which nothing has read since: the program
   read them before posting it, however briefly (a user's fold of each arrival under 10 us
   made the earlier messages dead: the plan dropped them). Unless a copy or reduction the
   shadow proves by the phase's end read them (a sum into an accumulator sent later), the
   gap before it is a computation; not when a send or a computation read them in between. */
START_TEST(overwritten_receives_were_read) {
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  uint8_t t[32], u[32];
  fixes x = {.n = 0};
  fill(t, sizeof t, 40);
  fill(u, sizeof u, 41);
  rec_shadow_recv(sh, A(t), sizeof t, 1 * STEP, 1 * STEP, NULL, collect, &x);
  rec_shadow_time(sh, 2 * STEP, 300, collect, &x);   /* 0.3 us of use */
  fill(t, sizeof t, 42);
  rec_shadow_recv(sh, A(t), sizeof t, 2 * STEP, 2 * STEP, NULL, collect, &x);
  /* forwarded in between: the send read them */
  send1(sh, A(t), sizeof t, 3 * STEP, NULL, collect, &x);
  fill(t, sizeof t, 43);
  rec_shadow_recv(sh, A(t), sizeof t, 4 * STEP, 4 * STEP, NULL, collect, &x);
  /* a gap long enough is a computation anyway */
  rec_shadow_time(sh, 5 * STEP, 2 * REC_COMPUTE_MIN_NS, collect, &x);
  fill(t, sizeof t, 44);
  rec_shadow_recv(sh, A(t), sizeof t, 5 * STEP, 5 * STEP, NULL, collect, &x);
  /* other bytes: nothing */
  rec_shadow_recv(sh, A(u), sizeof u, 6 * STEP, 6 * STEP, NULL, collect, &x);
  rec_shadow_time(sh, 7 * STEP, 0, collect, &x);
  ck_assert_int_eq(x.n, 1);   /* the long gap's */
  ck_assert_uint_eq(x.f[0].seq, 5 * STEP - STEP / 2);
  rec_shadow_settle(sh, 8 * STEP, 0, collect, &x);   /* decided when the phase settles */
  ck_assert_int_eq(x.n, 2);
  ck_assert_int_eq(x.f[1].kind, REC_FIX_COMPUTE);
  ck_assert_uint_eq(x.f[1].bytes, 0);
  ck_assert_uint_eq(x.f[1].seq, 2 * STEP - STEP / 2);
  rec_shadow_free(sh);
  /* contributions folded into an accumulator, proven at its send: no computation */
  sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  double a[4], d[4];
  x.n = 0;
  for (int i = 0; i < 4; i++) a[i] = i + 0.5;
  send1(sh, A(a), sizeof a, 1 * STEP, "double", collect, &x);
  for (int k = 0; k < 3; k++) {
    for (int i = 0; i < 4; i++) d[i] = k * 10.25 + i;
    rec_shadow_recv(sh, A(d), sizeof d, (uint64_t)(2 + k) * STEP, (uint64_t)(2 + k) * STEP, "double", collect, &x);
    for (int i = 0; i < 4; i++) a[i] += d[i];
  }
  send1(sh, A(a), sizeof a, 6 * STEP, "double", collect, &x);
  rec_shadow_settle(sh, 7 * STEP, 0, collect, &x);
  ck_assert_int_eq(x.n, 3);
  for (int k = 0; k < 3; k++) ck_assert_int_eq(x.f[k].kind, REC_FIX_REDUCE);
  rec_shadow_free(sh);
}
END_TEST

/* Received bytes freed unread were read in the gap before the next call (the free is seen
   as that call starts, before its gap's time is known). When that gap's time is written
   anyway, the phase's settle must not write a second computation there: two lines at one
   position, which the merge refuses (MPICH's coll/nonblocking3, about 1 run in 10). */
START_TEST(a_gap_gets_one_computation) {
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  uint8_t t[32], u[32];
  fixes x = {.n = 0};
  fill(t, sizeof t, 50);
  fill(u, sizeof u, 51);
  rec_shadow_recv(sh, A(t), sizeof t, 1 * STEP, 1 * STEP, NULL, collect, &x);
  rec_shadow_forget(sh, A(t), sizeof t, 1 * STEP);        /* freed unread: read before 2 * STEP */
  rec_shadow_time(sh, 2 * STEP, 2 * REC_COMPUTE_MIN_NS, collect, &x);   /* that gap is long */
  rec_shadow_recv(sh, A(u), sizeof u, 2 * STEP, 2 * STEP, NULL, collect, &x);
  rec_shadow_forget(sh, A(u), sizeof u, 2 * STEP);        /* read before 3 * STEP */
  rec_shadow_time(sh, 3 * STEP, 0, collect, &x);          /* writes the long gap's time */
  ck_assert_int_eq(x.n, 1);
  ck_assert_uint_eq(x.f[0].seq, 2 * STEP - STEP / 2);
  rec_shadow_settle(sh, 4 * STEP, 0, collect, &x);
  for (int i = 0; i < x.n; i++)
    for (int j = 0; j < i; j++) ck_assert_uint_ne(x.f[i].seq, x.f[j].seq);
  ck_assert_int_eq(x.n, 2);   /* and the gap before 3 * STEP */
  ck_assert_uint_eq(x.f[1].seq, 3 * STEP - STEP / 2);
  rec_shadow_free(sh);
}
END_TEST

START_TEST(freed_memory_is_skipped) {
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  long page = sysconf(_SC_PAGESIZE);
  uint8_t *m = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(m, MAP_FAILED);
  fixes x = {.n = 0};
  fill(m, 64, 14);
  recv_at(sh, A(m), 64, 1 * STEP, NULL);
  munmap(m, (size_t)page);
  rec_shadow_settle(sh, 2 * STEP, 0, collect, &x);   /* must neither fault nor invent a write */
  ck_assert_int_eq(x.n, 0);
  rec_shadow_free(sh);
}
END_TEST

/* Buffer b held a receive; the program gave it back after position 2 and its memory came
   back holding a copy of receive t (completed before the free): no copy of t may be proven
   into it, as the copy would be written right after t completed, onto the old buffer (a
   copy onto t itself when the new buffer overlaps it: MPICH's pt2pt/sendself). A receive
   completed after the free may be copied; the phase's end compares nothing given back. */
START_TEST(memory_given_back_is_new) {
  const char *ty = "uint8";
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  uint8_t t[48], b[48], u[48];
  fixes x = {.n = 0};
  fill(t, sizeof t, 21);
  fill(b, sizeof b, 22);
  recv_at(sh, A(t), sizeof t, 1 * STEP, "uint8");
  recv_at(sh, A(b), sizeof b, 2 * STEP, "uint8");
  rec_shadow_forget(sh, A(b), sizeof b, 2 * STEP);
  memcpy(b, t, sizeof b);   /* the new buffer's bytes equal t's */
  send1(sh, A(b), sizeof b, 3 * STEP, ty, collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_COMPUTE);
  ck_assert_uint_eq(x.f[0].addr, A(b));
  rec_shadow_forget(sh, A(b), sizeof b, 3 * STEP);
  fill(u, sizeof u, 23);
  recv_at(sh, A(u), sizeof u, 4 * STEP, "uint8");
  memcpy(b, u, sizeof b);
  send1(sh, A(b), sizeof b, 5 * STEP, ty, collect, &x);   /* u completed after the free */
  ck_assert_int_eq(x.n, 2);
  ck_assert_int_eq(x.f[1].kind, REC_FIX_COPY);
  ck_assert_uint_eq(x.f[1].src, A(u));
  rec_shadow_forget(sh, A(b), sizeof b, 5 * STEP);
  memcpy(b, u, sizeof b);
  b[0] ^= 1;
  rec_shadow_settle(sh, 6 * STEP, 0, collect, &x);   /* b: given back, not compared */
  /* the first receive into b was given back unsent: read before, in the gap before 3 */
  ck_assert_int_eq(x.n, 3);
  ck_assert_int_eq(x.f[2].kind, REC_FIX_COMPUTE);
  ck_assert_uint_eq(x.f[2].bytes, 0);
  ck_assert_uint_eq(x.f[2].seq, 3 * STEP - STEP / 2);
  rec_shadow_free(sh);
}
END_TEST

/* Two chunks given back, then the chunk the allocator joined them into (over tombstones
   only: they become one, from this free on), then a range inside it (nothing to do): a
   receive completed between the frees does not explain its bytes (a copy from it would be
   written while the old buffer still held that memory). */
START_TEST(joined_chunks_given_back_again) {
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  uint8_t b[48], u[48];
  fixes x = {.n = 0};
  fill(b, sizeof b, 24);
  recv_at(sh, A(b), sizeof b, 1 * STEP, "uint8");
  rec_shadow_forget(sh, A(b), 24, 2 * STEP);
  rec_shadow_forget(sh, A(b) + 24, 24, 2 * STEP);
  fill(u, sizeof u, 25);
  recv_at(sh, A(u), sizeof u, 3 * STEP, "uint8");
  rec_range r = {A(b), sizeof b};
  rec_shadow_forget_ranges(sh, &r, 1, 4 * STEP);
  rec_range inside = {A(b) + 8, 16};   /* inside the joined tombstone: nothing to do */
  rec_shadow_forget_ranges(sh, &inside, 1, 4 * STEP);
  memcpy(b, u, sizeof b);
  send1(sh, A(b), sizeof b, 5 * STEP, "uint8", collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_COMPUTE);
  ck_assert_uint_eq(x.f[0].addr, A(b));
  rec_shadow_free(sh);
}
END_TEST

/* A chunk given back inside a tombstone (remembered: its next free costs no look-up), then
   received into and given back again: the second free forgets it, though the first found it
   inside the tombstone the receive has cut since. Its bytes, sent unchanged, are computed. */
START_TEST(a_chunk_received_into_between_two_frees) {
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  uint8_t b[64];
  fixes x = {.n = 0};
  fill(b, sizeof b, 26);
  recv_at(sh, A(b), sizeof b, 1 * STEP, "uint8");
  rec_range whole = {A(b), sizeof b}, chunk = {A(b) + 16, 16};
  rec_shadow_forget_ranges(sh, &whole, 1, 2 * STEP);
  rec_shadow_forget_ranges(sh, &chunk, 1, 3 * STEP);   /* inside the tombstone */
  fill(b + 16, 16, 27);
  recv_at(sh, A(b) + 16, 16, 4 * STEP, "uint8");
  rec_range again = chunk;
  rec_shadow_forget_ranges(sh, &again, 1, 5 * STEP);
  send1(sh, A(b) + 16, 16, 6 * STEP, "uint8", collect, &x);
  ck_assert_int_eq(x.n, 1);
  ck_assert_int_eq(x.f[0].kind, REC_FIX_COMPUTE);
  ck_assert_uint_eq(x.f[0].addr, A(b) + 16);
  rec_shadow_free(sh);
}
END_TEST

/* Ranges given back together, in any order, some over nothing held: exactly those held
   are forgotten (their bytes, sent unchanged, are then computed), the rest stays. */
START_TEST(ranges_given_back_together) {
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  uint8_t m[4][64], other[16];
  fixes x = {.n = 0};
  for (int k = 0; k < 4; k++) fill(m[k], sizeof m[k], 30 + (unsigned)k), recv_at(sh, A(m[k]), 64, 1 * STEP, NULL);
  rec_range r[5] = {{A(m[3]), 64}, {A(other), 16}, {A(m[1]) + 8, 8}, {A(m[1]) + 40, 24}, {A(m[3]), 0}};
  rec_shadow_forget_ranges(sh, r, 5, 1 * STEP);
  for (int k = 0; k < 4; k++) send1(sh, A(m[k]), 64, (2 + (uint64_t)k) * STEP, NULL, collect, &x);
  ck_assert_int_eq(x.n, 3);   /* m[0], m[2] forwarded as received; m[1]'s two pieces, m[3] */
  uint64_t want[3][2] = {{A(m[1]) + 8, 8}, {A(m[1]) + 40, 24}, {A(m[3]), 64}};
  for (int w = 0; w < 3; w++) {
    int found = 0;
    for (int f = 0; f < x.n; f++)
      found += x.f[f].kind == REC_FIX_COMPUTE && x.f[f].addr == want[w][0] && x.f[f].bytes == want[w][1];
    ck_assert_int_eq(found, 1);
  }
  rec_shadow_free(sh);
}
END_TEST

/* Many ranges given back in one drain, scrambled (merged in runs of 16, not one insertion
   sort): they end in address order, two at one address in the order given, and exactly the
   held ones are forgotten. */
START_TEST(many_ranges_given_back_together) {
  enum { N = 100 };
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  static uint8_t m[N][32];
  fixes x = {.n = 0};
  for (int k = 0; k < N; k += 2) fill(m[k], sizeof m[k], 40 + (unsigned)k), recv_at(sh, A(m[k]), 32, 1 * STEP, NULL);
  rec_range r[N + 1];
  for (int k = 0; k < N; k++) r[k] = (rec_range){A(m[(k * 37) % N]), 32};   /* 37 is prime to N */
  r[N] = (rec_range){A(m[0]), 0};   /* after {m[0], 32} once sorted */
  rec_shadow_forget_ranges(sh, r, N + 1, 1 * STEP);
  for (int k = 1; k <= N; k++) ck_assert(r[k - 1].addr <= r[k].addr);
  int k0 = 0;
  while (r[k0].addr != A(m[0])) k0++;
  ck_assert(r[k0].len == 32 && r[k0 + 1].addr == A(m[0]) && r[k0 + 1].len == 0);
  for (int k = 0; k < N; k += 2) send1(sh, A(m[k]), 32, (2 + (uint64_t)k) * STEP, NULL, collect, &x);
  ck_assert_int_eq(x.n, N / 2);   /* every one held was forgotten: its bytes are computed */
  rec_shadow_free(sh);
}
END_TEST

/* At MPI_Finalize the program may have freed what the shadow holds, and the heap hands the
   chunk out again: to the recorder's own buffers too. Here buffer b, sent and then freed,
   is the chunk malloc gives next for the settle's 32 bytes (glibc's per-size cache returns
   the chunk freed last); before the settle read into its own memory, it read the receive t
   into b's old chunk and took b's bytes, now t's, as a copy of t proven by content (the
   bytes a replay then put over a reduction's output: record_nbcoll). With the shadow's
   buffers out of the heap nothing is proven; a sanitizer's quarantine keeps b unused. */
START_TEST(the_settle_does_not_read_its_own_buffers) {
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  uint8_t *p = malloc(32), *q = malloc(32);
  ck_assert(p && q);
  uint8_t *t = p < q ? p : q, *b = p < q ? q : p;   /* t read first: the settle goes in address order */
  fixes x = {.n = 0};
  fill(b, 32, 15);
  fill(t, 32, 16);
  send1(sh, A(b), 32, 1 * STEP, "int32", collect, &x);
  recv_at(sh, A(t), 32, 2 * STEP, "int32");
  free(b);
  rec_shadow_settle(sh, 3 * STEP, 1, collect, &x);
  for (int i = 0; i < x.n; i++) ck_assert_msg(x.f[i].kind != REC_FIX_COPY, "a copy into freed memory was proven");
  free(t);
  rec_shadow_free(sh);
}
END_TEST

/* The same with a mapping: the program unmaps page b, and the settle's own mapping, made
   when it reads t (below b: the heap), is where b was (Linux maps a new page of the same
   size into the hole just left). Read as b's, it would hold t's bytes: skipped. (Under
   valgrind, whose heap and mappings lie elsewhere, b comes first and is simply unmapped.) */
START_TEST(the_settle_skips_its_own_mapping) {
  rec_shadow *sh = rec_shadow_new(1 << 20, REC_COMPUTE_MIN_NS);
  long page = sysconf(_SC_PAGESIZE);
  uint8_t *t = malloc(32), *b = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert(t && b != MAP_FAILED);
  fixes x = {.n = 0};
  fill(b, 32, 17);
  fill(t, 32, 18);
  send1(sh, A(b), 32, 1 * STEP, "int32", collect, &x);
  recv_at(sh, A(t), 32, 2 * STEP, "int32");
  munmap(b, (size_t)page);
  rec_shadow_settle(sh, 3 * STEP, 1, collect, &x);
  for (int i = 0; i < x.n; i++) ck_assert_msg(x.f[i].kind != REC_FIX_COPY, "a copy into the shadow's own mapping was proven");
  free(t);
  rec_shadow_free(sh);
}
END_TEST

/* ---- randomized, against a model memory ---- */

enum { SLOTS = 12, SLOT = 32, EVENTS = 40 };

typedef struct { uint64_t seq; int kind; uint64_t addr, len, src; const char *type, *op; uint8_t data[2 * SLOT]; } event;
enum { EV_RECV = 10, EV_SEND = 11 };

typedef struct { event *e; int n, cap; uint64_t *pos; int npos; } events;

static void push(events *v, event e) {
  if (v->n == v->cap) {
    v->cap = v->cap ? 2 * v->cap : 64;
    v->e = realloc(v->e, (size_t)v->cap * sizeof *v->e);
    ck_assert_ptr_nonnull(v->e);
  }
  v->e[v->n++] = e;
}

/* A computation of blocks is an event per block (at its stride, or its listed address). */
static void on_fix(void *ctx, const rec_fix *f) {
  events *v = ctx;
  v->pos = realloc(v->pos, (size_t)(v->npos + 1) * sizeof *v->pos);   /* every fix takes a position of its own */
  ck_assert_ptr_nonnull(v->pos);
  v->pos[v->npos++] = f->seq;
  uint64_t n = f->kind == REC_FIX_COMPUTE && f->blocks > 1 ? f->blocks : 1;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t at = n == 1 ? f->addr : f->at ? f->at[i] : f->addr + i * f->stride;
    event e = {f->seq, f->kind, at, f->bytes / n, f->src, f->type, f->op, {0}};
    push(ctx, e);
  }
}

static int cmp_event(const void *a, const void *b) {
  const event *x = a, *y = b;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The oracle's own reduction: dst = dst OP src over n bytes of `type`. */
static void apply(uint8_t *dst, const uint8_t *src, uint64_t n, const char *type, const char *op) {
  int size = strstr(type, "64") || !strcmp(type, "double") ? 8 : strstr(type, "32") || !strcmp(type, "float") ? 4 : 1;
  for (uint64_t i = 0; i < n; i += (uint64_t)size) {
    if (!strcmp(op, "bxor") || !strcmp(op, "bor") || !strcmp(op, "band")) {
      for (int k = 0; k < size; k++)
        dst[i + k] = op[1] == 'x' ? dst[i + k] ^ src[i + k] : op[1] == 'o' ? dst[i + k] | src[i + k] : dst[i + k] & src[i + k];
      continue;
    }
    double a, b;
    if (!strcmp(type, "double")) { double p, q; memcpy(&p, dst + i, 8); memcpy(&q, src + i, 8); a = p; b = q; }
    else if (!strcmp(type, "float")) { float p, q; memcpy(&p, dst + i, 4); memcpy(&q, src + i, 4); a = p; b = q; }
    else if (size == 8) {
      int64_t p, q;
      memcpy(&p, dst + i, 8);
      memcpy(&q, src + i, 8);
      int64_t r = !strcmp(op, "sum") ? (int64_t)((uint64_t)p + (uint64_t)q) : !strcmp(op, "max") ? (p > q ? p : q) : (p < q ? p : q);
      memcpy(dst + i, &r, 8);
      continue;
    } else {
      int32_t p, q;
      memcpy(&p, dst + i, 4);
      memcpy(&q, src + i, 4);
      int32_t r = !strcmp(op, "sum") ? (int32_t)((uint32_t)p + (uint32_t)q) : !strcmp(op, "max") ? (p > q ? p : q) : (p < q ? p : q);
      memcpy(dst + i, &r, 4);
      continue;
    }
    double r = !strcmp(op, "sum") ? a + b : !strcmp(op, "prod") ? a * b : !strcmp(op, "max") ? (a > b ? a : b) : (a < b ? a : b);
    if (!strcmp(type, "double")) memcpy(dst + i, &r, 8);
    else { float f = (float)r; memcpy(dst + i, &f, 4); }
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Time before the call at seq, as the recorder's next position passes it on: none, a short
   gap, or one long enough to be a computation. */
static void random_gap(rec_shadow *sh, uint64_t seq, events *ev) {
  static const uint64_t ns[] = {0, 300, 2 * REC_COMPUTE_MIN_NS};
  uint64_t t = ns[rand() % 3];
  if (t) rec_shadow_time(sh, seq, t, on_fix, ev);
}

/* One random program; returns the bytes sent that the oracle checked. Even seeds also pass
   time between calls, post receives (whose overwrites of unread bytes are computations) and
   free slots (given back unread: read in the gap before the next call; not sent again
   until a receive fills them); every fix must then take a position of its own. */
static int random_program(unsigned seed, int *computed_bytes) {
  srand(seed);
  int timed = seed % 2 == 0, freed[SLOTS] = {0};
  static const char *const hints[] = {"int32", "int64", "double", NULL};
  int32_t mem32[SLOTS * SLOT / 4];   /* aligned for every type */
  uint8_t *mem = (uint8_t *)mem32, init[SLOTS * SLOT], sent_now[2 * SLOT];
  int seen[SLOTS] = {0};
  for (int i = 0; i < SLOTS * SLOT; i++) mem[i] = init[i] = (uint8_t)rand();
  rec_shadow *sh = rec_shadow_new(rand() % 4 ? 1 << 20 : 200, REC_COMPUTE_MIN_NS);
  events ev = {0};
  const char *hint = hints[rand() % 4];
  uint64_t seq = 0;
  int checked = 0;
  for (int k = 0; k < EVENTS; k++) {
    int s = rand() % SLOTS, what = rand() % (timed ? 6 : 5);
    uint8_t *p = mem + s * SLOT;
    if (what == 0) {   /* a receive */
      seq += STEP;
      if (timed) random_gap(sh, seq, &ev);
      event e = {seq, EV_RECV, A(p), SLOT, 0, NULL, NULL, {0}};
      for (int i = 0; i < SLOT; i++) p[i] = e.data[i] = (uint8_t)(rand() % 8 + 0x30);
      push(&ev, e);
      if (timed && rand() % 2) rec_shadow_recv(sh, A(p), SLOT, seq, seq, hint, on_fix, &ev);
      else recv_at(sh, A(p), SLOT, seq, hint);
      seen[s] = 1, freed[s] = 0;
    } else if (what == 5) {   /* free(p): the recorder forgets it as the next call starts */
      if (!seen[s]) continue;
      rec_shadow_forget(sh, A(p), SLOT, seq);
      seen[s] = 0, freed[s] = 1;
    } else if (what == 1 || what == 2) {   /* a send of one slot or two, checked against the model */
      uint64_t len = what == 2 && s + 1 < SLOTS ? 2 * SLOT : SLOT;
      if (freed[s] || (len > SLOT && freed[s + 1])) continue;
      seq += STEP;
      if (timed) random_gap(sh, seq, &ev);
      memcpy(sent_now, p, len);
      send1(sh, A(p), len, seq, len == SLOT ? hint : NULL, on_fix, &ev);
      event e = {seq, EV_SEND, A(p), len, 0, NULL, NULL, {0}};
      memcpy(e.data, sent_now, len);
      push(&ev, e);
      seen[s] = 1;
      if (len > SLOT) seen[s + 1] = 1;
    } else {   /* invisible computation into a slot the recording has seen */
      int r = rand() % SLOTS;
      if (!seen[s] || r == s || freed[r]) continue;
      uint8_t *q = mem + r * SLOT;
      int how = rand() % 4;
      const char *t = hint ? hint : "int32";
      if (how == 0) apply(p, q, SLOT, t, "sum");
      else if (how == 1) apply(p, q, SLOT, t, "max");
      else if (how == 2) memcpy(p, q, SLOT);
      else p[rand() % SLOT] ^= (uint8_t)(1 + rand() % 255);
    }
  }
  seq += STEP;
  rec_shadow_settle(sh, seq, 0, on_fix, &ev);   /* the phase ends: memory it saw is stated */
  event last = {seq, EV_SEND, A(mem), SLOTS * SLOT, 0, NULL, NULL, {0}};
  push(&ev, last);   /* checked below against the memory as it ends, slots seen only */
  /* the model: the recorded events and fixes in position order, from the initial memory */
  qsort(ev.e, (size_t)ev.n, sizeof *ev.e, cmp_event);
  uint8_t model[SLOTS * SLOT], computed[SLOTS * SLOT] = {0};
  memcpy(model, init, sizeof model);
  uint64_t base = A(mem);
  for (int i = 0; i < ev.n; i++) {
    event *e = &ev.e[i];
    uint64_t o = e->addr - base;
    switch (e->kind) {
    case EV_RECV: memcpy(model + o, e->data, SLOT); memset(computed + o, 0, SLOT); break;
    case REC_FIX_COMPUTE:   /* one that writes nothing (a gap's time) has no address */
      if (e->len) memset(computed + o, 1, e->len);
      break;
    case REC_FIX_COPY:
      memmove(model + o, model + (e->src - base), e->len);
      memmove(computed + o, computed + (e->src - base), e->len);
      break;
    case REC_FIX_REDUCE:
      apply(model + o, model + (e->src - base), e->len, e->type, e->op);
      for (uint64_t b = 0; b < e->len; b++) computed[o + b] |= computed[e->src - base + b];
      break;
    case EV_SEND:
      if (e->len > 2 * SLOT) {   /* the end of the phase */
        for (int b = 0; b < SLOTS * SLOT; b++) {
          if (!seen[b / SLOT]) continue;
          if (computed[b]) { ++*computed_bytes; continue; }
          ck_assert_msg(model[b] == mem[b], "seed %u: byte %d at the end: model %02x, memory %02x", seed, b, model[b], mem[b]);
          checked++;
        }
        break;
      }
      for (uint64_t b = 0; b < e->len; b++) {
        if (computed[o + b]) { ++*computed_bytes; continue; }
        ck_assert_msg(model[o + b] == e->data[b], "seed %u: byte %llu of the send at %llu: model %02x, sent %02x", seed,
                      (unsigned long long)b, (unsigned long long)e->seq, model[o + b], e->data[b]);
        checked++;
      }
      memcpy(model + o, e->data, e->len);   /* what was sent is what the recording now says */
      break;
    default: ck_abort_msg("event kind %d", e->kind);
    }
  }
  qsort(ev.pos, (size_t)ev.npos, sizeof *ev.pos, cmp_u64);
  for (int i = 1; i < ev.npos; i++)
    ck_assert_msg(ev.pos[i] != ev.pos[i - 1], "seed %u: two fixes at position %llu", seed, (unsigned long long)ev.pos[i]);
  free(ev.e);
  free(ev.pos);
  rec_shadow_free(sh);
  return checked;
}

START_TEST(random_programs_say_what_was_sent) {
  long checked = 0;
  int computed = 0, n = (int)cdag_test_iterations(3000);
  for (int s = 1; s <= n; s++) checked += random_program((unsigned)s, &computed);
  ck_assert_int_gt(checked, 1000);
  ck_assert_int_gt(computed, 0);
}
END_TEST

/* ---- runs received whole: the same recording as block by block ---- */

enum { RUN_MEM = 1 << 16, RUN_STEPS = 48, RUN_AT = 256 };

typedef struct { rec_fix f; uint64_t at[RUN_AT]; } kept_fix;
typedef struct { kept_fix *v; int n, cap; } fix_log;

static void log_fix(void *ctx, const rec_fix *f) {
  fix_log *l = ctx;
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
    ck_assert_ptr_nonnull(l->v);
  }
  kept_fix *k = &l->v[l->n++];
  memset(k, 0, sizeof *k);
  k->f = *f;
  for (uint64_t i = 0; f->at && i < f->blocks && i < RUN_AT; i++) k->at[i] = f->at[i];
  k->f.at = NULL;
}

/* A message of blocks from off: count blocks of len at stride, or (stride 0) two lengths
   alternating, as an indexed type's. */
static int64_t blocks_of(uint64_t base, uint64_t off, uint64_t len, uint64_t stride, int64_t count, uint64_t *a,
                         uint64_t *l) {
  uint64_t at = off;
  int64_t n = 0;
  for (; n < count; n++) {
    uint64_t bl = stride ? len : (n % 2 ? len + 4 : len);
    if (at + bl > RUN_MEM) break;
    a[n] = base + at, l[n] = bl;
    at += stride ? stride : bl + 4;
  }
  return n;
}

/* One random program of strided receives, receives, sends, invisible writes, frees, gaps
   and held_since questions, recorded with runs kept whole from pend_min blocks on (below 2:
   never); its fixes and answers in *out. The same seed makes the same calls and memory. */
static void strided_program(unsigned seed, int64_t pend_min, uint8_t *mem, fix_log *out) {
  srand(seed);
  static uint64_t a[RUN_MEM / 4], l[RUN_MEM / 4];
  for (int i = 0; i < RUN_MEM; i++) mem[i] = (uint8_t)rand();
  rec_shadow *sh = rec_shadow_new(rand() % 2 ? 4 << 20 : 64 << 20, REC_COMPUTE_MIN_NS);
  rec_shadow_pend_min(sh, pend_min);
  uint64_t seq = 0, base = A(mem), got = 0, got_len = 0;   /* the last receive of one range */
  int timed = seed % 2;
  for (int k = 0; k < RUN_STEPS; k++) {
    uint64_t off = (uint64_t)(rand() % RUN_MEM) & ~3ull, len = (uint64_t)(4 + 4 * (rand() % 64));
    if (off + len > RUN_MEM) len = RUN_MEM - off;
    int what = rand() % 9;
    seq += STEP;
    if (timed && rand() % 3 == 0) rec_shadow_time(sh, seq, rand() % 2 ? 300 : 2 * REC_COMPUTE_MIN_NS, log_fix, out);
    if (what <= 1) {   /* a datatype's blocks: more than the 1,024 offered as candidates */
      uint64_t bl = (uint64_t)(4 << (rand() % 3)), stride = rand() % 4 ? bl + (uint64_t)(4 * (rand() % 4)) : 0;
      int64_t n = blocks_of(base, off % (RUN_MEM / 8), bl, stride, 1030 + rand() % 1500, a, l);
      for (int64_t i = 0; i < n; i++)
        for (uint64_t b = 0; b < l[i]; b++) mem[a[i] - base + b] = (uint8_t)rand();
      rec_shadow_recv_ranges(sh, a, l, n, seq, rand() % 2 ? seq - STEP / 2 : 0, NULL, log_fix, out);
    } else if (what == 2) {   /* a receive of one range */
      for (uint64_t b = 0; b < len; b++) mem[off + b] = (uint8_t)rand();
      rec_shadow_recv(sh, base + off, len, seq, seq - STEP / 2, "int32", log_fix, out);
      got = off, got_len = len;
    } else if (what == 8) {   /* the program copies what it received, unseen */
      if (got_len && off + got_len <= RUN_MEM) memmove(mem + off, mem + got, got_len);
    } else if (what == 3) {
      rec_shadow_send(sh, base + off, len, seq, rand() % 2 ? "int32" : NULL, log_fix, out);
      rec_shadow_flush(sh, log_fix, out);
    } else if (what == 4) {   /* the program writes, unseen */
      for (int b = rand() % 16; b >= 0; b--) mem[(uint64_t)rand() % RUN_MEM] ^= (uint8_t)(1 + rand() % 255);
    } else if (what == 5) {
      int how = rand() % 3;
      if (how == 2) off = 0;
      rec_shadow_forget(sh, base + off, how == 0 ? len : RUN_MEM - off, seq);
    } else if (what == 6) {
      rec_range r[3];
      for (int i = 0; i < 3; i++) {
        uint64_t o = (uint64_t)(rand() % RUN_MEM) & ~3ull, n = rand() % 2 ? 64 : RUN_MEM / 4;
        r[i] = (rec_range){base + o, n < RUN_MEM - o ? n : RUN_MEM - o};
      }
      rec_shadow_forget_ranges(sh, r, 3, seq);
    } else {
      rec_fix f = {.kind = 99, .seq = seq, .addr = off, .bytes = len,
                   .count = (uint64_t)rec_shadow_held_since(sh, base + off, len, seq - STEP)};
      log_fix(out, &f);
    }
  }
  rec_shadow_settle(sh, seq + STEP, 0, log_fix, out);
  rec_shadow_free(sh);
}

static void same_fixes(unsigned seed, const fix_log *x, const fix_log *y) {
  ck_assert_msg(x->n == y->n, "seed %u: %d fixes block by block, %d with runs", seed, x->n, y->n);
  for (int i = 0; i < x->n; i++) {
    const rec_fix *f = &x->v[i].f, *g = &y->v[i].f;
    int same = f->kind == g->kind && f->seq == g->seq && f->addr == g->addr && f->bytes == g->bytes &&
               f->src == g->src && f->count == g->count && f->cost == g->cost && f->blocks == g->blocks &&
               f->stride == g->stride && (f->type == g->type || (f->type && g->type && !strcmp(f->type, g->type))) &&
               (f->op == g->op || (f->op && g->op && !strcmp(f->op, g->op))) &&
               !memcmp(x->v[i].at, y->v[i].at, sizeof x->v[i].at);
    ck_assert_msg(same, "seed %u: fix %d differs (kind %d at %llu, %llu bytes; with runs kind %d at %llu, %llu bytes)",
                  seed, i, f->kind, (unsigned long long)f->seq, (unsigned long long)f->bytes, g->kind,
                  (unsigned long long)g->seq, (unsigned long long)g->bytes);
  }
}

/* A datatype's 2,000 blocks received into a buffer, then (a) the part of it that is no
   candidate freed unread, or (b) freed, refilled with a copy of a receive completed before
   the free, and sent. */
static void run_given_back(int64_t pend_min, int refill, uint8_t *mem, fix_log *out) {
  static uint64_t a[2000], l[2000];
  rec_shadow *sh = rec_shadow_new(64 << 20, REC_COMPUTE_MIN_NS);
  rec_shadow_pend_min(sh, pend_min);
  uint64_t base = A(mem), other = base + RUN_MEM - 256;
  fill(mem, RUN_MEM, 3);
  int64_t n = blocks_of(base, 0, 4, 12, 2000, a, l);
  rec_shadow_recv_ranges(sh, a, l, n, STEP, STEP / 2, NULL, log_fix, out);
  rec_shadow_recv(sh, other, 64, 2 * STEP, 2 * STEP - STEP / 2, "int32", log_fix, out);
  rec_shadow_forget(sh, base, 976 * 12, 2 * STEP);   /* the blocks before the last 1,024 */
  if (refill) {
    memcpy(mem + 64, mem + RUN_MEM - 256, 64);
    rec_shadow_send(sh, base + 64, 64, 3 * STEP, "int32", log_fix, out);
    rec_shadow_flush(sh, log_fix, out);
  }
  rec_shadow_settle(sh, 4 * STEP, 0, log_fix, out);
  rec_shadow_free(sh);
}

START_TEST(a_run_given_back_is_as_its_blocks) {
  uint8_t *mem = malloc(RUN_MEM);
  ck_assert_ptr_nonnull(mem);
  for (int refill = 0; refill < 2; refill++) {
    fix_log eager = {0}, runs = {0};
    run_given_back(0, refill, mem, &eager);
    run_given_back(64, refill, mem, &runs);
    same_fixes((unsigned)refill, &eager, &runs);
    int computed = 0, copied = 0;
    for (int i = 0; i < runs.n; i++) {
      computed += runs.v[i].f.kind == REC_FIX_COMPUTE;
      copied += runs.v[i].f.kind == REC_FIX_COPY;
    }
    /* unread blocks given back were read in the gap before the free; a copy of a receive
       completed before the free cannot be what the freed memory holds */
    ck_assert_int_ge(computed, 1);
    ck_assert_int_eq(copied, 0);
    free(eager.v), free(runs.v);
  }
  free(mem);
}
END_TEST

START_TEST(runs_received_whole_record_as_their_blocks) {
  uint8_t *mem = malloc(RUN_MEM);
  ck_assert_ptr_nonnull(mem);
  int n = (int)cdag_test_iterations(120), fixed = 0;
  for (int s = 1; s <= n; s++) {
    fix_log eager = {0}, runs = {0};
    strided_program((unsigned)s, 0, mem, &eager);
    strided_program((unsigned)s, s % 2 ? 2 : 64, mem, &runs);
    same_fixes((unsigned)s, &eager, &runs);
    fixed += eager.n;
    free(eager.v), free(runs.v);
  }
  ck_assert_int_gt(fixed, n);
  free(mem);
}
END_TEST

Suite *cdag_shadow_suite(void) {
  Suite *s = suite_create("record_shadow");
  TCase *tc = tcase_create("shadow");
  tcase_add_test(tc, own_bytes_and_forwarding_need_nothing);
  tcase_add_test(tc, overwritten_receives_were_read);
  tcase_add_test(tc, a_gap_gets_one_computation);
  tcase_add_test(tc, computation_reads_all_and_writes);
  tcase_add_test(tc, a_sum_is_proven);
  tcase_add_test(tc, a_root_folds_its_temporary);
  tcase_add_test(tc, part_of_a_reduced_buffer);
  tcase_add_test(tc, candidates_of_two_lengths);
  tcase_add_test(tc, a_copy_of_a_receive_is_proven);
  tcase_add_test(tc, copies_no_longer_held_are_given_up);
  tcase_add_test(tc, live_chunks_stay_where_they_are);
  tcase_add_test(tc, a_small_live_copy_does_not_keep_a_chunk);
  tcase_add_test(tc, compaction_goes_on_near_the_budget);
  tcase_add_test(tc, the_hint_chooses_the_type);
  tcase_add_test(tc, no_sum_into_bytes_of_another_type);
  tcase_add_test(tc, over_budget_only_hashes);
  tcase_add_test(tc, the_end_of_a_phase_settles_memory);
  tcase_add_test(tc, never_seen_bytes_are_computed_once_received);
  tcase_add_test(tc, one_message_of_several_ranges);
  tcase_add_test(tc, time_between_calls);
  tcase_add_test(tc, the_least_gap_is_the_shadows);
  tcase_add_test(tc, freed_memory_is_skipped);
  tcase_add_test(tc, memory_given_back_is_new);
  tcase_add_test(tc, ranges_given_back_together);
  tcase_add_test(tc, joined_chunks_given_back_again);
  tcase_add_test(tc, a_chunk_received_into_between_two_frees);
  tcase_add_test(tc, many_ranges_given_back_together);
  tcase_add_test(tc, the_settle_does_not_read_its_own_buffers);
  tcase_add_test(tc, the_settle_skips_its_own_mapping);
  tcase_add_test(tc, random_programs_say_what_was_sent);
  tcase_add_test(tc, runs_received_whole_record_as_their_blocks);
  tcase_add_test(tc, a_run_given_back_is_as_its_blocks);
  suite_add_tcase(s, tc);
  return s;
}

CDAG_CHECK_MAIN(cdag_shadow_suite)
