/* cdag — tests/exec/kernels/kernels_vs_mpi.c: cdag's kernels against MPI's own collectives.
 *
 * Every kernel of src/exec/kernels/kernel.h runs on several member sets of MPI_COMM_WORLD (all ranks,
 * odd ranks, all but one, a single rank) and its result is compared with MPI_Bcast,
 * MPI_Allgather, MPI_Allgatherv, MPI_Reduce or MPI_Allreduce on a sub-communicator of the
 * same members: sizes 0, 1, odd and larger than the block count, several roots, contiguous
 * and noncontiguous buffers (pieces with a zero-length one, guard bytes between them that
 * must stay untouched), in-place variants, forced small block counts so that multi-block
 * schedules run for small messages, and reductions on int32, int64, uint8 (byte-equal) and
 * double (equal within reassociation). Built kernels also run several times on changing
 * data, bad arguments give CDAG_ERR_ARG, the cost model's choices are sane and the
 * environment overrides work. Every check
 * is agreed by all ranks; rank 0 prints "kernels: N passed, M failed"; exit 1 on failure. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/kernels/kernel.h"

static int wrank, wsize;

/* Check results, agreed by all ranks at the end (one allreduce instead of one per check:
   oversubscribed runs spend their time in collectives). Every rank makes the same checks. */
#define MAXCHECKS 4096
static int nchecks, local_ok[MAXCHECKS];

static void check(int ok, const char *what) {
  if (!ok) fprintf(stderr, "rank %d: FAIL %s (last error: %s)\n", wrank, what, cdag_error_message());
  if (nchecks < MAXCHECKS) local_ok[nchecks++] = ok != 0;
}

/* Number of checks that failed on some rank. */
static int agree(void) {
  static int all_ok[MAXCHECKS];
  MPI_Allreduce(local_ok, all_ok, nchecks, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int failed = 0;
  for (int i = 0; i < nchecks; i++) failed += !all_ok[i];
  return failed;
}

/* ---- buffers: contiguous, or pieces with guard bytes between them ---- */

#define GUARD 8
#define GUARD_BYTE 0xEE

typedef struct {
  unsigned char *mem;
  size_t memlen, bytes;
  uint64_t addr[4], len[4];
  int n;
} tbuf;

static void tbuf_make(tbuf *b, size_t bytes, int pieces) {
  size_t l[4] = {bytes, 0, 0, 0};
  b->n = 1;
  if (pieces) {   /* a third, an empty piece, a quarter, the rest */
    l[0] = bytes / 3;
    l[2] = bytes / 4;
    l[3] = bytes - l[0] - l[2];
    b->n = 4;
  }
  b->bytes = bytes;
  b->memlen = bytes + (size_t)(b->n + 1) * GUARD;
  b->mem = malloc(b->memlen);
  memset(b->mem, GUARD_BYTE, b->memlen);
  size_t at = GUARD;
  for (int i = 0; i < b->n; i++) {
    b->addr[i] = (uint64_t)(uintptr_t)(b->mem + at);
    b->len[i] = l[i];
    at += l[i] + GUARD;
  }
}

static kern_iov tbuf_iov(const tbuf *b) { return (kern_iov){b->addr, b->len, b->n}; }

static void tbuf_put(tbuf *b, const unsigned char *src) {
  for (int i = 0; i < b->n; i++) {
    memcpy((void *)(uintptr_t)b->addr[i], src, b->len[i]);
    src += b->len[i];
  }
}

static void tbuf_get(const tbuf *b, unsigned char *dst) {
  for (int i = 0; i < b->n; i++) {
    memcpy(dst, (const void *)(uintptr_t)b->addr[i], b->len[i]);
    dst += b->len[i];
  }
}

/* The bytes outside the pieces still hold the guard pattern. */
static int tbuf_guards(const tbuf *b) {
  unsigned char *p = b->mem, *end = b->mem + b->memlen;
  for (int i = 0; i <= b->n; i++) {
    unsigned char *stop = i < b->n ? (unsigned char *)(uintptr_t)b->addr[i] : end;
    for (; p < stop; p++)
      if (*p != GUARD_BYTE) return 0;
    if (i < b->n) p += b->len[i];
  }
  return 1;
}

static void tbuf_free(tbuf *b) { free(b->mem); }

static unsigned char pattern(int who, size_t i, int salt) {
  return (unsigned char)(who * 131 + (int)i * 7 + salt * 17 + (int)(i >> 8));
}

static void fill(unsigned char *buf, size_t n, int who, int salt) {
  for (size_t i = 0; i < n; i++) buf[i] = pattern(who, i, salt);
}

/* ---- member sets ---- */

typedef struct {
  const char *name;
  int members[64];
  int p, me;        /* me: own index, -1 if not a member */
  MPI_Comm sub;     /* the members' sub-communicator (reference collectives) */
} group;

static void group_make(group *g, const char *name, int kind) {
  g->name = name;
  g->p = 0;
  g->me = -1;
  for (int r = 0; r < wsize; r++) {
    int in = kind == 0 ? 1 : kind == 1 ? r % 2 == 1 : kind == 2 ? r != wsize / 2 : r == wsize - 1;
    if (wsize == 1) in = 1;
    if (!in) continue;
    if (r == wrank) g->me = g->p;
    g->members[g->p++] = r;
  }
  MPI_Comm_split(MPI_COMM_WORLD, g->me >= 0 ? 0 : MPI_UNDEFINED, wrank, &g->sub);
}

/* A barrier that sleeps while it waits: ranks outside a member set would otherwise spin in
   the next collective and take the cores from the members (MPICH busy-polls). */
static void quiet_barrier(void) {
  MPI_Request req;
  int done = 0;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  while (!done) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (!done) nanosleep(&(struct timespec){0, 200000}, NULL);
  }
}

