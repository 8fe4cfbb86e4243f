/* cdag MPI test — collectives run as MPI's or as cdag's kernels, as CDAG_KERNEL says
 * (run with mpiexec -n 1..8, under CDAG_KERNEL=mpi, cdag or auto).
 *
 * Every rank derives the same random plans from a seed (through the test hook the compiling
 * rank hands them to the executor): bcasts, allgathers, allgathervs, reduces and allreduces
 * on random member subsets (every rank, or a sorted subset of at least two), with block
 * sizes 0, 1, odd and larger than the block count (CDAG_BLOCKS may force one), slots cut
 * into one to three pieces, recv slots a member does not keep left empty, reductions in
 * place, over int32/int64/uint8 sums, maxima and xors (uint8 maxima: MPICH 4.0.2's MPI_MAX
 * compares unsigned types as signed; the executor must not use it), float/double sums, maxima
 * and minima of small integers (exact in any order, so byte-equal to any reduction order),
 * plus residual transfers whose destinations the collectives read (snapshots). Each rank
 * computes its expected memory from the origins and compares byte for byte after each of
 * two runs. The schedule's report must name the algorithm of every collective: none MPI
 * under CDAG_KERNEL=cdag, all MPI under =mpi. Two more plans are compiled with
 * options.kernel = CDAG_KERNEL_CDAG and options.blocks = 2: kernels everywhere, whatever
 * CDAG_KERNEL says (an explicit option wins over its variable). Finally CDAG_KERNEL=bogus must fail
 * cdag_compile with the same message on every rank. Exit 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

enum { S = 32768, TRIALS = 8, NCOLL = 7, MAXPC = 4096 };

static int P, R;
static uint64_t *base;        /* every rank's buffer */
static uint8_t *orig;         /* P * S: every rank's origin bytes */
static uint8_t *used;         /* P * S: bytes already chosen as a destination */
static uint64_t rng;

