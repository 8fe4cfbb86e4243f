/* cdag — tools/cdag.c: the command-line program.
 *
 * `cdag <subcommand> [args]`: dispatches to tools/cmd_<name>.c and holds the small helpers
 * they share (flags, error printing, loading a file). `cdag --help` lists the subcommands. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__has_feature)
#define CDAG_HAS_ASAN __has_feature(address_sanitizer)
#else
#define CDAG_HAS_ASAN 0
#endif

#include "cmd.h"
#include "format/format.h"
#include "ir/ir.h"
#include "base/alloc.h"
#include "base/settings.h"

/* `cdag` itself is built without MPI (CDAG_TOOL_MPI=0: nothing it links calls MPI, and it
   starts without loading libmpich); the commands that run under mpiexec are in cdag-mpi, the
   same program with MPI (CDAG_TOOL_MPI=1). Their entries here have no function: `cdag` execs
   cdag-mpi with its own arguments, in the same process, so mpiexec's environment reaches it. */
#ifndef CDAG_TOOL_MPI
#define CDAG_TOOL_MPI 1
#endif
#if CDAG_TOOL_MPI
#define UNDER_MPI(fn) fn
#else
#define UNDER_MPI(fn) NULL
#endif
#ifndef CDAG_LIBEXECDIR   /* from the program's directory (CMake: libexec/cdag under the prefix) */
#define CDAG_LIBEXECDIR "../libexec/cdag"
#endif

