/* cdag — src/exec/mpi/graph_mpi.c: distributed graphs (one per MPI process).
 *
 * cdag_graph_create() records the communicator (duplicated, so cdag's own traffic never
 * matches the program's) and the calling process's rank: under MPI_THREAD_MULTIPLE each graph
 * has a duplicate of its own (threads may compile graphs of one communicator at once); below
 * it, where cdag's calls never overlap, the graphs of one communicator share one duplicate,
 * made by the first graph and kept as an attribute of the program's communicator, so a graph
 * rebuilt every iteration costs no MPI_Comm_dup (a collective); cdag_send/recv/reduce_local/
 * copy_local/scratch append ops of that rank with real pointers as addresses. MPI
 * datatypes and ops of cdag_reduce_local map to cdag_type / cdag_reduce_op here, the only
 * place the ir stage meets MPI's names. */
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/graph_mpi.h"
#include "exec/mpi/schedule.h"   /* exec_lock */
#include "workload/redistribute.h"

/* Memory cdag allocates for a graph (the packing buffers of typed sends and receives). A
   schedule compiled from the graph may run on it (graph mode), so both hold a reference and
   the last one frees it. */
struct exec_arena {
  int refs;              /* atomic: a cached schedule may be freed from another thread */
  struct { void *p; size_t len; } *blocks;
  int64_t n, cap;
};

/* A computation's function (cdag_compute): the graph keeps it, a schedule calls it. */
typedef struct {
  int32_t op;
  cdag_compute_fn fn;
  void *arg;
} graph_fn;

/* cdag's duplicate of a program's communicator shared by its graphs (below
   MPI_THREAD_MULTIPLE): held by the attribute on the program's communicator and by each
   graph; the last reference frees it. */
typedef struct {
  int refs;              /* atomic: graphs may be freed after their communicator */
  MPI_Comm comm;
  ir_op_arrays spare;    /* the last freed graph's op arrays, for the next one (under exec_lock) */
} comm_share;

/* The distributed graph's own state: its communicator (a duplicate), arena and the
   functions of its computations (they never travel: the compiling rank sees the op only). */
typedef struct {
  MPI_Comm comm;
  comm_share *share;     /* comm's holder when shared; NULL: comm is the graph's own */
  exec_arena *arena;
  int busy;              /* atomic: a thread is in one of cdag's collective calls on comm */
  graph_fn *fns;         /* by op, ascending (ops are added in order) */
  int64_t nfns, cap_fns;
  int tag_ub;            /* the communicator's MPI_TAG_UB: the program's tags stay within it */
} graph_exec;

exec_arena *exec_arena_share(exec_arena *a) {
  if (a) __atomic_add_fetch(&a->refs, 1, __ATOMIC_RELAXED);
  return a;
}

exec_arena *exec_arena_ref(const cdag_graph *g) {
  return exec_arena_share(g && g->host ? ((graph_exec *)g->host)->arena : NULL);
}

void exec_arena_unref(exec_arena *a) {
  if (!a || __atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL)) return;
  for (int64_t k = 0; k < a->n; k++) free(a->blocks[k].p);
  free(a->blocks);
  free(a);
}

void *exec_arena_alloc(cdag_graph *g, size_t bytes) {
  graph_exec *x = g->host;
  if (!x->arena) {
    if (!(x->arena = calloc(1, sizeof *x->arena))) return NULL;
    x->arena->refs = 1;   /* the graph's */
  }
  exec_arena *a = x->arena;
  void *p = malloc(bytes ? bytes : 1);
  if (p && base_grow((void **)&a->blocks, a->n, &a->cap, 1, sizeof *a->blocks, "buffers")) {
    free(p);
    return NULL;
  }
  if (p) a->blocks[a->n].p = p, a->blocks[a->n++].len = bytes;
  return p;
}

/* ---- the fingerprint of a graph with packing buffers ---- */

/* A rebuilt graph gets packing buffers of its own, at other addresses: its fingerprint
   would differ at every rebuild, and a typed exchange rebuilt every iteration compiled
   every time (240 us an iteration against 9 us sent as bytes). Those buffers are cdag's
   scratch, which only a run as written touches and the schedule compiled from the graph
   holds (compile.c), so the fingerprint takes each as where it stands among the graph's
   buffers, the n-th byte of them at ARENA_CANON + n: an address no process has (not
   canonical on x86-64 or AArch64), so it cannot meet a program's own. */
#define ARENA_CANON ((uint64_t)0xCDA6 << 48)

