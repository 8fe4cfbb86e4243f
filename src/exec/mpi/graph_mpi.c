/* cdag — src/exec/mpi/graph_mpi.c: distributed graphs (one per MPI process).
 *
 * cdag_graph_create() records the communicator (duplicated, so cdag's own traffic never
 * matches the program's) and the calling process's rank; cdag_send/recv/reduce_local/
 * copy_local/scratch append ops of that rank with real pointers as addresses. MPI
 * datatypes and ops of cdag_reduce_local map to cdag_type / cdag_reduce_op here, the only
 * place the ir stage meets MPI's names. */
#include <stdlib.h>

#include "exec/mpi/graph_mpi.h"

/* Memory cdag allocates for a graph (the packing buffers of typed sends and receives). A
   schedule compiled from the graph may run on it (graph mode), so both hold a reference and
   the last one frees it. */
struct exec_arena {
  int refs;              /* atomic: a cached schedule may be freed from another thread */
  void **blocks;
  int64_t n, cap;
};

/* The distributed graph's own state: its communicator (a duplicate) and arena. */
typedef struct {
  MPI_Comm comm;
  exec_arena *arena;
} graph_exec;

exec_arena *exec_arena_ref(const cdag_graph *g) {
  exec_arena *a = g && g->exec ? ((graph_exec *)g->exec)->arena : NULL;
  if (a) __atomic_add_fetch(&a->refs, 1, __ATOMIC_RELAXED);
  return a;
}

exec_arena *exec_arena_share(exec_arena *a) {
  if (a) __atomic_add_fetch(&a->refs, 1, __ATOMIC_RELAXED);
  return a;
}

void exec_arena_unref(exec_arena *a) {
  if (!a || __atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL)) return;
  for (int64_t k = 0; k < a->n; k++) free(a->blocks[k]);
  free(a->blocks);
  free(a);
}

void *exec_arena_alloc(cdag_graph *g, size_t bytes) {
  graph_exec *x = g->exec;
  if (!x->arena) {
    if (!(x->arena = calloc(1, sizeof *x->arena))) return NULL;
    x->arena->refs = 1;   /* the graph's */
  }
  void *p = malloc(bytes ? bytes : 1);
  if (p && ir_grow((void **)&x->arena->blocks, x->arena->n, &x->arena->cap, 1, sizeof *x->arena->blocks, "buffers")) {
    free(p);
    return NULL;
  }
  if (p) x->arena->blocks[x->arena->n++] = p;
  return p;
}

static void exec_free(void *p) {
  graph_exec *x = p;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&x->comm);
  exec_arena_unref(x->arena);
  free(x);
}

int exec_thread_check(const char *fn) {
  int level = MPI_THREAD_SINGLE, is_main = 1;
  MPI_Query_thread(&level);
  if (level >= MPI_THREAD_SERIALIZED) return CDAG_OK;
  MPI_Is_thread_main(&is_main);
  if (is_main) return CDAG_OK;
  return cdag__error(CDAG_ERR_STATE, "%s: called from a thread other than MPI's main thread under %s (initialise "
                     "MPI with MPI_THREAD_MULTIPLE to use cdag from several threads)", fn,
                     level == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED" : "MPI_THREAD_SINGLE");
}

int cdag_graph_create(MPI_Comm comm, cdag_graph **g) {
  int initialized = 0, size, rank, rc;
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph pointer is NULL");
  *g = NULL;
  MPI_Initialized(&initialized);
  if (!initialized) return cdag__error(CDAG_ERR_STATE, "cdag_graph_create: MPI is not initialized");
  if ((rc = exec_thread_check("cdag_graph_create"))) return rc;
  if (comm == MPI_COMM_NULL) return cdag__error(CDAG_ERR_ARG, "cdag_graph_create: communicator is MPI_COMM_NULL");
  int inter = 0;
  if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS ||
      MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_MPI, "cdag_graph_create: invalid communicator");
  if (inter)
    return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_graph_create: an inter-communicator (cdag needs an "
                       "intra-communicator: merge it with MPI_Intercomm_merge)", rank);
  graph_exec *x = calloc(1, sizeof *x);
  if (!x) return CDAG_NOMEM("communicator");
  if (MPI_Comm_dup(comm, &x->comm) != MPI_SUCCESS) {
    free(x);
    return cdag__error(CDAG_ERR_MPI, "cdag_graph_create: MPI_Comm_dup failed");
  }
  if ((rc = ir_graph_new(size, rank, g))) {
    exec_free(x);
    return rc;
  }
  (*g)->exec = x;
  (*g)->exec_free = exec_free;
  return CDAG_OK;
}

