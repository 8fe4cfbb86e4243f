/* cdag MPI test — mpi_glue (src/mpi_glue) under MPI: the type and op tables, the datatype
 * decoder against an oracle written apart from it, and cdag_send_type's size limit.
 *
 *  - tables: every cdag type's MPI datatype maps back to it; the pair, complex and Fortran
 *    types map as the loader names them; long double and bool have no cdag type; lxor on
 *    float is refused by the loader's rule;
 *  - decoder: for datatypes of integers and bytes (vector, hvector with a negative stride,
 *    indexed, indexed_block, hindexed_block, nested struct, subarray in C and Fortran
 *    order, resized, dup), the runs mpig_flatten finds are the runs MPI_Pack moves when it
 *    packs a buffer whose bytes hold their own offsets (an oracle fine for types without
 *    floating-point elements); a struct holding MPI_LONG_DOUBLE (which MPICH packs as an x87
 *    value) decodes to its C layout; decoding 2000 times leaks no handle (MPICH would print
 *    "leaked handle pool objects" at MPI_Finalize, which ctest fails on);
 *  - limit: count * size is checked unsigned: 2^30 ints (4 GiB) are one send, 2^30 + 1 is
 *    unsupported and 2^62 (whose product wraps to 0 in 64 bits) a bad argument. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/graph_mpi.h"
#include "mpi_glue/mpi_glue.h"
#include "mpi_test.h"

static int R;

static void tables(void) {
  for (int t = 0; ir_type_name(t); t++) {
    MPI_Datatype m = mpig_mpi_type(t);
    MT_EXPECT_MSG(m != MPI_DATATYPE_NULL && mpig_type_of(m) == t, "type %s does not map back", ir_type_name(t));
  }
  const struct { MPI_Datatype m; int t; } want[] = {
    {MPI_2INT, CDAG_2INT}, {MPI_DOUBLE_INT, CDAG_DOUBLE_INT}, {MPI_FLOAT_INT, CDAG_FLOAT_INT},
    {MPI_LONG_INT, CDAG_LONG_INT}, {MPI_SHORT_INT, CDAG_SHORT_INT}, {MPI_2REAL, CDAG_2FLOAT},
    {MPI_2DOUBLE_PRECISION, CDAG_2DOUBLE}, {MPI_2INTEGER, CDAG_2INT}, {MPI_C_DOUBLE_COMPLEX, CDAG_COMPLEX_DOUBLE},
    {MPI_COMPLEX, CDAG_COMPLEX_FLOAT}, {MPI_INTEGER, CDAG_INT32}, {MPI_DOUBLE_PRECISION, CDAG_DOUBLE},
    {MPI_UNSIGNED_LONG, CDAG_UINT64}, {MPI_BYTE, CDAG_UINT8}, {MPI_LONG_DOUBLE, CDAG_LONG_DOUBLE}, {MPI_LONG_DOUBLE_INT, CDAG_LONG_DOUBLE_INT},
    {MPI_C_LONG_DOUBLE_COMPLEX, CDAG_COMPLEX_LONG_DOUBLE}, {MPI_C_BOOL, -1}};
  for (size_t k = 0; k < sizeof want / sizeof *want; k++)
    if (want[k].m != MPI_DATATYPE_NULL)
      MT_EXPECT_MSG(mpig_type_of(want[k].m) == want[k].t, "entry %zu: type %d, expected %d", k, mpig_type_of(want[k].m), want[k].t);
  for (int r = 0; ir_rop_name(r); r++) MT_EXPECT_MSG(mpig_op_of(mpig_mpi_op(r)) == r, "op %s does not map back", ir_rop_name(r));
  MT_EXPECT_MSG(mpig_op_of(MPI_REPLACE) < 0 && mpig_op_of(MPI_NO_OP) < 0, "MPI_REPLACE / MPI_NO_OP reduce");
  int type, rop;
  char why[80];
  MT_EXPECT_MSG(mpig_reduction(MPI_FLOAT, MPI_LXOR, &type, &rop, why, sizeof why) == MPIG_REDUCTION_INVALID &&
            !strcmp(why, "op lxor is not defined for float"), "lxor on float: %s", why);
  MT_EXPECT_MSG(mpig_reduction(MPI_2INT, MPI_MINLOC, &type, &rop, why, sizeof why) == MPIG_REDUCTION_OK && type == CDAG_2INT &&
            rop == CDAG_MINLOC, "minloc on 2int");
  MT_EXPECT_MSG(mpig_reduction(MPI_LONG_DOUBLE, MPI_SUM, &type, &rop, why, sizeof why) == MPIG_REDUCTION_OK &&
            type == CDAG_LONG_DOUBLE, "long double");
  MT_EXPECT_MSG(mpig_reduction(MPI_LONG_DOUBLE_INT, MPI_MAXLOC, &type, &rop, why, sizeof why) == MPIG_REDUCTION_OK &&
            type == CDAG_LONG_DOUBLE_INT && rop == CDAG_MAXLOC, "long double int");
  MT_EXPECT_MSG(mpig_reduction(MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD, &type, &rop, why, sizeof why) == MPIG_REDUCTION_OK &&
            type == CDAG_COMPLEX_LONG_DOUBLE && rop == CDAG_PROD, "long double complex");
  MT_EXPECT_MSG(mpig_reduction(MPI_C_BOOL, MPI_LAND, &type, &rop, why, sizeof why) == MPIG_REDUCTION_NOTYPE, "bool");
}

/* The oracle: the byte offsets MPI_Pack takes one element of t from, as runs. */
static int oracle(MPI_Datatype t, int64_t **off, uint64_t **len, int64_t *n) {
  MPI_Count lb, ext, tlb, text, size;
  MPI_Type_get_extent_x(t, &lb, &ext);
  MPI_Type_get_true_extent_x(t, &tlb, &text);
  MPI_Type_size_x(t, &size);
  uint8_t *src = malloc((size_t)text), *packed = malloc((size_t)size);
  uint32_t *offs = calloc((size_t)size, sizeof *offs);
  *off = malloc((size_t)size * sizeof **off);
  *len = malloc((size_t)size * sizeof **len);
  *n = 0;
  for (int pass = 0; pass < 3; pass++) {
    for (MPI_Count i = 0; i < text; i++) src[i] = (uint8_t)((uint64_t)i >> (8 * pass));
    int pos = 0;
    MPI_Pack(src - tlb, 1, t, packed, (int)size, &pos, MPI_COMM_SELF);
    for (MPI_Count i = 0; i < size; i++) offs[i] |= (uint32_t)packed[i] << (8 * pass);
  }
  for (MPI_Count i = 0; i < size; i++) {
    int64_t o = (int64_t)tlb + offs[i];
    if (*n && (*off)[*n - 1] + (int64_t)(*len)[*n - 1] == o) (*len)[*n - 1]++;
    else (*off)[*n] = o, (*len)[(*n)++] = 1;
  }
  free(src);
  free(packed);
  free(offs);
  return 0;
}

