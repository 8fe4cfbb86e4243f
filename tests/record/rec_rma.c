/* cdag tests — tests/record/rec_rma.c: one-sided communication in fence epochs.
 *
 * Built twice. As rec_rma: a window made by MPI_Win_create over a buffer of doubles; in
 * one epoch every rank puts a block to its right neighbour and gets one from its left, in
 * the next it puts with a strided datatype at both ends (origin packed, target as two
 * ranges); then every rank computes a block of its window that its right neighbour gets
 * in the last epoch (the recording computes it before the fence that opens that epoch:
 * the origin's recorder tells the target at the closing fence). The replay must leave
 * every byte where MPI put it. As rec_rma_acc (ACC): a
 * window from MPI_Win_allocate holding ints; every rank accumulates into rank 0's first
 * block (sum), rank 0 fetches-and-adds (Fetch_and_op) and get-accumulates (max) on blocks
 * nobody else updates, swaps with Compare_and_swap (once matching, once not), and replaces
 * (MPI_REPLACE) in its right neighbour; then puts to and gets from its right neighbour in a
 * post/start/complete/wait epoch; then a window on each half of the ranks (even and odd:
 * fences of a communicator) takes a put and a sum. The program checks what MPI did;
 * the recording must pass check, analyze and verify (replay does not run a communicator's
 * fences yet). rec_rma also creates a window it frees before any fence. */
#include <string.h>

#include "rec_test.h"

enum { N = 16 };