static MPI_Comm kcomm;   /* the kernels' private communicator */

static kern_group kgroup(const group *g, int nblocks) {
  return (kern_group){kcomm, g->members, g->p, NULL, nblocks, KERN_ALG_AUTO};
}

/* ---- bcast ---- */

static void test_bcast(const group *g, size_t bytes, int root, int pieces, int nblocks) {
  char what[160];
  snprintf(what, sizeof what, "bcast %s %zu B root %d pieces %d n %d", g->name, bytes, root, pieces, nblocks);
  int ok = 1;
  if (g->me >= 0) {
    unsigned char *want = malloc(bytes + 1), *got = malloc(bytes + 1);
    fill(want, bytes, g->me == root ? 1 : 2 + g->me, 3);
    MPI_Bcast(want, (int)bytes, MPI_BYTE, root, g->sub);
    tbuf b;
    tbuf_make(&b, bytes, pieces);
    fill(got, bytes, g->me == root ? 1 : 2 + g->me, 3);
    tbuf_put(&b, got);
    kern_group kg = kgroup(g, nblocks);
    ok = kern_bcast(&kg, root, tbuf_iov(&b)) == CDAG_OK;
    tbuf_get(&b, got);
    ok = ok && memcmp(got, want, bytes) == 0 && tbuf_guards(&b);
    tbuf_free(&b);
    free(want);
    free(got);
  }
  check(ok, what);
}

/* ---- allgather ---- */

static void test_allgather(const group *g, size_t m, int spieces, int rpieces, int inplace) {
  char what[160];
  snprintf(what, sizeof what, "allgather %s %zu B pieces %d/%d inplace %d", g->name, m, spieces, rpieces, inplace);
  int ok = 1;
  if (g->me >= 0) {
    size_t total = m * (size_t)g->p;
    unsigned char *mine = malloc(m + 1), *want = malloc(total + 1), *got = malloc(total + 1);
    fill(mine, m, g->me, 5);
    MPI_Allgather(mine, (int)m, MPI_BYTE, want, (int)m, MPI_BYTE, g->sub);
    tbuf s, r;
    tbuf_make(&s, m, spieces);
    tbuf_put(&s, mine);
    tbuf_make(&r, total, rpieces);
    memset(got, 0x5A, total);
    if (inplace) memcpy(got + (size_t)g->me * m, mine, m);
    tbuf_put(&r, got);
    kern_group kg = kgroup(g, 0);
    kern_iov none = {NULL, NULL, 0};
    ok = kern_allgather(&kg, inplace ? none : tbuf_iov(&s), tbuf_iov(&r)) == CDAG_OK;
    tbuf_get(&r, got);
    ok = ok && memcmp(got, want, total) == 0 && tbuf_guards(&r) && tbuf_guards(&s);
    tbuf_free(&s);
    tbuf_free(&r);
    free(mine);
    free(want);
    free(got);
  }
  check(ok, what);
}

