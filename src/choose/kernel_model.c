/* cdag — src/choose/kernel_model.c: the alpha-beta cost model of the kernels.
 *
 * A message of m bytes costs alpha + beta m. The model gives the block count of the n-block
 * kernels, predicts their time and that of the algorithms MPI libraries use (binomial tree;
 * scatter + allgather, i.e. van de Geijn's broadcast and Rabenseifner's reduce/allreduce,
 * with recursive doubling), and chooses between MPI's collective and a cdag kernel. alpha
 * and beta have defaults for shared-memory MPICH, can be measured at start-up with a short
 * ping-pong, and the environment (CDAG_ALPHA, CDAG_BETA) overrides both. Computation time of
 * reductions is left out: it is the same m per rank for every algorithm here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "circulant/circulant.h"
#include "choose/choose.h"
#include "base/settings.h"

#define KERN_ALPHA_DEFAULT 1e-6
#define KERN_BETA_DEFAULT 2e-10
#define KERN_OVERHEAD_DEFAULT 2e-7
#define KERN_GAMMA_DEFAULT 1e-10

/* The entry points validated the variables (settings.h); a bad one is not applied here. */
void kern__model_env(kern_model *m) {
  cdag_settings s;
  cdag__settings_read(&s);
  const cdag_options *e = &s.opt;   /* 0 where the variable is unset */
  if (e->alpha > 0) m->alpha = e->alpha;
  if (e->beta > 0) m->beta = e->beta;
  if (e->overhead > 0) m->overhead = e->overhead;
  if (e->gamma > 0) m->gamma = e->gamma;
  if (e->blocks > 0) m->blocks = e->blocks;
}

kern_model kern_model_builtin(void) { return (kern_model){KERN_ALPHA_DEFAULT, KERN_BETA_DEFAULT, 0, KERN_OVERHEAD_DEFAULT, KERN_GAMMA_DEFAULT}; }

int kern_travels_alone(uint64_t len, uint64_t limit, int64_t *nalone) {
  if (len <= limit || *nalone >= KERN_MAX_ALONE) return 0;
  ++*nalone;
  return 1;
}

uint64_t kern_alone_of(uint64_t len, uint64_t n, uint64_t limit, int64_t *nalone) {
  if (len <= limit || *nalone >= KERN_MAX_ALONE) return 0;
  uint64_t room = (uint64_t)(KERN_MAX_ALONE - *nalone), k = n < room ? n : room;
  *nalone += (int64_t)k;
  return k;
}

uint64_t kern_model_pack_limit(const kern_model *m) {
  double limit = m->overhead / (2 * m->gamma);
  return limit >= 0x1p62 ? (uint64_t)1 << 62 : (uint64_t)(limit + 0.5);
}

loggp_params kern_model_loggp(const kern_model *m) {
  double o = m->overhead * 1e6, L = m->alpha * 1e6 - 2 * o;
  return (loggp_params){.L = L > 0 ? L : 0, .o = o, .g = o, .G = m->beta * 1e6, .S = 65535, .copy = m->gamma * 1e6};
}

kern_model kern_model_default(void) {
  kern_model m = kern_model_builtin();
  kern__model_env(&m);
  return m;
}

static int ceil_log2(int p) {
  int q = 0;
  while ((1LL << q) < p) q++;
  return q;
}

int kern_model_blocks(const kern_model *m, int p, uint64_t units, uint64_t unit) {
  /* circulant.h's n* = sqrt((q - 1) beta m / alpha), in whole units */
  int q = ceil_log2(p);
  if (q <= 1 || units <= 1) return 1;
  int n = circ_blocks_for(m->alpha, m->beta, units * unit, q);
  if ((uint64_t)n > units) n = (int)units;
  return n > KERN_BLOCKS_MAX ? KERN_BLOCKS_MAX : n;   /* bounds the rounds of one kernel */
}

/* (n - 1 + q)(alpha + beta m / n) with the model's n. */
static double nblock(const kern_model *m, int p, uint64_t bytes) {
  int q = ceil_log2(p), n = kern_model_nblocks(m, 0, p, bytes, 1);
  return (n - 1 + q) * (m->alpha + m->beta * (double)bytes / n);
}

