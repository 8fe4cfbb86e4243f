/* cdag tests — tests/record/rec_acc_order.c: one origin's accumulates to the same bytes in
 * one epoch (the shape of MPICH's rma/acc_ordering), and accumulates of padded pairs.
 *
 * MPI applies an origin's accumulate-family calls to the same bytes in program order when
 * the window's accumulate_ordering asks for it, which is its default. The last rank makes
 * each part's calls on rank 0's memory; its recording must say so (a `wait` line before each
 * access that must follow another), load, verify and replay to the bytes MPI left:
 *  1. ordered: in one fence epoch it replaces pairs of ints by x, combines y with MPI_MAXLOC
 *     and replaces them by z (MPI's order leaves z), then fetches them with a no-op
 *     Get_accumulate, left out: MPI gives it z, a graph's get the epoch's start (its bytes
 *     are not compared);
 *  2. sums: two MPI_SUMs of one counter (sums commute: no order needed);
 *  3. unordered: with accumulate_ordering "none", the second of two replacements of the same
 *     bytes is left out, counted: they end in either order (those bytes are not compared);
 *  4. padded pairs (MPI_SHORT_INT: an int at 4 after a short; MPI_LONG_DOUBLE_INT: 20 bytes
 *     of 32) accumulated with MPI_MAXLOC through vectors (MPICH's rma/acc_pairtype), and two
 *     contiguous short_int pairs (whose layout glues one's int to the next one's short): each
 *     element one range of the graph's type, padding included; the short_int pairs' value
 *     bytes compared (x87 long doubles from the replay's bytes are not normal numbers, which
 *     MPI and cdag order differently);
 *  5. flush_local: under lock_all, a sum and a product of one int64 with MPI_Win_flush_local
 *     between them (which completes them at the origin only): still in MPI's order;
 *  6. misaligned: a window whose base is 4 mod 8, which MPICH 4.0.2 aligns down, its
 *     accumulate landing where MPI put it;
 *  7. swaps: a compare-and-swap that swaps, then a replacing accumulate of the same bytes (the
 *     swap's put ordered before it), and a fetch-and-add then a compare-and-swap of the same
 *     bytes (the swap's fetch left out: MPI gives it the added value, a graph's get the
 *     epoch's start);
 *  8. plain: MPI orders no plain put or get of an origin after its other accesses to the
 *     same bytes in one epoch (MPICH's rma/overlap_wins_put puts twice): a put then a second
 *     put of the same int, a get of it, an accumulate into it, each left out, counted (the
 *     int is not compared); a put and a get of another int, recorded as before the fix made
 *     the epoch a race that dropped every access of the target (its bytes compared).
 * Every buffer lives to the end, so no address is used twice. */
#include "rec_test.h"

enum { N = 4, MAX_OWNED = 32 };
typedef struct { int val, loc; } pair;
typedef struct { short val; int loc; } short_pair;
typedef struct { long double val; int loc; } ld_pair;

/* What the parts allocated, freed at the end; the last rank, which makes the calls. */
typedef struct { void *p[MAX_OWNED]; int n, last; } parts;

static void *owned(parts *t, size_t bytes) {
  MT_REQUIRE(t->n < MAX_OWNED);
  void *p = malloc(bytes);
  MT_REQUIRE(p != NULL);
  rt_fill(p, bytes);
  return t->p[t->n++] = p;
}

/* A fence epoch on a new window over [base, base + bytes) of disp_unit `unit`, in which the
   last rank runs `calls`. */
static void epoch(parts *t, void *base, size_t bytes, int unit, MPI_Info info, void (*calls)(MPI_Win, void *),
                  void *arg) {
  MPI_Win win;
  MPI_Win_create(base, (MPI_Aint)bytes, unit, info, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  if (rt_rank == t->last) calls(win, arg);
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
}

typedef struct { pair *x, *y, *z, *seen; } ordered_args;

static void ordered_calls(MPI_Win win, void *arg) {
  ordered_args *a = arg;
  MPI_Accumulate(a->x, N, MPI_2INT, 0, 0, N, MPI_2INT, MPI_REPLACE, win);
  MPI_Accumulate(a->y, N, MPI_2INT, 0, 0, N, MPI_2INT, MPI_MAXLOC, win);
  MPI_Accumulate(a->z, N, MPI_2INT, 0, 0, N, MPI_2INT, MPI_REPLACE, win);
  MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, a->seen, N, MPI_2INT, 0, 0, N, MPI_2INT, MPI_NO_OP, win);
}

