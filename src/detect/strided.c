/* cdag — src/detect/strided.c: a bcast's member ranks as strided ranges (the replication
 * descriptor of the report).
 *
 * A replica set such as "every 8th rank" or "one grid column" is a few arithmetic
 * progressions of ranks. Greedy, left to right over the sorted members: a range starts at
 * the next rank and takes the stride to the rank after it if the rank after that keeps the
 * stride (three or more ranks per range), else the rank stands alone; the last two ranks
 * form a range of two. The set "forms strided ranges" when that gives one range, or at most
 * one range per three members; otherwise there is no descriptor (a scattered set described
 * rank by rank says nothing a rank list does not). Cost O(n) for n members. */
#include "detect/detect.h"

int64_t det_strided_ranges(const int32_t *r, int32_t n, det_stride *out, int64_t cap) {
  int64_t k = 0;
  for (int32_t i = 0; i < n;) {
    int32_t count = 1, stride = 1;
    if (i + 1 < n && (i + 2 == n || r[i + 2] - r[i + 1] == r[i + 1] - r[i])) {
      stride = r[i + 1] - r[i];
      count = 2;
      while (i + count < n && r[i + count] - r[i + count - 1] == stride) count++;
    }
    if (k < cap) out[k] = (det_stride){r[i], count, stride};
    k++;
    i += count;
  }
  return k == 1 || k * 3 <= n ? k : 0;
}