#ifndef ACC
int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int right = (rt_rank + 1) % rt_size, left = (rt_rank + rt_size - 1) % rt_size;
  double *w = malloc(N * sizeof *w), src[N], got[4], got2[4];
  MT_REQUIRE(w != NULL);
  rt_fill(w, N * sizeof *w); rt_fill(src, sizeof src); rt_fill(got, sizeof got); rt_fill(got2, sizeof got2);
  MPI_Win win, idle;
  /* a window whose communicator the recorder duplicates without waiting, freed before any
     fence: the duplicate completes at the free */
  MPI_Win_create(src, sizeof src, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &idle);
  MPI_Win_free(&idle);
  MPI_Win_create(w, N * sizeof *w, sizeof *w, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  MPI_Put(src, 4, MPI_DOUBLE, right, 0, 4, MPI_DOUBLE, win);
  MPI_Get(got, 4, MPI_DOUBLE, left, 8, 4, MPI_DOUBLE, win);
  MPI_Win_fence(0, win);
  MPI_Datatype every_other;   /* elements 0 and 2 */
  MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Put(&src[4], 1, every_other, right, 12, 1, every_other, win);
  MPI_Win_fence(0, win);
  for (int i = 8; i < 12; i++) w[i] = 1000.0 * rt_rank + i;   /* computed here, read by the right's get */
  MPI_Win_fence(0, win);
  MPI_Get(got2, 4, MPI_DOUBLE, left, 8, 4, MPI_DOUBLE, win);
  MPI_Win_fence(0, win);
  MPI_Type_free(&every_other);
  MPI_Win_free(&win);
  double left_src[N];   /* the left neighbour's src, as it filled it: check what arrived */
  MPI_Sendrecv(src, N, MPI_DOUBLE, right, 0, left_src, N, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MT_REQUIRE(memcmp(w, left_src, 4 * sizeof *w) == 0);
  for (int i = 0; i < 4; i++) MT_REQUIRE(got2[i] == 1000.0 * left + 8 + i);
  MT_REQUIRE(memcmp(&w[12], &left_src[4], sizeof *w) == 0 && memcmp(&w[14], &left_src[6], sizeof *w) == 0);
  rt_keep(w, 8 * sizeof *w);   /* w[8..11] and got2 were computed: the replay skips computations */
  rt_keep(&w[12], 4 * sizeof *w);
  rt_keep(got, sizeof got);
  if (argc > 1) {   /* where the computed block is, for check_rma.py */
    char path[4096];
    snprintf(path, sizeof path, "%s/window-%d.txt", argv[1], rt_rank);
    FILE *f = fopen(path, "w");
    MT_REQUIRE(f != NULL);
    fprintf(f, "0x%llx %zu\n", (unsigned long long)(uintptr_t)&w[8], 4 * sizeof *w);
    fclose(f);
  }
  free(w);
  return rt_finish();
}
#else
int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int right = (rt_rank + 1) % rt_size;
  int *w = NULL, add[4] = {1, 2, 3, 4}, one = 1, old = -1, maxv[2] = {100, -100}, before[2] = {0, 0};
  int swap = 77, cmp = 0, res = -1, cmp2 = 5, swap2 = 88, res2 = -1, rep[2] = {rt_rank, rt_rank};
  MPI_Win win;
  MPI_Win_allocate(N * sizeof *w, sizeof *w, MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win);
  for (int i = 0; i < N; i++) w[i] = i;   /* before any epoch: all see it after the first fence */
  MPI_Win_fence(0, win);
  MPI_Accumulate(add, 4, MPI_INT, 0, 0, 4, MPI_INT, MPI_SUM, win);
  if (rt_rank == 0) {
    MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 4, MPI_SUM, win);
    MPI_Get_accumulate(maxv, 2, MPI_INT, before, 2, MPI_INT, 0, 6, 2, MPI_INT, MPI_MAX, win);
    MPI_Compare_and_swap(&swap, &cmp, &res, MPI_INT, 0, 8, win);     /* w[8] is 8: no swap */
    MPI_Compare_and_swap(&swap2, &cmp2, &res2, MPI_INT, 0, 9, win);  /* w[9] is 9: no swap either */
  }
  MPI_Accumulate(rep, 2, MPI_INT, right, 12, 2, MPI_INT, MPI_REPLACE, win);
  MPI_Win_fence(0, win);
  if (rt_rank == 0) {
    cmp = 8;   /* now it matches */
    MPI_Compare_and_swap(&swap, &cmp, &res, MPI_INT, 0, 8, win);
  }
  MPI_Win_fence(0, win);
  if (rt_rank == 0) {
    for (int i = 0; i < 4; i++) MT_REQUIRE(w[i] == i + rt_size * (i + 1));
    MT_REQUIRE(old == 4 && w[4] == 5);
    MT_REQUIRE(before[0] == 6 && before[1] == 7 && w[6] == 100 && w[7] == 7);
    MT_REQUIRE(res == 8 && w[8] == 77 && res2 == 9 && w[9] == 9);
  }
  MT_REQUIRE(w[12] == (rt_rank + rt_size - 1) % rt_size && w[13] == w[12]);
  /* post/start/complete/wait in a ring: the left neighbour puts into me and gets from me */
  int left = (rt_rank + rt_size - 1) % rt_size, pv[2] = {3 * rt_rank, 3 * rt_rank + 1}, pg[2] = {-1, -1};
  MPI_Group wg, lg, rg;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_incl(wg, 1, &left, &lg);
  MPI_Group_incl(wg, 1, &right, &rg);
  MPI_Win_post(lg, 0, win);
  MPI_Win_start(rg, 0, win);
  MPI_Put(pv, 2, MPI_INT, right, 14, 2, MPI_INT, win);
  MPI_Get(pg, 2, MPI_INT, right, 10, 2, MPI_INT, win);
  MPI_Win_complete(win);
  MPI_Win_wait(win);
  MT_REQUIRE(w[14] == 3 * left && w[15] == 3 * left + 1 && pg[0] == 10 && pg[1] == 11);
  MPI_Group_free(&lg);
  MPI_Group_free(&rg);
  MPI_Group_free(&wg);
  /* a window on each half of the ranks (even, odd): its fences are its members' only */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rt_rank % 2, rt_rank, &half);
  int hr, hs, *hw = NULL, mine[2] = {rt_rank, rt_rank};
  MPI_Comm_rank(half, &hr);
  MPI_Comm_size(half, &hs);
  MPI_Win hwin;
  MPI_Win_allocate(4 * sizeof *hw, sizeof *hw, MPI_INFO_NULL, half, &hw, &hwin);
  hw[2] = 0;
  MPI_Win_fence(0, hwin);
  MPI_Put(mine, 2, MPI_INT, (hr + 1) % hs, 0, 2, MPI_INT, hwin);
  MPI_Accumulate(mine, 1, MPI_INT, 0, 2, 1, MPI_INT, MPI_SUM, hwin);
  MPI_Win_fence(0, hwin);
  MT_REQUIRE(hw[0] == hw[1] && hw[0] % 2 == rt_rank % 2);
  if (hr == 0) {
    int want = 0;
    for (int r = rt_rank % 2; r < rt_size; r += 2) want += r;
    MT_REQUIRE(hw[2] == want);
  }
  MPI_Win_free(&hwin);
  MPI_Comm_free(&half);
  int sum = 0;
  for (int i = 0; i < N; i++) sum += w[i];
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);   /* the window's bytes, used */
  MPI_Win_free(&win);
  return rt_finish();
}
#endif
