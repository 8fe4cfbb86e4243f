/* cdag — tools/cmd_calibrate.c: `mpiexec -n 2 cdag calibrate [-o FILE] [--quick]`.
 *
 * Measures the LogGOPS parameters of the MPI it runs on (src/exec/mpi/calibrate.h:
 * ping-pongs from 8 B to 256 KiB, exchanges both ways of 8 B and 4 KiB, bursts of small
 * messages, memcpy; medians of repeated batches) and the table of costs by size and queue
 * (streams of exchanges run by cdag's engine, 8 B to 1 MiB; best batches), about a second,
 * and writes them as a machine file (src/exec/machine.h), where cdag_compile and the `cdag`
 * tool look for it: -o FILE, else $CDAG_MACHINE, else
 * ${XDG_CONFIG_HOME:-$HOME/.config}/cdag/machine (the directories made if missing). The file's
 * comments hold the date, the process count, the MPI library's version and the ping-pong
 * curve. Rank 0 prints what was measured and where it went; --quick takes fewer batches
 * (for tests). The file is written whole to FILE.tmp and renamed, so a reader never sees
 * half of it. Every failure is agreed on by all processes, printed once by rank 0.
 * Exit status: 0 written, 1 failure (MPI, a file that cannot be written), 2 usage. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd.h"
#include "base/settings.h"
#include "exec/machine.h"
#include "exec/mpi/calibrate.h"
#include "exec/mpi/replay.h"

/* Makes the directories above path (mkdir -p of its dirname). */
static int make_parents(const char *path) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(dir, 0755) && errno != EEXIST)
      return cdag__error(CDAG_ERR_ARG, "cannot make the directory %s: %s", dir, strerror(errno));
    *p = '/';
  }
  return CDAG_OK;
}

/* Where the file goes: -o, else CDAG_MACHINE, else the default path. */
static int target(const char *out, char *path, size_t len) {
  cdag_settings s;
  int named, rc = cdag__settings_read(&s);
  if (rc) return rc;
  if (out) {
    snprintf(path, len, "%s", out);
    return CDAG_OK;
  }
  if (s.machine && !strcmp(s.machine, "none"))
    return cdag__error(CDAG_ERR_ARG, "CDAG_MACHINE=none names no file to write: give -o FILE");
  cdag__settings_home(&s);
  if ((rc = machine_path(&s, path, len, &named))) return rc;
  return path[0] ? CDAG_OK : cdag__error(CDAG_ERR_ARG, "no HOME or XDG_CONFIG_HOME to put the machine file under: give -o FILE");
}

/* Did the first stream of the table and the same stream at its end differ by over 25 %? */
static int unsteady(const exec_calibration *c) {
  double a = c->stream_first_us, b = c->stream_last_us;
  return a > 0 && b > 0 && (a > 1.25 * b || b > 1.25 * a);
}

/* The file's comment: when, on what, and the curve the parameters come from. */
static void comment_of(const exec_calibration *c, char *buf, size_t len) {
  char when[64];
  time_t now = time(NULL);
  struct tm tm;
  strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&now, &tm));
  size_t n = (size_t)snprintf(buf, len, "measured by cdag calibrate %s at %d processes, %s\nMPI: %s\n"
                              "S: %s\nexchange round both ways: 8 B %.3f us, 4 KiB %.3f us, 16 x 8 B %.3f us\n"
                              "ping-pong one-way us by size B:",
                              cdag_version(), c->nprocs, when, c->library,
                              c->s_seen ? "where the ping-pong time jumps" : "no jump seen (the default)", c->exchange_us,
                              c->exchange4k_us, c->exchange16_us);
  for (int i = 0; i < CAL_NSIZES && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, " %g:%.3f", c->size[i], c->oneway[i]);
  if (n < len)
    n += (size_t)snprintf(buf + n, len - n, "\nstream of 16 exchanges of 8 B: %.3f us first, %.3f us last%s",
                          c->stream_first_us, c->stream_last_us, unsteady(c) ? " (unsteady: the speed changed)" : "");
}

