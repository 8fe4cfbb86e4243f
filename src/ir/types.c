/* cdag — src/ir/types.c: element types and reduction operators.
 *
 * Names and sizes of cdag_type / cdag_reduce_op, which ops are defined for which types (as
 * in MPI: bitwise and logical ops on integers only), and ir_reduce_apply(), the one
 * implementation of a local reduction used by the simulator and the executor. */
#include <math.h>
#include <string.h>

#include "ir/ir.h"

static const char *const type_names[] = {"int8",   "int16",  "int32",  "int64", "uint8",
                                         "uint16", "uint32", "uint64", "float", "double"};
static const int type_sizes[] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8};
static const char *const rop_names[] = {"sum", "prod", "min", "max", "band",
                                        "bor", "bxor", "land", "lor", "lxor"};
static const char *const kind_names[] = {"send", "recv", "reduce", "copy", "calc"};

#define NTYPES ((int)(sizeof type_names / sizeof *type_names))
#define NROPS ((int)(sizeof rop_names / sizeof *rop_names))

int ir_type_size(int type) { return type >= 0 && type < NTYPES ? type_sizes[type] : 0; }
const char *ir_type_name(int type) { return type >= 0 && type < NTYPES ? type_names[type] : NULL; }
const char *ir_rop_name(int rop) { return rop >= 0 && rop < NROPS ? rop_names[rop] : NULL; }
const char *ir_kind_name(int kind) { return kind >= 0 && kind < IR_NKINDS ? kind_names[kind] : "?"; }

static int lookup(const char *const *names, int n, const char *s, int64_t len) {
  for (int i = 0; i < n; i++)
    if ((int64_t)strlen(names[i]) == len && memcmp(names[i], s, (size_t)len) == 0) return i;
  return -1;
}

int ir_type_parse(const char *s, int64_t len) { return lookup(type_names, NTYPES, s, len); }
int ir_rop_parse(const char *s, int64_t len) { return lookup(rop_names, NROPS, s, len); }

int ir_rop_valid_for(int rop, int type) {
  int is_float = type == CDAG_FLOAT || type == CDAG_DOUBLE;
  return !(is_float && rop >= CDAG_BAND);
}

int ir_rop_idempotent(int rop) {
  return rop == CDAG_MIN || rop == CDAG_MAX || rop == CDAG_BAND || rop == CDAG_BOR ||
         rop == CDAG_LAND || rop == CDAG_LOR;
}

/* One loop per (type, op): elements are copied through locals so buffers need no alignment.
   Integer sums and products wrap: computed in uint64_t, whose products never overflow into
   undefined behaviour (uint16_t operands would be promoted to int: 52937 * 52937 overflows),
   and truncated to T. */
#define APPLY_ARITH(T, U, EXPR)                            \
  for (uint64_t i = 0; i < count; i++) {                   \
    T a, b;                                                \
    memcpy(&a, (const char *)in + i * sizeof(T), sizeof a); \
    memcpy(&b, (char *)inout + i * sizeof(T), sizeof b);   \
    T r = EXPR;                                            \
    memcpy((char *)inout + i * sizeof(T), &r, sizeof r);   \
  }

#define APPLY_ALL_INT(T, U)                                                   \
  switch (rop) {                                                              \
    case CDAG_SUM: APPLY_ARITH(T, U, (T)(U)((uint64_t)(U)b + (uint64_t)(U)a)) break; \
    case CDAG_PROD: APPLY_ARITH(T, U, (T)(U)((uint64_t)(U)b * (uint64_t)(U)a)) break; \
    case CDAG_MIN: APPLY_ARITH(T, U, a < b ? a : b) break;                    \
    case CDAG_MAX: APPLY_ARITH(T, U, a > b ? a : b) break;                    \
    case CDAG_BAND: APPLY_ARITH(T, U, (T)(b & a)) break;                      \
    case CDAG_BOR: APPLY_ARITH(T, U, (T)(b | a)) break;                       \
    case CDAG_BXOR: APPLY_ARITH(T, U, (T)(b ^ a)) break;                      \
    case CDAG_LAND: APPLY_ARITH(T, U, (T)(b && a)) break;                     \
    case CDAG_LOR: APPLY_ARITH(T, U, (T)(b || a)) break;                      \
    case CDAG_LXOR: APPLY_ARITH(T, U, (T)(!b != !a)) break;                   \
  }

/* Floating-point min and max are IEEE 754-2019's minimum and maximum: a NaN operand gives the
   canonical quiet NaN (sign clear, payload zero), and -0 < +0. So defined they are
   commutative and associative bit for bit: a rewrite that combines values in another order
   (a collective, a tree) gives the bytes of the graph as written. C's a < b ? a : b is
   neither (min(NaN, 1) is 1 but min(1, NaN) is NaN). */
static float qnan_f(void) {
  uint32_t u = 0x7fc00000u;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static double qnan_d(void) {
  uint64_t u = 0x7ff8000000000000ull;
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

#define FMINMAX(T, QNAN)                                                    \
  static T T##_max(T a, T b) {                                              \
    if (a != a || b != b) return QNAN();                                    \
    if (a == b) return signbit(a) ? b : a;                                  \
    return a > b ? a : b;                                                   \
  }                                                                         \
  static T T##_min(T a, T b) {                                              \
    if (a != a || b != b) return QNAN();                                    \
    if (a == b) return signbit(a) ? a : b;                                  \
    return a < b ? a : b;                                                   \
  }
FMINMAX(float, qnan_f)
FMINMAX(double, qnan_d)

#define APPLY_ALL_FLOAT(T)                                  \
  switch (rop) {                                            \
    case CDAG_SUM: APPLY_ARITH(T, T, b + a) break;          \
    case CDAG_PROD: APPLY_ARITH(T, T, b * a) break;         \
    case CDAG_MIN: APPLY_ARITH(T, T, T##_min(a, b)) break;  \
    case CDAG_MAX: APPLY_ARITH(T, T, T##_max(a, b)) break;  \
    default: break;                                         \
  }

void ir_reduce_apply(int type, int rop, const void *in, void *inout, uint64_t count) {
  switch (type) {
    case CDAG_INT8: APPLY_ALL_INT(int8_t, uint8_t) break;
    case CDAG_INT16: APPLY_ALL_INT(int16_t, uint16_t) break;
    case CDAG_INT32: APPLY_ALL_INT(int32_t, uint32_t) break;
    case CDAG_INT64: APPLY_ALL_INT(int64_t, uint64_t) break;
    case CDAG_UINT8: APPLY_ALL_INT(uint8_t, uint8_t) break;
    case CDAG_UINT16: APPLY_ALL_INT(uint16_t, uint16_t) break;
    case CDAG_UINT32: APPLY_ALL_INT(uint32_t, uint32_t) break;
    case CDAG_UINT64: APPLY_ALL_INT(uint64_t, uint64_t) break;
    case CDAG_FLOAT: APPLY_ALL_FLOAT(float) break;
    case CDAG_DOUBLE: APPLY_ALL_FLOAT(double) break;
  }
}