/* ---- allgatherv ---- */

static void test_allgatherv(const group *g, size_t base, int pieces, int inplace, int nblocks) {
  char what[160];
  snprintf(what, sizeof what, "allgatherv %s base %zu pieces %d inplace %d n %d", g->name, base, pieces, inplace,
           nblocks);
  int ok = 1;
  if (g->me >= 0) {
    uint64_t counts[64];
    int icounts[64], displs[64];
    size_t total = 0;
    for (int j = 0; j < g->p; j++) {   /* some members contribute nothing */
      counts[j] = j % 3 == 1 ? 0 : base + (size_t)j * 3;
      icounts[j] = (int)counts[j];
      displs[j] = (int)total;
      total += counts[j];
    }
    size_t m = counts[g->me];
    unsigned char *mine = malloc(m + 1), *want = malloc(total + 1), *got = malloc(total + 1);
    fill(mine, m, g->me, 7);
    MPI_Allgatherv(mine, (int)m, MPI_BYTE, want, icounts, displs, MPI_BYTE, g->sub);
    tbuf s, r;
    tbuf_make(&s, m, pieces);
    tbuf_put(&s, mine);
    tbuf_make(&r, total, pieces);
    memset(got, 0x5A, total);
    if (inplace) memcpy(got + displs[g->me], mine, m);
    tbuf_put(&r, got);
    kern_group kg = kgroup(g, nblocks);
    kern_iov none = {NULL, NULL, 0};
    ok = kern_allgatherv(&kg, inplace ? none : tbuf_iov(&s), tbuf_iov(&r), counts) == CDAG_OK;
    tbuf_get(&r, got);
    ok = ok && memcmp(got, want, total) == 0 && tbuf_guards(&r);
    tbuf_free(&s);
    tbuf_free(&r);
    free(mine);
    free(want);
    free(got);
  }
  check(ok, what);
}

/* ---- reductions ---- */

typedef struct {
  cdag_type type;
  cdag_reduce_op rop;
  MPI_Datatype mtype;
  MPI_Op mop;
  const char *name;
} red_case;

static const red_case red_cases[] = {
  {CDAG_INT32, CDAG_SUM, MPI_INT32_T, MPI_SUM, "int32 sum"},
  {CDAG_INT64, CDAG_MAX, MPI_INT64_T, MPI_MAX, "int64 max"},
  {CDAG_UINT8, CDAG_BXOR, MPI_UINT8_T, MPI_BXOR, "uint8 bxor"},
  {CDAG_UINT8, CDAG_SUM, MPI_UINT8_T, MPI_SUM, "uint8 sum"},
  {CDAG_DOUBLE, CDAG_SUM, MPI_DOUBLE, MPI_SUM, "double sum"},
};

/* Element values: small integers (no overflow), doubles in [0, 1). */
static void red_fill(const red_case *rc, void *buf, size_t count, int who, int salt) {
  for (size_t i = 0; i < count; i++) {
    unsigned h = (unsigned)(who * 2654435761u) ^ (unsigned)(i * 40503u + (unsigned)salt * 977u);
    h ^= h >> 13;
    switch (rc->type) {
    case CDAG_INT32: ((int32_t *)buf)[i] = (int32_t)(h % 2001) - 1000; break;
    case CDAG_INT64: ((int64_t *)buf)[i] = (int64_t)h * 1000003 - ((int64_t)1 << 40); break;
    case CDAG_UINT8: ((uint8_t *)buf)[i] = (uint8_t)h; break;
    default: ((double *)buf)[i] = (h % 100003) / 100003.0; break;
    }
  }
}

static int red_equal(const red_case *rc, const void *got, const void *want, size_t count) {
  if (rc->type != CDAG_DOUBLE) return memcmp(got, want, count * (size_t)ir_type_size(rc->type)) == 0;
  for (size_t i = 0; i < count; i++) {
    double a = ((const double *)got)[i], b = ((const double *)want)[i];
    if (fabs(a - b) > 1e-12 * (1 + fabs(b)) * wsize) return 0;
  }
  return 1;
}

