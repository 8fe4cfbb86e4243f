/* cdag — tools/cmd.h: the subcommands of the `cdag` program.
 *
 * Each subcommand lives in tools/cmd_<name>.c, takes the arguments after its name and
 * returns the process exit status (0 success, 1 the input is bad or a check failed, 2 usage).
 * Errors go to stderr as "cdag <name>: <message>". */
#ifndef CDAG_TOOLS_CMD_H
#define CDAG_TOOLS_CMD_H

#include <stdio.h>

#include "cdag.h"

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *usage;     /* one line: arguments */
  const char *summary;   /* one line: what it does */
} cmd_info;

int cmd_check(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_dot(int argc, char **argv);
int cmd_sst(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_goal(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
/* Generators (`cdag gen NAME ...`): gen_factor.c writes lu25d (cholesky = 0) and cholesky25d. */
int gen_factor(const char *name, int cholesky, int argc, char **argv);
/* gen_redistribute.c: one M:N block-cyclic redistribution. */
int gen_redistribute(int argc, char **argv);

/* Shared helpers (tools/cdag.c). */
int cmd_fail(const char *cmd, int rc);                     /* prints the error, returns 1 */
int cmd_usage(const char *cmd);                            /* prints usage, returns 2 */
int cmd_has_flag(int *argc, char **argv, const char *flag); /* removes flag if present */
const char *cmd_flag_value(int *argc, char **argv, const char *prefix); /* "--x=" form, removed */
/* Every number a command line gives goes through these: the whole of s, in [lo, hi], else -1
   (NULL or empty, trailing text, a sign where none is allowed, a value out of range, which
   strto* would clamp or wrap). 0 and *out set on success. */
int cmd_num_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);   /* decimal or 0x hex */
int cmd_num_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);      /* decimal */
int cmd_num_double(const char *s, double lo, double hi, double *out);      /* finite */
/* --goal-buffers=follow|shared|fresh (removed from argv): IR_GOAL_* (default follow), -1 a bad value. */
int cmd_goal_buffers(int *argc, char **argv);
/* Parses the options of the commands that analyse or compile (analyze, verify, goal, dot,
   replay): one
   --<flag>=VALUE per row of the options table (base/settings.h) that has a flag, a bare --<flag>
   for 0|1 options; the rest keep cdag_options_init's defaults. 0 on success; -1 on a bad
   value, after printing the message that names the flag and the value. */
int cmd_options(int *argc, char **argv, cdag_options *o);
/* The same without printing (the message is cdag_error_message()'s): for `cdag replay`,
   whose every process parses and whose rank 0 alone prints. */
int cmd_options_quiet(int *argc, char **argv, cdag_options *o);
/* Where a file shipped with cdag is, into buf: the first of dirs (relative to the directory
   of the running program: "" beside it, as in a build tree, "/../lib" ...; NULL ends the list)
   that holds name with access `mode` (R_OK, X_OK). 0 if none does. */
int cmd_find_shipped(const char *name, const char *const *dirs, int mode, char *buf, size_t size);
/* Loads a graph file with the GOAL buffer meaning given (IR_GOAL_*, parsed by the caller). */
int cmd_load(const char *cmd, const char *path, int goal_buffers, cdag_graph **g);
/* The same without printing: the loader's code (its message in cdag_error_message()). */
int cmd_load_rc(const char *path, int goal_buffers, cdag_graph **g);

#endif
