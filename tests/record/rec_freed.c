/* cdag tests — tests/record/rec_freed.c: memory the program gave back is not its data.
 *
 * Each rank receives ints of a vector type (4-byte blocks, one int apart) from its left
 * neighbour into two buffers, then a 4-byte key. It gives both buffers back and maps the
 * same addresses again (one it mapped itself: munmap, of a length that ends inside the last
 * page; one glibc mapped for malloc: free), fills them with copies of the key and ends
 * without freeing them. The recording saw the
 * received blocks there; before the recorder noted what the program frees, the phase's end
 * compared the new bytes with them and "proved" a copy of the key into every block (as
 * MPICH's datatype/tresized did in the runs where the freed pages came back). The
 * recording must hold no copy (CMakeLists.txt). The key is one of several slots, the first
 * whose value no received block holds: replay's fill bytes take 16 values, and a key equal to
 * one of the last blocks received is a copy of it, proven by its bytes (once in about 500
 * runs, as CI saw). */
#define _GNU_SOURCE   /* MAP_FIXED_NOREPLACE */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rec_test.h"

enum { LARGE = 8192 };              /* ints received: LARGE / 2 blocks */
#define HUGE ((size_t)64 << 20)

/* Receives n / 2 ints, one int apart, into b from the left neighbour (the right one's first
   n / 2 of s, contiguous: sent again, they are the bytes the recording saw). */
static void vector_ring(int *s, int *b, int n) {
  MPI_Datatype v;
  MPI_Type_vector(n / 2, 1, 2, MPI_INT, &v);
  MPI_Type_commit(&v);
  MPI_Sendrecv(s, n / 2, MPI_INT, (rt_rank + 1) % rt_size, 1, b, 1, v, (rt_rank + rt_size - 1) % rt_size, 1,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Type_free(&v);
}

/* The n bytes at p, unmapped just before, mapped again there. */
static void *take_again(void *p, size_t n) {
  void *q = mmap(p, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  MT_REQUIRE(q == p);
  return q;
}

static void fill_key(int *b, int n, int key) {
  for (int i = 0; i < n; i++) b[i] = key;
}

/* Does one of the n / 2 ints received into b (one int apart) equal v? */
static int received(const int *b, int n, int v) {
  for (int i = 0; i < n; i += 2)
    if (b[i] == v) return 1;
  return 0;
}

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int keys[16], got;   /* as replay starts them: the key, one of them, is sent as it is */
  rt_fill(keys, sizeof keys);
  rt_fill(&got, sizeof got);
  int *send = malloc(LARGE * sizeof *send);
  MT_REQUIRE(send != NULL);
  rt_fill(send, LARGE * sizeof *send);

  size_t bytes = LARGE * sizeof(int);
  int *mapped = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  MT_REQUIRE(mapped != MAP_FAILED);
  rt_fill(mapped, bytes);
  vector_ring(send, mapped, LARGE);
  int *heap = malloc(HUGE);   /* beyond glibc's largest mmap threshold: mapped apart */
  MT_REQUIRE(heap != NULL);
  rt_fill(heap, bytes);
  vector_ring(send, heap, LARGE);
  /* the key last: among the recent receives a copy is looked for in */
  int *key = keys;
  while (key < keys + 15 && (received(mapped, LARGE, *key) || received(heap, LARGE, *key))) key++;
  MPI_Sendrecv(key, 1, MPI_INT, (rt_rank + 1) % rt_size, 0, &got, 1, MPI_INT, (rt_rank + rt_size - 1) % rt_size, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);

  MT_REQUIRE(munmap(mapped, bytes - 64) == 0);   /* the kernel unmaps the last page whole */
  fill_key(take_again(mapped, bytes), LARGE, got);
  uintptr_t page = (uintptr_t)heap & ~(uintptr_t)4095, head = (uintptr_t)heap - page;
  free(heap);   /* glibc unmaps it */
  fill_key((int *)((char *)take_again((void *)page, head + bytes) + head), LARGE, got);

  rt_keep(&got, sizeof got);
  free(send);
  return rt_finish();   /* both stay mapped, as filled: what the phase's end reads */
}
