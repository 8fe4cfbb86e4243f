/* cdag — src/exec/mpi/ops.c: cdag's element types and reduction ops in MPI's terms.
 *
 * Inbound (cdag_reduce_local): MPI's predefined datatypes and ops become cdag_type and
 * cdag_reduce_op by mpi_glue's tables (the recorder reads the same). A user's op (MPI_Op_create) takes a slot in the process's table of user
 * ops; the reduction is encoded with ir.h's user type and op and computed by
 * MPI_Reduce_local (exec_user_reduce; ir_reduce_apply knows no user op). A slot means nothing to another
 * process (ranks meet different ops first, and a rank that never names an op cannot pass
 * it to MPI), so graphs with user ops run as written (compile.c).
 * Outbound (a plan's collective run by MPI): MPI's own op where MPI computes the bytes cdag
 * computes (integer sums, products, bit and logical ops, signed min/max); otherwise cdag's
 * own ops, MPI_Op_create over ir_reduce_apply, so every order of evaluation gives the bytes
 * of the graph as written: unsigned min/max (MPICH 4.0.2 compares them as signed),
 * floating-point min/max (NaN and signed zeros), and the pair and complex types, which
 * travel as contiguous byte types of the element's size (padding included: the chosen
 * element is copied whole, as ir_reduce_apply does). User ops run with the user's op and
 * datatype. Process-wide state (own ops and types, the user table) is created under
 * exec_lock, written once per entry, and freed at MPI_Finalize. */
#include <limits.h>
#include <stdlib.h>

#include "exec/mpi/schedule.h"
#include "mpi_glue/mpi_glue.h"

/* ---- inbound ---- */

/* The table of user ops: one slot per (op, datatype) pair, in order of first use. */
typedef struct {
  MPI_Op op;
  MPI_Datatype user_type;  /* the handle the program passed (for look-up) */
  MPI_Datatype type;       /* cdag's duplicate (outlives a program's MPI_Type_free) */
  int size;
} user_op;
static user_op users[IR_USER_MAX_OPS];
static int nusers;

void exec_user_reduce(int rop, const void *in, void *inout, uint64_t count) {
  const user_op *u = &users[rop - IR_ROP_USER];
  for (uint64_t done = 0; done < count;) {
    int n = count - done > INT_MAX ? INT_MAX : (int)(count - done);
    MPI_Reduce_local((const char *)in + done * (uint64_t)u->size, (char *)inout + done * (uint64_t)u->size, n,
                     u->type, u->op);
    done += (uint64_t)n;
  }
}

/* The slot of (o, t), registered if new. */
static int user_slot(MPI_Op o, MPI_Datatype t, int size, int rank, int *slot) {
  int rc = CDAG_OK;
  exec_lock();
  int k = 0;
  while (k < nusers && (users[k].op != o || users[k].user_type != t)) k++;
  if (k == nusers && k == IR_USER_MAX_OPS) {
    rc = cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: cdag_reduce_local: more than %d user ops and datatypes in one "
                     "process", rank, IR_USER_MAX_OPS);
  } else if (k == nusers) {
    user_op *u = &users[k];
    if (MPI_Type_dup(t, &u->type) != MPI_SUCCESS) {
      rc = cdag__error(CDAG_ERR_MPI, "rank %d: cdag_reduce_local: MPI_Type_dup of the user op's datatype failed", rank);
    } else {
      u->op = o;
      u->user_type = t;
      u->size = size;
      nusers++;
      exec_at_finalize();
    }
  }
  exec_unlock();
  *slot = k;
  return rc;
}

/* A user op, on a datatype without holes (the graph's byte ranges are the op's elements). */
static int user_reduction(MPI_Datatype t, MPI_Op o, int rank, int *type, int *rop) {
  int commute = 0, size = 0;
  MPI_Aint lb = 0, extent = 0;
  if (o == MPI_OP_NULL || o == MPI_REPLACE || o == MPI_NO_OP || MPI_Op_commutative(o, &commute) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_reduce_local: not an op MPI_Reduce_local takes", rank);
  if (t == MPI_DATATYPE_NULL || MPI_Type_size(t, &size) != MPI_SUCCESS || MPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_reduce_local: not a datatype", rank);
  if (size <= 0 || lb != 0 || extent != size || size > IR_USER_MAX_SIZE)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: cdag_reduce_local: a user op's datatype must be contiguous "
                       "(size %d = extent %lld, lower bound 0, at most %d bytes)", rank, size, (long long)extent,
                       IR_USER_MAX_SIZE);
  int slot, rc = user_slot(o, t, size, rank, &slot);
  *type = IR_TYPE_USER + size;
  *rop = IR_ROP_USER + slot;
  return rc;
}

int exec_reduction_from_mpi(MPI_Datatype t, MPI_Op o, int rank, int *type, int *rop) {
  if (t == MPI_DATATYPE_NULL || o == MPI_OP_NULL)   /* a null handle: a bad argument, as for typed messages */
    return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_reduce_local: %s is %s", rank, t == MPI_DATATYPE_NULL ? "datatype" : "op",
                       t == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "MPI_OP_NULL");
  *rop = mpig_op_of(o);
  if (*rop < 0) return user_reduction(t, o, rank, type, rop);
  *type = mpig_type_of(t);
  if (*type < 0)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: cdag_reduce_local: a predefined op on a datatype cdag does not "
                       "compute (it takes predefined integer, floating-point, pair and complex types, and user ops "
                       "on any contiguous datatype)", rank);
  if (!ir_rop_valid_for(*rop, *type))
    return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_reduce_local: op %s is not defined for %s", rank,
                       ir_rop_name(*rop), ir_type_name(*type));
  return CDAG_OK;
}

