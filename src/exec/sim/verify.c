/* cdag — src/exec/sim/verify.c: does a plan do what its graph does?
 *
 * Fills memory for every byte the graph touches from a seed, runs the original graph in the
 * simulator (in several random valid orders, which must agree: otherwise the graph itself
 * has a race) and the plan by its collective semantics, and compares every non-scratch
 * byte. This is rules 1 and 2 of docs/semantics.md, checked; the public cdag_plan_verify uses it.
 * Inputs of floating-point sums and products get values that every order of evaluation
 * combines exactly (unless exact_float is set), so a plan that reassociates them, as MPI's
 * collectives may, compares equal; bytes that two reductions read differently (a double
 * sum and a float product) get zeros, exact for both. A staged plan whose sums read what an
 * earlier stage computed, values no seed makes exact, is verified stage by stage when the
 * whole run differs (verify_by_stages).
 * Cost: O(n log n) per order for n ops, plus the memory touched (a few copies of it). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/sim/sim.h"


/* Re-labels the comparison error (a difference) with what the difference means. */
static int difference(const char *meaning) {
  char first[512];
  snprintf(first, sizeof first, "%s", cdag_error_message());
  return cdag__error(CDAG_ERR_MISMATCH, "%s: %s", meaning, first);
}

/* Runs g from init in `orders` orders (seed 0 first, then random); ref gets the result. */
static int run_orders(const cdag_graph *g, const sim_mem *init, uint64_t seed, int orders, sim_mem **ref) {
  sim_mem *other = NULL;
  int rc = sim_mem_clone(init, ref);
  if (rc == CDAG_OK) rc = sim_run_graph(g, *ref, 0);
  for (int k = 1; k < orders && rc == CDAG_OK; k++) {
    if ((rc = sim_mem_clone(init, &other)) == CDAG_OK && (rc = sim_run_graph(g, other, seed + (uint64_t)k)) == CDAG_OK &&
        sim_mem_compare(*ref, other, g, 1) != CDAG_OK)
      rc = difference("the graph itself gives different results in different valid orders (a race; first order's value first)");
    sim_mem_free(other);
    other = NULL;
  }
  return rc;
}

/* Floating-point sums and products may be reassociated by a plan (docs/semantics.md), so
   bytes compared after them could differ in the last bit for a correct plan. Their inputs
   (the SST's contributions: origins) get values every order combines exactly: small
   integers for sums, powers of two for products. A reduction of n contributions (a value
   counted 65,536 times is 65,536 of them) keeps them small enough that every partial sum is
   an integer the type holds exactly (n times the bound within its significand), and every
   partial product within its exponents (n times the exponent bound at most 100). A complex
   factor is real or imaginary, never both: (a + bi)(c + di) sums two products, whose bits a
   longer product no longer holds, so its last bits would depend on the order. The part that
   is 0 may still come out -0.0 in one order and +0.0 in another (i * i = -1, and -x * 0 is
   -0.0), so the comparison takes the two zeros as one there (complex_zeros). */
/* The bytes of one scalar of a floating-point type (a complex number is two). */
static int scalar_width(int type) {
  if (type == CDAG_LONG_DOUBLE || type == CDAG_COMPLEX_LONG_DOUBLE) return ir_type_size(CDAG_LONG_DOUBLE);
  return type == CDAG_DOUBLE || type == CDAG_COMPLEX_DOUBLE ? 8 : 4;
}

