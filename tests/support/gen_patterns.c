/* cdag tests — tests/support/gen_patterns.c: collectives written the way real codes do.
 *
 * Each generator adds one communication pattern to a global graph through the public API
 * (cdag_rank_*), on ranks base..base+n-1 with stride `stride` (so patterns can run on grid
 * rows, columns or subsets), with buffers at the addresses of a gen_bufs. Generators add
 * O(ops) work and no allocation beyond the graph, so bench/ uses them at p = 2^20. */
#include "support/support.h"

#define R(i) (s->first + (i) * s->stride) /* rank of member i */
#define CHECK(call)                 \
  do {                              \
    int rc_ = (call);               \
    if (rc_) return rc_;            \
  } while (0)

static int msg(cdag_graph *g, int src, uint64_t sa, int dst, uint64_t da, uint64_t len, int tag) {
  CHECK(cdag_rank_send(g, src, sa, len, dst, tag, NULL));
  return cdag_rank_recv(g, dst, da, len, src, tag, NULL);
}

static int high_bit(int x) { return 1 << (31 - __builtin_clz((unsigned)x)); }

int gen_bcast_binomial(cdag_graph *g, const gen_set *s, int root, uint64_t bytes, const gen_bufs *b) {
  int n = s->n;
  for (int v = 1; v < n; v++) { /* v: rank relative to root; parent clears v's highest bit */
    int parent = v - high_bit(v);
    CHECK(msg(g, R((parent + root) % n), b->data, R((v + root) % n), b->data, bytes, b->tag));
  }
  return CDAG_OK;
}

int gen_bcast_linear(cdag_graph *g, const gen_set *s, int root, uint64_t bytes, const gen_bufs *b) {
  for (int i = 0; i < s->n; i++)
    if (i != root) CHECK(msg(g, R(root), b->data, R(i), b->data, bytes, b->tag));
  return CDAG_OK;
}

/* The root's buffer in k segments along the chain root, root+1, ...: segment j moves hop by
   hop (each forward reads what the previous hop received). */
int gen_bcast_chain(cdag_graph *g, const gen_set *s, int root, uint64_t bytes, int k, const gen_bufs *b) {
  int n = s->n;
  uint64_t seg = bytes / (uint64_t)k;
  for (int j = 0; j < k; j++) {
    uint64_t off = (uint64_t)j * seg, len = j == k - 1 ? bytes - off : seg;
    for (int h = 0; h + 1 < n; h++)
      CHECK(msg(g, R((root + h) % n), b->data + off, R((root + h + 1) % n), b->data + off, len, b->tag));
  }
  return CDAG_OK;
}

/* Ring allgather: block i of every rank's recv buffer holds rank i's send block. Each rank
   copies its own block first, then forwards for n-1 steps what it received last. */
int gen_allgather_ring(cdag_graph *g, const gen_set *s, uint64_t block, const gen_bufs *b) {
  int n = s->n;
  for (int i = 0; i < n; i++) CHECK(cdag_rank_copy_local(g, R(i), b->data, b->out + (uint64_t)i * block, block, NULL));
  for (int step = 0; step < n - 1; step++)
    for (int i = 0; i < n; i++) {
      int blk = ((i - step) % n + n) % n, to = (i + 1) % n;
      CHECK(msg(g, R(i), b->out + (uint64_t)blk * block, R(to), b->out + (uint64_t)blk * block, block, b->tag));
    }
  return CDAG_OK;
}

/* Linear alltoall: block j of i's data goes to block i of j's out. Own block copied. */
int gen_alltoall_linear(cdag_graph *g, const gen_set *s, uint64_t block, const gen_bufs *b) {
  for (int i = 0; i < s->n; i++)
    for (int j = 0; j < s->n; j++) {
      uint64_t sa = b->data + (uint64_t)j * block, da = b->out + (uint64_t)i * block;
      if (i == j) CHECK(cdag_rank_copy_local(g, R(i), sa, da, block, NULL));
      else CHECK(msg(g, R(i), sa, R(j), da, block, b->tag));
    }
  return CDAG_OK;
}