/* all = 0: reduce to root; 1: allreduce with alg. */
static void test_reduction(const group *g, const red_case *rc, size_t count, int all, int root, int pieces,
                           int inplace, int nblocks, kern_alg alg) {
  char what[200];
  snprintf(what, sizeof what, "%s %s %s count %zu root %d pieces %d inplace %d n %d alg %d",
           all ? "allreduce" : "reduce", g->name, rc->name, count, root, pieces, inplace, nblocks, (int)alg);
  int ok = 1;
  if (g->me >= 0) {
    size_t bytes = count * (size_t)ir_type_size(rc->type);
    unsigned char *in = malloc(bytes + 1), *want = malloc(bytes + 1), *got = malloc(bytes + 1);
    red_fill(rc, in, count, g->me, (int)count);
    if (all)
      MPI_Allreduce(in, want, (int)count, rc->mtype, rc->mop, g->sub);
    else
      MPI_Reduce(in, want, (int)count, rc->mtype, rc->mop, root, g->sub);
    int result_here = all || g->me == root;
    tbuf s, r;
    tbuf_make(&s, bytes, pieces);
    tbuf_put(&s, in);
    tbuf_make(&r, bytes, pieces);
    memset(got, 0x5A, bytes);
    if (inplace) memcpy(got, in, bytes);
    tbuf_put(&r, got);
    kern_group kg = kgroup(g, nblocks);
    kg.alg = alg;
    kern_iov none = {NULL, NULL, 0}, sv = inplace ? none : tbuf_iov(&s);
    int krc = all ? kern_allreduce(&kg, sv, tbuf_iov(&r), count, rc->type, rc->rop)
                  : kern_reduce(&kg, root, sv, tbuf_iov(&r), count, rc->type, rc->rop);
    ok = krc == CDAG_OK;
    tbuf_get(&r, got);
    if (result_here) ok = ok && red_equal(rc, got, want, count);
    tbuf_get(&s, got);
    ok = ok && (inplace || memcmp(got, in, bytes) == 0) && tbuf_guards(&r) && tbuf_guards(&s);
    tbuf_free(&s);
    tbuf_free(&r);
    free(in);
    free(want);
    free(got);
  }
  check(ok, what);
}

/* ---- a built kernel runs again and again on new data ---- */

static void test_reuse(const group *g) {
  int ok = 1;
  if (g->me >= 0) {
    enum { N = 777 };
    int32_t in[N], out[N], want[N];
    unsigned char b[N], bw[N];
    uint64_t ia = (uint64_t)(uintptr_t)in, oa = (uint64_t)(uintptr_t)out, ba = (uint64_t)(uintptr_t)b;
    uint64_t il = sizeof in, bl = sizeof b;
    kern_group kg = kgroup(g, 6);
    kern_op *ar = NULL, *bc = NULL;
    ok = kern_allreduce_init(&kg, (kern_iov){&ia, &il, 1}, (kern_iov){&oa, &il, 1}, N, CDAG_INT32, CDAG_SUM, &ar) ==
             CDAG_OK &&
         kern_bcast_init(&kg, g->p - 1, (kern_iov){&ba, &bl, 1}, &bc) == CDAG_OK;
    for (int it = 0; it < 3 && ok; it++) {
      for (int i = 0; i < N; i++) in[i] = it * 1000 + g->me * 7 + i;
      MPI_Allreduce(in, want, N, MPI_INT32_T, MPI_SUM, g->sub);
      fill(b, N, g->me, it);
      fill(bw, N, g->p - 1, it);
      ok = kern_run(ar) == CDAG_OK && kern_run(bc) == CDAG_OK && memcmp(out, want, sizeof out) == 0 &&
           memcmp(b, bw, N) == 0;
    }
    ok = ok && strstr(kern_describe(ar), "allreduce") && strstr(kern_describe(bc), "bcast");
    kern_free(&ar);
    kern_free(&bc);
    ok = ok && ar == NULL && kern_free(&ar) == CDAG_OK;
  }
  check(ok, "reuse of built kernels");
}

/* ---- argument errors (local: no messages) ---- */

