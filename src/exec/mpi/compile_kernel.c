/* cdag — src/exec/mpi/compile_kernel.c: plan collectives that run as cdag's kernels.
 *
 * The compiling rank decides per collective (kernel_choice.c: kern_choose_plan, with the
 * policy and model of pipeline_tuning) and writes the choice into each member's part
 * (schedule.c); here each member turns its part of such a collective into a persistent
 * kernel (kernel.h) over the schedule's communicator: plan members are kernel members,
 * slots are kern_iovs. A recv slot the plan leaves empty (the member does not keep those
 * bytes, e.g. its own block of an allgather) gets a scratch buffer of the size the kernel
 * delivers there. The model comes with the part (the compiling rank's), so every member
 * splits blocks alike. With measure = 1 a model is measured once per process, on every
 * rank of the compiling communicator (kern_model_measure broadcasts its result). */
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/schedule.h"

static kern_model measured;
static int have_measured;
/* The machine file, read once per process (keyed by CDAG_MACHINE's value, so one that
   changes between compiles is read again): a cache hit must not open a file, nor read the
   variables of the default path. */
static machine_params file_machine;
static char file_key[4096];
static int have_file;

int exec_kernel_measure(MPI_Comm comm) {
  kern_model m;
  int rc = kern_model_measure(comm, &m);
  if (rc) return rc;
  exec_lock();
  measured = m;
  have_measured = 1;
  exec_unlock();
  return CDAG_OK;
}

int exec_kernel_measured(kern_model *m) {
  exec_lock();
  int have = have_measured;
  if (have) *m = measured;
  exec_unlock();
  return have;
}

int exec_machine(const cdag_settings *s, machine_params *m) {
  kern_model km;
  if (exec_kernel_measured(&km)) {
    *m = machine_measured(&km);
    return CDAG_OK;
  }
  const char *key = s->machine ? s->machine : "";   /* "": the default path */
  if (strlen(key) >= sizeof file_key)
    return cdag__error(CDAG_ERR_ARG, "CDAG_MACHINE: longer than %zu bytes", sizeof file_key - 1);
  exec_lock();
  int have = have_file && strcmp(key, file_key) == 0;
  if (have) *m = file_machine;
  exec_unlock();
  if (have) return CDAG_OK;
  int rc = machine_find(s, m);
  if (rc) return rc;   /* a bad file is not kept: every compile reads it again and fails */
  exec_lock();
  file_machine = *m;
  snprintf(file_key, sizeof file_key, "%s", key);
  have_file = 1;
  exec_unlock();
  return CDAG_OK;
}

static kern_iov as_kiov(const sched_iov *v) { return (kern_iov){v->addr, v->len, v->n}; }

/* recv slot v, or a fresh scratch of bytes when v is empty; pieces into a/l[*n..]. */
static int append_slot(cdag_schedule *s, const sched_iov *v, uint64_t bytes, uint64_t *a, uint64_t *l, int *n) {
  if (v->n) {
    memcpy(a + *n, v->addr, (size_t)v->n * sizeof *a);
    memcpy(l + *n, v->len, (size_t)v->n * sizeof *l);
    *n += v->n;
    return CDAG_OK;
  }
  if (!bytes) return CDAG_OK;
  void *tmp = sched_keep_alloc(s, bytes);
  if (!tmp) return CDAG_NOMEM("kernel scratch");
  a[*n] = (uint64_t)(uintptr_t)tmp;
  l[(*n)++] = bytes;
  return CDAG_OK;
}

/* The whole recv side: slot 0 (bcast, reductions) or slots 0..n-1 in member order. */
static int recv_iov(cdag_schedule *s, const sched_kcoll *k, int nslots, uint64_t *a, uint64_t *l, kern_iov *out) {
  int n = 0, rc = CDAG_OK;
  for (int j = 0; j < nslots && !rc; j++) {
    uint64_t bytes = k->counts[nslots == 1 ? (k->rootm >= 0 ? k->rootm : k->me) : j];
    rc = append_slot(s, &k->recv[j], bytes, a, l, &n);
  }
  *out = (kern_iov){a, l, n};
  return rc;
}

static int all_equal(const uint64_t *v, int n) {
  for (int j = 1; j < n; j++)
    if (v[j] != v[0]) return 0;
  return 1;
}

static int build(cdag_schedule *s, const sched_kcoll *k, const kern_group *g, uint64_t *a, uint64_t *l,
                 kern_op **op) {
  kern_iov send = as_kiov(&k->send), recv, none = {0};
  const ir_coll_info *in = ir_coll_get(k->kind);   /* the slots of the kind's columns */
  int many = in->recv == IR_SLOTS_MEMBER, rc;
  int root_recv = !in->recv_root || k->me == k->rootm;
  if (k->kind == DET_BCAST && k->me == k->rootm) return kern_bcast_init(g, k->rootm, send, op);
  if (!root_recv) recv = none;
  else if ((rc = recv_iov(s, k, many ? k->n : 1, a, l, &recv))) return rc;
  if (k->inplace) send = none;
  uint64_t tsize = (uint64_t)ir_type_size(k->type), count = tsize ? k->counts[k->me] / tsize : 0;
  switch (k->kind) {
  case DET_BCAST: return kern_bcast_init(g, k->rootm, recv, op);
  case DET_ALLGATHER:
  case DET_ALLGATHERV:
    if (k->kind == DET_ALLGATHER && all_equal(k->counts, k->n))
      return kern_allgather_init(g, send, recv, op);
    return kern_allgatherv_init(g, send, recv, k->counts, op);
  case DET_REDUCE:
    return kern_reduce_init(g, k->rootm, send, recv, count, (cdag_type)k->type, (cdag_reduce_op)k->op, op);
  case DET_ALLREDUCE:
    return kern_allreduce_init(g, send, recv, count, (cdag_type)k->type, (cdag_reduce_op)k->op, op);
  default:
    return cdag__error(CDAG_ERR_FORMAT, "rank %d: schedule part: no kernel for %s", s->rank,
                       det_kind_name((det_kind)k->kind));
  }
}

int sched_kernel_build(cdag_schedule *s, const sched_kcoll *k, kern_op **op) {
  kern_group g = {s->comm, (const int *)k->members, k->n, k->model, 0, k->kind == DET_ALLREDUCE ? (kern_alg)k->alg : KERN_ALG_AUTO};
  int pieces = 1;
  for (int j = 0; j < (ir_coll_get(k->kind)->recv == IR_SLOTS_MEMBER ? k->n : 1); j++)
    pieces += k->recv[j].n + 1;
  uint64_t *a = malloc((size_t)pieces * sizeof *a), *l = malloc((size_t)pieces * sizeof *l);
  int rc = a && l ? build(s, k, &g, a, l, op) : CDAG_NOMEM("kernel buffers");
  free(a);
  free(l);
  return rc;
}
