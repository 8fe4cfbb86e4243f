/* cdag tests — base_sort_fields against a stable comparison sort on random records. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "ir/ir.h"

typedef struct {
  int32_t a;      /* signed, small range */
  uint8_t b;
  uint16_t c;
  uint64_t d;
  int32_t e;      /* indexes map */
} rec;

static rec *R;
static int32_t map[16];

static uint64_t rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 17;
}

/* (map[e], a, d, c, b, index): the order the radix keys below ask for. */
static int cmp(const void *x, const void *y) {
  int64_t i = *(const int64_t *)x, j = *(const int64_t *)y;
  const rec *p = &R[i], *q = &R[j];
  if (map[p->e] != map[q->e]) return map[p->e] < map[q->e] ? -1 : 1;
  if (p->a != q->a) return p->a < q->a ? -1 : 1;
  if (p->d != q->d) return p->d < q->d ? -1 : 1;
  if (p->c != q->c) return p->c < q->c ? -1 : 1;
  if (p->b != q->b) return p->b < q->b ? -1 : 1;
  return (i > j) - (i < j);
}

START_TEST(matches_comparison_sort) {
  uint64_t s = 7;
  long rounds = cdag_test_iterations(60);
  for (long r = 0; r < rounds; r++) {
    int64_t n = (int64_t)(rnd(&s) % (r % 3 ? 3000 : 60)) ;
    R = malloc(sizeof *R * (size_t)(n ? n : 1));
    int64_t *want = malloc(sizeof *want * (size_t)(n ? n : 1)), *got = malloc(sizeof *got * (size_t)(n ? n : 1));
    for (int k = 0; k < 16; k++) map[k] = (int32_t)(rnd(&s) % 5) - 2;
    uint64_t dmask = r % 2 ? ~0ULL : 0xff00;   /* sometimes only one varying byte */
    for (int64_t i = 0; i < n; i++) {
      R[i] = (rec){(int32_t)(rnd(&s) % 7) - 3, (uint8_t)rnd(&s), (uint16_t)(rnd(&s) % 3), (rnd(&s) << 20 ^ rnd(&s)) & dmask,
                   (int32_t)(rnd(&s) % 16)};
      want[i] = got[i] = n - 1 - i;   /* descending: the index key must reorder ties */
    }
    qsort(want, (size_t)n, sizeof *want, cmp);
    base_key k[6] = {BASE_KEY_SIGNED(R, e), BASE_KEY_SIGNED(R, a), BASE_KEY(R, d), BASE_KEY(R, c), BASE_KEY(R, b), BASE_KEY_INDEX};
    k[0].map = map;
    ck_assert_int_eq(base_sort_fields(got, n, k, 6), CDAG_OK);
    ck_assert_msg(memcmp(want, got, sizeof *got * (size_t)n) == 0, "round %ld, n=%lld: orders differ", r, (long long)n);
    ck_assert_int_eq(base_sort_fields(got, n, k, 6), CDAG_OK); /* already in order: unchanged */
    ck_assert_msg(memcmp(want, got, sizeof *got * (size_t)n) == 0, "round %ld, n=%lld: sorted again, differs", r, (long long)n);
    free(R);
    free(want);
    free(got);
  }
}
END_TEST

/* Without the index key, ties keep their input order (stability). */
START_TEST(stable) {
  enum { N = 1000 };
  static rec r[N];
  int64_t idx[N];
  for (int i = 0; i < N; i++) r[i].a = (i * 7919) % 3, idx[i] = N - 1 - i;
  base_key k = BASE_KEY(r, a);
  ck_assert_int_eq(base_sort_fields(idx, N, &k, 1), CDAG_OK);
  for (int i = 1; i < N; i++) {
    ck_assert_int_le(r[idx[i - 1]].a, r[idx[i]].a);
    if (r[idx[i - 1]].a == r[idx[i]].a) ck_assert_int_gt(idx[i - 1], idx[i]);
  }
}
END_TEST

static Suite *cdag_sort_suite(void) {
  Suite *s = suite_create("sort");
  TCase *t = tcase_create("radix");
  tcase_add_test(t, matches_comparison_sort);
  tcase_add_test(t, stable);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_sort_suite)