static void test_errors(void) {
  int ok = 1, all[64], odd[64], np = 0;
  for (int r = 0; r < wsize; r++) all[r] = r;
  for (int r = 0; r < wsize; r++)
    if (r != wrank) odd[np++] = r;
  uint64_t a = 0, l = 0;
  kern_iov v = {&a, &l, 1};
  kern_op *op = NULL;
  kern_group g = {kcomm, all, wsize, NULL, 0, KERN_ALG_AUTO};
  ok = ok && kern_bcast_init(&g, wsize, v, &op) == CDAG_ERR_ARG && op == NULL;
  ok = ok && kern_reduce_init(&g, 0, v, v, 0, CDAG_DOUBLE, CDAG_BXOR, &op) == CDAG_ERR_ARG;
  ok = ok && kern_allreduce_init(&g, v, v, 0, (cdag_type)99, CDAG_SUM, &op) == CDAG_ERR_ARG;
  kern_group notme = {kcomm, odd, np, NULL, 0, KERN_ALG_AUTO};
  ok = ok && (np == 0 || kern_bcast_init(&notme, 0, v, &op) == CDAG_ERR_ARG);
  int unsorted[2] = {wsize - 1, 0};
  kern_group bad = {kcomm, unsorted, 2, NULL, 0, KERN_ALG_AUTO};
  ok = ok && (wsize < 2 || kern_bcast_init(&bad, 0, v, &op) == CDAG_ERR_ARG);
  uint64_t two = 2;   /* recv of 2 bytes is not p equal blocks for p = 3 */
  kern_iov v2 = {&a, &two, 1};
  ok = ok && (wsize != 3 || kern_allgather_init(&g, v, v2, &op) == CDAG_ERR_ARG);
  ok = ok && op == NULL && strlen(cdag_error_message()) > 0;
  check(ok, "argument errors");
}

/* ---- the model ---- */

