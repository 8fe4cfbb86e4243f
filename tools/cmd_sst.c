/* cdag — tools/cmd_sst.c: `cdag sst`, not built yet (exits 1 and says so). */
#include "cmd.h"

int cmd_sst(int argc, char **argv) {
  fprintf(stderr, "cdag sst: not built yet\n");
  return 1;
}