/* Butterfly alltoall (n a power of two): rank r keeps the block for r^j at scratch slot j;
   round k sends the slots with bit k set to r^2^k, through a second scratch area, then
   copies them in; the end copies slot j into out block r^j. */
int gen_alltoall_butterfly(cdag_graph *g, const gen_set *s, uint64_t block, const gen_bufs *b) {
  int n = s->n;
  uint64_t work = b->scratch, stage = b->scratch + (uint64_t)n * block;
  for (int r = 0; r < n; r++) {
    CHECK(cdag_rank_scratch(g, R(r), b->scratch, 2 * (uint64_t)n * block));
    for (int j = 0; j < n; j++)
      CHECK(cdag_rank_copy_local(g, R(r), b->data + (uint64_t)(r ^ j) * block, work + (uint64_t)j * block, block, NULL));
  }
  for (int k = 1; k < n; k <<= 1) {
    for (int r = 0; r < n; r++)
      for (int j = 0; j < n; j++)
        if (j & k) CHECK(msg(g, R(r), work + (uint64_t)j * block, R(r ^ k), stage + (uint64_t)j * block, block, k));
    for (int r = 0; r < n; r++)
      for (int j = 0; j < n; j++)
        if (j & k) CHECK(cdag_rank_copy_local(g, R(r), stage + (uint64_t)j * block, work + (uint64_t)j * block, block, NULL));
  }
  for (int r = 0; r < n; r++) {
    for (int j = 0; j < n; j++)
      CHECK(cdag_rank_copy_local(g, R(r), work + (uint64_t)j * block, b->out + (uint64_t)(r ^ j) * block, block, NULL));
  }
  return CDAG_OK;
}

int gen_gather_linear(cdag_graph *g, const gen_set *s, int root, uint64_t block, const gen_bufs *b) {
  for (int i = 0; i < s->n; i++)
    if (i != root) CHECK(msg(g, R(i), b->data, R(root), b->out + (uint64_t)i * block, block, b->tag));
  return CDAG_OK;
}

int gen_scatter_linear(cdag_graph *g, const gen_set *s, int root, uint64_t block, const gen_bufs *b) {
  for (int i = 0; i < s->n; i++)
    if (i != root) CHECK(msg(g, R(root), b->data + (uint64_t)i * block, R(i), b->out, block, b->tag));
  return CDAG_OK;
}

/* Binomial-tree gather to member 0: member v collects its subtree's blocks at out block v..
   and sends them up (blocks are contiguous by member index). */
int gen_gather_binomial(cdag_graph *g, const gen_set *s, uint64_t block, const gen_bufs *b) {
  int n = s->n;
  for (int v = 0; v < n; v++) CHECK(cdag_rank_copy_local(g, R(v), b->data, b->out + (uint64_t)v * block, block, NULL));
  for (int k = 1; k < n; k <<= 1)
    for (int v = 0; v < n; v += 2 * k)
      if (v + k < n) {
        int cnt = v + 2 * k <= n ? k : n - v - k; /* blocks held by v+k */
        uint64_t at = b->out + (uint64_t)(v + k) * block;
        CHECK(msg(g, R(v + k), at, R(v), at, (uint64_t)cnt * block, b->tag));
      }
  for (int v = 1; v < n; v++) CHECK(cdag_rank_scratch(g, R(v), b->out, (uint64_t)n * block));
  return CDAG_OK;
}

/* Allreduces of `count` int32 from data into out, with tmp as scratch. */
int gen_allreduce_recursive_doubling(cdag_graph *g, const gen_set *s, uint64_t count, const gen_bufs *b) {
  uint64_t len = count * 4;
  for (int r = 0; r < s->n; r++) {
    CHECK(cdag_rank_scratch(g, R(r), b->scratch, len));
    CHECK(cdag_rank_copy_local(g, R(r), b->data, b->out, len, NULL));
  }
  for (int k = 1; k < s->n; k <<= 1) {
    for (int r = 0; r < s->n; r++) CHECK(msg(g, R(r), b->out, R(r ^ k), b->scratch, len, k));
    for (int r = 0; r < s->n; r++)
      CHECK(cdag_rank_reduce_local(g, R(r), b->scratch, b->out, count, CDAG_INT32, CDAG_SUM, NULL));
  }
  return CDAG_OK;
}