static void against_oracle(const char *name, MPI_Datatype t) {
  MPI_Type_commit(&t);
  mpig_flat f;
  int64_t *off, n;
  uint64_t *len;
  int rc = mpig_flatten(t, &f);
  MT_EXPECT_MSG(rc == CDAG_OK, "%s: %s", name, cdag_error_message());
  oracle(t, &off, &len, &n);
  if (!rc) {
    int same = f.n == n;
    for (int64_t i = 0; same && i < n; i++) same = f.off[i] == off[i] && f.len[i] == len[i];
    MT_EXPECT_MSG(same, "%s: %lld runs decoded, the oracle has %lld (first: %lld+%llu vs %lld+%llu)", name, (long long)f.n,
          (long long)n, f.n ? (long long)f.off[0] : -1LL, f.n ? (unsigned long long)f.len[0] : 0ULL,
          n ? (long long)off[0] : -1LL, n ? (unsigned long long)len[0] : 0ULL);
  }
  mpig_flat_free(&f);
  free(off);
  free(len);
  MPI_Type_free(&t);
}

static void decoder(void) {
  MPI_Datatype t, a, b;
  MPI_Type_vector(4, 2, 5, MPI_INT, &t);
  against_oracle("vector", t);
  MPI_Type_create_hvector(3, 2, -12, MPI_SHORT, &t);
  against_oracle("hvector, negative stride", t);
  int bl[3] = {1, 3, 2}, dp[3] = {7, 0, 12};
  MPI_Type_indexed(3, bl, dp, MPI_INT, &t);
  against_oracle("indexed", t);
  MPI_Type_create_indexed_block(3, 2, dp, MPI_INT16_T, &t);
  against_oracle("indexed_block", t);
  MPI_Aint hd[3] = {40, 0, 17};
  MPI_Type_create_hindexed_block(3, 3, hd, MPI_BYTE, &t);
  against_oracle("hindexed_block", t);
  MPI_Type_vector(2, 1, 3, MPI_INT, &a);
  int sbl[3] = {1, 2, 1};
  MPI_Aint sd[3] = {0, 8, 40};
  MPI_Datatype st[3] = {MPI_CHAR, a, MPI_INT64_T};
  MPI_Type_create_struct(3, sbl, sd, st, &b);
  MPI_Type_free(&a);
  MPI_Type_create_resized(b, -4, 64, &t);
  MPI_Type_free(&b);
  against_oracle("resized struct of a vector", t);
  int sizes[3] = {4, 5, 6}, sub[3] = {2, 3, 2}, start[3] = {1, 2, 3};
  MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_INT, &t);
  against_oracle("subarray C", t);
  MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_FORTRAN, MPI_SHORT, &t);
  against_oracle("subarray Fortran", t);
  MPI_Type_contiguous(3, MPI_SHORT_INT, &a);
  MPI_Type_dup(a, &t);
  MPI_Type_free(&a);
  against_oracle("dup of contiguous short_int", t);

  /* long double: its C layout, whatever MPI_Pack does with its bytes */
  typedef struct { char c; long double v; int i; } ld;
  int lbl[3] = {1, 1, 1};
  MPI_Aint ldp[3] = {offsetof(ld, c), offsetof(ld, v), offsetof(ld, i)};
  MPI_Datatype lty[3] = {MPI_CHAR, MPI_LONG_DOUBLE, MPI_INT};
  MPI_Type_create_struct(3, lbl, ldp, lty, &a);
  MPI_Type_create_resized(a, 0, sizeof(ld), &t);
  MPI_Type_free(&a);
  MPI_Type_commit(&t);
  for (int k = 0; k < 2000; k++) {   /* every handle get_contents returns is freed */
    mpig_flat f;
    int rc = mpig_flatten(t, &f);
    if (k == 0)   /* c, then v and i adjacent: one run */
      MT_EXPECT_MSG(rc == CDAG_OK && f.n == 2 && f.off[0] == 0 && f.len[0] == 1 && f.off[1] == (int64_t)offsetof(ld, v) &&
                f.len[1] == sizeof(long double) + sizeof(int) && offsetof(ld, i) == offsetof(ld, v) + sizeof(long double),
            "long double struct: %lld runs", (long long)f.n);
    mpig_flat_free(&f);
  }
  MPI_Type_free(&t);
  MPI_Type_create_darray(1, 0, 1, (int[]){8}, (int[]){MPI_DISTRIBUTE_BLOCK}, (int[]){MPI_DISTRIBUTE_DFLT_DARG},
                         (int[]){1}, MPI_ORDER_C, MPI_INT, &t);
  MPI_Type_commit(&t);
  mpig_flat f;
  MT_EXPECT_MSG(mpig_flatten(t, &f) == CDAG_ERR_UNSUPPORTED, "a darray decoded");
  MPI_Type_free(&t);
}

static void limit(void) {
  cdag_graph *g;
  cdag_graph_create(MPI_COMM_SELF, &g);
  char buf[16];
  cdag_op op;
  MT_EXPECT_MSG(cdag_send_type(g, buf, (MPI_Count)1 << 30, MPI_INT, 0, 0, &op) == CDAG_OK, "4 GiB of ints: %s",
        cdag_error_message());
  MT_EXPECT_MSG(cdag_send_type(g, buf, ((MPI_Count)1 << 30) + 1, MPI_INT, 0, 0, NULL) == CDAG_ERR_UNSUPPORTED,
        "4 GiB + 4 of ints accepted");
  MT_EXPECT_MSG(cdag_send_type(g, buf, (MPI_Count)1 << 62, MPI_INT, 0, 0, NULL) == CDAG_ERR_ARG,
        "2^62 ints (2^64 bytes, 0 when wrapped) accepted");
  cdag_graph_free(&g);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  tables();
  decoder();
  limit();
  return mt_finish("mpi_typed");
}