/* ---- outbound ---- */

/* A type MPI computes with its own ops: the integers and reals (mpi_glue's table). */
static MPI_Datatype predefined_mpi(int type) { return type <= CDAG_DOUBLE ? mpig_mpi_type(type) : MPI_DATATYPE_NULL; }

#define NOWN_TYPES (CDAG_COMPLEX_LONG_DOUBLE + 1)
#define NOWN_OPS (CDAG_MINLOC + 1)
static MPI_Datatype own_types[NOWN_TYPES];   /* contiguous bytes, for pairs and complex (0: none yet) */
static MPI_Op own_ops[NOWN_OPS];             /* (0: none yet) */
static int own_made[NOWN_OPS + NOWN_TYPES];

/* The cdag type of a datatype cdag's own ops receive. */
static int own_type(MPI_Datatype t) {
  for (int k = CDAG_FLOAT_INT; k < NOWN_TYPES; k++)
    if (__atomic_load_n(&own_made[NOWN_OPS + k], __ATOMIC_ACQUIRE) && own_types[k] == t) return k;
  for (int k = CDAG_INT8; k <= CDAG_DOUBLE; k++)
    if (predefined_mpi(k) == t) return k;
  return -1;
}

#define OWN_FN(NAME, ROP)                                                  \
  static void NAME(void *in, void *inout, int *len, MPI_Datatype *t) {     \
    ir_reduce_apply(own_type(*t), ROP, in, inout, (uint64_t)*len);          \
  }
OWN_FN(own_sum, CDAG_SUM)
OWN_FN(own_prod, CDAG_PROD)
OWN_FN(own_min, CDAG_MIN)
OWN_FN(own_max, CDAG_MAX)
OWN_FN(own_maxloc, CDAG_MAXLOC)
OWN_FN(own_minloc, CDAG_MINLOC)
#undef OWN_FN

static MPI_User_function *own_fn(int rop) {
  switch (rop) {
  case CDAG_SUM: return own_sum;   case CDAG_PROD: return own_prod; case CDAG_MIN: return own_min;
  case CDAG_MAX: return own_max;   case CDAG_MAXLOC: return own_maxloc; case CDAG_MINLOC: return own_minloc;
  default: return NULL;
  }
}

/* Creates what is missing of the own op of rop and the own type of type (type < 0: none). */
static void make_own(int rop, int type) {
  exec_lock();
  if (!own_made[rop] && own_fn(rop) && MPI_Op_create(own_fn(rop), 1, &own_ops[rop]) == MPI_SUCCESS)
    __atomic_store_n(&own_made[rop], 1, __ATOMIC_RELEASE);
  if (type >= 0 && !own_made[NOWN_OPS + type] &&
      MPI_Type_contiguous(ir_type_size(type), MPI_BYTE, &own_types[type]) == MPI_SUCCESS) {
    if (MPI_Type_commit(&own_types[type]) == MPI_SUCCESS) __atomic_store_n(&own_made[NOWN_OPS + type], 1, __ATOMIC_RELEASE);
    else MPI_Type_free(&own_types[type]);
  }
  exec_at_finalize();
  exec_unlock();
}

/* MPI's op for cdag's, where MPI computes the same bytes (mpi_glue's table; the pair ops
   run as cdag's own). */
static MPI_Op predefined_mpi_op(int rop) { return rop == CDAG_MAXLOC || rop == CDAG_MINLOC ? MPI_OP_NULL : mpig_mpi_op(rop); }

int sched_mpi_reduction(int type, int rop, MPI_Datatype *t, MPI_Op *op) {
  *t = MPI_DATATYPE_NULL;
  *op = MPI_OP_NULL;
  if (!ir_type_size(type) || !ir_rop_name(rop) || !ir_rop_valid_for(rop, type) || ir_rop_is_user(rop))
    return cdag__error(CDAG_ERR_FORMAT, "schedule part: reduction type %d op %d", type, rop);
  int own_type_needed = type >= CDAG_FLOAT_INT;
  int min_max = rop == CDAG_MIN || rop == CDAG_MAX;
  int unsigned_or_float = (type >= CDAG_UINT8 && type <= CDAG_UINT64) || type == CDAG_FLOAT || type == CDAG_DOUBLE;
  if (own_type_needed || (min_max && unsigned_or_float)) {
    make_own(rop, own_type_needed ? type : -1);
    if (__atomic_load_n(&own_made[rop], __ATOMIC_ACQUIRE)) *op = own_ops[rop];
    *t = own_type_needed ? (__atomic_load_n(&own_made[NOWN_OPS + type], __ATOMIC_ACQUIRE) ? own_types[type]
                                                                                         : MPI_DATATYPE_NULL)
                         : predefined_mpi(type);
  } else {
    *op = predefined_mpi_op(rop);
    *t = predefined_mpi(type);
  }
  if (*t == MPI_DATATYPE_NULL || *op == MPI_OP_NULL)
    return cdag__error(CDAG_ERR_MPI, "creating cdag's MPI op for %s over %s failed", ir_rop_name(rop), ir_type_name(type));
  return CDAG_OK;
}

void sched_ops_free(void) {
  for (int k = 0; k < NOWN_OPS; k++)
    if (own_made[k]) MPI_Op_free(&own_ops[k]);
  for (int k = 0; k < NOWN_TYPES; k++)
    if (own_made[NOWN_OPS + k]) MPI_Type_free(&own_types[k]);
  for (int k = 0; k < nusers; k++) MPI_Type_free(&users[k].type);
  memset(own_made, 0, sizeof own_made);
  nusers = 0;
}