/* The same graph (same tags), added rank by rank, as a graph gathered from MPI processes is. */
int gen_allreduce_recursive_doubling_by_rank(cdag_graph *g, const gen_set *s, uint64_t count, const gen_bufs *b) {
  uint64_t len = count * 4;
  for (int r = 0; r < s->n; r++) {
    CHECK(cdag_rank_scratch(g, R(r), b->scratch, len));
    CHECK(cdag_rank_copy_local(g, R(r), b->data, b->out, len, NULL));
    for (int k = 1; k < s->n; k <<= 1) {
      CHECK(cdag_rank_send(g, R(r), b->out, len, R(r ^ k), k, NULL));
      CHECK(cdag_rank_recv(g, R(r), b->scratch, len, R(r ^ k), k, NULL));
      CHECK(cdag_rank_reduce_local(g, R(r), b->scratch, b->out, count, CDAG_INT32, CDAG_SUM, NULL));
    }
  }
  return CDAG_OK;
}

int gen_allreduce_linear(cdag_graph *g, const gen_set *s, int root, uint64_t count, int op, const gen_bufs *b) {
  uint64_t len = count * 4;
  CHECK(cdag_rank_copy_local(g, R(root), b->data, b->out, len, NULL));
  for (int i = 0; i < s->n; i++) {
    if (i == root) continue;
    uint64_t tmp = b->scratch + (uint64_t)i * len;
    CHECK(cdag_rank_scratch(g, R(root), tmp, len));
    CHECK(msg(g, R(i), b->data, R(root), tmp, len, b->tag));
    CHECK(cdag_rank_reduce_local(g, R(root), tmp, b->out, count, CDAG_INT32, (cdag_reduce_op)op, NULL));
  }
  for (int i = 0; i < s->n; i++)
    if (i != root) CHECK(msg(g, R(root), b->out, R(i), b->out, len, b->tag + 1));
  return CDAG_OK;
}

/* 1D halo: every rank sends its two edges to its neighbours (non-periodic). */
int gen_halo1d(cdag_graph *g, const gen_set *s, uint64_t bytes, const gen_bufs *b) {
  for (int i = 0; i < s->n; i++) {
    if (i > 0) CHECK(msg(g, R(i), b->data, R(i - 1), b->out + bytes, bytes, 1));
    if (i + 1 < s->n) CHECK(msg(g, R(i), b->data + bytes, R(i + 1), b->out, bytes, 2));
  }
  return CDAG_OK;
}

/* Dissemination barrier of zero-byte messages; rounds are ordered like MPI_Sendrecv. */
int gen_barrier_dissemination(cdag_graph *g, const gen_set *s, const gen_bufs *b) {
  int n = s->n;
  for (int r = 0; r < n; r++) {
    cdag_op ps = -1, pr = -1;
    for (int k = 1; k < n; k <<= 1) {
      cdag_op sd, rv;
      CHECK(cdag_rank_send(g, R(r), b->data, 0, R((r + k) % n), b->tag + k, &sd));
      CHECK(cdag_rank_recv(g, R(r), b->data, 0, R((r - k + n) % n), b->tag + k, &rv));
      if (ps >= 0) {
        CHECK(cdag_depend(g, ps, sd)); CHECK(cdag_depend(g, pr, sd));
        CHECK(cdag_depend(g, ps, rv)); CHECK(cdag_depend(g, pr, rv));
      }
      ps = sd, pr = rv;
    }
  }
  return CDAG_OK;
}

/* Broadcast as MPICH does for long messages: a binomial scatter of n chunks (chunk v at
   offset v*c of the buffer, v relative to the root), then a ring allgather of the chunks,
   all in place in the data buffer. Empty chunks (bytes < n) send nothing. */
static uint64_t chunk_len(uint64_t bytes, uint64_t c, int lo, int hi) { /* chunks lo..hi-1 */
  uint64_t a = (uint64_t)lo * c, z = (uint64_t)hi * c;
  if (a > bytes) a = bytes;
  if (z > bytes) z = bytes;
  return z - a;
}

