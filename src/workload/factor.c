/* cdag — src/workload/factor.c: the communication of one 2.5D LU or Cholesky factorisation (the COnfLUX / COnfCHOX schedule), as a global
 * graph (`cdag gen lu25d|cholesky25d`, factor.h) written by hand the way those codes write it: point-to-point messages and local
 * reductions, which `cdag analyze` must see through.
 *
 * P = s*s*c processes form an s x s x c grid, rank (i, j, k) = (k*s + i)*s + j: c layers of a
 * 2-D process grid, each layer holding partial sums of the matrix (N x N elements of 8 bytes,
 * block-cyclic over the s x s grid with blocks of v x v). Per process, M = c*N*N/P elements
 * of memory. For each of the N/v steps t, with it = jt = t mod s the grid row and column that
 * own block t:
 *   1. layer reduction (c > 1): the panels of step t (block column t on grid column jt, block
 *      row t on grid row it) are summed over the layers, scattered: on fibre (i, jt), layer k
 *      receives chunk k of the rows from the other layers and reduces it locally (and
 *      likewise along grid row it);
 *   2. pivoting (LU only): a butterfly on grid column jt of layer 0 exchanges the candidate
 *      v x v blocks (log2 s rounds; a max reduction stands for the tournament's custom op);
 *   3. the factored diagonal block from (it, jt, 0) to the panel owners, and the v pivot
 *      indices (LU) to every process;
 *   4. the 2.5D scatter: every (i, j, k) gets columns slice k (v/c columns) of grid row i's
 *      rows of the column panel, from the c layers of fibre (i, jt) that hold its chunks,
 *      and rows slice k of grid column j's part of the row panel from fibre (it, j)
 *      (Cholesky: the row panel is the column panel transposed, so (i, j, k) gets slice k
 *      of grid row j's rows from fibre (j, jt));
 *   5. the local update of the trailing matrix: a calc (1 ns per 10 flops) that waits for
 *      the step's receives, and that every later operation of the process waits for.
 * Each received block gets memory of its own, so only the dependencies order the steps.
 * The file states the seed's lower bound on bytes received per process (`bound`):
 * 2N^3/(3P sqrt(M)) elements for LU, N^3/(3P sqrt(M)) for Cholesky, times 8 bytes. The
 * schedule receives about N^3/(P sqrt(M)) elements per process plus lower-order terms
 * (O(M) for the layer reductions, O(N v) for the diagonal blocks), so its ratio to the LU
 * bound tends to 1.5 as N grows. Cost: O(P) operations per step. */
#include <math.h>
#include <stdlib.h>

#include "workload/factor.h"

enum { ELEM = 8 };

typedef struct {
  int cholesky;
  int64_t n, p, c, s, v, nb;   /* matrix order, processes, layers, grid side, block, blocks */
  cdag_graph *g;
  uint64_t *next;              /* per process: its next free address */
  int rc;
} lu_gen;

static int rank_of(const lu_gen *x, int64_t i, int64_t j, int64_t k) { return (int)((k * x->s + i) * x->s + j); }

/* Fresh memory of rank r, 64-byte aligned. */
static uint64_t take(lu_gen *x, int r, uint64_t bytes) {
  uint64_t a = x->next[r];
  x->next[r] += (bytes + 63) & ~(uint64_t)63;
  return a;
}

/* Blocks b in [from, nb) with b mod s == i: rows (or columns) grid row i holds, in elements. */
static int64_t held(const lu_gen *x, int64_t from, int64_t i) {
  int64_t first = from + ((i - from % x->s) % x->s + x->s) % x->s;
  return first >= x->nb ? 0 : ((x->nb - 1 - first) / x->s + 1) * x->v;
}

static void message(lu_gen *x, int from, uint64_t src, int to, uint64_t dst, uint64_t bytes, int tag) {
  if (x->rc || !bytes) return;
  if (from == to) {
    x->rc = ir_add_copy(x->g, from, src, dst, bytes, NULL);
    return;
  }
  x->rc = ir_add_send(x->g, from, src, bytes, to, tag, NULL);
  if (!x->rc) x->rc = ir_add_recv(x->g, to, dst, bytes, from, tag, NULL);
}

/* 1. Sum a panel part (elems elements) over the c layers of fibre (i, j), scattered: layer
   k reduces chunk k (layer 0 takes what does not divide). */