static const cmd_info commands[] = {
  {"check", cmd_check, "FILE", "load and validate a graph file; print a one-line summary"},
  {"analyze", cmd_analyze, "FILE|DIR [--json] [OPTIONS: --density=X --min-group=N --exact-float --kernel=mpi|cdag|auto ...]",
   "match, compute SST, detect collectives; print the report (DIR: a recording, each distinct phase once, with its "
   "repeats and share of the run)"},
  {"sst", cmd_sst, "FILE [--json]", "print the Static Single Transfer tuples by destination rank"},
  {"verify", cmd_verify, "FILE [--seed=N] [OPTIONS]",
   "simulate graph and plan from the same memory; compare"},
  {"dot", cmd_dot, "FILE [--plan [OPTIONS]]", "write the graph (and with --plan the compiled plan beside it) as Graphviz DOT"},
  {"goal", cmd_goal, "FILE [--plan [OPTIONS]] [-o OUT]", "write the graph (or the plan, collectives expanded) as plain GOAL for LogGOPSim"},
  {"model", cmd_model, "FILE [-L us] [-o us] [-g us] [-G us/B] [-O us/B] [-S B] [-c us/B] [-p P]",
   "LogGOPS estimate of graph and plan, LogGOPSim's rules (without these flags the machine file's, if any, else defaults "
   "L 1, o 0.2, g 0.2, G 0.0002, O 0, S 65535, c 0.0001; calc N = N ns); "
   "a graph that computes: the computation on each critical path, communication's share, the stages, the saving"},
  {"replay", UNDER_MPI(cmd_replay), "FILE [--iterations N] [--repeat N] [--json] [--dump DIR] [--compute=recorded|none|skip] [--memory=MiB] [OPTIONS]",
   "under mpiexec -n P (P = the file's ranks): run the file as written and compiled with MPI, check both leave "
   "the same memory, time both (default as many iterations as take about 0.25 s, at most 100, repeated 5 times: median and best), print compile time, "
   "break-even and the report; computations spend their cost (--compute=recorded, default) or none; refuses "
   "a file whose loading on every process of the node would need more than the node's available memory (or --memory)"},
  {"record", cmd_record,
   "[-o DIR] [--strict] [--no-fold-ranks] -- COMMAND [ARGS...] | --merge [--flat | --no-fold-ranks] DIR | --expand DIR [-o OUT]",
   "run COMMAND (e.g. mpiexec -n 4 ./app) with every MPI process recorded; write DIR/phase-NNNN.cdag (one graph "
   "file per distinct phase: without MPI_Pcontrol, the iterations found) and DIR/index.json, the run as their "
   "sequence (default DIR: cdag-recording); exits with COMMAND's status (--strict: 1 when the command succeeded "
   "and its recording failed its check); --merge merges part files, --flat a file per phase of the run, "
   "--expand writes that flat form from DIR into OUT (default DIR/flat)"},
  {"calibrate", UNDER_MPI(cmd_calibrate), "[-o FILE] [--quick]",
   "under mpiexec -n 2: measure this MPI's LogGOPS parameters (L, o, g, G, S, copy: ping-pongs, bursts, memcpy) "
   "and its costs by message size, queue and rcopy (exchanges run by cdag's engine; about a second, --quick less) "
   "and write the machine file plans are priced with (-o FILE, else $CDAG_MACHINE, "
   "else ${XDG_CONFIG_HOME:-~/.config}/cdag/machine)"},
  {"gen", cmd_gen, "lu25d|cholesky25d --n N --p P [--c C] [--v V] [-o FILE] | redistribute --shape MxN --elem BYTES "
   "--from MBxNB@PRxPC[+FIRST] --to MBxNB@PRxPC[+FIRST] [-o FILE]",
   "write the graph of a known workload (2.5D LU or Cholesky: its communication, with the lower bound; an M:N "
   "block-cyclic redistribution)"},
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

/* The options every command that analyses takes, from the options table (ir/settings.h). */
static void help_options(FILE *f) {
  fprintf(f, "Options of analyze, verify, goal, dot and replay (the fields of cdag_options; an explicit\n"
             "option wins over its CDAG_* variable):\n");
  for (int id = 0; id < CDAG_NOPTS; id++) {
    const cdag_opt_row *r = &cdag__opt_rows[id];
    if (!r->flag) continue;
    char flag[48], want[96];
    snprintf(flag, sizeof flag, "--%s=%s", r->flag, r->kind == CDAG_OPT_FLAG ? "0|1" : "X");
    cdag__opt_describe(id, 0, 0, want, sizeof want);
    char def[16];
    snprintf(def, sizeof def, "%g", r->def);
    fprintf(f, "  %-18s options.%s: %s (default %s)%s%s\n", flag, r->field, want,
            r->kind == CDAG_OPT_KERNEL ? "auto" : def, r->var ? "; variable " : "", r->var ? r->var : "");
  }
}

static void help(FILE *f) {
  fprintf(f, "usage: cdag <command> [arguments]\n\n"
             "cdag compiles communication graphs: it matches messages, computes where every byte\n"
             "comes from (SST), and recognises the collectives hidden in point-to-point traffic.\n\n"
             "commands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(f, "  %-8s %-40s %s\n", commands[i].name, commands[i].usage, commands[i].summary);
  fprintf(f, "\nFILE is a graph file (docs/format.md; GOAL files load too), or - for standard input.\n"
             "Options for any FILE: --goal-buffers=follow (default: data follows requires), shared or fresh:\n"
             "  the buffers of GOAL sends and receives without addr (docs/format.md).\n");
  help_options(f);
  fprintf(f, "`cdag <command> --help` shows the usage of one command; `cdag --version` the version.\n");
}

int cmd_usage(const char *cmd) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, cmd) == 0)
      fprintf(stderr, "usage: cdag %s %s\n  %s\n", cmd, commands[i].usage, commands[i].summary);
  return 2;
}

int cmd_fail(const char *cmd, int rc) {
  const char *msg = cdag_error_message();
  fprintf(stderr, "cdag %s: %s%s%s\n", cmd, cdag_strerror(rc), msg[0] ? ": " : "", msg);
  return 1;
}