double kern_model_circulant(const kern_model *m, int kind, int p, uint64_t bytes) {
  int q = ceil_log2(p);
  switch (kind) {
  case IR_COLL_ALLGATHER: return q * m->alpha + (p - 1) * m->beta * (double)bytes;
  case IR_COLL_ALLREDUCE: return 2 * nblock(m, p, bytes);
  default: return nblock(m, p, bytes);   /* bcast, reduce, allgatherv (bytes = total) */
  }
}

double kern_model_census(const kern_model *m, int p, uint64_t bytes) {
  return ceil_log2(p) * (m->alpha + m->beta * (double)bytes);
}

double kern_model_binomial(const kern_model *m, int kind, int p, uint64_t bytes) {
  int q = ceil_log2(p);
  double b = (double)bytes;
  switch (kind) {
  case IR_COLL_ALLGATHER: return q * m->alpha + (p - 1) * m->beta * b;      /* recursive doubling */
  case IR_COLL_ALLGATHERV: return q * m->alpha + (p - 1.0) / p * m->beta * b;
  case IR_COLL_ALLREDUCE: return 2 * q * (m->alpha + m->beta * b);          /* reduce + bcast */
  default: return q * (m->alpha + m->beta * b);
  }
}

double kern_model_scatter_allgather(const kern_model *m, int kind, int p, uint64_t bytes) {
  int q = ceil_log2(p);
  double b = (double)bytes, f = (p - 1.0) / p;
  switch (kind) {
  case IR_COLL_ALLGATHER: return q * m->alpha + (p - 1) * m->beta * b;
  case IR_COLL_ALLGATHERV: return q * m->alpha + f * m->beta * b;
  default: return 2 * q * m->alpha + 2 * f * m->beta * b;   /* scatter/reduce-scatter + (all)gather */
  }
}

kern_alg kern_model_choose(const kern_model *m, int kind, int p, uint64_t bytes, char *reason, size_t len) {
  kern_model d = m ? *m : kern_model_default();
  double bin = kern_model_binomial(&d, kind, p, bytes), sag = kern_model_scatter_allgather(&d, kind, p, bytes);
  double mpi = bin < sag ? bin : sag, ours = kern_model_circulant(&d, kind, p, bytes);
  kern_alg alg = KERN_ALG_CIRCULANT;
  if (kind == IR_COLL_ALLREDUCE && kern_model_census(&d, p, bytes) < ours) {
    ours = kern_model_census(&d, p, bytes);
    alg = KERN_ALG_CENSUS;
  }
  const char *mname = bin < sag ? "binomial" : "scatter+allgather";
  const char *oname = alg == KERN_ALG_CENSUS ? "census" : "circulant";
  const char *kname = ir_coll_name(kind) ? ir_coll_name(kind) : "?";
  int win = ours < 0.9 * mpi;   /* a clear gain only: MPI's own collective is the safe default */
  if (reason && len)
    snprintf(reason, len, "%s: %s %.3g us %s MPI %s %.3g us (p=%d, %llu B)", kname, oname, ours * 1e6,
             win ? "<" : ">=0.9x", mname, mpi * 1e6, p, (unsigned long long)bytes);
  return win ? alg : KERN_ALG_MPI;
}

int kern_model_nblocks(const kern_model *m, int forced, int p, uint64_t units, uint64_t unit) {
  kern_model d = m ? *m : kern_model_default();
  int n = forced > 0 ? forced : d.blocks;
  if (n <= 0) n = kern_model_blocks(&d, p, units, unit);
  if (units < 1) return 1;
  return (uint64_t)n > units ? (int)units : n < 1 ? 1 : n;
}

void kern_block(uint64_t units, uint64_t unit, int n, int64_t b, uint64_t *off, uint64_t *len) {
  uint64_t base = units / (uint64_t)n, rem = units % (uint64_t)n, ub = (uint64_t)b;
  *off = (ub * base + (ub < rem ? ub : rem)) * unit;
  *len = (base + (ub < rem)) * unit;
}
