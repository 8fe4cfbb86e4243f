/* cdag — tools/cmd_check.c: `cdag check`, not built yet (exits 1 and says so). */
#include "cmd.h"

int cmd_check(int argc, char **argv) {
  fprintf(stderr, "cdag check: not built yet\n");
  return 1;
}