int gen_bcast_scatter_allgather(cdag_graph *g, const gen_set *s, int root, uint64_t bytes, const gen_bufs *b) {
  int n = s->n;
  uint64_t c = (bytes + (uint64_t)n - 1) / (uint64_t)n;
#define M(v) R(((v) + root) % n)
  for (int mask = n > 1 ? high_bit(n - 1) : 0; mask > 0; mask >>= 1)
    for (int v = 0; v + mask < n; v += 2 * mask) {
      int hi = v + 2 * mask < n ? v + 2 * mask : n;
      uint64_t len = chunk_len(bytes, c, v + mask, hi), at = b->data + (uint64_t)(v + mask) * c;
      if (len) CHECK(msg(g, M(v), at, M(v + mask), at, len, b->tag));
    }
  for (int step = 0; step < n - 1; step++)
    for (int v = 0; v < n; v++) {
      int blk = ((v - step) % n + n) % n;
      uint64_t len = chunk_len(bytes, c, blk, blk + 1), at = b->data + (uint64_t)blk * c;
      if (len) CHECK(msg(g, M(v), at, M((v + 1) % n), at, len, b->tag + 1));
    }
#undef M
  return CDAG_OK;
}

/* Binomial-tree scatter from `root`: the root rotates its blocks into scratch (slot v holds
   the block of relative rank v), each subtree's slots travel down the tree in one message,
   and every member copies its slot into out. */
int gen_scatter_binomial(cdag_graph *g, const gen_set *s, int root, uint64_t block, const gen_bufs *b) {
  int n = s->n;
#define M(v) R(((v) + root) % n)
  for (int v = 0; v < n; v++) CHECK(cdag_rank_scratch(g, R(v), b->scratch, (uint64_t)n * block));
  for (int v = 0; v < n; v++)
    CHECK(cdag_rank_copy_local(g, R(root), b->data + (uint64_t)((v + root) % n) * block,
                               b->scratch + (uint64_t)v * block, block, NULL));
  for (int mask = n > 1 ? high_bit(n - 1) : 0; mask > 0; mask >>= 1)
    for (int v = 0; v + mask < n; v += 2 * mask) {
      int hi = v + 2 * mask < n ? v + 2 * mask : n;
      uint64_t at = b->scratch + (uint64_t)(v + mask) * block;
      CHECK(msg(g, M(v), at, M(v + mask), at, (uint64_t)(hi - v - mask) * block, b->tag));
    }
  for (int v = 0; v < n; v++)
    CHECK(cdag_rank_copy_local(g, M(v), b->scratch + (uint64_t)v * block, b->out, block, NULL));
#undef M
  return CDAG_OK;
}

/* Bruck alltoall: member r rotates its blocks into scratch (slot i: the block for r+i);
   round k packs the slots with bit k set, sends them to r+k in one message, and unpacks
   what r-k sent into the same slots; at the end slot i holds the block from r-i. Scratch:
   3n blocks (work, pack, unpack). O(n log n) ops. */
int gen_alltoall_bruck(cdag_graph *g, const gen_set *s, uint64_t block, const gen_bufs *b) {
  int n = s->n;
  uint64_t work = b->scratch, pack = work + (uint64_t)n * block, unpack = pack + (uint64_t)n * block;
  for (int r = 0; r < n; r++) {
    CHECK(cdag_rank_scratch(g, R(r), b->scratch, 3 * (uint64_t)n * block));
    for (int i = 0; i < n; i++)
      CHECK(cdag_rank_copy_local(g, R(r), b->data + (uint64_t)((r + i) % n) * block, work + (uint64_t)i * block, block, NULL));
  }
  for (int k = 1; k < n; k <<= 1) {
    for (int r = 0; r < n; r++) {
      uint64_t cnt = 0;
      for (int i = 0; i < n; i++)
        if (i & k) CHECK(cdag_rank_copy_local(g, R(r), work + (uint64_t)i * block, pack + cnt++ * block, block, NULL));
      CHECK(msg(g, R(r), pack, R((r + k) % n), unpack, cnt * block, b->tag + k));
    }
    for (int r = 0; r < n; r++) {
      uint64_t cnt = 0;
      for (int i = 0; i < n; i++)
        if (i & k) CHECK(cdag_rank_copy_local(g, R(r), unpack + cnt++ * block, work + (uint64_t)i * block, block, NULL));
    }
  }
  for (int r = 0; r < n; r++)
    for (int i = 0; i < n; i++)
      CHECK(cdag_rank_copy_local(g, R(r), work + (uint64_t)i * block, b->out + (uint64_t)((r - i + n) % n) * block, block, NULL));
  return CDAG_OK;
}

