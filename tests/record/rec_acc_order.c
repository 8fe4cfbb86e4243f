/* cdag tests — tests/record/rec_acc_order.c: one origin's accumulates to the same bytes in
 * one fence epoch (the shape of MPICH's rma/acc_ordering).
 *
 * MPI applies an origin's accumulate-family calls to the same bytes in program order when
 * the window's accumulate_ordering asks for it, which is its default. The last rank, in one
 * fence epoch on rank 0's pairs of ints:
 *  1. replaces them by x, combines y with MPI_MAXLOC and replaces them by z: MPI's order
 *     leaves z;
 *  2. adds s twice to a counter with MPI_SUM (sums commute: no order needed).
 * Its recording must say so (a `wait` line before each access that must follow another),
 * load, verify and replay to the bytes MPI left. Left out, each counted with its reason:
 *  - a no-op Get_accumulate of the pairs after those updates: MPI gives it z, a graph's get
 *    the epoch's start (its bytes are not compared);
 *  - with accumulate_ordering "none", the second of two replacements of the same bytes in
 *    one epoch: they end in either order (those bytes are not compared).
 * Last, pair types with padding (MPI_SHORT_INT: an int at 4 after a short; MPI_LONG_DOUBLE_INT:
 * an int at 16 after a long double's 10 bytes, 32 in all) accumulated with MPI_MAXLOC through
 * vectors (MPICH's rma/acc_pairtype), and two contiguous short_int pairs (whose layout glues
 * one's int to the next one's short): each element one range of the graph's type, padding
 * included, nothing unsupported; the short_int pairs' value bytes compared (x87 long doubles
 * from the replay's bytes are not normal numbers, which MPI and cdag order differently).
 * And under lock_all, a sum and a product of one int64 with MPI_Win_flush_local between them
 * (which completes them at the origin only): still in MPI's order. And a window whose base
 * is 4 mod 8, which MPICH 4.0.2 aligns down, its accumulate landing where MPI put it. And a
 * compare-and-swap that swaps, then a replacing accumulate of the same bytes (the swap's put
 * ordered before it), and a fetch-and-add then a compare-and-swap of the same bytes (the
 * swap's fetch left out: MPI gives it the added value, a graph's get the epoch's start). */
#include "rec_test.h"