static void exact_values(uint8_t *b, uint64_t count, int type, int rop, uint64_t terms, uint64_t *x) {
  int w = scalar_width(type), digits = w == 4 ? FLT_MANT_DIG : w == 8 ? DBL_MANT_DIG : LDBL_MANT_DIG;
  uint64_t n = type == CDAG_COMPLEX_FLOAT || type == CDAG_COMPLEX_DOUBLE || type == CDAG_COMPLEX_LONG_DOUBLE ? 2 * count
                                                                                                        : count;
  uint64_t t = terms ? terms : 1, bound = (uint64_t)1 << (digits < 63 ? digits : 62);
  int64_t half = (int64_t)(t >= bound / 512 ? (bound / t > 1 ? bound / t : 1) : 512);   /* sums: [-half, half) */
  int ex = t > 25 ? (int)(100 / t) : 4;                                                   /* products: 2^[-ex, ex] */
  int complex_prod = rop == CDAG_PROD && n == 2 * count, zero = 0;   /* which part of a complex factor is 0 */
  for (uint64_t e = 0; e < n; e++) {
    *x ^= *x << 13; *x ^= *x >> 7; *x ^= *x << 17;
    if (complex_prod && e % 2 == 0) zero = (int)(*x >> 40 & 1);
    double v = rop == CDAG_PROD ? ldexp(1.0, (int)(*x % (uint64_t)(2 * ex + 1)) - ex)
                                : (double)((int64_t)(*x % (uint64_t)(2 * half)) - half);
    if (complex_prod && (int)(e % 2) == zero) v = 0;
    float f = (float)v;
    long double l = v;
    memset(b + (size_t)w * e, 0, (size_t)w);   /* a long double's padding too */
    memcpy(b + (size_t)w * e, w == 4 ? (const void *)&f : w == 8 ? (const void *)&v : (const void *)&l,
           (size_t)ir_type_value_bytes(w == 4 ? CDAG_FLOAT : w == 8 ? CDAG_DOUBLE : CDAG_LONG_DOUBLE));
  }
}

static int reassociates(int type, int rop) {
  return ir_type_is_float(type) && (rop == CDAG_SUM || rop == CDAG_PROD) &&
         type != CDAG_FLOAT_INT && type != CDAG_DOUBLE_INT && type != CDAG_2FLOAT && type != CDAG_2DOUBLE;
}

/* One reassociating input: bytes [lo, hi) of rank, elements of type combined by rop with
   `terms` contributions in all. */
typedef struct {
  int32_t rank, type, rop;
  uint64_t lo, hi, terms;
} input_span;

static int input_push(input_span **v, int64_t *n, int64_t *cap, int32_t rank, uint64_t addr, uint64_t len, int type,
                      int rop, uint64_t terms) {
  if (len == 0) return CDAG_OK;
  BASE_GROW(*v, *n, *cap, 1, "verify");
  (*v)[(*n)++] = (input_span){rank, type, rop, addr, addr + len, terms};
  return CDAG_OK;
}

/* The inputs of every reassociating reduction: collectives' send slots, residual
   reductions' set runs. */
static int collect_inputs(const cdag_plan *p, input_span **v, int64_t *n, int64_t *cap) {
  int rc = CDAG_OK;
  for (int64_t i = 0; i < p->ncolls && rc == CDAG_OK; i++) {
    const det_coll *c = &p->colls[i];
    if (!ir_coll_get(c->kind)->reduces || !reassociates(c->type, c->op)) continue;
    for (int32_t mi = 0; mi < c->nranks; mi++)
      for (int32_t s = 0; s < c->nsend_slots; s++) {
        const det_iov *io = det_slot(p, c, 1, mi, s);
        for (int32_t k = 0; k < io->n && rc == CDAG_OK; k++) {
          const det_piece *pc = &p->pieces[io->first + (uint32_t)k];
          rc = input_push(v, n, cap, p->ranks[c->ranks_first + mi], pc->addr, pc->len, c->type, c->op,
                          (uint64_t)c->nranks);
        }
      }
  }
  for (int64_t i = 0; i < p->nreds && rc == CDAG_OK; i++) {
    const df_red *d = &p->reds[i];
    if (!reassociates((int)d->type, d->op)) continue;
    const df_set *set = &p->sst->sets[d->set];
    uint64_t bytes = d->count * (uint64_t)ir_type_size((int)d->type);
    for (int32_t k = 0; k < set->nruns; k++) {
      const df_run *run = &p->sst->runs[set->first + k];
      for (int32_t r = run->lo; r <= run->hi && rc == CDAG_OK; r++)
        rc = input_push(v, n, cap, r, run->addr, bytes, (int)d->type, d->op, (uint64_t)set->ncontrib);
    }
  }
  return rc;
}

