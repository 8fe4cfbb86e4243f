/* cdag — tools/cmd_goal.c: `cdag goal`, not built yet (exits 1 and says so). */
#include "cmd.h"

int cmd_goal(int argc, char **argv) {
  fprintf(stderr, "cdag goal: not built yet\n");
  return 1;
}
