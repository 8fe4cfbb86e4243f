/* cdag — tools/cmd_gen.c: `cdag gen NAME ...`, graphs of known workloads.
 *
 * Each generator writes a global graph file (docs/format.md) and takes its own options:
 *   lu25d / cholesky25d --n N --p P [--c C] [--v V] [-o FILE]   (gen_factor.c)
 *   redistribute --shape MxN --elem BYTES --from MBxNB@PRxPC[+FIRST] --to ... [-o FILE]
 *                                                                (gen_redistribute.c)
 * Exit 0 written, 1 bad input, 2 usage. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

int cmd_gen(int argc, char **argv) {
  if (argc < 1) return cmd_usage("gen");
  if (strcmp(argv[0], "lu25d") == 0) return gen_factor("lu25d", 0, argc - 1, argv + 1);
  if (strcmp(argv[0], "cholesky25d") == 0) return gen_factor("cholesky25d", 1, argc - 1, argv + 1);
  if (strcmp(argv[0], "redistribute") == 0) return gen_redistribute(argc - 1, argv + 1);
  fprintf(stderr, "cdag gen: unknown generator '%s' (lu25d, cholesky25d, redistribute)\n", argv[0]);
  return 2;
}