MPI_Comm exec_graph_comm(const cdag_graph *g) { return g->exec ? ((graph_exec *)g->exec)->comm : MPI_COMM_NULL; }

int exec_check_distributed(const cdag_graph *g, const char *fn) {
  if (!g) return cdag__error(CDAG_ERR_ARG, "%s: graph is NULL", fn);
  if (g->myrank < 0) return cdag__error(CDAG_ERR_ARG, "%s: graph is global (use cdag_rank_*)", fn);
  return CDAG_OK;
}

/* Hands the new op's id to the caller (ids are read after the add, never before). */
int exec_to_op(int rc, const int32_t *id, cdag_op *op) {
  if (rc == CDAG_OK && op) *op = *id;
  return rc;
}

/* MPI_PROC_NULL as a peer, as MPI has it: no operation (code built around MPI_Cart_shift
   at the edge of a non-periodic grid works unchanged); cdag_depend ignores CDAG_OP_NULL. */
int exec_proc_null(cdag_op *op) {
  if (op) *op = CDAG_OP_NULL;
  return CDAG_OK;
}

int cdag_send(cdag_graph *g, const void *buf, size_t bytes, int dest, int tag, cdag_op *op) {
  int32_t id = -1;
  int rc = exec_check_distributed(g, "cdag_send");
  if (rc) return rc;
  if (dest == MPI_PROC_NULL) return exec_proc_null(op);
  if (!buf && bytes) return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_send of %zu bytes from NULL", g->myrank, bytes);
  int added = ir_add_send(g, g->myrank, (uint64_t)(uintptr_t)buf, bytes, dest, tag, &id);
  return exec_to_op(added, &id, op);
}

