/* cdag tests — tests/support/fault_inject.c: fails every allocation of a program in turn.
 *
 * fault_inject FAILMALLOC_SO CDAG GRAPH...: for each command of the tool (check, analyze,
 * analyze --json, sst, verify, model) on each graph; fault_inject --run FAILMALLOC_SO PROGRAM
 * [ARGS...]: for one program (tests/exec/mpi/mpi_failmalloc.c; the failmalloc variables in the
 * environment pass on to it). One run under failmalloc.so counts the allocations (N) and keeps
 * the output; then runs 1..N each fail that allocation. A run must exit non-zero with "out
 * of memory" on stderr and no signal, or exit 0 with the same standard output (timing lines
 * aside); and leave no more tracked blocks allocated at exit than the unfailed run (a leak
 * on the error path). Any other outcome is printed and counted, and the exit status is 1.
 * CDAG_FULL=1 tries every point; else every CDAG_FAULT_STRIDE-th (default 1). Each run gets
 * 60 s (a hang is a failure). The summary gives the points, outcomes and seconds. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  const char *tool, *shim, *dir; /* cdag, the library, a temporary directory */
  int problems;                  /* runs that broke a rule, all commands */
} sweep;

typedef struct {
  char *out, *err;   /* standard output (timing lines removed) and error */
  int status;        /* wait status */
  long calls, live;  /* from the shim's report: counted allocations, blocks left at exit */
} outcome;

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return strdup("");
  size_t cap = 4096, n = 0;
  char *s = malloc(cap);
  for (size_t k; s && (k = fread(s + n, 1, cap - n - 1, f)) > 0;) {
    n += k;
    if (n + 1 == cap) s = realloc(s, cap *= 2);
  }
  fclose(f);
  if (!s) abort();
  s[n] = 0;
  return s;
}

/* Timing lines differ from run to run: the text report's "time:" line, JSON's "seconds". */
static void drop_timing(char *s) {
  char *w = s;
  for (char *line = s; *line;) {
    char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line + 1) : strlen(line);
    if (strncmp(line, "time: ", 6) != 0 && !strstr(line, "\"seconds\": {")) {
      memmove(w, line, len);
      w += len;
    }
    line += len;
  }
  *w = 0;
}

/* Runs cdag ARGS... with the shim failing allocation n (0: none). */
static outcome run(const sweep *s, char *const *args, long n) {
  char out[512], err[512], rep[512], nbuf[32];
  snprintf(out, sizeof out, "%s/out", s->dir);
  snprintf(err, sizeof err, "%s/err", s->dir);
  snprintf(rep, sizeof rep, "%s/report", s->dir);
  snprintf(nbuf, sizeof nbuf, "%ld", n);
  unlink(rep);
  pid_t pid = fork();
  if (pid < 0) perror("fork"), exit(2);
  if (pid == 0) {
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fo < 0 || fe < 0) _exit(126);
    dup2(fo, 1), dup2(fe, 2);
    setenv("LD_PRELOAD", s->shim, 1);
    setenv("CDAG_FAILMALLOC_N", nbuf, 1);
    setenv("CDAG_FAILMALLOC_REPORT", rep, 1);
    alarm(60);
    execv(s->tool, args);
    _exit(127);
  }
  outcome o = {0};
  while (waitpid(pid, &o.status, 0) < 0) {
  }
  o.out = slurp(out);
  o.err = slurp(err);
  drop_timing(o.out);
  o.calls = o.live = -1;
  char *r = slurp(rep);
  long failed;
  if (sscanf(r, "calls %ld failed %ld live %ld", &o.calls, &failed, &o.live) != 3) o.calls = o.live = -1;
  free(r);
  return o;
}

static void outcome_free(outcome *o) { free(o->out), free(o->err); }

