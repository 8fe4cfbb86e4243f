/* cdag — src/exec/kernel_model.c: the alpha-beta cost model of the kernels.
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

#include "exec/kernel_int.h"

#define KERN_ALPHA_DEFAULT 1e-6
#define KERN_BETA_DEFAULT 2e-10

static void model_env(kern_model *m) {
  const char *a = getenv("CDAG_ALPHA"), *b = getenv("CDAG_BETA");
  if (a && *a && strtod(a, NULL) > 0) m->alpha = strtod(a, NULL);
  if (b && *b && strtod(b, NULL) > 0) m->beta = strtod(b, NULL);
}

kern_model kern_model_default(void) {
  kern_model m = {KERN_ALPHA_DEFAULT, KERN_BETA_DEFAULT};
  model_env(&m);
  return m;
}

/* Mean round-trip time of `iters` ping-pongs of `bytes` between ranks 0 and 1. */
static double pingpong(MPI_Comm comm, int rank, unsigned char *buf, int bytes, int iters) {
  int tag = KERN_TAG + 7;
  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    if (rank == 0) {
      MPI_Send(buf, bytes, MPI_BYTE, 1, tag, comm);
      MPI_Recv(buf, bytes, MPI_BYTE, 1, tag, comm, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf, bytes, MPI_BYTE, 0, tag, comm, MPI_STATUS_IGNORE);
      MPI_Send(buf, bytes, MPI_BYTE, 0, tag, comm);
    }
  }
  return (MPI_Wtime() - t0) / iters;
}

int kern_model_measure(MPI_Comm comm, kern_model *m) {
  enum { SMALL = 8, LARGE = 1 << 18 };
  int rank = 0, size = 1;
  if (!m) return cdag__error(CDAG_ERR_ARG, "kern_model_measure: NULL model");
  *m = (kern_model){KERN_ALPHA_DEFAULT, KERN_BETA_DEFAULT};
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_MPI, "kern_model_measure: bad communicator");
  if (size > 1) {
    unsigned char *buf = calloc(1, LARGE);
    double v[2] = {0, 0};
    int ok = buf != NULL, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
      free(buf);
      return CDAG_NOMEM("model ping-pong buffer");
    }
    pingpong(comm, rank, buf, SMALL, 10);   /* warm-up */
    double small = pingpong(comm, rank, buf, SMALL, 200) / 2;
    pingpong(comm, rank, buf, LARGE, 2);
    double large = pingpong(comm, rank, buf, LARGE, 20) / 2;
    free(buf);
    v[0] = small;
    v[1] = (large - small) / (LARGE - SMALL);
    if (MPI_Bcast(v, 2, MPI_DOUBLE, 0, comm) != MPI_SUCCESS)
      return cdag__error(CDAG_ERR_MPI, "rank %d: kern_model_measure: MPI_Bcast failed", rank);
    if (v[0] > 0) m->alpha = v[0];
    if (v[1] > 0) m->beta = v[1];
  }
  model_env(m);
  return CDAG_OK;
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
  return n > (1 << 24) ? 1 << 24 : n;   /* bounds the rounds of one kernel */
}

/* (n - 1 + q)(alpha + beta m / n) with the model's n. */
static double nblock(const kern_model *m, int p, uint64_t bytes) {
  int q = ceil_log2(p), n = kern_model_blocks(m, p, bytes, 1);
  return (n - 1 + q) * (m->alpha + m->beta * (double)bytes / n);
}

double kern_model_circulant(const kern_model *m, kern_kind kind, int p, uint64_t bytes) {
  int q = ceil_log2(p);
  switch (kind) {
  case KERN_ALLGATHER: return q * m->alpha + (p - 1) * m->beta * (double)bytes;
  case KERN_ALLREDUCE: return 2 * nblock(m, p, bytes);
  default: return nblock(m, p, bytes);   /* bcast, reduce, allgatherv (bytes = total) */
  }
}

double kern_model_census(const kern_model *m, int p, uint64_t bytes) {
  return ceil_log2(p) * (m->alpha + m->beta * (double)bytes);
}

double kern_model_binomial(const kern_model *m, kern_kind kind, int p, uint64_t bytes) {
  int q = ceil_log2(p);
  double b = (double)bytes;
  switch (kind) {
  case KERN_ALLGATHER: return q * m->alpha + (p - 1) * m->beta * b;      /* recursive doubling */
  case KERN_ALLGATHERV: return q * m->alpha + (p - 1.0) / p * m->beta * b;
  case KERN_ALLREDUCE: return 2 * q * (m->alpha + m->beta * b);          /* reduce + bcast */
  default: return q * (m->alpha + m->beta * b);
  }
}

double kern_model_scatter_allgather(const kern_model *m, kern_kind kind, int p, uint64_t bytes) {
  int q = ceil_log2(p);
  double b = (double)bytes, f = (p - 1.0) / p;
  switch (kind) {
  case KERN_ALLGATHER: return q * m->alpha + (p - 1) * m->beta * b;
  case KERN_ALLGATHERV: return q * m->alpha + f * m->beta * b;
  default: return 2 * q * m->alpha + 2 * f * m->beta * b;   /* scatter/reduce-scatter + (all)gather */
  }
}

static const char *kind_name(kern_kind kind) {
  static const char *names[] = {"bcast", "allgather", "allgatherv", "reduce", "allreduce"};
  return (unsigned)kind < 5 ? names[kind] : "?";
}

kern_alg kern_model_choose(const kern_model *m, kern_kind kind, int p, uint64_t bytes, char *reason, size_t len) {
  kern_model d = m ? *m : kern_model_default();
  double bin = kern_model_binomial(&d, kind, p, bytes), sag = kern_model_scatter_allgather(&d, kind, p, bytes);
  double mpi = bin < sag ? bin : sag, ours = kern_model_circulant(&d, kind, p, bytes);
  kern_alg alg = KERN_ALG_CIRCULANT;
  if (kind == KERN_ALLREDUCE && kern_model_census(&d, p, bytes) < ours) {
    ours = kern_model_census(&d, p, bytes);
    alg = KERN_ALG_CENSUS;
  }
  const char *mname = bin < sag ? "binomial" : "scatter+allgather";
  const char *oname = alg == KERN_ALG_CENSUS ? "census" : "circulant";
  int win = ours < 0.9 * mpi;   /* a clear gain only: MPI's own collective is the safe default */
  if (reason && len)
    snprintf(reason, len, "%s: %s %.3g us %s MPI %s %.3g us (p=%d, %llu B)", kind_name(kind), oname, ours * 1e6,
             win ? "<" : ">=0.9x", mname, mpi * 1e6, p, (unsigned long long)bytes);
  return win ? alg : KERN_ALG_MPI;
}