int cmd_has_flag(int *argc, char **argv, const char *flag) {
  for (int i = 0; i < *argc; i++)
    if (strcmp(argv[i], flag) == 0) {
      memmove(argv + i, argv + i + 1, (size_t)(*argc - i - 1) * sizeof *argv);
      (*argc)--;
      return 1;
    }
  return 0;
}

const char *cmd_flag_value(int *argc, char **argv, const char *prefix) {
  size_t n = strlen(prefix);
  for (int i = 0; i < *argc; i++)
    if (strncmp(argv[i], prefix, n) == 0) {
      const char *v = argv[i] + n;
      memmove(argv + i, argv + i + 1, (size_t)(*argc - i - 1) * sizeof *argv);
      (*argc)--;
      return v;
    }
  return NULL;
}

int cmd_num_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
  char *end;
  if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s)) return -1;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (*end || errno == ERANGE || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int cmd_num_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  if (!s || !*s || isspace((unsigned char)*s)) return -1;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*end || errno == ERANGE || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int cmd_num_double(const char *s, double lo, double hi, double *out) {
  char *end;
  if (!s || !*s || isspace((unsigned char)*s)) return -1;
  errno = 0;
  double v = strtod(s, &end);
  if (*end || errno == ERANGE || !isfinite(v) || !(v >= lo && v <= hi)) return -1;
  *out = v;
  return 0;
}

int cmd_goal_buffers(int *argc, char **argv) {
  const char *v = cmd_flag_value(argc, argv, "--goal-buffers=");
  if (!v || strcmp(v, "follow") == 0) return IR_GOAL_FOLLOW;
  if (strcmp(v, "shared") == 0) return IR_GOAL_SHARED;
  return strcmp(v, "fresh") == 0 ? IR_GOAL_FRESH : -1;
}

int cmd_options(int *argc, char **argv, cdag_options *o) {
  int rc = cmd_options_quiet(argc, argv, o);
  if (rc) fprintf(stderr, "cdag: %s\n", cdag_error_message());
  return rc;
}

int cmd_options_quiet(int *argc, char **argv, cdag_options *o) {
  cdag_options_init(o);
  for (int id = 0; id < CDAG_NOPTS; id++) {
    const cdag_opt_row *r = &cdag__opt_rows[id];
    if (!r->flag) continue;
    char name[48];
    snprintf(name, sizeof name, "--%s", r->flag);
    if (r->kind == CDAG_OPT_FLAG && cmd_has_flag(argc, argv, name)) {   /* a bare --flag means 1 */
      cdag__opt_set(o, id, 1);
      continue;
    }
    const char *v = cmd_flag_value(argc, argv, strcat(name, "="));
    name[strlen(name) - 1] = '\0';
    if (v && cdag__opt_parse(id, v, 0, name, o)) return -1;
  }
  return 0;
}

int cmd_find_shipped(const char *name, const char *const *dirs, int mode, char *buf, size_t size) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return 0;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (slash) *slash = 0;
  for (; *dirs; dirs++)
    if (snprintf(buf, size, "%s%s/%s", exe, *dirs, name) < (int)size && access(buf, mode) == 0) return 1;
  return 0;
}

/* A command of cdag-mpi's (UNDER_MPI): the program becomes cdag-mpi, argv unchanged. */
static int exec_under_mpi(const char *cmd, char **argv) {
  char path[PATH_MAX];
  const char *dirs[] = {"", "/" CDAG_LIBEXECDIR, NULL};
  if (!cmd_find_shipped("cdag-mpi", dirs, X_OK, path, sizeof path)) {
    fprintf(stderr, "cdag %s: cannot find cdag-mpi, the part of cdag that runs with MPI (beside cdag, or in "
            "%s from it): is cdag installed whole?\n", cmd, CDAG_LIBEXECDIR);
    return 1;
  }
  execv(path, argv);
  fprintf(stderr, "cdag %s: cannot run %s: %s\n", cmd, path, strerror(errno));
  return 1;
}