static void ordered(parts *t) {
  pair *w = owned(t, N * sizeof *w);
  ordered_args a = {owned(t, N * sizeof(pair)), owned(t, N * sizeof(pair)), owned(t, N * sizeof(pair)),
                    owned(t, N * sizeof(pair))};
  epoch(t, w, N * sizeof *w, 1, MPI_INFO_NULL, ordered_calls, &a);
  if (rt_rank == t->last) MT_REQUIRE(!memcmp(a.seen, a.z, N * sizeof(pair)));
  rt_keep(w, N * sizeof *w);
}

static void two_sums(MPI_Win win, void *s) {
  MPI_Accumulate(s, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
  MPI_Accumulate(s, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);
}

static void two_replacements(MPI_Win win, void *ab) {
  MPI_Accumulate(ab, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_REPLACE, win);
  MPI_Accumulate((int *)ab + 1, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_REPLACE, win);
}

static void sums_and_unordered(parts *t) {
  int *counter = owned(t, sizeof *counter), *s = owned(t, sizeof *s);
  epoch(t, counter, sizeof *counter, 1, MPI_INFO_NULL, two_sums, s);
  rt_keep(counter, sizeof *counter);
  int *target = owned(t, 2 * sizeof *target), *ab = owned(t, 2 * sizeof *ab);
  MPI_Info none;
  MPI_Info_create(&none);
  MPI_Info_set(none, "accumulate_ordering", "none");
  epoch(t, target, 2 * sizeof *target, 1, none, two_replacements, ab);
  MPI_Info_free(&none);
  rt_keep(target + 1, sizeof *target);   /* its first int: a or b, as MPI chose */
}

typedef struct { MPI_Datatype v; void *origin; int contiguous; } pairs_args;

static void pair_maxlocs(MPI_Win win, void *arg) {
  pairs_args *a = arg;
  MPI_Accumulate(a->origin, 1, a->v, 0, 0, 1, a->v, MPI_MAXLOC, win);
  if (a->contiguous)   /* elements 1 and 2 */
    MPI_Accumulate(a->origin, 2, MPI_SHORT_INT, 0, sizeof(short_pair), 2, MPI_SHORT_INT, MPI_MAXLOC, win);
}

static void padded_pairs(parts *t) {
  short_pair *sp = owned(t, 2 * N * sizeof *sp);
  ld_pair *lp = owned(t, 2 * N * sizeof *lp);
  pairs_args s = {MPI_DATATYPE_NULL, owned(t, 2 * N * sizeof *sp), 1}, l = {MPI_DATATYPE_NULL, owned(t, 2 * N * sizeof *lp), 0};
  MPI_Type_vector(N, 1, 2, MPI_SHORT_INT, &s.v);
  MPI_Type_vector(N, 1, 2, MPI_LONG_DOUBLE_INT, &l.v);
  MPI_Type_commit(&s.v);
  MPI_Type_commit(&l.v);
  epoch(t, sp, 2 * N * sizeof *sp, 1, MPI_INFO_NULL, pair_maxlocs, &s);
  epoch(t, lp, 2 * N * sizeof *lp, 1, MPI_INFO_NULL, pair_maxlocs, &l);
  MPI_Type_free(&s.v);
  MPI_Type_free(&l.v);
  for (int i = 0; i < 2 * N; i++) {   /* not the padding, which MPI leaves alone */
    rt_keep(&sp[i].val, sizeof sp[i].val);
    rt_keep(&sp[i].loc, sizeof sp[i].loc);
  }
}

static void flush_local_order(parts *t) {
  int64_t *pw = owned(t, 2 * sizeof *pw), *v = owned(t, 3 * sizeof *v);   /* v: the addend, factor, fetched */
  MPI_Win win;
  MPI_Win_create(pw, 2 * sizeof *pw, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  if (rt_rank == t->last) {
    MPI_Win_lock_all(0, win);
    MPI_Accumulate(&v[0], 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, MPI_SUM, win);
    MPI_Get(&v[2], 1, MPI_INT64_T, 0, sizeof *pw, 1, MPI_INT64_T, win);
    MPI_Win_flush_local(0, win);
    MPI_Accumulate(&v[1], 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, MPI_PROD, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  rt_keep(pw, sizeof *pw);
}

static void add_int(MPI_Win win, void *one) { MPI_Accumulate(one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win); }

/* MPICH 4.0.2 takes the base of a window of one int at an address 4 mod 8 aligned down, and
   adds into the int before it; the recording does as MPI did. */
static void misaligned(parts *t) {
  int *ints = owned(t, 2 * sizeof *ints);   /* malloc: 16-byte aligned */
  epoch(t, &ints[1], sizeof *ints, 1, MPI_INFO_NULL, add_int, owned(t, sizeof(int)));
  rt_keep(ints, 2 * sizeof *ints);
}

typedef struct { int64_t *cmpv, *v; } swap_args;   /* v: new, replacement, addend, fetched, zero, old x2 */

static void swap_calls(MPI_Win win, void *arg) {
  swap_args *a = arg;
  MPI_Compare_and_swap(&a->v[0], &a->cmpv[0], &a->v[5], MPI_INT64_T, 0, 0, win);
  MPI_Accumulate(&a->v[1], 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, MPI_REPLACE, win);
  MPI_Fetch_and_op(&a->v[2], &a->v[3], MPI_INT64_T, 0, 1, MPI_SUM, win);
  MPI_Compare_and_swap(&a->v[0], &a->v[4], &a->v[6], MPI_INT64_T, 0, 1, win);
}

static void swaps(parts *t) {
  int64_t *cw = owned(t, 2 * sizeof *cw);
  swap_args a = {owned(t, 2 * sizeof *cw), owned(t, 7 * sizeof(int64_t))};
  a.v[4] = 0;   /* compared with the fetched-and-added int64: no swap */
  memcpy(a.cmpv, cw, 2 * sizeof *cw);
  MPI_Bcast(a.cmpv, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);   /* rank 0's value: the first swap takes place */
  epoch(t, cw, 2 * sizeof *cw, sizeof *cw, MPI_INFO_NULL, swap_calls, &a);
  rt_keep(cw, 2 * sizeof *cw);
}

static void plain_calls(MPI_Win win, void *arg) {
  int *v = arg;   /* two values, the get's result, the other int's value and its get's result */
  MPI_Put(&v[0], 1, MPI_INT, 0, 0, 1, MPI_INT, win);
  MPI_Put(&v[1], 1, MPI_INT, 0, 0, 1, MPI_INT, win);   /* left out */
  MPI_Get(&v[2], 1, MPI_INT, 0, 0, 1, MPI_INT, win);   /* left out */
  MPI_Accumulate(&v[1], 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);   /* left out */
  MPI_Put(&v[3], 1, MPI_INT, 0, 1, 1, MPI_INT, win);
  MPI_Get(&v[4], 1, MPI_INT, 0, 2, 1, MPI_INT, win);
}

static void plain(parts *t) {
  int *w = owned(t, 3 * sizeof *w), *v = owned(t, 5 * sizeof *v);
  epoch(t, w, 3 * sizeof *w, sizeof *w, MPI_INFO_NULL, plain_calls, v);
  rt_keep(&w[1], 2 * sizeof *w);   /* w[0]: the last put or the sum, as MPI chose */
  if (rt_rank == t->last) rt_keep(&v[3], 2 * sizeof *v);
}

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  parts t = {.last = rt_size - 1};
  ordered(&t);
  sums_and_unordered(&t);
  padded_pairs(&t);
  flush_local_order(&t);
  misaligned(&t);
  swaps(&t);
  plain(&t);
  for (int k = 0; k < t.n; k++) free(t.p[k]);
  return rt_finish();
}
