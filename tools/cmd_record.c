/* cdag — tools/cmd_record.c: `cdag record [-o DIR] [--strict] [--no-fold-ranks] -- COMMAND [ARGS...]`,
 * `cdag record --merge [--flat | --no-fold-ranks] DIR` and `cdag record --expand DIR [-o OUT]`.
 *
 * Runs COMMAND (typically `mpiexec -n P ./app`) with libcdag-record preloaded into every
 * process it starts (LD_PRELOAD: to MPICH's mpiexec as -genv, else in the environment,
 * which mpiexec passes on), so each MPI process writes its
 * part to DIR; then merges the parts into DIR/phase-NNNN.cdag and DIR/index.json
 * (src/record/record.h) and checks that every phase file loads and its messages match.
 * `--merge DIR` only merges (for programs linked with -lcdag-record, run without this
 * command; --flat: every phase of the run a file of its own, repeats too; --no-fold-ranks:
 * every rank of a phase written in full, where runs of 16 processes or more store ranks that
 * differ only by their rank once, docs/recording.md; the loader reads both); `--expand` writes
 * that flat form from a recording that stores each distinct phase once. The library is found beside this program, in ../lib, in the install's library
 * directory, or at $CDAG_RECORD_LIB.
 * Exit status: the command's own, so that recording changes nothing a script or a test
 * harness sees (MPICH's runtests counts exit statuses); a recording that fails (nothing
 * usable recorded, a part file that cannot be trusted: a malformed line, no phase written; a
 * phase that does not load) is said on stderr and in index.json's "check". With --strict,
 * such a recording of a command that exited 0 exits 1. `--merge DIR`: 1 when the recording
 * fails, else 0. 2 usage. */
#define _DEFAULT_SOURCE   /* realpath */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "format/format.h"
#include "ir/ir.h"
#include "base/settings.h"
#include "match/match.h"
#include "record/record.h"

#ifndef CDAG_RECORD_LIBDIR   /* from the program's directory (CMake: the prefix's libdir) */
#define CDAG_RECORD_LIBDIR "../lib"
#endif

/* Where libcdag-record.so is, into buf; 0 if nowhere. */
static int find_library(char *buf, size_t size) {
  cdag_settings set;
  cdag__settings_read(&set);   /* validated by main already */
  if (set.record_lib) {
    snprintf(buf, size, "%s", set.record_lib);
    return access(buf, R_OK) == 0;
  }
  const char *dirs[] = {"", "/../lib", "/" CDAG_RECORD_LIBDIR, NULL};
  return cmd_find_shipped("libcdag-record.so", dirs, R_OK, buf, size);
}

/* Removes what an earlier recording left in dir, so phases of two runs never mix. */
static int clear_dir(const char *dir) {
  if (mkdir(dir, 0777) && errno != EEXIST) {
    fprintf(stderr, "cdag record: cannot create %s: %s\n", dir, strerror(errno));
    return -1;
  }
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "cdag record: cannot open %s: %s\n", dir, strerror(errno));
    return -1;
  }
  char path[PATH_MAX];
  for (struct dirent *e; (e = readdir(d));) {
    const char *s = e->d_name;
    size_t len = strlen(s);
    int ours = (!strncmp(s, "rank-", 5) && len > 5 && !strcmp(s + len - 5, ".part")) ||
               (!strncmp(s, "phase-", 6) && len > 5 && !strcmp(s + len - 5, ".cdag")) || !strcmp(s, "index.json");
    if (ours && snprintf(path, sizeof path, "%s/%s", dir, s) < (int)sizeof path) unlink(path);
  }
  closedir(d);
  return 0;
}

/* SIGINT (Ctrl-C) and SIGTERM (a time limit) sent to cdag record stop the command, not the
   merge: the signal goes on to the child, whose end waitpid then reports, and what the
   processes wrote is merged. A terminal's Ctrl-C reaches the child too; twice is harmless. */
static volatile sig_atomic_t child_pid, stopped_by;

static void pass_on(int sig) {
  stopped_by = sig;
  if (child_pid > 0) kill((pid_t)child_pid, sig);
}

static int wait_child(pid_t pid, int *status) {
  struct sigaction sa = {0}, old_int, old_term;
  sa.sa_handler = pass_on;
  sigemptyset(&sa.sa_mask);
  child_pid = pid;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  int rc;
  while ((rc = waitpid(pid, status, 0)) < 0 && errno == EINTR) {}
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  child_pid = 0;
  return rc;
}