enum { N = 4 };
typedef struct { int val, loc; } pair;
typedef struct { short val; int loc; } short_pair;
typedef struct { long double val; int loc; } ld_pair;

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int last = rt_size - 1;
  pair *w = malloc(N * sizeof *w), x[N], y[N], z[N], seen[N];
  /* window memory from malloc: MPICH 4.0.2 takes a window's base 8-byte aligned (a 4-byte
     int at an address 4 mod 8 gets its accumulates 4 bytes lower) */
  int *free_order = malloc(2 * sizeof *free_order), *counter = malloc(sizeof *counter), s = 0, a = 0, b = 0;
  MT_REQUIRE(w && free_order && counter);
  rt_fill(w, N * sizeof *w); rt_fill(seen, sizeof seen); rt_fill(counter, sizeof *counter);
  rt_fill(free_order, 2 * sizeof *free_order);
  for (int i = 0; i < N; i++) {   /* values a send reads start as the replay's bytes do */
    rt_fill(&x[i], sizeof x[i]); rt_fill(&y[i], sizeof y[i]); rt_fill(&z[i], sizeof z[i]);
  }
  rt_fill(&s, sizeof s); rt_fill(&a, sizeof a); rt_fill(&b, sizeof b);
  MPI_Win win;
  MPI_Win_create(w, N * sizeof *w, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  if (rt_rank == last) {
    MPI_Accumulate(x, N, MPI_2INT, 0, 0, N, MPI_2INT, MPI_REPLACE, win);
    MPI_Accumulate(y, N, MPI_2INT, 0, 0, N, MPI_2INT, MPI_MAXLOC, win);
    MPI_Accumulate(z, N, MPI_2INT, 0, 0, N, MPI_2INT, MPI_REPLACE, win);
    MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, seen, N, MPI_2INT, 0, 0, N, MPI_2INT, MPI_NO_OP, win);
  }
  MPI_Win_fence(0, win);
  if (rt_rank == last) MT_REQUIRE(!memcmp(seen, z, sizeof z));
  MPI_Win_free(&win);

  MPI_Win cwin;
  MPI_Win_create(counter, sizeof *counter, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &cwin);
  MPI_Win_fence(0, cwin);
  if (rt_rank == last) {
    MPI_Accumulate(&s, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, cwin);
    MPI_Accumulate(&s, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, cwin);
  }
  MPI_Win_fence(0, cwin);
  MPI_Win_free(&cwin);

  MPI_Info none;
  MPI_Info_create(&none);
  MPI_Info_set(none, "accumulate_ordering", "none");
  MPI_Win nwin;
  MPI_Win_create(free_order, 2 * sizeof *free_order, 1, none, MPI_COMM_WORLD, &nwin);
  MPI_Info_free(&none);
  MPI_Win_fence(0, nwin);
  if (rt_rank == last) {
    MPI_Accumulate(&a, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_REPLACE, nwin);
    MPI_Accumulate(&b, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_REPLACE, nwin);
  }
  MPI_Win_fence(0, nwin);
  MPI_Win_free(&nwin);

  short_pair *sp = malloc(2 * N * sizeof *sp), so[2 * N];
  ld_pair *lp = malloc(2 * N * sizeof *lp), lo[2 * N];
  MT_REQUIRE(sp && lp);
  rt_fill(sp, 2 * N * sizeof *sp); rt_fill(so, sizeof so); rt_fill(lp, 2 * N * sizeof *lp); rt_fill(lo, sizeof lo);
  MPI_Datatype sv, lv;
  MPI_Type_vector(N, 1, 2, MPI_SHORT_INT, &sv);
  MPI_Type_vector(N, 1, 2, MPI_LONG_DOUBLE_INT, &lv);
  MPI_Type_commit(&sv);
  MPI_Type_commit(&lv);
  MPI_Win swin, lwin;
  MPI_Win_create(sp, 2 * N * sizeof *sp, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &swin);
  MPI_Win_create(lp, 2 * N * sizeof *lp, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &lwin);
  MPI_Win_fence(0, swin);
  MPI_Win_fence(0, lwin);
  if (rt_rank == last) {
    MPI_Accumulate(so, 1, sv, 0, 0, 1, sv, MPI_MAXLOC, swin);
    MPI_Accumulate(so, 2, MPI_SHORT_INT, 0, sizeof *sp, 2, MPI_SHORT_INT, MPI_MAXLOC, swin);   /* elements 1, 2 */
    MPI_Accumulate(lo, 1, lv, 0, 0, 1, lv, MPI_MAXLOC, lwin);
  }
  MPI_Win_fence(0, swin);
  MPI_Win_fence(0, lwin);
  MPI_Win_free(&swin);
  MPI_Win_free(&lwin);
  MPI_Type_free(&sv);
  MPI_Type_free(&lv);

  /* under lock_all: a sum, a get, flush_local (which completes them at the origin only),
     then a product of the same int64: MPI still applies the product after the sum */
  int64_t *pw = malloc(2 * sizeof *pw), add, mul, got;
  MT_REQUIRE(pw != NULL);
  rt_fill(pw, 2 * sizeof *pw); rt_fill(&add, sizeof add); rt_fill(&mul, sizeof mul); rt_fill(&got, sizeof got);
  MPI_Win pwin;
  MPI_Win_create(pw, 2 * sizeof *pw, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &pwin);
  if (rt_rank == last) {
    MPI_Win_lock_all(0, pwin);
    MPI_Accumulate(&add, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, MPI_SUM, pwin);
    MPI_Get(&got, 1, MPI_INT64_T, 0, sizeof *pw, 1, MPI_INT64_T, pwin);
    MPI_Win_flush_local(0, pwin);
    MPI_Accumulate(&mul, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, MPI_PROD, pwin);
    MPI_Win_unlock_all(pwin);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&pwin);

  /* a window of one int at an address 4 mod 8: MPICH 4.0.2 takes its base 8-byte aligned
     and adds into the int before it; the recording does as MPI did */
  int64_t *store = malloc(sizeof *store);
  int *ints = (int *)(void *)store, one;
  MT_REQUIRE(store != NULL);
  rt_fill(store, sizeof *store); rt_fill(&one, sizeof one);
  MPI_Win mwin;
  MPI_Win_create(&ints[1], sizeof *ints, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mwin);
  MPI_Win_fence(0, mwin);
  if (rt_rank == last) MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, mwin);
  MPI_Win_fence(0, mwin);
  MPI_Win_free(&mwin);

  /* a compare-and-swap that swaps, then a replacing accumulate of the same int64 (MPI applies
     the replacement after the swap), and a fetch-and-add then a compare-and-swap of another
     (MPI gives the swap the added value, a graph's get the epoch's start: left out) */
  int64_t *cw = malloc(2 * sizeof *cw), cmpv[2], newv, rep, addv, fetched, zero = 0, old[2];
  MT_REQUIRE(cw != NULL);
  rt_fill(cw, 2 * sizeof *cw); rt_fill(&newv, sizeof newv); rt_fill(&rep, sizeof rep); rt_fill(&addv, sizeof addv);
  rt_fill(&fetched, sizeof fetched); rt_fill(old, sizeof old);
  memcpy(cmpv, cw, sizeof cmpv);
  MPI_Bcast(cmpv, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
  MPI_Win cwn;
  MPI_Win_create(cw, 2 * sizeof *cw, sizeof *cw, MPI_INFO_NULL, MPI_COMM_WORLD, &cwn);
  MPI_Win_fence(0, cwn);
  if (rt_rank == last) {
    MPI_Compare_and_swap(&newv, &cmpv[0], &old[0], MPI_INT64_T, 0, 0, cwn);
    MPI_Accumulate(&rep, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, MPI_REPLACE, cwn);
    MPI_Fetch_and_op(&addv, &fetched, MPI_INT64_T, 0, 1, MPI_SUM, cwn);
    MPI_Compare_and_swap(&newv, &zero, &old[1], MPI_INT64_T, 0, 1, cwn);
  }
  MPI_Win_fence(0, cwn);
  MPI_Win_free(&cwn);

  rt_keep(w, N * sizeof *w);
  rt_keep(pw, sizeof *pw);
  rt_keep(cw, 2 * sizeof *cw);
  rt_keep(store, sizeof *store);
  for (int i = 0; i < 2 * N; i++) {   /* not the padding, which MPI leaves alone */
    rt_keep(&sp[i].val, sizeof sp[i].val);
    rt_keep(&sp[i].loc, sizeof sp[i].loc);
  }
  rt_keep(counter, sizeof *counter);
  rt_keep(free_order + 1, sizeof *free_order);   /* its first int: a or b, as MPI chose */
  free(w);
  free(free_order);
  free(counter);
  free(sp);
  free(lp);
  free(pw);
  free(store);
  free(cw);
  return rt_finish();
}