static uint64_t rnd(void) {
  uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Origins: bytes, except that floating reductions read small integers: the first half of
   the buffer holds doubles, the second floats (their bytes are what any read sees). */
static void make_origins(void) {
  for (int r = 0; r < P; r++) {
    uint8_t *o = orig + (size_t)r * S;
    for (size_t k = 0; k < S / 2; k += sizeof(double)) {
      double d = (double)((int)((r * 7 + k / 8 * 3) % 23) - 11);
      memcpy(o + k, &d, sizeof d);
    }
    for (size_t k = S / 2; k < S; k += sizeof(float)) {
      float f = (float)((int)((r * 5 + k / 4 * 7) % 19) - 9);
      memcpy(o + k, &f, sizeof f);
    }
  }
}

/* A free destination range of len bytes at rank r (aligned to align), or -1. */
static int64_t take(int r, uint64_t len, uint64_t align) {
  if (!len) return 0;
  for (int tries = 0; tries < 40; tries++) {
    uint64_t off = rnd() % (S - len) / align * align, k;
    for (k = 0; k < len && !used[(size_t)r * S + off + k]; k++) {}
    if (k < len) continue;
    memset(used + (size_t)r * S + off, 1, len);
    return (int64_t)off;
  }
  return -1;
}

/* ---- the plan, built identically on every rank ---- */

typedef struct { cdag_plan *p; int64_t cap_pieces; } pb;

/* iov with `bytes` split into 1..3 pieces at offsets of rank r (dst: taken ranges). */
static int cut_iov(cdag_plan *p, det_iov *v, int r, uint64_t bytes, int dst, uint64_t align) {
  *v = (det_iov){p->npieces, 0, bytes};
  if (!bytes) return 0;
  int n = 1 + (int)(rnd() % 3);
  uint64_t left = bytes, units = bytes / align;
  for (int q = 0; q < n && left; q++) {
    uint64_t len = q == n - 1 || units < 2 ? left : align * (1 + rnd() % (left / align));
    if (len > left) len = left;
    uint64_t lo = align == 4 ? S / 2 : 0, span = align == 1 ? S : S / 2;  /* doubles low, floats high */
    int64_t off = dst ? take(r, len, 1) : (int64_t)(lo + (rnd() % (span - len)) / align * align);
    if (off < 0) return -1;
    p->pieces[p->npieces++] = (det_piece){base[r] + (uint64_t)off, len};
    v->n++;
    left -= len;
  }
  return 0;
}

static const int types[] = {CDAG_INT32, CDAG_UINT8, CDAG_INT64, CDAG_DOUBLE, CDAG_FLOAT};
static const int int_ops[] = {CDAG_SUM, CDAG_MAX, CDAG_BXOR};
static const int flt_ops[] = {CDAG_SUM, CDAG_MAX, CDAG_MIN};
static const uint64_t sizes[] = {1, 7, 13, 0, 301, 1200};  /* reductions: elements, not the last */

static void add_coll(cdag_plan *p, det_kind kind) {
  det_coll *c = &p->colls[p->ncolls];
  int32_t *mem = p->ranks + p->nranks;
  int n = 0;
  for (int r = 0; r < P; r++)
    if (P < 3 || rnd() % 3 || r == 0) mem[n++] = r;
  if (n < 2 && P >= 2) mem[n++] = P - 1;
  int rooted = kind == DET_BCAST || kind == DET_REDUCE, red = kind == DET_REDUCE || kind == DET_ALLREDUCE;
  int many = kind == DET_ALLGATHER || kind == DET_ALLGATHERV;
  int type = types[rnd() % 5], op = type >= CDAG_FLOAT ? flt_ops[rnd() % 3] : int_ops[rnd() % 3];
  uint64_t es = red ? (uint64_t)ir_type_size(type) : 1, b = sizes[rnd() % (red ? 5 : 6)] * es;
  *c = (det_coll){.kind = kind, .root = rooted ? mem[rnd() % n] : -1, .nranks = n, .ranks_first = p->nranks,
                  .nsend_slots = 1, .nrecv_slots = many ? n : 1, .bytes = b, .type = red ? type : -1,
                  .op = red ? op : -1};
  p->nranks += n;
  c->send_first = p->niovs;
  p->niovs += n;
  c->recv_first = p->niovs;
  p->niovs += (int64_t)n * c->nrecv_slots;
  uint64_t counts[64];
  for (int m = 0; m < n; m++) {  /* send slots */
    counts[m] = kind == DET_ALLGATHERV ? sizes[rnd() % 6] : b;
    det_iov *sv = &p->iovs[c->send_first + m];
    if (kind == DET_BCAST && mem[m] != c->root) counts[m] = 0;
    if (cut_iov(p, sv, mem[m], counts[m], 0, es)) counts[m] = 0, *sv = (det_iov){p->npieces, 0, 0};
  }
  for (int m = 0; m < n; m++)  /* recv slots: sometimes empty (not kept) */
    for (int j = 0; j < c->nrecv_slots; j++) {
      det_iov *rv = &p->iovs[c->recv_first + (int64_t)m * c->nrecv_slots + j];
      uint64_t want = many ? counts[j] : kind == DET_BCAST && mem[m] == c->root ? 0 : b;
      if (kind == DET_REDUCE && mem[m] != c->root) want = 0;
      *rv = (det_iov){p->npieces, 0, 0};
      if (!want || rnd() % 5 == 0) continue;
      det_iov *sv = &p->iovs[c->send_first + m];
      uint8_t *u = sv->n == 1 ? used + (size_t)mem[m] * S + (p->pieces[sv->first].addr - base[mem[m]]) : NULL;
      if (red && u && rnd() % 3 == 0 && !memchr(u, 1, want)) {
        *rv = *sv;  /* in place: the result overwrites the input */
        memset(u, 1, want);
        continue;
      }
      if (cut_iov(p, rv, mem[m], want, 1, 1)) *rv = (det_iov){p->npieces, 0, 0};
    }
  p->ncolls++;
}

static cdag_plan *make_plan(void) {
  cdag_plan *p = calloc(1, sizeof *p);
  p->nprocs = P;
  cdag_options_init(&p->opts);
  p->colls = calloc(NCOLL, sizeof *p->colls);
  p->ranks = calloc((size_t)NCOLL * P, sizeof *p->ranks);
  p->iovs = calloc((size_t)NCOLL * (P + (size_t)P * P), sizeof *p->iovs);
  p->pieces = calloc(MAXPC, sizeof *p->pieces);
  p->xfers = calloc(32, sizeof *p->xfers);
  p->sst = calloc(1, sizeof *p->sst);
  memset(used, 0, (size_t)P * S);
  static const det_kind kinds[] = {DET_BCAST, DET_ALLGATHER, DET_ALLGATHERV, DET_REDUCE, DET_ALLREDUCE};
  for (int k = 0; k < NCOLL; k++) add_coll(p, kinds[k < 5 ? (uint64_t)k : rnd() % 5]);
  for (int k = 0; k < 24; k++) {  /* residual transfers onto bytes the collectives may read */
    int src = (int)(rnd() % P), dst = (int)(rnd() % P);
    uint64_t len = 1 + rnd() % 48, soff = rnd() % (S - len);
    int64_t doff = take(dst, len, 1);
    if (doff >= 0) p->xfers[p->nxfers++] = (df_xfer){src, dst, base[src] + soff, base[dst] + (uint64_t)doff, len, 0, 0, 0};
  }
  return p;
}

static void plan_free(cdag_plan *p) {
  if (!p) return;
  free(p->colls); free(p->ranks); free(p->iovs); free(p->pieces); free(p->xfers); free(p->sst); free(p);
}

static uint64_t seed;
static int hook(cdag_graph *gg, const cdag_options *o, cdag_plan **out) {
  rng = seed;
  *out = make_plan();
  return CDAG_OK;
}

/* ---- expected memory of this rank, from the origins ---- */

static uint64_t gather_iov(const cdag_plan *p, const det_iov *v, int r, uint8_t *out) {
  uint64_t n = 0;
  for (int q = 0; q < v->n; q++) {
    const det_piece *pc = &p->pieces[v->first + q];
    memcpy(out + n, orig + (size_t)r * S + (pc->addr - base[r]), pc->len);
    n += pc->len;
  }
  return n;
}

static void scatter_iov(const cdag_plan *p, const det_iov *v, const uint8_t *in, uint8_t *exp) {
  uint64_t n = 0;
  for (int q = 0; q < v->n; q++) {
    const det_piece *pc = &p->pieces[v->first + q];
    memcpy(exp + (pc->addr - base[R]), in + n, pc->len);
    n += pc->len;
  }
}

static void expect_coll(const cdag_plan *p, const det_coll *c, uint8_t *exp) {
  static uint8_t blk[S], acc[S];
  const int32_t *mem = p->ranks + c->ranks_first;
  int me = -1;
  for (int m = 0; m < c->nranks; m++)
    if (mem[m] == R) me = m;
  if (me < 0) return;
  const det_iov *send = &p->iovs[c->send_first], *recv = &p->iovs[c->recv_first + (int64_t)me * c->nrecv_slots];
  if (c->kind == DET_REDUCE || c->kind == DET_ALLREDUCE) {
    uint64_t count = c->bytes / (uint64_t)ir_type_size(c->type);
    gather_iov(p, &send[0], mem[0], acc);
    for (int m = 1; m < c->nranks; m++) {
      gather_iov(p, &send[m], mem[m], blk);
      ir_reduce_apply(c->type, c->op, blk, acc, count);
    }
    scatter_iov(p, recv, acc, exp);
    return;
  }
  for (int j = 0; j < c->nrecv_slots; j++) {
    int from = c->kind == DET_BCAST ? -1 : j;
    for (int m = 0; from < 0 && m < c->nranks; m++)
      if (mem[m] == c->root) from = m;
    gather_iov(p, &send[from], mem[from], blk);
    scatter_iov(p, &recv[j], blk, exp);
  }
}

static void expect(const cdag_plan *p, uint8_t *exp) {
  memcpy(exp, orig + (size_t)R * S, S);
  for (int64_t x = 0; x < p->nxfers; x++) {
    const df_xfer *t = &p->xfers[x];
    if (t->dst == R) memcpy(exp + (t->dst_addr - base[R]), orig + (size_t)t->src * S + (t->src_addr - base[t->src]), t->len);
  }
  for (int64_t c = 0; c < p->ncolls; c++) expect_coll(p, &p->colls[c], exp);
}

/* What writes byte k of this rank in trial t's plan, for failure messages. */
static const char *owner(int t, uint64_t k) {
  static char what[96];
  rng = seed = 7000 + (uint64_t)t;
  cdag_plan *p = make_plan();
  snprintf(what, sizeof what, "no write");
  uint64_t a = base[R] + k;
  for (int64_t c = 0; c < p->ncolls; c++) {
    const det_coll *co = &p->colls[c];
    for (int m = 0; m < co->nranks; m++)
      if (p->ranks[co->ranks_first + m] == R)
        for (int j = 0; j < co->nrecv_slots; j++) {
          const det_iov *v = &p->iovs[co->recv_first + (int64_t)m * co->nrecv_slots + j];
          for (int q = 0; q < v->n; q++)
            if (a >= p->pieces[v->first + q].addr && a < p->pieces[v->first + q].addr + p->pieces[v->first + q].len)
              snprintf(what, sizeof what, "collective %lld (%s over %d, %s %s) member %d slot %d", (long long)c,
                       det_kind_name(co->kind), co->nranks, co->type >= 0 ? ir_type_name(co->type) : "-",
                       co->op >= 0 ? ir_rop_name(co->op) : "-", m, j);
        }
  }
  plan_free(p);
  return what;
}

/* ---- the report: the algorithm of every collective, as the policy wants ---- */

static int check_report(const cdag_schedule *s, const char *policy, int ncolls) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  cdag_schedule_report(s, f, 0);
  fclose(f);
  int lines = 0, mpi = 0, bad = 0;
  for (const char *t = text; (t = strstr(t, ": algorithm: ")); t++) {
    lines++;
    mpi += !strncmp(t, ": algorithm: mpi", 16);
  }
  if (lines != ncolls) bad = 1;
  if (P >= 2 && !strcmp(policy, "cdag") && mpi) bad = 1;
  if ((P < 2 || !strcmp(policy, "mpi")) && mpi != lines) bad = 1;
  if (bad && R == 0) MT_FAIL("CDAG_KERNEL=%s: report has %d algorithm lines (%d mpi):\n%s", policy, lines, mpi, text);
  free(text);
  return bad;
}