static void layer_reduce(lu_gen *x, int64_t i, int64_t j, uint64_t elems, int tag) {
  uint64_t chunk = elems / (uint64_t)x->c;
  for (int64_t k = 0; k < x->c && !x->rc; k++) {
    int root = rank_of(x, i, j, k);
    uint64_t n = k ? chunk : elems - chunk * (uint64_t)(x->c - 1), bytes = n * ELEM, acc = take(x, root, bytes);
    for (int64_t l = 0; l < x->c && !x->rc && bytes; l++) {
      if (l == k) continue;
      int r = rank_of(x, i, j, l);
      uint64_t tmp = take(x, root, bytes);
      message(x, r, take(x, r, bytes), root, tmp, bytes, tag);
      if (!x->rc) x->rc = ir_add_scratch(x->g, root, tmp, bytes);
      if (!x->rc) x->rc = ir_add_reduce(x->g, root, tmp, acc, n, CDAG_DOUBLE, CDAG_SUM, NULL);
    }
  }
}

/* 2. Tournament pivoting on grid column jt of layer 0: a butterfly over the largest power
   of two; the others fold into a partner first and get the result back. */
static void pivoting(lu_gen *x, int64_t jt, int tag) {
  uint64_t elems = (uint64_t)(x->v * x->v), bytes = elems * ELEM;
  int64_t q = 1;
  while (2 * q <= x->s) q *= 2;
  uint64_t *cand = malloc((size_t)x->s * sizeof *cand);
  if (!cand) {
    x->rc = CDAG_NOMEM("pivoting");
    return;
  }
  for (int64_t i = 0; i < x->s; i++) cand[i] = take(x, rank_of(x, i, jt, 0), bytes);
  for (int64_t i = q; i < x->s && !x->rc; i++) {   /* fold the extra ones in */
    int a = rank_of(x, i, jt, 0), b = rank_of(x, i - q, jt, 0);
    uint64_t tmp = take(x, b, bytes);
    message(x, a, cand[i], b, tmp, bytes, tag);
    if (!x->rc) x->rc = ir_add_scratch(x->g, b, tmp, bytes);
    if (!x->rc) x->rc = ir_add_reduce(x->g, b, tmp, cand[i - q], elems, CDAG_DOUBLE, CDAG_MAX, NULL);
  }
  for (int64_t d = 1; d < q && !x->rc; d *= 2)
    for (int64_t i = 0; i < q && !x->rc; i++) {
      int a = rank_of(x, i, jt, 0), b = rank_of(x, i ^ d, jt, 0);
      uint64_t tmp = take(x, b, bytes);
      message(x, a, cand[i], b, tmp, bytes, tag);
      if (!x->rc) x->rc = ir_add_scratch(x->g, b, tmp, bytes);
      if (!x->rc) x->rc = ir_add_reduce(x->g, b, tmp, cand[i ^ d], elems, CDAG_DOUBLE, CDAG_MAX, NULL);
    }
  for (int64_t i = q; i < x->s && !x->rc; i++)
    message(x, rank_of(x, i - q, jt, 0), cand[i - q], rank_of(x, i, jt, 0), cand[i], bytes, tag);
  free(cand);
}

/* 3. The diagonal block to the panel owners of layer 0, the pivots (LU) to everyone. */
static void diagonal(lu_gen *x, int64_t it, int64_t jt, int tag) {
  int root = rank_of(x, it, jt, 0);
  uint64_t bytes = (uint64_t)(x->v * x->v) * ELEM, a00 = take(x, root, bytes), piv = take(x, root, (uint64_t)x->v * 8);
  for (int64_t i = 0; i < x->s; i++) {
    int r = rank_of(x, i, jt, 0);
    if (r != root) message(x, root, a00, r, take(x, r, bytes), bytes, tag);
  }
  for (int64_t j = 0; j < x->s && !x->cholesky; j++) {
    int r = rank_of(x, it, j, 0);
    if (r != root) message(x, root, a00, r, take(x, r, bytes), bytes, tag);
  }
  for (int r = 0; r < x->p && !x->cholesky; r++)
    if (r != root) message(x, root, piv, r, take(x, r, (uint64_t)x->v * 8), (uint64_t)x->v * 8, tag + 1);
}

/* 4. The factored panels, spread over the layers as step 1 left them: rows chunk l of grid
   row i's part of the column panel is at (i, jt, l) (columns chunk l of the row panel at
   (it, j, l)), all v columns (rows), column-major. (i, j, k) gets columns slice k (v/c) of
   every chunk of its rows, and rows slice k of every chunk of its columns. */
typedef struct {
  uint64_t *addr;   /* per (grid line, layer): the chunk's memory at its owner */
} panel;