static int zeros_cmp(const void *a, const void *b) {
  const sim_zeros *x = a, *y = b;
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Where p may leave -0.0 for the graph's +0.0 (exact_values): every final tuple of a complex
   product (the SST's, so the bytes a result was copied or sent on to as well), sorted. */
static int complex_zeros(const cdag_plan *p, sim_zeros **z, int64_t *n) {
  int64_t m = 0, cap = 0;
  for (int64_t i = 0; p->sst && i < p->sst->nreds; i++) {
    const df_red *d = &p->sst->reds[i];
    int t = (int)d->type;
    if (d->op != CDAG_PROD || (t != CDAG_COMPLEX_FLOAT && t != CDAG_COMPLEX_DOUBLE && t != CDAG_COMPLEX_LONG_DOUBLE)) continue;
    BASE_GROW(*z, m, cap, 1, "verify");
    (*z)[m++] = (sim_zeros){d->dst, (uint32_t)scalar_width(t), d->dst_addr, d->dst_addr + d->count * (uint64_t)ir_type_size(t)};
  }
  if (m > 1) qsort(*z, (size_t)m, sizeof **z, zeros_cmp);
  *n = m;
  return CDAG_OK;
}

static int input_cmp(const void *a, const void *b) {
  const input_span *x = a, *y = b;
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Do two inputs read their bytes alike: same op, same scalar width (a complex is two
   scalars), scalars at the same alignment? Then values exact for one are exact for both. */
static int same_reading(const input_span *a, const input_span *b) {
  int wa = scalar_width(a->type), wb = scalar_width(b->type);
  return a->rop == b->rop && wa == wb && a->lo % (uint64_t)wa == b->lo % (uint64_t)wb;
}

/* Exact values for every input. Overlapping inputs form clusters; a cluster whose inputs
   all read their bytes alike gets exact values for that reading. One that mixes readings
   (the same bytes a double sum and a float product) gets zeros, the one value that is
   exact for every type and both ops: values chosen for one reading would be arbitrary
   numbers in another, whose reassociation changes the last bits. O(k log k), k inputs. */
static int exact_inputs(const cdag_plan *p, sim_mem *m, uint64_t seed) {
  input_span *v = NULL;
  int64_t n = 0, cap = 0;
  int rc = CDAG_OK;
  for (const cdag_plan *q = p; q && rc == CDAG_OK; q = q->next) rc = collect_inputs(q, &v, &n, &cap);
  if (rc == CDAG_OK && n) base_sort(v, n, sizeof *v, input_cmp);
  uint64_t x = seed | 1;
  for (int64_t i = 0, j; i < n && rc == CDAG_OK; i = j) {
    uint64_t hi = v[i].hi, terms = v[i].terms;
    int alike = 1;
    for (j = i + 1; j < n && v[j].rank == v[i].rank && v[j].lo < hi; j++) {
      alike &= same_reading(&v[i], &v[j]);
      if (v[j].hi > hi) hi = v[j].hi;
      if (v[j].terms > terms) terms = v[j].terms;
    }
    for (int64_t k = i; k < j; k++) {
      uint8_t *b = sim_mem_at(m, v[k].rank, v[k].lo, v[k].hi - v[k].lo);
      if (!b) continue;
      if (alike)
        exact_values(b, (v[k].hi - v[k].lo) / (uint64_t)ir_type_size(v[k].type), v[k].type, v[k].rop, terms, &x);
      else memset(b, 0, (size_t)(v[k].hi - v[k].lo));
    }
  }
  free(v);
  return rc;
}

/* A staged plan's staging buffers (st: its steps, or NULL) are its own memory, not the
   graph's: the planned image takes the reference's bytes there before the comparison. */
static void forget_temps(const stage_steps *st, sim_mem *planned, sim_mem *ref) {
  for (int64_t i = 0; st && i < st->ntemps; i++) {
    const stage_range *t = &st->temps[i];
    uint8_t *a = sim_mem_at(planned, t->rank, t->addr, t->len), *b = sim_mem_at(ref, t->rank, t->addr, t->len);
    if (a && b) memcpy(a, b, (size_t)t->len);
  }
}

static uint64_t temp_bytes(const cdag_plan *p) {
  uint64_t n = 0;
  for (int64_t i = 0; p->steps && i < p->steps->ntemps; i++) n += p->steps->temps[i].len;
  return n;
}

/* Does a stage of p combine floating-point values in an order it may change? */
static int chain_reassociates(const cdag_plan *p) {
  for (const cdag_plan *q = p; q; q = q->next) {
    for (int64_t i = 0; i < q->ncolls; i++)
      if (ir_coll_get(q->colls[i].kind)->reduces && reassociates(q->colls[i].type, q->colls[i].op)) return 1;
    for (int64_t i = 0; i < q->nreds; i++)
      if (reassociates((int)q->reds[i].type, q->reds[i].op)) return 1;
  }
  return 0;
}

/* The stages' graphs of s, run one after the other with the plan's computations (st) between
   them, leave the bytes g leaves (from inputs exact for p's reductions, as exec_verify_bytes
   gives them: the graph's own orders of concurrent sums then agree). */
static int stages_as_graph(const cdag_graph *g, const cdag_plan *p, const stage_split *s, const stage_steps *st,
                           uint64_t seed, int orders) {
  sim_mem *init = NULL, *ref = NULL, *staged = NULL;
  int rc = sim_mem_create_plus(g, st->temps, st->ntemps, &init);
  if (rc) return rc;
  sim_mem_fill_random(init, seed);
  if ((rc = exact_inputs(p, init, seed)) == CDAG_OK && (rc = run_orders(g, init, seed, orders, &ref)) == CDAG_OK && (rc = sim_mem_clone(init, &staged)) == CDAG_OK &&
      (rc = sim_run_stages(s->graph, s->nstages, st, staged)) == CDAG_OK) {
    forget_temps(st, staged, ref);
    if (sim_mem_compare(ref, staged, g, 1) != CDAG_OK)
      rc = difference("the graph's stages, run one after the other, differ from the graph (graph value first)");
  }
  sim_mem_free(init);
  sim_mem_free(ref);
  sim_mem_free(staged);
  return rc;
}

/* Stage k's plan q alone against its stage's (finalized) graph sk, from memory whose
   reduction inputs are exact. */
static int stage_as_planned(const cdag_graph *sk, const cdag_plan *q, uint64_t seed) {
  cdag_plan alone = *q;
  alone.next = NULL, alone.steps = NULL;
  int rc = exec_verify_bytes(sk, &alone, seed, 1, NULL);
  if (rc == CDAG_ERR_MISMATCH) {
    char first[512];
    snprintf(first, sizeof first, "%s", cdag_error_message());
    rc = cdag__error(CDAG_ERR_MISMATCH, "stage %d: %s", q->stage, first);
  }
  return rc;
}

/* A staged plan, verified stage by stage. A later stage's sums combine values earlier stages
   (or computations) made, which verify cannot choose exact, so the whole run may differ in a
   reassociated sum's last bits for a correct plan. Instead: the stages' graphs as the plan
   cut them (stage_cut by g's marks), run one after the other with the plan's computations
   and staging buffers, must leave the graph's bytes; and each stage's plan, from memory
   where its own reductions' inputs are exact, must leave its stage's bytes. Together: the
   plan does what the graph does, up to reassociation. */
static int verify_by_stages(const cdag_graph *g, const cdag_plan *p, uint64_t seed, int orders) {
  match_result m = {0};
  stage_split s = {0};
  int rc = match_run(g, &m);
  if (rc == CDAG_OK) rc = stage_cut((cdag_graph *)g, &m, &s);   /* only g's lazy dependency index changes */
  match_free(&m);
  const cdag_plan *q = p;
  for (int32_t k = 0; rc == CDAG_OK && k < s.nstages; k++, q = q->next)
    if (!q || q->stage != k)
      rc = cdag__error(CDAG_ERR_PLAN, "verify: the plan's stages are not the graph's (stage %d of %d)", k, s.nstages);
  if (rc == CDAG_OK && q) rc = cdag__error(CDAG_ERR_PLAN, "verify: the plan has more stages than the graph's %d", s.nstages);
  for (int32_t k = 0; rc == CDAG_OK && k < s.nstages; k++) rc = ir_finalize(s.graph[k]);
  if (rc == CDAG_OK) rc = stages_as_graph(g, p, &s, p->steps, seed, orders);
  q = p;
  for (int32_t k = 0; rc == CDAG_OK && k < s.nstages; k++, q = q->next) rc = stage_as_planned(s.graph[k], q, seed + (uint64_t)k);
  stage_split_free(&s);
  return rc;
}

int exec_verify_bytes(const cdag_graph *g, const cdag_plan *p, uint64_t seed, int orders, uint64_t *compared) {
  sim_mem *init = NULL, *ref = NULL, *planned = NULL;
  sim_zeros *zeros = NULL;
  int64_t nzeros = 0;
  int by_stages = 0;
  if (g->state == IR_BUILDING) return cdag__error(CDAG_ERR_STATE, "verify: the graph is not finalized");
  int whole = det_written_unpriced(p->as_written);   /* the graph runs */
  int rc = p->steps && !whole ? sim_mem_create_plus(g, p->steps->temps, p->steps->ntemps, &init) : sim_mem_create(g, &init);
  if (rc) return rc;
  sim_mem_fill_random(init, seed);
  if (!p->opts.exact_float && (rc = exact_inputs(p, init, seed))) goto out;
  if ((rc = run_orders(g, init, seed, orders, &ref))) goto out;
  if ((rc = sim_mem_clone(init, &planned))) goto out;
  /* detect.h; a plan the price set aside is verified all the same: it is what would run */
  if ((rc = whole ? sim_run_graph(g, planned, 0) : sim_run_plan(p, planned))) goto out;
  if (!whole) forget_temps(p->steps, planned, ref);
  if (!p->opts.exact_float && (rc = complex_zeros(p, &zeros, &nzeros))) goto out;
  if (sim_mem_compare_zeros(ref, planned, g, 1, zeros, nzeros) != CDAG_OK) {
    rc = difference("plan differs from the graph (graph value first)");
    by_stages = p->steps && !p->opts.exact_float && chain_reassociates(p);
  }
  if (compared) *compared = sim_mem_bytes_outside_scratch(init, g) - (whole ? 0 : temp_bytes(p));
out:
  sim_mem_free(init);
  sim_mem_free(ref);
  sim_mem_free(planned);
  free(zeros);
  return by_stages ? verify_by_stages(g, p, seed, orders) : rc;
}

int exec_verify(const cdag_graph *g, const cdag_plan *p, uint64_t seed, int orders) {
  return exec_verify_bytes(g, p, seed, orders, NULL);
}

int cdag_plan_verify(const cdag_graph *g, const cdag_plan *p) {
  if (!g || !p) return cdag__error(CDAG_ERR_ARG, "cdag_plan_verify: NULL argument");
  if (g->state == IR_BUILDING)
    return cdag__error(CDAG_ERR_STATE, "cdag_plan_verify: the graph was changed after cdag_analyze");
  if (g->nprocs != p->nprocs) return cdag__error(CDAG_ERR_ARG, "cdag_plan_verify: plan is for %d ranks, graph has %d", p->nprocs, g->nprocs);
  return exec_verify(g, p, 0x5eed, 3);
}
