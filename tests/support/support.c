/* cdag tests — tests/support: helpers shared by the test programs and benchmarks.
 * Generators live beside this file (gen_*.c), declared in support.h. */
#include "support/support.h"

#include <string.h>

#include "detect/detect.h"

int cdag_test_noted(const cdag_plan *p, const char *text) {
  for (int64_t i = 0; i < p->nnotes; i++)
    if (strstr(p->notes[i], text)) return 1;
  return 0;
}