typedef struct { uint64_t lo, hi, canon; } arena_span;

static int span_cmp(const void *x, const void *y) {
  uint64_t a = ((const arena_span *)x)->lo, b = ((const arena_span *)y)->lo;
  return (a > b) - (a < b);
}

/* addr as the fingerprint takes it: in a buffer of spans[0..n) (by start), its canonical
   address; else itself. */
static uint64_t canon_of(const arena_span *sp, int64_t n, uint64_t addr) {
  int64_t lo = 0, hi = n;   /* the first span starting above addr */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (sp[mid].lo <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo && addr < sp[lo - 1].hi ? sp[lo - 1].canon + (addr - sp[lo - 1].lo) : addr;
}

/* Rewrites g's addresses into its buffers (spans[0..n)) to their canonical ones. */
static void canon_rewrite(cdag_graph *g, const arena_span *sp, int64_t n) {
  for (int64_t i = 0; i < g->nops; i++) {
    g->addr[i] = canon_of(sp, n, g->addr[i]);
    if (g->addr2 && (g->kind[i] == IR_COPY || g->kind[i] == IR_REDUCE || g->kind[i] == IR_CALC))
      g->addr2[i] = canon_of(sp, n, g->addr2[i]);
  }
  for (int64_t k = 0; k < g->nscratch; k++) g->scr_addr[k] = canon_of(sp, n, g->scr_addr[k]);
}

int exec_encode_canonical(cdag_graph *g, wire_buf *w) {
  graph_exec *x = g->host;
  exec_arena *a = x ? x->arena : NULL;
  if (!a || !a->n) return wire_encode_rank(g, w);
  size_t nops = (size_t)g->nops, nscr = (size_t)g->nscratch;
  arena_span *sp = malloc((size_t)a->n * sizeof *sp);
  uint64_t *keep = malloc((2 * nops + nscr + 1) * sizeof *keep);
  if (!sp || !keep) {
    free(sp);
    free(keep);
    return CDAG_NOMEM("fingerprint");
  }
  uint64_t at = ARENA_CANON;
  for (int64_t k = 0; k < a->n; k++) {
    uint64_t lo = (uint64_t)(uintptr_t)a->blocks[k].p;
    sp[k] = (arena_span){lo, lo + a->blocks[k].len, at};
    at += a->blocks[k].len + 1;   /* + 1: two buffers never read as one */
  }
  qsort(sp, (size_t)a->n, sizeof *sp, span_cmp);
  memcpy(keep, g->addr, nops * sizeof *keep);
  if (g->addr2) memcpy(keep + nops, g->addr2, nops * sizeof *keep);
  if (nscr) memcpy(keep + 2 * nops, g->scr_addr, nscr * sizeof *keep);
  canon_rewrite(g, sp, a->n);
  int rc = wire_encode_rank(g, w);
  memcpy(g->addr, keep, nops * sizeof *keep);
  if (g->addr2) memcpy(g->addr2, keep + nops, nops * sizeof *keep);
  if (nscr) memcpy(g->scr_addr, keep + 2 * nops, nscr * sizeof *keep);
  free(sp);
  free(keep);
  return rc;
}

int exec_has_arena(const cdag_graph *g) {
  const graph_exec *x = g->host;
  return x && x->arena && x->arena->n;
}

static void share_unref(comm_share *c) {
  if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL)) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&c->comm);
  ir_op_arrays_free(&c->spare);
  free(c);
}

/* The program freed its communicator (or MPI is finalizing): the attribute lets go. */
static int share_delete(MPI_Comm comm, int keyval, void *attr, void *extra) {
  share_unref(attr);
  return MPI_SUCCESS;
}

/* The shared duplicate of comm, one more reference, made (collectively: every rank's first
   graph on comm makes it) when comm has none yet. */