/* Every command's output ends here: a write that failed (a full disk, a closed pipe, /dev/full)
   is an error with a message and exit 1, never a silent 0. */
static int output_status(const char *cmd, int status) {
  errno = 0;
  if (fflush(stdout) == 0 && !ferror(stdout)) return status;
  fprintf(stderr, "cdag %s: cannot write standard output: %s\n", cmd, errno ? strerror(errno) : "write error");
  return status ? status : 1;
}

/* The tool's big arrays grow by doubling and are freed between stages (a recording's merge,
   then the check that loads what it wrote): glibc maps each anew, and the kernel zeroes every
   page of it at first touch. Kept in the heap and never trimmed, freed memory is reused: the
   merge of MPICH's coll/nonblocking3 at 4 processes (1.1 M operations) took 6.1 to 6.9 s,
   129,000 page faults, and 4.1 to 4.9 s, 88,000 faults, so (RSS 583 -> 645 MB); `cdag
   analyze` of that phase 13.1 -> 11.7-12.1 s. Set in the tool only: the library lives in the
   user's process, whose allocator is the user's. */
static void keep_freed_memory(void) {
  mallopt(M_MMAP_MAX, 0);            /* glibc still maps when the heap cannot grow */
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

/* The heap in huge pages. Even kept, the heap grows in 4 KiB pages, and on the virtual
   machines cdag is developed on a first touch costs 11 us a page (a 64 MiB array 180 ms, in
   2 MiB pages 5-14 ms). The heap is grown once by HEAP_RESERVE of address space (no page is
   touched: the kernel gives pages at first touch), and that range is advised for
   transparent huge pages but for its first and last BASE_HUGE_MIN: small runs touch no huge
   page (zeroing 2 MiB costs them 2 ms), and glibc's own headers at the block's ends are not
   in one. Freed memory stays in the heap (keep_freed_memory), so the range stays the heap's.
   Not under a sanitizer or valgrind, whose allocators are not glibc's heap. */
enum { HEAP_RESERVE = 1 << 30 };

static void huge_heap(void) {
#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__) && !CDAG_HAS_ASAN
  const char *pre = getenv("LD_PRELOAD");
  if (pre && strstr(pre, "vgpreload")) return;
  char *p = malloc(HEAP_RESERVE);   /* from the heap (no mmap: keep_freed_memory) */
  if (!p) return;
  base_advise_huge(p + BASE_HUGE_MIN, HEAP_RESERVE - 2 * BASE_HUGE_MIN);
  free(p);
#endif
}

int main(int argc, char **argv) {
  keep_freed_memory();
  huge_heap();
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
    help(argc < 2 ? stderr : stdout);
    return output_status("--help", argc < 2 ? 2 : 0);
  }
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
    printf("cdag %s\n", cdag_version());
    return output_status("--version", 0);
  }
  cdag_settings set;
  if (cdag__settings_read(&set) != CDAG_OK) {  /* a bad CDAG_* variable is never ignored */
    fprintf(stderr, "cdag: %s\n", cdag_error_message());
    return 1;
  }
  for (size_t i = 0; i < NCOMMANDS; i++) {
    if (strcmp(commands[i].name, argv[1]) != 0) continue;
    if (!commands[i].run) return exec_under_mpi(argv[1], argv);
    int sub_argc = argc - 2;
    char **sub_argv = argv + 2;
    if (cmd_has_flag(&sub_argc, sub_argv, "--help") || cmd_has_flag(&sub_argc, sub_argv, "-h")) {
      printf("usage: cdag %s %s\n  %s\n", commands[i].name, commands[i].usage, commands[i].summary);
      return output_status(commands[i].name, 0);
    }
    int status = commands[i].run(sub_argc, sub_argv);
    return output_status(commands[i].name, status);
  }
  fprintf(stderr, "cdag: unknown command '%s' (try cdag --help)\n", argv[1]);
  return 2;
}
