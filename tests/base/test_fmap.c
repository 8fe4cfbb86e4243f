/* cdag tests — base_fmap against base_imap (a plain JudyL) under the same operations:
 * ascending and descending runs (which fill and split chunks at their ends), runs that
 * meet the next chunk from below, random keys, keys at 0 and 2^64 - 1, and ranges deleted
 * whole (chunks dropped, the first one included). Every find in every direction must give
 * the same key and index. */
#include <check.h>

#include "base/fmap.h"
#include "base/imap.h"
#include "check_main.h"

static uint64_t rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 17;
}

typedef struct {
  base_fmap f;
  base_imap j;
} pair;

static void same_find(pair *p, uint64_t k, int dir) {
  uint64_t kf = k, kj = k;
  int64_t a = base_fmap_find(&p->f, &kf, dir), b = base_imap_find(&p->j, &kj, dir);
  CK_HOT(a == b);
  CK_HOT(a < 0 || kf == kj);
}

static void put(pair *p, uint64_t k, int64_t v) {
  CK_OK(base_fmap_put(&p->f, k, v));
  CK_OK(base_imap_put(&p->j, k, v));
}

static void del(pair *p, uint64_t k) {
  CK_OK(base_fmap_del(&p->f, k));
  CK_OK(base_imap_del(&p->j, k));
}

/* Finds around k in every direction. */
static void probe(pair *p, uint64_t k) {
  for (int d = -1; d <= 1; d++) {
    same_find(p, k, d);
    if (k) same_find(p, k - 1, d);
    if (k != ~0ULL) same_find(p, k + 1, d);
  }
}

/* A run of n keys from k at step (either sign), each probed before it goes in. */
static void run(pair *p, uint64_t k, int64_t step, int n, int64_t *v) {
  for (int i = 0; i < n; i++, k += (uint64_t)step) {
    probe(p, k);
    put(p, k, (*v)++);
  }
}

START_TEST(matches_judy) {
  uint64_t s = 11;
  long rounds = cdag_test_iterations(40);
  for (long r = 0; r < rounds; r++) {
    pair p = {{0}, {0}};
    int64_t v = 0;
    uint64_t span = r % 3 ? 1u << 20 : 4096;
    for (int phase = 0; phase < 30; phase++) {
      uint64_t base = rnd(&s) % span * 16, kind = rnd(&s) % 7;
      int n = (int)(rnd(&s) % 300) + 1;
      if (kind == 0) run(&p, base, 16, n, &v);                       /* ascending blocks */
      else if (kind == 1) run(&p, base + 16 * (uint64_t)n, -16, n, &v);  /* descending */
      else if (kind == 2)
        for (int i = 0; i < n; i++) {                                  /* random */
          uint64_t k = rnd(&s) % span * 16;
          probe(&p, k);
          put(&p, k, v++);
        }
      else if (kind == 3)                                              /* a range deleted whole */
        for (uint64_t k = base; k < base + 16 * (uint64_t)n * 4; k += 16) {
          del(&p, k);
          probe(&p, k);
        }
      else if (kind == 4)
        for (int i = 0; i < n; i++) {                                  /* random deletes */
          uint64_t k = rnd(&s) % span * 16;
          del(&p, k);
          probe(&p, k);
        }
      else if (kind == 5) {                                            /* the ends of the key space */
        put(&p, 0, v++), put(&p, ~0ULL, v++), put(&p, 1, v++), put(&p, ~0ULL - 1, v++);
        probe(&p, 0), probe(&p, ~0ULL);
        if (rnd(&s) % 2) del(&p, 0), del(&p, ~0ULL);
        probe(&p, 0), probe(&p, ~0ULL);
      } else
        for (int i = 0; i < n; i++) probe(&p, rnd(&s) % span * 16 + rnd(&s) % 3);  /* look-ups alone */
    }
    for (uint64_t k = 0; k < span * 16; k += 16 * 97) probe(&p, k);
    base_fmap_clear(&p.f);
    base_imap_clear(&p.j);
    probe(&p, 0);
  }
}
END_TEST

/* Everything deleted leaves a map that answers none and takes keys again. */
START_TEST(emptied_and_refilled) {
  pair p = {{0}, {0}};
  int64_t v = 0;
  run(&p, 1000, 8, 1000, &v);
  for (uint64_t k = 1000; k < 1000 + 8 * 1000; k += 8) del(&p, k);
  probe(&p, 5000);
  ck_assert_int_eq(p.f.n, 0);
  run(&p, 9000, -8, 500, &v);
  probe(&p, 5000);
  base_fmap_clear(&p.f);
  base_imap_clear(&p.j);
}
END_TEST

/* Keys deleted in a scattered way leave no row of nearly empty chunks: thinned chunks join
   their neighbours. 64,000 keys in ascending order, then 63 of every 64 deleted, in either
   order: a chunk for every 16 keys at most, where each would otherwise keep its one key. */
START_TEST(thinned_chunks_join) {
  for (int down = 0; down < 2; down++) {
    pair p = {{0}, {0}};
    int64_t v = 0;
    enum { N = 64000 };
    for (uint64_t k = 0; k < N; k++) put(&p, 4096 + 8 * k, v++);
    ck_assert_int_eq(p.f.chunks, N / FMAP_CHUNK);   /* an ascending run fills them whole */
    for (uint64_t j = 0; j < N; j++) {
      uint64_t k = down ? N - 1 - j : j;
      if (k % 64) del(&p, 4096 + 8 * k);
    }
    ck_assert_int_eq(p.f.n, N / 64);
    ck_assert_msg(p.f.chunks <= N / 64 / 16 + 1, "%lld chunks for %lld keys", (long long)p.f.chunks, (long long)p.f.n);
    for (uint64_t k = 0; k < N; k += 61) probe(&p, 4096 + 8 * k);
    base_fmap_clear(&p.f);
    base_imap_clear(&p.j);
  }
}
END_TEST

/* A run downwards above every key of a full chunk that is not the last (the next chunk's
   keys above it) fills chunks at least half: a chunk a key would be 64 times the memory. */
START_TEST(run_down_under_the_next_chunk) {
  pair p = {{0}, {0}};
  int64_t v = 0;
  run(&p, 0, 8, FMAP_CHUNK, &v);
  put(&p, 1 << 20, v++);
  run(&p, (1 << 20) - 8, -8, 1000, &v);
  ck_assert_msg(p.f.chunks <= p.f.n / (FMAP_CHUNK / 2) + 2, "%lld chunks for %lld keys", (long long)p.f.chunks, (long long)p.f.n);
  base_fmap_clear(&p.f);
  base_imap_clear(&p.j);
}
END_TEST

static Suite *cdag_fmap_suite(void) {
  Suite *s = suite_create("fmap");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, matches_judy);
  tcase_add_test(tc, emptied_and_refilled);
  tcase_add_test(tc, thinned_chunks_join);
  tcase_add_test(tc, run_down_under_the_next_chunk);
  suite_add_tcase(s, tc);
  return s;
}

CDAG_CHECK_MAIN(cdag_fmap_suite)