/* One command line (args, NULL-terminated): every point (or every stride-th). */
static void sweep_one(sweep *s, char *const *args, const char *label, long stride) {
  outcome base = run(s, args, 0);
  if (!WIFEXITED(base.status) || WEXITSTATUS(base.status) != 0 || base.calls < 0) {
    printf("FAIL: %s without a failure: status %d: %s\n", label, base.status, base.err);
    s->problems++;
    outcome_free(&base);
    return;
  }
  long crash = 0, wrong = 0, silent = 0, leak = 0, clean = 0, same = 0, tried = 0;
  for (long n = 1; n <= base.calls; n += stride) {
    outcome o = run(s, args, n);
    const char *what = NULL;
    tried++;
    if (WIFSIGNALED(o.status)) what = "crashed", crash++;
    else if (WEXITSTATUS(o.status) == 0 && strcmp(o.out, base.out) != 0) what = "exit 0 with other output", wrong++;
    else if (WEXITSTATUS(o.status) != 0 && !strstr(o.err, "out of memory"))
      what = "failed without naming out of memory", silent++;
    else if (o.live > base.live) what = "leaked", leak++;
    else if (WEXITSTATUS(o.status) == 0) same++;
    else clean++;
    if (what) {
      size_t len = strlen(o.err);
      while (len && o.err[len - 1] == '\n') o.err[--len] = 0;
      printf("FAIL: %s, allocation %ld failed: %s (status %d, %ld blocks left, %ld unfailed): %.400s\n", label, n,
             what, o.status, o.live, base.live, o.err);
      s->problems++;
    }
    outcome_free(&o);
  }
  printf("%s: %ld allocations, %ld tried: %ld clean errors, %ld same output, %ld crashes, %ld wrong answers, %ld "
         "errors not naming out of memory, %ld leaks\n",
         label, base.calls, tried, clean, same, crash, wrong, silent, leak);
  fflush(stdout);
  outcome_free(&base);
}

/* Every command of the tool on one graph. */
static void sweep_graph(sweep *s, const char *graph, long stride) {
  static const char *const cmds[][2] = {{"check", NULL}, {"analyze", NULL}, {"analyze", "--json"},
                                        {"sst", NULL},   {"verify", NULL},  {"model", NULL}};
  const char *base = strrchr(graph, '/') ? strrchr(graph, '/') + 1 : graph;
  for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++) {
    char *args[] = {(char *)s->tool, (char *)cmds[c][0], (char *)graph, (char *)cmds[c][1], NULL};
    char label[512];
    snprintf(label, sizeof label, "cdag %s%s%s %s", cmds[c][0], cmds[c][1] ? " " : "", cmds[c][1] ? cmds[c][1] : "",
             base);
    sweep_one(s, args, label, stride);
  }
}

int main(int argc, char **argv) {
  int prog = argc >= 4 && strcmp(argv[1], "--run") == 0;
  if (argc < 4) {
    fprintf(stderr, "usage: fault_inject FAILMALLOC_SO CDAG GRAPH... | fault_inject --run FAILMALLOC_SO PROGRAM [ARGS...]\n");
    return 2;
  }
  char dir[] = "/tmp/cdag-fault-XXXXXX";
  if (!mkdtemp(dir)) return perror("mkdtemp"), 2;
  sweep s = {prog ? argv[3] : argv[2], prog ? argv[2] : argv[1], dir, 0};
  const char *full = getenv("CDAG_FULL"), *st = getenv("CDAG_FAULT_STRIDE");
  long stride = full && strcmp(full, "1") == 0 ? 1 : st ? strtol(st, NULL, 10) : 1;
  if (stride < 1) stride = 1;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (prog) sweep_one(&s, argv + 3, argv[3], stride);
  else
    for (int g = 3; g < argc; g++) sweep_graph(&s, argv[g], stride);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("fault_inject: every %ld-th allocation, %.1f s, %d failure(s)\n", stride,
         (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), s.problems);
  const char *files[] = {"out", "err", "report"};
  for (size_t i = 0; i < 3; i++) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    unlink(path);
  }
  rmdir(dir);
  return s.problems ? 1 : 0;
}
