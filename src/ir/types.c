/* cdag — src/ir/types.c: element types and reduction operators.
 *
 * Names and sizes of cdag_type / cdag_reduce_op, which ops are defined for which types (as
 * in MPI: bitwise and logical ops on integers only), and ir_reduce_apply(), the one
 * implementation of a local reduction used by the simulator and the executor. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ir/ir.h"

static const char *const type_names[] = {"int8",      "int16",      "int32",    "int64",    "uint8",
                                         "uint16",    "uint32",     "uint64",   "float",    "double",
                                         "float_int", "double_int", "long_int", "2int",     "short_int",
                                         "2float",    "2double",    "complex_float", "complex_double", "long_double",
                                         "long_double_int", "complex_long_double"};
static const int type_sizes[] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 8, 16, 16, 8, 8, 8, 16, 8, 16, (int)sizeof(long double),
                                  (int)sizeof(struct { long double v; int i; }), 2 * (int)sizeof(long double)};
static const char *const rop_names[] = {"sum", "prod", "min",  "max", "band",   "bor",
                                        "bxor", "land", "lor", "lxor", "maxloc", "minloc"};
static const char *const kind_names[] = {"send", "recv", "reduce", "copy", "calc"};

#define NTYPES ((int)(sizeof type_names / sizeof *type_names))
#define NROPS ((int)(sizeof rop_names / sizeof *rop_names))

static int is_user_type(int type) { return type > IR_TYPE_USER && type <= IR_TYPE_USER + IR_USER_MAX_SIZE; }
int ir_rop_is_user(int rop) { return rop >= IR_ROP_USER && rop < IR_ROP_USER + IR_USER_MAX_OPS; }

int ir_type_size(int type) {
  if (is_user_type(type)) return type - IR_TYPE_USER;
  return type >= 0 && type < NTYPES ? type_sizes[type] : 0;
}

const char *ir_type_name(int type) {
  if (is_user_type(type)) return "user";
  return type >= 0 && type < NTYPES ? type_names[type] : NULL;
}

const char *ir_rop_name(int rop) {
  if (ir_rop_is_user(rop)) return "user";
  return rop >= 0 && rop < NROPS ? rop_names[rop] : NULL;
}

int ir_type_is_float(int type) {
  return type == CDAG_FLOAT || type == CDAG_DOUBLE || type == CDAG_COMPLEX_FLOAT || type == CDAG_COMPLEX_DOUBLE ||
         type == CDAG_LONG_DOUBLE || type == CDAG_COMPLEX_LONG_DOUBLE;
}

static int is_pair(int type) { return (type >= CDAG_FLOAT_INT && type <= CDAG_2DOUBLE) || type == CDAG_LONG_DOUBLE_INT; }
const char *ir_kind_name(int kind) {
  if (kind == IR_GET) return "get";
  if (kind == IR_PUT) return "put";
  if (kind == IR_FENCE) return "fence";
  if (kind == IR_ACC) return "accumulate";
  return kind >= 0 && kind < IR_NKINDS ? kind_names[kind] : "?";
}

static int lookup(const char *const *names, int n, const char *s, int64_t len) {
  for (int i = 0; i < n; i++)
    if ((int64_t)strlen(names[i]) == len && memcmp(names[i], s, (size_t)len) == 0) return i;
  return -1;
}

int ir_type_parse(const char *s, int64_t len) { return lookup(type_names, NTYPES, s, len); }
int ir_rop_parse(const char *s, int64_t len) { return lookup(rop_names, NROPS, s, len); }

/* As in MPI: bitwise and logical ops on integers only, MAXLOC / MINLOC on pairs only,
   complex numbers sum and multiply; a user op only on its own datatype. */
int ir_rop_valid_for(int rop, int type) {
  if (ir_rop_is_user(rop) || is_user_type(type)) return ir_rop_is_user(rop) && is_user_type(type);
  if (is_pair(type) || rop == CDAG_MAXLOC || rop == CDAG_MINLOC)
    return is_pair(type) && (rop == CDAG_MAXLOC || rop == CDAG_MINLOC);
  if (type == CDAG_COMPLEX_FLOAT || type == CDAG_COMPLEX_DOUBLE || type == CDAG_COMPLEX_LONG_DOUBLE)
    return rop == CDAG_SUM || rop == CDAG_PROD;
  return !(ir_type_is_float(type) && rop >= CDAG_BAND);
}

