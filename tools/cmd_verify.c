/* cdag — tools/cmd_verify.c: `cdag verify`, not built yet (exits 1 and says so). */
#include "cmd.h"

int cmd_verify(int argc, char **argv) {
  fprintf(stderr, "cdag verify: not built yet\n");
  return 1;
}