/* 1 when the program at path is MPICH's launcher (Hydra's mpiexec.hydra, which Debian's
   mpiexec, mpirun and mpiexec.mpich link to), 0 when it is another, -1 when there is none. */
static int hydra_at(const char *path) {
  char real[PATH_MAX];
  if (access(path, X_OK) || !realpath(path, real)) return -1;
  const char *base = strrchr(real, '/');
  return !strcmp(base ? base + 1 : real, "mpiexec.hydra");
}

/* Whether cmd, looked up in PATH as execvp does, is MPICH's launcher. */
static int is_hydra(const char *cmd) {
  if (strchr(cmd, '/')) return hydra_at(cmd) == 1;
  char path[PATH_MAX];
  for (const char *d = getenv("PATH"); d && *d;) {
    int len = (int)strcspn(d, ":");
    snprintf(path, sizeof path, "%.*s/%s", len, len ? d : ".", cmd);
    int h = hydra_at(path);
    if (h >= 0) return h;
    d += len + (d[len] == ':');
  }
  return 0;
}

/* The command as run: with MPICH's launcher, `-genv LD_PRELOAD lib` first, so that only the
   processes it starts load the recorder (and MPI with it), not the launcher and its proxies:
   12 ms of every run, a third of what recording added to MPICH's shortest tests. The
   directory goes the same way, so that both reach processes on other hosts when the user's
   options pass them no environment (-genvnone; on this host they inherit the launcher's).
   Any other command (or one that sets LD_PRELOAD itself) gets them in its environment, which
   mpiexec passes on. Called in the child, between fork and exec. */
static char **launch_argv(char **argv, const char *preload, const char *dir) {
  int n = 0, named = 0;
  for (; argv[n]; n++) named |= strstr(argv[n], "LD_PRELOAD") != NULL;
  char *head[] = {argv[0], "-genv", "LD_PRELOAD", (char *)preload, "-genv", "CDAG_RECORD_DIR", (char *)dir};
  int h = (int)(sizeof head / sizeof *head);
  char **out = named || !is_hydra(argv[0]) ? NULL : malloc((size_t)(h + n) * sizeof *out);
  if (!out) {
    setenv("LD_PRELOAD", preload, 1);
    return argv;
  }
  memcpy(out, head, sizeof head);
  memcpy(out + h, argv + 1, (size_t)n * sizeof *argv);   /* argv[1 .. n], its NULL too */
  return out;
}

