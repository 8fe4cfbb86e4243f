/* cdag tests — tests/support: helpers shared by the test programs and benchmarks.
 * Generators live beside this file (gen_*.c), declared in support.h. */
#include "support/support.h"