/* Dissemination (Bruck) allgather: member r puts its block in scratch slot 0; round k sends
   its first min(k, n-k) slots to r-k and receives r+k's into slots k..; at the end slot i
   holds member r+i's block, copied to out block r+i. ceil(log2 n) rounds. */
int gen_allgather_bruck(cdag_graph *g, const gen_set *s, uint64_t block, const gen_bufs *b) {
  int n = s->n;
  for (int r = 0; r < n; r++) {
    CHECK(cdag_rank_scratch(g, R(r), b->scratch, (uint64_t)n * block));
    CHECK(cdag_rank_copy_local(g, R(r), b->data, b->scratch, block, NULL));
  }
  for (int k = 1; k < n; k <<= 1) {
    uint64_t cnt = (uint64_t)(k < n - k ? k : n - k);
    for (int r = 0; r < n; r++)
      CHECK(msg(g, R(r), b->scratch, R((r - k + n) % n), b->scratch + (uint64_t)k * block, cnt * block, b->tag + k));
  }
  for (int r = 0; r < n; r++)
    for (int i = 0; i < n; i++)
      CHECK(cdag_rank_copy_local(g, R(r), b->scratch + (uint64_t)i * block, b->out + (uint64_t)((r + i) % n) * block, block, NULL));
  return CDAG_OK;
}

/* Ring allreduce of n*count int32 (chunk c: count elements): data copied to out; a ring
   reduce-scatter (n-1 steps: receive a chunk into scratch, reduce it into out) then a ring
   allgather of the reduced chunks straight into out. */
int gen_allreduce_ring(cdag_graph *g, const gen_set *s, uint64_t count, const gen_bufs *b) {
  int n = s->n;
  uint64_t l = 4 * count;
  for (int r = 0; r < n; r++) {
    CHECK(cdag_rank_scratch(g, R(r), b->scratch, l));
    CHECK(cdag_rank_copy_local(g, R(r), b->data, b->out, (uint64_t)n * l, NULL));
  }
  for (int step = 0; step < n - 1; step++)
    for (int r = 0; r < n; r++) {
      int c = ((r - step) % n + n) % n, to = (r + 1) % n;
      CHECK(msg(g, R(r), b->out + (uint64_t)c * l, R(to), b->scratch, l, b->tag));
      CHECK(cdag_rank_reduce_local(g, R(to), b->scratch, b->out + (uint64_t)c * l, count, CDAG_INT32, CDAG_SUM, NULL));
    }
  for (int step = 0; step < n - 1; step++)
    for (int r = 0; r < n; r++) {
      int c = ((r + 1 - step) % n + n) % n;
      CHECK(msg(g, R(r), b->out + (uint64_t)c * l, R((r + 1) % n), b->out + (uint64_t)c * l, l, b->tag + 1));
    }
  return CDAG_OK;
}

/* 2D halo on a periodic rows x cols torus (ranks row-major): every rank sends its four
   edges (bytes each, from data + k*bytes) to its neighbours, which receive them into
   their ghost cells at out + k*bytes. Not a collective: a neighbourhood exchange. */
int gen_halo2d(cdag_graph *g, int rows, int cols, uint64_t bytes, const gen_bufs *b) {
  for (int r = 0; r < rows * cols; r++) {
    int i = r / cols, j = r % cols;
    int nb[4] = {((i + rows - 1) % rows) * cols + j, ((i + 1) % rows) * cols + j, i * cols + (j + cols - 1) % cols,
                 i * cols + (j + 1) % cols};
    for (int k = 0; k < 4; k++) /* edge k goes to neighbour k, lands in its ghost k^1 */
      CHECK(msg(g, r, b->data + (uint64_t)k * bytes, nb[k], b->out + (uint64_t)(k ^ 1) * bytes, bytes, b->tag + k));
  }
  return CDAG_OK;
}
