/* cdag — tools/cmd_model.c: `cdag model`, not built yet (exits 1 and says so). */
#include "cmd.h"

int cmd_model(int argc, char **argv) {
  fprintf(stderr, "cdag model: not built yet\n");
  return 1;
}