static int share_take(MPI_Comm comm, comm_share **out) {
  static int keyval = MPI_KEYVAL_INVALID;   /* process-wide, set once under exec_lock */
  int found = 0;
  comm_share *c = NULL;
  int kv = __atomic_load_n(&keyval, __ATOMIC_ACQUIRE);   /* set: no lock (every rebuilt graph comes here) */
  if (kv == MPI_KEYVAL_INVALID) {
    exec_lock();
    if (keyval == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, share_delete, &kv, NULL) == MPI_SUCCESS)
      __atomic_store_n(&keyval, kv, __ATOMIC_RELEASE);
    kv = keyval;
    exec_unlock();
    if (kv == MPI_KEYVAL_INVALID) return cdag__error(CDAG_ERR_MPI, "cdag_graph_create: MPI_Comm_create_keyval failed");
  }
  MPI_Comm_get_attr(comm, kv, &c, &found);
  if (!found) {
    if (!(c = calloc(1, sizeof *c))) return CDAG_NOMEM("communicator");
    c->refs = 1;   /* the attribute's */
    if (MPI_Comm_dup(comm, &c->comm) != MPI_SUCCESS) {
      free(c);
      return cdag__error(CDAG_ERR_MPI, "cdag_graph_create: MPI_Comm_dup failed");
    }
    if (MPI_Comm_set_attr(comm, kv, c) != MPI_SUCCESS) {
      share_unref(c);
      return cdag__error(CDAG_ERR_MPI, "cdag_graph_create: MPI_Comm_set_attr failed");
    }
  }
  __atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
  *out = c;
  return CDAG_OK;
}

static void exec_free(void *p, cdag_graph *g) {
  graph_exec *x = p;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (x->share && g) {   /* the next graph of the communicator takes its arrays */
    exec_lock();
    ir_op_arrays_keep(g, &x->share->spare);
    exec_unlock();
  }
  if (x->share) share_unref(x->share);
  else if (!finalized) MPI_Comm_free(&x->comm);
  exec_arena_unref(x->arena);
  free(x->fns);
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

/* The duplicate is the graph's alone, so a flag on it marks its communicator busy; taken
   without waiting: the second thread fails before any MPI call instead of entering a
   collective MPI forbids (or deadlocking in it). */
int exec_comm_take(cdag_graph *g, const char *fn) {
  graph_exec *x = g->host;
  if (!__atomic_exchange_n(&x->busy, 1, __ATOMIC_ACQUIRE)) return CDAG_OK;
  return cdag__error(CDAG_ERR_STATE, "rank %d: %s: another thread is in cdag_compile or cdag_graph_dump on this "
                     "graph's communicator (MPI forbids two threads in collectives on one communicator at once: "
                     "call it from one thread at a time)", g->myrank, fn);
}

void exec_comm_release(cdag_graph *g) { __atomic_store_n(&((graph_exec *)g->host)->busy, 0, __ATOMIC_RELEASE); }

int cdag_graph_create(MPI_Comm comm, cdag_graph **g) {
  int initialized = 0, size, rank, rc;
  if (!g) return cdag__error(CDAG_ERR_ARG, "cdag_graph_create: graph pointer is NULL");
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
  /* malloc, not calloc: glibc's calloc bypasses the thread cache, so a graph rebuilt every
     iteration would free to the arena each time, and a free beside the top of the heap with
     small chunks binned consolidates the heap (13% of a cache hit's time). */
  graph_exec *x = malloc(sizeof *x);
  if (!x) return CDAG_NOMEM("communicator");
  *x = (graph_exec){0};
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_MULTIPLE) {
    if ((rc = share_take(comm, &x->share))) {
      free(x);
      return rc;
    }
    x->comm = x->share->comm;
  } else if (MPI_Comm_dup(comm, &x->comm) != MPI_SUCCESS) {
    free(x);
    return cdag__error(CDAG_ERR_MPI, "cdag_graph_create: MPI_Comm_dup failed");
  }
  if ((rc = ir_graph_new(size, rank, g))) {
    exec_free(x, NULL);
    return rc;
  }
  if (x->share) {
    exec_lock();
    ir_op_arrays_reuse(*g, &x->share->spare);
    exec_unlock();
  }
  int *ub = NULL, flag = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag);
  x->tag_ub = flag && ub ? *ub : INT32_MAX;
  /* native collectives' scratch outlives the graph with its schedules: the arena's */
  static const ir_host_ops mpi_host = {exec_free, exec_arena_alloc};
  (*g)->host = x;
  (*g)->host_ops = &mpi_host;
  return CDAG_OK;
}

MPI_Comm exec_graph_comm(const cdag_graph *g) { return g->host ? ((graph_exec *)g->host)->comm : MPI_COMM_NULL; }
int exec_graph_tag_ub(const cdag_graph *g) { return ((const graph_exec *)g->host)->tag_ub; }