static int bogus_policy(void) {
  const char *old = getenv("CDAG_KERNEL");
  char *keep = old ? strdup(old) : NULL;
  setenv("CDAG_KERNEL", "bogus", 1);
  cdag_graph *g = NULL;
  cdag_schedule *s = NULL;
  uint8_t dummy[2] = {0};
  int rc = cdag_graph_create(MPI_COMM_WORLD, &g);
  if (!rc) rc = cdag_send(g, dummy, 1, (R + 1) % P, 99, NULL);
  if (!rc) rc = cdag_recv(g, dummy + 1, 1, (R - 1 + P) % P, 99, NULL);
  int crc = rc ? rc : cdag_compile(g, NULL, &s);
  int bad = crc != CDAG_ERR_ARG || !strstr(cdag_error_message(), "CDAG_KERNEL=bogus") || s;
  if (bad) MT_FAIL("CDAG_KERNEL=bogus gave %d: %s", crc, cdag_error_message());
  cdag_schedule_free(&s);
  cdag_graph_free(&g);
  if (keep) setenv("CDAG_KERNEL", keep, 1);
  else unsetenv("CDAG_KERNEL");
  free(keep);
  return bad;
}

/* Trial t: the plan of seed 7000 + t compiled with options o (NULL: defaults), the report
   checked against policy, two runs compared with the expected memory. */