int cdag_recv(cdag_graph *g, void *buf, size_t bytes, int source, int tag, cdag_op *op) {
  int32_t id = -1;
  int rc = exec_check_distributed(g, "cdag_recv");
  if (rc) return rc;
  if (source == MPI_PROC_NULL) return exec_proc_null(op);
  if (!buf && bytes) return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_recv of %zu bytes into NULL", g->myrank, bytes);
  if (source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: cdag_recv with a wildcard source or tag", g->myrank);
  int added = ir_add_recv(g, g->myrank, (uint64_t)(uintptr_t)buf, bytes, source, tag, &id);
  return exec_to_op(added, &id, op);
}

/* Fortran's predefined types (module cdag passes them): integers and logicals by their size
   (a LOGICAL is an integer: gfortran's .true. is 1, what cdag's land/lor give), reals by
   theirs. */
static int fortran_type(MPI_Datatype t) {
  static const int ints[9] = {-1, CDAG_INT8, CDAG_INT16, -1, CDAG_INT32, -1, -1, -1, CDAG_INT64};
  const MPI_Datatype integers[] = {MPI_INTEGER, MPI_LOGICAL, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8};
  const MPI_Datatype reals[] = {MPI_REAL, MPI_DOUBLE_PRECISION, MPI_REAL4, MPI_REAL8};
  int size = 0;
  if (t == MPI_DATATYPE_NULL || MPI_Type_size(t, &size) != MPI_SUCCESS) return -1;
  for (size_t i = 0; i < sizeof integers / sizeof *integers; i++)
    if (t == integers[i] && size > 0 && size <= 8) return ints[size];
  for (size_t i = 0; i < sizeof reals / sizeof *reals; i++)
    if (t == reals[i]) return size == 4 ? CDAG_FLOAT : size == 8 ? CDAG_DOUBLE : -1;
  return -1;
}

int exec_type_from_mpi(MPI_Datatype t) {
  static const struct { MPI_Datatype mpi; int cdag; } map[] = {
    {MPI_INT8_T, CDAG_INT8},     {MPI_INT16_T, CDAG_INT16},   {MPI_INT32_T, CDAG_INT32},
    {MPI_INT64_T, CDAG_INT64},   {MPI_UINT8_T, CDAG_UINT8},   {MPI_UINT16_T, CDAG_UINT16},
    {MPI_UINT32_T, CDAG_UINT32}, {MPI_UINT64_T, CDAG_UINT64}, {MPI_FLOAT, CDAG_FLOAT},
    {MPI_DOUBLE, CDAG_DOUBLE},   {MPI_CHAR, CDAG_INT8},       {MPI_SIGNED_CHAR, CDAG_INT8},
    {MPI_UNSIGNED_CHAR, CDAG_UINT8}, {MPI_BYTE, CDAG_UINT8},  {MPI_SHORT, CDAG_INT16},
    {MPI_UNSIGNED_SHORT, CDAG_UINT16}, {MPI_INT, CDAG_INT32}, {MPI_UNSIGNED, CDAG_UINT32},
    {MPI_LONG, CDAG_INT64},      {MPI_UNSIGNED_LONG, CDAG_UINT64}, {MPI_LONG_LONG, CDAG_INT64},
    {MPI_UNSIGNED_LONG_LONG, CDAG_UINT64},
  };
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (map[i].mpi == t) return map[i].cdag;
  return fortran_type(t);
}

int exec_rop_from_mpi(MPI_Op o) {
  static const struct { MPI_Op mpi; int cdag; } map[] = {
    {MPI_SUM, CDAG_SUM}, {MPI_PROD, CDAG_PROD}, {MPI_MIN, CDAG_MIN},   {MPI_MAX, CDAG_MAX},
    {MPI_BAND, CDAG_BAND}, {MPI_BOR, CDAG_BOR}, {MPI_BXOR, CDAG_BXOR}, {MPI_LAND, CDAG_LAND},
    {MPI_LOR, CDAG_LOR},   {MPI_LXOR, CDAG_LXOR},
  };
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (map[i].mpi == o) return map[i].cdag;
  return -1;
}

int cdag_reduce_local(cdag_graph *g, const void *in, void *inout, size_t count, MPI_Datatype type,
                      MPI_Op mpi_op, cdag_op *op) {
  int32_t id = -1;
  int rc = exec_check_distributed(g, "cdag_reduce_local");
  if (rc) return rc;
  int t = exec_type_from_mpi(type), r = exec_rop_from_mpi(mpi_op);
  if (t < 0) return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: cdag_reduce_local: datatype is not a predefined integer or floating type", g->myrank);
  if (r < 0) return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: cdag_reduce_local: op is not a predefined MPI op", g->myrank);
  if ((!in || !inout) && count)
    return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_reduce_local with a NULL buffer", g->myrank);
  int added = ir_add_reduce(g, g->myrank, (uint64_t)(uintptr_t)in, (uint64_t)(uintptr_t)inout, count, t, r, &id);
  return exec_to_op(added, &id, op);
}

int cdag_copy_local(cdag_graph *g, const void *src, void *dst, size_t bytes, cdag_op *op) {
  int32_t id = -1;
  int rc = exec_check_distributed(g, "cdag_copy_local");
  if (rc) return rc;
  if ((!src || !dst) && bytes) return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_copy_local with a NULL buffer", g->myrank);
  int added = ir_add_copy(g, g->myrank, (uint64_t)(uintptr_t)src, (uint64_t)(uintptr_t)dst, bytes, &id);
  return exec_to_op(added, &id, op);
}

int cdag_scratch(cdag_graph *g, void *buf, size_t bytes) {
  int rc = exec_check_distributed(g, "cdag_scratch");
  if (rc) return rc;
  if (!buf && bytes) return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_scratch of NULL", g->myrank);
  return ir_add_scratch(g, g->myrank, (uint64_t)(uintptr_t)buf, bytes);
}