int ir_rop_idempotent(int rop) {
  return rop == CDAG_MIN || rop == CDAG_MAX || rop == CDAG_BAND || rop == CDAG_BOR ||
         rop == CDAG_LAND || rop == CDAG_LOR || rop == CDAG_MAXLOC || rop == CDAG_MINLOC;
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
static long double qnan_ld(void) { return __builtin_nanl(""); }

typedef long double long_double;   /* one token, for FMINMAX */
FMINMAX(float, qnan_f)
FMINMAX(double, qnan_d)
FMINMAX(long_double, qnan_ld)

#define APPLY_ALL_FLOAT(T)                                  \
  switch (rop) {                                            \
    case CDAG_SUM: APPLY_ARITH(T, T, b + a) break;          \
    case CDAG_PROD: APPLY_ARITH(T, T, b * a) break;         \
    case CDAG_MIN: APPLY_ARITH(T, T, T##_min(a, b)) break;  \
    case CDAG_MAX: APPLY_ARITH(T, T, T##_max(a, b)) break;  \
    default: break;                                         \
  }

/* A long double's value bytes: x87's 80 bits stored in 16 (the rest is padding, which a
   store leaves as it was and MPI libraries differ on: zeroed here, so every order of
   reduction gives the same bytes), else all of them. */
int ir_type_value_bytes(int type) {
  return type == CDAG_LONG_DOUBLE && LDBL_MANT_DIG == 64 ? 10 : ir_type_size(type);
}

static void apply_long_double(int rop, const void *in, void *inout, uint64_t count) {
  for (uint64_t i = 0; i < count; i++) {
    long double a, b, r;
    unsigned char out[sizeof(long double)] = {0};
    memcpy(&a, (const char *)in + i * sizeof a, sizeof a);
    memcpy(&b, (char *)inout + i * sizeof b, sizeof b);
    switch (rop) {
      case CDAG_SUM: r = b + a; break;
      case CDAG_PROD: r = b * a; break;
      case CDAG_MIN: r = long_double_min(a, b); break;
      case CDAG_MAX: r = long_double_max(a, b); break;
      default: return;
    }
    memcpy(out, &r, (size_t)ir_type_value_bytes(CDAG_LONG_DOUBLE));
    memcpy((char *)inout + i * sizeof r, out, sizeof out);
  }
}

/* ---- MAXLOC / MINLOC: (value, index) pairs ----
   The element with the larger (MAXLOC) or smaller (MINLOC) value wins; on equal values the
   smaller index, as in MPI; on equal value and index, the smaller bytes (padding included).
   The winner is copied whole. Floating-point values and indices compare by IEEE 754
   totalOrder (-0 < +0, NaNs beyond the infinities by sign). Choosing by one total order
   makes the op commutative and associative bit for bit, so a rewrite gives the bytes of
   the graph as written. */
typedef struct { uint8_t vsize, vfloat, ioff, isize, ifloat; } pair_layout;

static pair_layout pair_of(int type) {
  switch (type) {
  case CDAG_FLOAT_INT: return (pair_layout){4, 1, 4, 4, 0};
  case CDAG_DOUBLE_INT: return (pair_layout){8, 1, 8, 4, 0};
  case CDAG_LONG_INT: return (pair_layout){8, 0, 8, 4, 0};
  case CDAG_2INT: return (pair_layout){4, 0, 4, 4, 0};
  case CDAG_SHORT_INT: return (pair_layout){2, 0, 4, 4, 0};
  case CDAG_2FLOAT: return (pair_layout){4, 1, 4, 4, 1};
  case CDAG_LONG_DOUBLE_INT: return (pair_layout){sizeof(long double), 1, sizeof(long double), 4, 0};
  default: return (pair_layout){8, 1, 8, 8, 1};   /* CDAG_2DOUBLE */
  }
}

/* -1, 0, 1 as a < b for x87's 80-bit values by totalOrder: sign, then exponent and
   significand (its integer bit explicit) as one unsigned number, reversed when negative. */
static int cmp_x87(const uint8_t *a, const uint8_t *b) {
  uint64_t ma, mb;
  uint16_t ea, eb;
  memcpy(&ma, a, 8); memcpy(&ea, a + 8, 2);
  memcpy(&mb, b, 8); memcpy(&eb, b + 8, 2);
  if ((ea ^ eb) & 0x8000) return ea & 0x8000 ? -1 : 1;
  uint16_t xa = ea & 0x7fff, xb = eb & 0x7fff;
  int c = xa != xb ? (xa > xb) - (xa < xb) : (ma > mb) - (ma < mb);
  return ea & 0x8000 ? -c : c;
}

/* -1, 0, 1 as a < b: signed integers of 2, 4, 8 bytes, or floats by totalOrder (a float of
   more than 8 bytes: x87's long double). */
static int cmp_field(const uint8_t *a, const uint8_t *b, int size, int is_float) {
  if (is_float && size > 8) return LDBL_MANT_DIG == 64 ? cmp_x87(a, b) : memcmp(a, b, (size_t)size);
  if (is_float) {
    uint64_t x = 0, y = 0, sign = (uint64_t)1 << (8 * size - 1);
    memcpy(&x, a, (size_t)size);   /* little-endian: the low bytes */
    memcpy(&y, b, (size_t)size);
    uint64_t mask = size == 8 ? UINT64_MAX : (sign << 1) - 1;
    x = (x & sign) ? ~x & mask : x | sign;
    y = (y & sign) ? ~y & mask : y | sign;
    return (x > y) - (x < y);
  }
  int64_t x, y;
  if (size == 2) { int16_t u, v; memcpy(&u, a, 2); memcpy(&v, b, 2); x = u; y = v; }
  else if (size == 4) { int32_t u, v; memcpy(&u, a, 4); memcpy(&v, b, 4); x = u; y = v; }
  else { memcpy(&x, a, 8); memcpy(&y, b, 8); }
  return (x > y) - (x < y);
}

static void apply_loc(int type, int rop, const uint8_t *in, uint8_t *inout, uint64_t count) {
  pair_layout l = pair_of(type);
  size_t size = (size_t)ir_type_size(type);
  for (uint64_t i = 0; i < count; i++, in += size, inout += size) {
    int c = cmp_field(in, inout, l.vsize, l.vfloat);
    if (rop == CDAG_MINLOC) c = -c;
    if (!c) c = -cmp_field(in + l.ioff, inout + l.ioff, l.isize, l.ifloat);
    if (!c) c = -memcmp(in, inout, size);
    if (c > 0) memcpy(inout, in, size);
  }
}

/* Complex sum and product, inout = inout op in: (b0 + b1 i)(a0 + a1 i). */
#define APPLY_COMPLEX(T)                                                       \
  for (uint64_t i = 0; i < count; i++) {                                       \
    T a[2], b[2], r[2];                                                        \
    memcpy(a, (const char *)in + i * sizeof a, sizeof a);                      \
    memcpy(b, (char *)inout + i * sizeof b, sizeof b);                         \
    if (rop == CDAG_SUM) { r[0] = b[0] + a[0]; r[1] = b[1] + a[1]; }           \
    else { r[0] = b[0] * a[0] - b[1] * a[1]; r[1] = b[0] * a[1] + b[1] * a[0]; } \
    memcpy((char *)inout + i * sizeof r, r, sizeof r);                         \
  }

/* Complex long doubles: as APPLY_COMPLEX, each part written as apply_long_double writes one
   (its value, then zeros). */
static void apply_complex_long_double(int rop, const void *in, void *inout, uint64_t count) {
  for (uint64_t i = 0; i < count; i++) {
    long double a[2], b[2], r[2];
    unsigned char out[sizeof r] = {0};
    memcpy(a, (const char *)in + i * sizeof a, sizeof a);
    memcpy(b, (char *)inout + i * sizeof b, sizeof b);
    if (rop == CDAG_SUM) r[0] = b[0] + a[0], r[1] = b[1] + a[1];
    else r[0] = b[0] * a[0] - b[1] * a[1], r[1] = b[0] * a[1] + b[1] * a[0];
    for (int k = 0; k < 2; k++) memcpy(out + k * sizeof *r, &r[k], (size_t)ir_type_value_bytes(CDAG_LONG_DOUBLE));
    memcpy((char *)inout + i * sizeof r, out, sizeof out);
  }
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
    case CDAG_COMPLEX_FLOAT: APPLY_COMPLEX(float) break;
    case CDAG_COMPLEX_DOUBLE: APPLY_COMPLEX(double) break;
    case CDAG_LONG_DOUBLE: apply_long_double(rop, in, inout, count); break;
    case CDAG_COMPLEX_LONG_DOUBLE: apply_complex_long_double(rop, in, inout, count); break;
    default:
      if (is_pair(type)) apply_loc(type, rop, in, inout, count);
      break;
  }
}