static int trial(int t, const cdag_options *o, const char *policy, uint8_t *mem, uint8_t *exp, int *bad) {
  uint8_t dummy[8] = {0};
  seed = 7000 + (uint64_t)t;
  rng = seed;
  cdag_plan *p = make_plan();
  expect(p, exp);
  int ncolls = (int)p->ncolls;
  plan_free(p);
  cdag_graph *g = NULL;
  cdag_schedule *s = NULL;
  int rc = cdag_graph_create(MPI_COMM_WORLD, &g);  /* a different graph per trial (tag t) */
  if (!rc) rc = cdag_send(g, dummy, 1, (R + 1) % P, t, NULL);
  if (!rc) rc = cdag_recv(g, dummy + 1, 1, (R - 1 + P) % P, t, NULL);
  if (!rc) rc = cdag_compile(g, o, &s);
  if (!rc) *bad += check_report(s, policy, ncolls);
  for (int run = 0; run < 2 && !rc; run++) {
    memcpy(mem, orig + (size_t)R * S, S);
    rc = cdag_run(s);
    for (uint64_t k = 0; k < S && !rc; k++)
      if (mem[k] != exp[k]) {
        if (!*bad) MT_FAIL("trial %d run %d: byte %llu is %u, expected %u (%s)", t, run, (unsigned long long)k, mem[k],
                           exp[k], owner(t, k));
        (*bad)++;
      }
  }
  cdag_schedule_free(&s);
  cdag_graph_free(&g);
  return rc;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const char *policy = getenv("CDAG_KERNEL") ? getenv("CDAG_KERNEL") : "auto";
  uint8_t *mem = malloc(S), *exp = malloc(S);
  base = calloc((size_t)P, sizeof *base);
  used = calloc((size_t)P, S);
  orig = malloc((size_t)P * S);
  make_origins();
  uint64_t mine = (uint64_t)(uintptr_t)mem;
  MPI_Allgather(&mine, 1, MPI_UINT64_T, base, 1, MPI_UINT64_T, MPI_COMM_WORLD);
  exec_set_analyzer(hook, plan_free);
  int bad = 0, rc = CDAG_OK;
  for (int t = 0; t < TRIALS && !rc; t++) rc = trial(t, NULL, policy, mem, exp, &bad);
  /* the same through the API: options.kernel = cdag (and a forced block count) takes every
     kernel, whatever CDAG_KERNEL says: an explicit option wins over its variable */
  cdag_options o;
  cdag_options_init(&o);
  o.kernel = CDAG_KERNEL_CDAG;
  o.blocks = 2;
  for (int t = 0; t < 2 && !rc; t++) rc = trial(TRIALS + t, &o, "cdag", mem, exp, &bad);
  MT_OK(rc);
  exec_set_analyzer(NULL, NULL);
  if (!rc) bad += bogus_policy();
  MT_EXPECT_INT(bad, ==, 0);   /* wrong bytes and reports, each said above */
  if (R == 0) printf("mpi_kernel_choice: CDAG_KERNEL=%s, %d plans\n", policy, TRIALS);
  free(mem); free(exp); free(base); free(used); free(orig);
  return mt_finish("mpi_kernel_choice");
}