int exec_user_tag(const cdag_graph *g, const char *fn, int peer, int tag) {
  int ub = ((const graph_exec *)g->host)->tag_ub;
  if (tag > ub)   /* cdag's own messages would not mind, but the program as MPI code would be erroneous */
    return cdag__error(CDAG_ERR_ARG, "rank %d: %s %s rank %d: tag %d is above the communicator's MPI_TAG_UB (%d)",
                       g->myrank, fn, strstr(fn, "send") ? "to" : "from", peer, tag, ub);
  return ir_user_tag(fn, g->myrank, peer, tag);
}

int exec_check_distributed(const cdag_graph *g, const char *fn) {
  if (!g) return cdag__error(CDAG_ERR_ARG, "%s: graph is NULL", fn);
  if (g->myrank < 0) return cdag__error(CDAG_ERR_ARG, "%s: graph is global (use cdag_rank_*)", fn);
  return CDAG_OK;
}

/* Hands the new op's id to the caller (ids are read after the add, never before); an error
   of the layer below (which serves global graphs too) gets this rank and the call's name. */
int exec_to_op(const cdag_graph *g, const char *fn, int rc, const int32_t *id, cdag_op *op) {
  if (rc == CDAG_OK && op) *op = *id;
  return rc == CDAG_OK ? rc : exec_named(g, fn, rc);
}

int exec_named(const cdag_graph *g, const char *fn, int rc) { return cdag__error_named(rc, g->myrank, fn); }

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
  if ((rc = exec_user_tag(g, "cdag_send", dest, tag))) return rc;
  if (!buf && bytes) return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_send of %zu bytes from NULL", g->myrank, bytes);
  int added = ir_add_send(g, g->myrank, (uint64_t)(uintptr_t)buf, bytes, dest, tag, &id);
  return exec_to_op(g, "cdag_send", added, &id, op);
}

int cdag_recv(cdag_graph *g, void *buf, size_t bytes, int source, int tag, cdag_op *op) {
  int32_t id = -1;
  int rc = exec_check_distributed(g, "cdag_recv");
  if (rc) return rc;
  if (source == MPI_PROC_NULL) return exec_proc_null(op);
  if ((rc = exec_user_tag(g, "cdag_recv", source, tag))) return rc;
  if (!buf && bytes) return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_recv of %zu bytes into NULL", g->myrank, bytes);
  if (source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: cdag_recv with a wildcard source or tag", g->myrank);
  int added = ir_add_recv(g, g->myrank, (uint64_t)(uintptr_t)buf, bytes, source, tag, &id);
  return exec_to_op(g, "cdag_recv", added, &id, op);
}

int cdag_reduce_local(cdag_graph *g, const void *in, void *inout, size_t count, MPI_Datatype type,
                      MPI_Op mpi_op, cdag_op *op) {
  int32_t id = -1;
  int rc = exec_check_distributed(g, "cdag_reduce_local");
  if (rc) return rc;
  int t, r;
  if ((rc = exec_reduction_from_mpi(type, mpi_op, g->myrank, &t, &r))) return rc;
  if ((!in || !inout) && count)
    return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_reduce_local with a NULL buffer", g->myrank);
  int added = ir_add_reduce(g, g->myrank, (uint64_t)(uintptr_t)in, (uint64_t)(uintptr_t)inout, count, t, r, &id);
  return exec_to_op(g, "cdag_reduce_local", added, &id, op);
}

int cdag_copy_local(cdag_graph *g, const void *src, void *dst, size_t bytes, cdag_op *op) {
  int32_t id = -1;
  int rc = exec_check_distributed(g, "cdag_copy_local");
  if (rc) return rc;
  if ((!src || !dst) && bytes) return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_copy_local with a NULL buffer", g->myrank);
  int added = ir_add_copy(g, g->myrank, (uint64_t)(uintptr_t)src, (uint64_t)(uintptr_t)dst, bytes, &id);
  return exec_to_op(g, "cdag_copy_local", added, &id, op);
}

int cdag_compute(cdag_graph *g, const void *read, size_t read_bytes, void *write, size_t write_bytes,
                 uint64_t cost_ns, cdag_compute_fn fn, void *arg, cdag_op *op) {
  int32_t id = -1;
  int rc = exec_check_distributed(g, "cdag_compute");
  if (rc) return rc;
  int all = read_bytes == CDAG_READS_ALL;
  if (!fn) return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_compute: fn is NULL", g->myrank);
  if (all && read)
    return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_compute reads all (CDAG_READS_ALL) from a buffer: pass NULL",
                       g->myrank);
  if (!all && !read && read_bytes)
    return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_compute reads %zu bytes from NULL", g->myrank, read_bytes);
  if (!write && write_bytes)
    return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_compute writes %zu bytes to NULL", g->myrank, write_bytes);
  if (!read_bytes && !write_bytes)
    return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_compute reads and writes nothing (a computation is placed by "
                       "the memory it touches)", g->myrank);
  graph_exec *x = g->host;
  if ((rc = base_grow((void **)&x->fns, x->nfns, &x->cap_fns, 1, sizeof *x->fns, "computations"))) return rc;
  rc = ir_add_compute(g, g->myrank, cost_ns, (uint64_t)(uintptr_t)read, all ? IR_READS_ALL : read_bytes,
                      (uint64_t)(uintptr_t)write, write_bytes, &id);
  if (!rc) x->fns[x->nfns++] = (graph_fn){id, fn, arg};
  return exec_to_op(g, "cdag_compute", rc, &id, op);
}

