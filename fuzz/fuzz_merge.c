/* cdag — fuzz/fuzz_merge.c: libFuzzer target for the merger of `cdag record` (rec_merge).
 *
 * The input is one or two part files, split at the first NUL byte: rank-0.part, then
 * rank-1.part if there is a NUL. They are written into a directory of this process and
 * merged. Whatever the bytes, the merge must end with CDAG_OK or an error with a message,
 * within bounded time and memory (the merger checks every field before it allocates); the
 * seeds (fuzz/corpus_merge/) are real recordings of tests/record programs. */
#define _DEFAULT_SOURCE   /* mkdtemp */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "record/record.h"

static char dir[64];

/* Empties the directory: the parts and whatever the last merge wrote. */
static void clear(void) {
  DIR *d = opendir(dir);
  if (!d) return;
  char path[128];
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] != '.' && snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path) unlink(path);
  closedir(d);
}

static void done(void) {
  clear();
  rmdir(dir);
}

static void put(const char *name, const uint8_t *data, size_t size) {
  char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "/tmp/cdag-fuzz-merge.XXXXXX");
    if (!mkdtemp(dir)) abort();
    atexit(done);
  }
  clear();
  const uint8_t *nul = memchr(data, 0, size);
  put("rank-0.part", data, nul ? (size_t)(nul - data) : size);
  if (nul) put("rank-1.part", nul + 1, size - (size_t)(nul - data) - 1);
  rec_summary sum;
  cdag__error_clear();
  if (rec_merge(dir, NULL, NULL, &sum) != CDAG_OK && !cdag_error_message()[0]) {
    fprintf(stderr, "fuzz_merge: an error without a message\n");
    abort();
  }
  clear();
  return 0;
}