static void rows_of_chunk(const lu_gen *x, uint64_t total, int64_t l, uint64_t *first, uint64_t *n) {
  uint64_t chunk = total / (uint64_t)x->c;
  *n = l ? chunk : total - chunk * (uint64_t)(x->c - 1);
  *first = l ? total - chunk * (uint64_t)(x->c - l) : 0;
}

static void send_slices(lu_gen *x, int from, uint64_t base, uint64_t rows, int to, int64_t k, int tag) {
  uint64_t w = (uint64_t)(x->v / x->c), bytes = rows * w * ELEM;   /* columns k*w.. of a rows x v block */
  message(x, from, base + (uint64_t)k * rows * w * ELEM, to, take(x, to, bytes), bytes, tag);
}

static void scatter_panels(lu_gen *x, int64_t t, int64_t it, int64_t jt, int tag) {
  uint64_t *col = calloc((size_t)(x->s * x->c), sizeof *col), *row = calloc((size_t)(x->s * x->c), sizeof *row);
  if (!col || !row) x->rc = CDAG_NOMEM("panels");
  for (int64_t i = 0; i < x->s && !x->rc; i++)   /* factored chunks: new data of their owners */
    for (int64_t l = 0; l < x->c; l++) {
      uint64_t first, n, total = (uint64_t)held(x, t + 1, i);
      rows_of_chunk(x, total, l, &first, &n);
      col[i * x->c + l] = take(x, rank_of(x, i, jt, l), n * (uint64_t)x->v * ELEM);
      row[i * x->c + l] = take(x, rank_of(x, it, i, l), n * (uint64_t)x->v * ELEM);
    }
  for (int64_t k = 0; k < x->c && !x->rc; k++)
    for (int64_t i = 0; i < x->s && !x->rc; i++)
      for (int64_t j = 0; j < x->s && !x->rc; j++)
        for (int64_t l = 0; l < x->c && !x->rc; l++) {
          int r = rank_of(x, i, j, k);
          uint64_t first, ni, nj;
          rows_of_chunk(x, (uint64_t)held(x, t + 1, i), l, &first, &ni);
          rows_of_chunk(x, (uint64_t)held(x, t + 1, j), l, &first, &nj);
          send_slices(x, rank_of(x, i, jt, l), col[i * x->c + l], ni, r, k, tag);
          if (x->cholesky) send_slices(x, rank_of(x, j, jt, l), col[j * x->c + l], nj, r, k, tag + 1);
          else send_slices(x, rank_of(x, it, j, l), row[j * x->c + l], nj, r, k, tag + 1);
        }
  free(col);
  free(row);
}

/* 5. Each process's update waits for the step's receives (ops from `from` on); later steps
   wait for it. */
static void updates(lu_gen *x, int64_t t, int32_t from) {
  cdag_graph *g = x->g;
  int32_t to = (int32_t)g->nops, *start = calloc((size_t)x->p + 1, sizeof *start), *recv = NULL;
  int64_t n = 0;
  for (int32_t op = from; op < to; op++) n += g->kind[op] == IR_RECV;
  recv = malloc((size_t)(n ? n : 1) * sizeof *recv);
  if (!start || !recv) x->rc = CDAG_NOMEM("updates");
  for (int32_t op = from; op < to && !x->rc; op++)
    if (g->kind[op] == IR_RECV) start[g->rank[op] + 1]++;
  for (int64_t r = 0; r < x->p && !x->rc; r++) start[r + 1] += start[r];
  for (int32_t op = from; op < to && !x->rc; op++)
    if (g->kind[op] == IR_RECV) recv[start[g->rank[op]]++] = op;
  uint64_t w = (uint64_t)(x->v / x->c);
  for (int64_t r = 0, lo = 0; r < x->p && !x->rc; r++) {   /* start[r] now ends rank r's receives */
    int64_t i = r / x->s % x->s, j = r % x->s;
    double flops = 2.0 * (double)held(x, t + 1, i) * (double)held(x, t + 1, j) * (double)w;
    int32_t u;
    x->rc = ir_add_calc(g, (int)r, (uint64_t)(flops / 10), &u);
    for (; lo < start[r] && !x->rc; lo++) x->rc = ir_add_dep(g, recv[lo], u, 0);
    if (!x->rc) x->rc = ir_set_join(g, u, IR_JOIN_AFTER);
  }
  free(start);
  free(recv);
}

