/* cdag — tools/cmd_dot.c: `cdag dot`, not built yet (exits 1 and says so). */
#include "cmd.h"

int cmd_dot(int argc, char **argv) {
  fprintf(stderr, "cdag dot: not built yet\n");
  return 1;
}
