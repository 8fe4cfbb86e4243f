/* cdag — tools/cmd_analyze.c: `cdag analyze`, not built yet (exits 1 and says so). */
#include "cmd.h"

int cmd_analyze(int argc, char **argv) {
  fprintf(stderr, "cdag analyze: not built yet\n");
  return 1;
}