/* The ops of every rank of one step go in between its firsts and its update. */
static void step(lu_gen *x, int64_t t) {
  int64_t it = t % x->s, jt = t % x->s;
  int tag = (int)(4 * t);
  int32_t from = (int32_t)x->g->nops;
  for (int64_t i = 0; i < x->s && x->c > 1 && !x->rc; i++) {
    layer_reduce(x, i, jt, (uint64_t)(held(x, t, i) * x->v), tag);
    layer_reduce(x, it, i, (uint64_t)(held(x, t, i) * x->v), tag + 1);
  }
  if (!x->cholesky && !x->rc) pivoting(x, jt, tag + 2);
  if (!x->rc) diagonal(x, it, jt, tag + 2);
  if (!x->rc) scatter_panels(x, t, it, jt, tag);
  if (!x->rc) updates(x, t, from);
}

/* The seed's lower bound in bytes received per process. */
static uint64_t bound_bytes(const lu_gen *x) {
  double n = (double)x->n, m = (double)x->c * n * n / (double)x->p;
  double q = (x->cholesky ? 1.0 : 2.0) * n * n * n / (3.0 * (double)x->p * sqrt(m));
  return (uint64_t)llround(q * ELEM);
}

/* About 8 s steps (lower-order terms small, graphs moderate): the multiple of C dividing N
   closest below N / (8 s), found among N's divisors (O(sqrt N), whatever N's factors); C
   itself when none is (check_shape then says why). */
static int64_t default_block(const lu_gen *x) {
  int64_t want = x->n / (8 * x->s), best = x->c;
  for (int64_t d = 1; d * d <= x->n; d++) {
    if (x->n % d) continue;
    int64_t e = x->n / d;
    if (d % x->c == 0 && d <= want && d > best) best = d;
    if (e % x->c == 0 && e <= want && e > best) best = e;
  }
  return best;
}

static int check_shape(lu_gen *x) {
  if (x->n < 1 || x->n > WL_FACTOR_MAX_N || x->p > WL_FACTOR_MAX_P || x->p < 1 || x->c < 1 || x->p % x->c)
    return cdag__error(CDAG_ERR_ARG, "need 1 <= N <= %lld, 1 <= P <= %d and C dividing P (N %lld, P %lld, C %lld)",
                       (long long)WL_FACTOR_MAX_N, WL_FACTOR_MAX_P, (long long)x->n, (long long)x->p, (long long)x->c);
  x->s = (int64_t)llround(sqrt((double)(x->p / x->c)));
  if (x->s * x->s != x->p / x->c)
    return cdag__error(CDAG_ERR_ARG, "P / C = %lld must be a square (the layers are s x s grids)", (long long)(x->p / x->c));
  if (!x->v) x->v = default_block(x);
  if (x->v % x->c || x->n % x->v)
    return cdag__error(CDAG_ERR_ARG, "the block size v = %lld must be a multiple of C = %lld and divide N = %lld",
                       (long long)x->v, (long long)x->c, (long long)x->n);
  x->nb = x->n / x->v;
  if (x->nb > WL_FACTOR_MAX_OPS / x->p)   /* O(P) operations per step */
    return cdag__error(CDAG_ERR_ARG, "N / v = %lld steps on P = %lld processes: about %.3g operations, more than "
                       "%lld (choose a larger --v or a smaller --n)", (long long)x->nb, (long long)x->p,
                       (double)x->nb * (double)x->p, (long long)WL_FACTOR_MAX_OPS);
  return CDAG_OK;
}

/* The largest C <= P^(1/3) with P / C a square: the most replication the memory bound allows. */
static int64_t default_layers(int64_t p) {
  int64_t best = 1;
  for (int64_t c = 1; c * c * c <= p; c++) {
    int64_t s = (int64_t)llround(sqrt((double)(p / c)));
    if (p % c == 0 && s * s == p / c) best = c;
  }
  return best;
}

int wl_factor25d(int cholesky, int64_t n, int64_t p, int64_t c, int64_t v, cdag_graph **out) {
  lu_gen x = {.cholesky = cholesky, .n = n, .p = p, .c = c, .v = v};
  *out = NULL;
  if (p < 1 || p > WL_FACTOR_MAX_P)
    return cdag__error(CDAG_ERR_ARG, "need 1 <= P <= %d (P %lld)", WL_FACTOR_MAX_P, (long long)p);
  if (!x.c) x.c = default_layers(x.p);
  int rc = check_shape(&x);
  if (!rc) rc = ir_graph_new((int)x.p, -1, &x.g);
  if (!rc && !(x.next = calloc((size_t)x.p, sizeof *x.next))) rc = CDAG_NOMEM("generator");
  x.rc = rc;
  for (int64_t t = 0; t < x.nb && !x.rc; t++) step(&x, t);
  rc = x.rc;
  if (!rc) x.g->bound = bound_bytes(&x);
  free(x.next);
  if (rc) ir_graph_free(x.g);
  else *out = x.g;
  return rc;
}