static void test_model(void) {
  kern_model m = kern_model_default(), meas;
  char why[160] = "";
  int ok = m.alpha > 0 && m.beta > 0;
  ok = ok && kern_model_blocks(&m, 2, 1 << 20, 1) == 1 && kern_model_blocks(&m, 1024, 1 << 24, 1) > 1;
  ok = ok && kern_model_blocks(&m, 1024, 5, 1) <= 5 && kern_model_blocks(&m, 1024, 0, 1) == 1;
  /* large messages on many ranks: the n-block broadcast beats the binomial tree */
  ok = ok && kern_model_circulant(&m, IR_COLL_BCAST, 4096, 1 << 24) < kern_model_binomial(&m, IR_COLL_BCAST, 4096, 1 << 24);
  ok = ok && kern_model_choose(&m, IR_COLL_BCAST, 4096, 1 << 24, why, sizeof why) == KERN_ALG_CIRCULANT && strlen(why) > 10;
  ok = ok && kern_model_choose(&m, IR_COLL_ALLREDUCE, 64, 8, why, sizeof why) != KERN_ALG_CIRCULANT;
  ok = ok && kern_model_measure(kcomm, &meas) == CDAG_OK && meas.alpha > 0 && meas.beta > 0 && meas.overhead > 0 && meas.gamma > 0;
  double ab[2] = {meas.alpha, meas.beta}, mx[2];
  MPI_Allreduce(ab, mx, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  ok = ok && mx[0] == meas.alpha && mx[1] == meas.beta;   /* every rank got the same values */
  check(ok, "cost model");
}

/* The environment sets the model (CDAG_ALPHA, CDAG_BETA) and forces the block count. */
static void test_environment(const group *g) {
  int ok = 1;
  setenv("CDAG_ALPHA", "0.5", 1);
  setenv("CDAG_BETA", "2e-9", 1);
  kern_model m = kern_model_default();
  ok = m.alpha == 0.5 && m.beta == 2e-9;
  unsetenv("CDAG_ALPHA");
  unsetenv("CDAG_BETA");
  if (g->me >= 0) {
    unsigned char b[1001];
    uint64_t a = (uint64_t)(uintptr_t)b, l = sizeof b;
    fill(b, sizeof b, 9, 9);
    kern_group kg = kgroup(g, 0);
    kern_op *op = NULL;
    setenv("CDAG_BLOCKS", "3", 1);
    ok = ok && kern_bcast_init(&kg, 0, (kern_iov){&a, &l, 1}, &op) == CDAG_OK &&
         strstr(kern_describe(op), " n=3 ") && kern_run(op) == CDAG_OK;
    unsetenv("CDAG_BLOCKS");
    kern_free(&op);
    unsigned char w[1001];
    fill(w, sizeof w, 9, 9);
    ok = ok && memcmp(b, w, sizeof b) == 0;
  }
  check(ok, "environment: CDAG_ALPHA, CDAG_BETA, CDAG_BLOCKS");
}

/* "deep" (by hand, e.g. mpiexec -n 16): every root and block counts 1..13 on all ranks. */
static int deep(const group *g) {
  for (int n = 1; n <= 13; n++)
    for (int root = 0; root < g->p; root++) {
      size_t sz = (size_t)n * 3 + (size_t)root;
      test_bcast(g, sz, root, root % 2, n);
      test_reduction(g, &red_cases[0], sz, 0, root, root % 2, 0, n, KERN_ALG_AUTO);
      test_reduction(g, &red_cases[2], sz + 50, 0, root, 0, 0, n, KERN_ALG_AUTO);
    }
  for (int n = 1; n <= 13; n++) {
    test_allgatherv(g, (size_t)n * 2, n % 2, 0, n);
    test_reduction(g, &red_cases[1], (size_t)n * 5, 1, 0, n % 2, 0, n, KERN_ALG_CIRCULANT);
  }
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  MPI_Comm_dup(MPI_COMM_WORLD, &kcomm);
  if (wsize > 64) {
    if (wrank == 0) fprintf(stderr, "kernels: at most 64 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  group gs[4];
  const char *names[4] = {"all", "odd", "all-but-one", "single"};
  int ngroups = wsize == 1 ? 1 : 4;
  for (int i = 0; i < ngroups; i++) group_make(&gs[i], names[i], i);

  static const size_t sizes[] = {0, 1, 7, 1001, 4099};
  if (argc > 1 && strcmp(argv[1], "deep") == 0) ngroups = deep(&gs[0]);
  for (int gi = 0; gi < ngroups; gi++) {
    const group *g = &gs[gi];
    if (g->p == 0) continue;   /* odd ranks of one rank: empty set (same on every rank) */
    int roots[3] = {0, g->p - 1, g->p / 2}, nroots = wsize > 4 ? 2 : 3;
    for (int si = 0; si < 5; si++)
      for (int ri = 0; ri < nroots; ri++) {
        if (ri > 0 && roots[ri] == roots[ri - 1]) continue;
        test_bcast(g, sizes[si], roots[ri], 0, 0);
        test_bcast(g, sizes[si], roots[ri], si % 2, 5);
      }
    for (int si = 0; si < 4; si++) {
      test_allgather(g, sizes[si], 0, 0, 0);
      test_allgather(g, sizes[si], 1, 1, 0);
      test_allgather(g, sizes[si], 0, 1, 1);
      test_allgather(g, sizes[si], 0, 0, 1);
      test_allgatherv(g, sizes[si], 0, 0, 0);
      test_allgatherv(g, sizes[si], 1, si % 2, 4);
    }
    static const size_t counts[] = {0, 1, 7, 1001};
    for (int c = 0; c < 5; c++)
      for (int ci = 0; ci < 4; ci++) {
        const red_case *rc = &red_cases[c];
        int bit = 1 << ci;   /* each variant on a subset of the counts (oversubscribed runs) */
        if (bit & 0xF) test_reduction(g, rc, counts[ci], 0, 0, 0, 0, 0, KERN_ALG_AUTO);
        if (bit & 0xC) test_reduction(g, rc, counts[ci], 0, g->p - 1, 1, ci % 2, 4, KERN_ALG_AUTO);
        if (bit & 0xB) test_reduction(g, rc, counts[ci], 1, 0, 0, 0, 0, KERN_ALG_AUTO);
        if (bit & 0xC) test_reduction(g, rc, counts[ci], 1, 0, ci % 2, 0, 3, KERN_ALG_CIRCULANT);
        if (bit & 0xA) test_reduction(g, rc, counts[ci], 1, 0, 1, ci % 2, 0, KERN_ALG_CENSUS);
      }
    test_reuse(g);
    quiet_barrier();
  }
  test_errors();
  test_model();
  test_environment(&gs[0]);

  for (int i = 0; i < ngroups; i++)
    if (gs[i].sub != MPI_COMM_NULL) MPI_Comm_free(&gs[i].sub);
  MPI_Comm_free(&kcomm);
  int nfailed = agree();
  if (wrank == 0) printf("kernels: %d passed, %d failed\n", nchecks - nfailed, nfailed);
  MPI_Finalize();
  return nfailed ? 1 : 0;
}
