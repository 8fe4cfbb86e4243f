/* cdag — tools/format_load.c: loading graph files for the subcommands.
 *
 * cmd_load() reads a graph file (or - for standard input) with the ir loader, giving GOAL
 * ops without `addr` the buffers --goal-buffers= asks for (format.h), and prints the
 * loader's located message ("FILE:LINE:COL: expected X, found 'Y'") on failure; cmd_load_rc
 * leaves the printing to its caller (replay prints once for all its processes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "format/format.h"
#include "record/record.h"

/* A phase file of a recording whose ranks are folded (docs/recording.md, "Ranks stored
   once") is loaded unfolded: every subcommand reads it as the graph it stands for. */
int cmd_load_rc(const char *path, int goal_buffers, cdag_graph **g) {
  ir_load_opts o = {0};
  o.goal_buffers = goal_buffers;
  cdag__error_clear();
  FILE *f = strcmp(path, "-") ? fopen(path, "rb") : NULL;
  struct stat st;
  if (!f || fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {   /* standard input, a device, or the loader's error */
    if (f) fclose(f);
    return ir_load_file(path, &o, g);
  }
  char *buf = NULL, *unfolded = NULL;
  size_t len = 0, cap = 0, ulen = 0;
  for (size_t n = 1; n;) {
    if (len == cap) {
      char *b = realloc(buf, cap = cap ? 2 * cap : 1 << 16);
      if (!b) return free(buf), fclose(f), CDAG_NOMEM(path);
      buf = b;
    }
    len += n = fread(buf + len, 1, cap - len, f);
  }
  int bad = ferror(f);
  fclose(f);
  if (bad || (len && memchr(buf, 0, len))) return free(buf), ir_load_file(path, &o, g);   /* the loader says why */
  int rc = rec_ranks_unfold(buf ? buf : "", len, &unfolded, &ulen);
  if (rc) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", cdag_error_message());
    rc = cdag__error(rc, "%s: %s", path, msg);
  } else {
    rc = unfolded ? ir_load_mem(unfolded, ulen, path, &o, g) : ir_load_mem(buf ? buf : "", len, path, &o, g);
  }
  free(buf), free(unfolded);
  return rc;
}

int cmd_load(const char *cmd, const char *path, int goal_buffers, cdag_graph **g) {
  int rc = cmd_load_rc(path, goal_buffers, g);
  if (rc) return cmd_fail(cmd, rc);
  return 0;
}