static int run_command(char **argv, const char *lib, const char *dir) {
  char abs[PATH_MAX], preload[2 * PATH_MAX];
  if (!realpath(dir, abs)) snprintf(abs, sizeof abs, "%s", dir);
  const char *old = getenv("LD_PRELOAD");
  snprintf(preload, sizeof preload, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "cdag record: fork: %s\n", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    setenv("CDAG_RECORD_DIR", abs, 1);
    argv = launch_argv(argv, preload, abs);
    execvp(argv[0], argv);
    fprintf(stderr, "cdag record: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int status = 0;
  wait_child(pid, &status);
  if (stopped_by) {
    fprintf(stderr, "cdag record: stopped by signal %d: %s was stopped; merging what it wrote\n", (int)stopped_by,
            argv[0]);
    return 128 + stopped_by;
  }
  if (WIFSIGNALED(status)) {
    fprintf(stderr, "cdag record: %s was killed by signal %d\n", argv[0], WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  return WEXITSTATUS(status);
}

/* Adds `"check": {...}` to DIR/index.json: how many phases failed to load and the first
   error (the merger wrote the index before the check ran). */
static void index_add_check(const char *dir, int nbad, const char *first) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/index.json", dir);
  FILE *f = fopen(path, "r+");
  if (!f) return;
  long end = -1;
  for (int c, at = 0; (c = fgetc(f)) != EOF; at++)
    if (c == '}') end = at;   /* the object's closing brace: the last one */
  if (end > 0 && !fseek(f, end, SEEK_SET)) {
    fprintf(f, ",\n  \"check\": {\"ok\": %s, \"phases_failed\": %d, \"first\": ", nbad ? "false" : "true", nbad);
    if (first) {
      fputc('"', f);
      for (const char *c = first; *c; c++)
        if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
        else if ((unsigned char)*c < 0x20) fputc(' ', f);
        else fputc(*c, f);
      fputc('"', f);
    } else {
      fputs("null", f);
    }
    fputs("}\n}\n", f);
  }
  fclose(f);
}

/* Every phase file must load and match: a recording cdag cannot read is a recorder bug.
   quiet: only whether one does not, and why (*first, the first failure), nothing said or
   written. */
static int check_phases(const char *dir, int nphases, int quiet, char (*first)[PATH_MAX + 1024]) {
  int bad = 0;
  for (int p = 0; p < nphases; p++) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/phase-%04d.cdag", dir, p);
    cdag_graph *g = NULL;
    int rc = cmd_load_rc(path, IR_GOAL_FOLLOW, &g);
    match_result m = {0};
    if (!rc) rc = match_run(g, &m);
    if (rc && !quiet) fprintf(stderr, "cdag record: %s does not load: %s: %s\n", path, cdag_strerror(rc), cdag_error_message());
    if (rc && !bad++) snprintf(*first, sizeof *first, "%s: %s: %s", path, cdag_strerror(rc), cdag_error_message());
    match_free(&m);
    ir_graph_free(g);
  }
  if (!quiet) index_add_check(dir, bad, bad ? *first : NULL);
  return bad != 0;
}

static void join_command(char **argv, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = 0;
  for (int i = 0; argv[i] && n < size; i++) n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? " " : "", argv[i]);
}

static int merge_and_say(const char *dir, const char *command, int flags, FILE *say) {
  rec_summary sum;
  char why[PATH_MAX + 1024] = "", other[PATH_MAX + 1024];
  int rc = rec_merge_as(dir, command, stderr, flags, &sum);
  if (!rc && sum.passive && check_phases(dir, sum.nphases, 1, &why)) {   /* did a passive target's fences do it? */
    rc = rec_merge_as(dir, command, NULL, flags | REC_MERGE_NO_PASSIVE, &sum);
    if (!rc && check_phases(dir, sum.nphases, 1, &other))   /* not theirs: the recording as it was, its failure said */
      rc = rec_merge_as(dir, command, NULL, flags, &sum);
    else if (!rc)
      fprintf(stderr, "cdag record: a phase does not load with the targets' fences of passive-target epochs (%s); "
              "merged again without them (index.json's unsupported)\n", why);
  }
  if (rc) return cmd_fail("record", rc);
  fprintf(say, "recorded %d processes: %d phase%s, %llu operations, %llu computation%s (%.3f ms computed), in %s/\n",
         sum.nprocs, sum.nphases, sum.nphases == 1 ? "" : "s", (unsigned long long)sum.ops,
         (unsigned long long)sum.computes, sum.computes == 1 ? "" : "s", (double)sum.compute_ns / 1e6, dir);
  for (int p = 0; p < sum.nphases; p++) fprintf(say, "  %s/phase-%04d.cdag\n", dir, p);
  if (sum.flat_phases != sum.nphases)
    fprintf(say, "the run is %d phases, repeats of these %d (index.json's sequence; `cdag record --expand %s` writes them all)\n",
           sum.flat_phases, sum.nphases, dir);
  if (sum.unreceived) fprintf(say, "sends nobody received (left out): %llu\n", (unsigned long long)sum.unreceived);
  if (sum.unsent)
    fprintf(say, "receives whose send is outside the phase (computations that write what arrived): %llu\n",
           (unsigned long long)sum.unsent);
  if (sum.target_computes)
    fprintf(say, "bytes a target computed between two passive-target reads of them (computations added there): %llu\n",
           (unsigned long long)sum.target_computes);
  if (!sum.complete) fprintf(say, "incomplete: not every process reached MPI_Finalize\n");
  if (sum.node_cpus && sum.node_procs > sum.node_cpus)
    fprintf(say, "note: a node ran %d processes on %d CPU%s: a process that waited %.0f us or more for a CPU between "
            "two MPI calls is recorded as computing there (CDAG_RECORD_MIN_GAP, in us, raises it: docs/recording.md)\n",
            sum.node_procs, sum.node_cpus, sum.node_cpus == 1 ? "" : "s", (double)sum.min_gap_ns / 1e3);
  if (sum.out_of_memory)
    fprintf(say, "out of memory while recording: %llu things lost (index.json's out_of_memory says which)\n",
           (unsigned long long)sum.out_of_memory);
  fprintf(say, "calls and what was not recorded: %s/index.json\n", dir);
  char first[PATH_MAX + 1024] = "";
  return check_phases(dir, sum.nphases, 0, &first);
}

/* --expand DIR [-o OUT]: the flat recording of DIR (every phase of the run a file, repeats
   too) into OUT, by default DIR/flat. */
static int expand(int argc, char **argv) {
  char out[PATH_MAX];
  if (argc != 1 && !(argc == 3 && !strcmp(argv[1], "-o"))) return cmd_usage("record");
  snprintf(out, sizeof out, argc == 3 ? "%s" : "%s/flat", argc == 3 ? argv[2] : argv[0]);
  if (clear_dir(out)) return 1;
  int64_t n = 0;
  int rc = rec_expand(argv[0], out, &n);
  if (rc) return cmd_fail("record", rc);
  printf("expanded %s: %lld phase%s in %s/\n", argv[0], (long long)n, n == 1 ? "" : "s", out);
  return 0;
}

/* `--merge [how] DIR`: a recording merged again keeps the command its index named. */
static int merge_again(const char *dir, int flags) {
  char *command = rec_index_command(dir);
  int rc = merge_and_say(dir, command, flags, stdout);
  free(command);
  return rc;
}

int cmd_record(int argc, char **argv) {
  const char *dir = "cdag-recording";
  if (argc == 2 && !strcmp(argv[0], "--merge")) return merge_again(argv[1], REC_MERGE_FOLD_RANKS);
  if (argc == 3 && !strcmp(argv[0], "--merge") && !strcmp(argv[1], "--flat")) return merge_again(argv[2], REC_MERGE_FLAT);
  if (argc == 3 && !strcmp(argv[0], "--merge") && !strcmp(argv[1], "--fold-ranks"))   /* the default; kept for scripts */
    return merge_again(argv[2], REC_MERGE_FOLD_RANKS);
  if (argc == 3 && !strcmp(argv[0], "--merge") && !strcmp(argv[1], "--no-fold-ranks")) return merge_again(argv[2], 0);
  if (argc >= 2 && !strcmp(argv[0], "--expand")) return expand(argc - 1, argv + 1);
  int i = 0, strict = 0, flags = REC_MERGE_FOLD_RANKS;
  for (; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--"); i++) {
    if (!strcmp(argv[i], "--strict")) strict = 1;
    else if (!strcmp(argv[i], "--fold-ranks")) flags |= REC_MERGE_FOLD_RANKS;
    else if (!strcmp(argv[i], "--no-fold-ranks")) flags &= ~REC_MERGE_FOLD_RANKS;
    else if (!strcmp(argv[i], "-o") && i + 1 < argc) dir = argv[++i];
    else return cmd_usage("record");
  }
  if (i < argc && !strcmp(argv[i], "--")) i++;
  if (i >= argc || argv[i][0] == '-') return cmd_usage("record");
  char lib[PATH_MAX];
  if (!find_library(lib, sizeof lib)) {
    int other = strcmp(CDAG_RECORD_LIBDIR, "../lib") != 0;   /* the install's libdir, when not ../lib */
    fprintf(stderr, "cdag record: libcdag-record.so not found beside cdag, in ../lib%s%s or at $CDAG_RECORD_LIB\n",
            other ? ", " : "", other ? CDAG_RECORD_LIBDIR : "");
    return 1;
  }
  if (clear_dir(dir)) return 1;
  fflush(stdout);
  int status = run_command(argv + i, lib, dir);
  if (status < 0) return 1;
  char command[4096];
  join_command(argv + i, command, sizeof command);
  if (status) fprintf(stderr, "cdag record: the command exited with status %d; merging what was recorded\n", status);
  int bad = merge_and_say(dir, command, flags, stderr);   /* the program's stdout stays its own */
  if (bad && !status) {
    char index[PATH_MAX];
    struct stat sb;
    snprintf(index, sizeof index, "%s/index.json", dir);
    fprintf(stderr, "cdag record: the command succeeded; its recording in %s did not (above%s)%s\n", dir,
            stat(index, &sb) ? "" : "; index.json's \"check\"", strict ? "" : ": exit status 0, the command's (--strict: 1)");
  }
  return status ? status : strict ? bad : 0;
}