static void print(const exec_calibration *c, const char *path) {
  const loggp_params *l = &c->lp;
  printf("calibrate: %d processes, ranks 0 and 1 measured, %.2f s\nMPI: %s\nping-pong (one-way, median):\n", c->nprocs,
         c->seconds, c->library);
  for (int i = 0; i < CAL_NSIZES; i++) printf("  %8.0f B  %10.3f us\n", c->size[i], c->oneway[i]);
  printf("burst of 8 B messages one way: %.3f us to post one send, %.3f us per message (g)\n", c->post_us, c->burst_us);
  printf("exchange both ways (Irecv, Isend, Waitall): %.3f us per round of 8 B (2o + L + 7G), %.3f us of 4 KiB (2o + 4095(O + G))\n",
         c->exchange_us, c->exchange4k_us);
  printf("exchange of 16 messages of 8 B each way: %.3f us per round (o = (this - 8 B round) / 30)\n", c->exchange16_us);
  printf("L %.4g us, o %.4g us, g %.4g us, G %.4g us/B, O %g us/B, S %llu B (%s), copy %.4g us/B\n", l->L, l->o, l->g,
         l->G, l->O, (unsigned long long)l->S, c->s_seen ? "seen" : "not seen: the default", l->copy);
  printf("queue %.4g us (a message handled costs this more per receive waiting on its rank)\n", l->queue);
  printf("rcopy %.4g us/B (a copy that packs or unpacks a message above S: %.1f times copy)\n", l->rcopy,
         l->copy > 0 ? l->rcopy / l->copy : 0.0);
  printf("exchanges by size: a stream's time per message pair (one sent and one received by each rank), one "
         "exchange's round:\n");
  for (int i = 0; i < l->ntab; i++)
    printf("  %8.0f B  %10.3f us %10.3f us\n", l->tab_size[i], l->tab_pair[i], l->tab_round[i]);
  printf("a stream of 16 exchanges of 8 B: %.3f us at the start of the table, %.3f us at its end\n", c->stream_first_us,
         c->stream_last_us);
  if (unsteady(c))
    printf("warning: the machine's speed changed while measuring (by more than 25 %%): the table mixes two speeds; "
           "calibrate again when it is quiet\n");
  printf("written: %s\n", path);
}

/* Rank 0 writes the file. */
static int write_file(const exec_calibration *c, const char *path) {
  char tmp[4200], comment[1024];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  comment_of(c, comment, sizeof comment);
  int rc = make_parents(path);
  FILE *f = rc ? NULL : fopen(tmp, "w");
  if (!rc && !f) rc = cdag__error(CDAG_ERR_ARG, "cannot write %s: %s", tmp, strerror(errno));
  if (f) {
    rc = machine_write(f, &c->lp, comment);
    if (fclose(f) && !rc) rc = cdag__error(CDAG_ERR_ARG, "cannot write %s: %s", tmp, strerror(errno));
    if (!rc && rename(tmp, path)) rc = cdag__error(CDAG_ERR_ARG, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    if (rc) remove(tmp);
  }
  return rc;
}

int cmd_calibrate(int argc, char **argv) {
  int started = 0, rank = 0, nprocs = 0, quick = cmd_has_flag(&argc, argv, "--quick");
  const char *out = NULL;
  if (argc == 2 && !strcmp(argv[0], "-o")) out = argv[1], argc = 0;
  if (argc != 0) return cmd_usage("calibrate");
  if (replay_mpi_init(&started, &rank, &nprocs)) return cmd_fail("calibrate", CDAG_ERR_MPI);
  char path[4096] = "";
  exec_calibration c;
  int rc = target(out, path, sizeof path);
  rc = replay_agree(rc);
  if (!rc) rc = exec_calibrate(quick, &c);
  if (!rc && rank == 0) rc = write_file(&c, path);
  rc = replay_agree(rc);
  if (rank == 0) {
    if (rc) cmd_fail("calibrate", rc);
    else print(&c, path);
  }
  replay_mpi_finalize(started);
  return rc ? 1 : 0;
}