int exec_compute_fn(const cdag_graph *g, int64_t op, cdag_compute_fn *fn, void **arg) {
  const graph_exec *x = g && g->host ? g->host : NULL;
  int64_t lo = 0, hi = x ? x->nfns : 0;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (x->fns[mid].op < op) lo = mid + 1;
    else hi = mid;
  }
  if (!x || lo == x->nfns || x->fns[lo].op != op) return 0;
  *fn = x->fns[lo].fn;
  *arg = x->fns[lo].arg;
  return 1;
}

int cdag_segment(cdag_graph *g, void *base, size_t bytes, int *seg) {
  int rc = exec_check_distributed(g, "cdag_segment");
  if (rc) return rc;
  if (!base && bytes) return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_segment of NULL", g->myrank);
  return exec_named(g, "cdag_segment", ir_add_segment(g, g->myrank, (uint64_t)(uintptr_t)base, bytes, seg));
}

/* cdag_get and cdag_put: the target's address is resolved at compile, with its segments. */
static int add_onesided(cdag_graph *g, int get, void *buf, size_t bytes, int target, int seg, size_t offset,
                        cdag_op *op) {
  int32_t id = -1;
  int rc = exec_check_distributed(g, get ? "cdag_get" : "cdag_put");
  if (rc) return rc;
  if (!buf && bytes)
    return cdag__error(CDAG_ERR_ARG, "rank %d: %s with a NULL buffer", g->myrank, get ? "cdag_get" : "cdag_put");
  if (seg < 0) return cdag__error(CDAG_ERR_ARG, "rank %d: segment %d (segments are numbered from 0)", g->myrank, seg);
  int added = get ? ir_add_get(g, g->myrank, (uint64_t)(uintptr_t)buf, bytes, target, seg, offset, &id)
                  : ir_add_put(g, g->myrank, (uint64_t)(uintptr_t)buf, bytes, target, seg, offset, &id);
  return exec_to_op(g, get ? "cdag_get" : "cdag_put", added, &id, op);
}

int cdag_get(cdag_graph *g, void *dst, size_t bytes, int target, int seg, size_t offset, cdag_op *op) {
  return add_onesided(g, 1, dst, bytes, target, seg, offset, op);
}

int cdag_put(cdag_graph *g, const void *src, size_t bytes, int target, int seg, size_t offset, cdag_op *op) {
  return add_onesided(g, 0, (void *)(uintptr_t)src, bytes, target, seg, offset, op);
}

int cdag_fence(cdag_graph *g) {
  int rc = exec_check_distributed(g, "cdag_fence");
  return rc ? rc : exec_named(g, "cdag_fence", ir_add_fence(g, g->myrank, NULL));
}

int cdag_scratch(cdag_graph *g, void *buf, size_t bytes) {
  int rc = exec_check_distributed(g, "cdag_scratch");
  if (rc) return rc;
  if (!buf && bytes) return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_scratch of NULL", g->myrank);
  return exec_named(g, "cdag_scratch", ir_add_scratch(g, g->myrank, (uint64_t)(uintptr_t)buf, bytes));
}

/* The operations come from src/ir (redistribute.c, shared with global graphs), which also
   checks that a process holding elements of a grid has its array. */
int cdag_redistribute(cdag_graph *g, const cdag_layout *from, const void *src, const cdag_layout *to, void *dst,
                      size_t elem_bytes) {
  int rc = exec_check_distributed(g, "cdag_redistribute");
  return rc ? rc : ir_add_redistribute(g, "cdag_redistribute", g->myrank, from, (uint64_t)(uintptr_t)src, to,
                                       (uint64_t)(uintptr_t)dst, elem_bytes);
}
