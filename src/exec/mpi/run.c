/* cdag — src/exec/mpi/run.c: building a rank's schedule from its part, and running it.
 *
 * Building (once, at compile time): decode the part (part.h; schedule.c wrote it); decide per
 * reduction whether its buffers are used in place or packed through a temporary; compute the
 * snapshot ranges as (bytes read while communication is in flight) ∩ (bytes written then),
 * both merged with one sort each; redirect every such read into the snapshot buffer; create
 * sub-communicators, hindexed datatypes over absolute addresses (MPI_BOTTOM) and persistent
 * requests: one MPI-4 persistent collective per collective (or one of cdag's kernels where
 * the plan chose one: compile_kernel.c), one persistent send/recv per peer and direction.
 * Running: copy snapshots, pack, MPI_Startall, local copies, the kernels in plan order
 * (blocking, while the started requests progress), MPI_Waitall, unpack, then the
 * replications (bcasts of a result the run just wrote: started and waited for last),
 * residual reductions. A run costs its MPI calls plus the bytes it copies; no allocation. The
 * detect = 0 engine lives in baseline.c and shares the request arrays.
 * A plan in stages (a graph that computes) is one such schedule per stage, each built from
 * its stage's part, run one after the other with the rank's computations (compute.c) before
 * the first and after each; its staging buffers are the core's memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/schedule.h"

/* ---- MPI helpers ---- */

int sched_mpi_error(int mpi_rc, const char *call, int rank) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(mpi_rc, text, &len);
  return cdag__error(CDAG_ERR_MPI, "rank %d: %s failed: %s", rank, call, text);
}

#define MPI_TRY(call, name)                                     \
  do {                                                          \
    int mrc_ = (call);                                          \
    if (mrc_ != MPI_SUCCESS) return sched_mpi_error(mrc_, name, s->rank); \
  } while (0)

/* ---- building state ---- */

/* What building needs besides the decoded part (part.h): per slot whether it is packed
   through a temporary, per collective whether a reduction runs in place, and the ranges
   read and written while requests are in flight. */
typedef struct {
  const sched_part *pt;
  uint8_t *packed;    /* per slot of pt */
  uint8_t *inplace;   /* per collective of pt */
  uint64_t *rd, *wr; int64_t nrd, nwr, cap_rd, cap_wr;   /* [lo, hi) pairs */
} bstate;

static void bstate_free(bstate *b) {
  free(b->packed); free(b->inplace); free(b->rd); free(b->wr);
}

/* ---- snapshots: (reads in flight) ∩ (writes in flight), per rank ---- */

static int add_range(uint64_t **v, int64_t *n, int64_t *cap, uint64_t addr, uint64_t len) {
  if (!len) return CDAG_OK;
  int rc = base_grow((void **)v, *n, cap, 2, sizeof **v, "snapshot ranges");
  if (rc) return rc;
  (*v)[(*n)++] = addr;
  (*v)[(*n)++] = addr + len;
  return CDAG_OK;
}

static int range_cmp(const void *x, const void *y) {
  const uint64_t *a = x, *b = y;
  return (a[0] > b[0]) - (a[0] < b[0]);
}

/* Sorts [lo, hi) pairs and merges overlapping ones in place; returns the new pair count. */
static int64_t merge_ranges(uint64_t *v, int64_t npairs) {
  if (!npairs) return 0;
  base_sort(v, (size_t)npairs, 2 * sizeof *v, range_cmp);
  int64_t m = 0;
  for (int64_t k = 0; k < npairs; k++) {
    if (m && v[2 * k] <= v[2 * m - 1]) {
      if (v[2 * k + 1] > v[2 * m - 1]) v[2 * m - 1] = v[2 * k + 1];
      continue;
    }
    v[2 * m] = v[2 * k];
    v[2 * m + 1] = v[2 * k + 1];
    m++;
  }
  return m;
}

static int slot_direct(const bstate *b, const part_slot *sl, uint64_t bytes) {
  return sl->n == 1 && b->pt->pieces[sl->first].len == bytes;
}

/* Records what the run reads and writes while requests are in flight. */
/* An allreduce (or a reduce at its root) reading and writing the same single piece runs
   with MPI_IN_PLACE: only the reduction writes those bytes, so its own read needs no
   snapshot (other readers still get one). */
static int reduction_in_place(const bstate *b, const part_coll *c) {
  int kernel_red = c->method == SM_KERNEL && (c->kind == DET_ALLREDUCE || (c->kind == DET_REDUCE && c->me == c->rootm));
  if (c->method != SM_ALLREDUCE && !(c->method == SM_REDUCE && c->me == c->rootm) && !kernel_red) return 0;
  const part_slot *sd = &b->pt->slots[c->slot_first], *rv = sd + c->nsend;
  return sd->n == 1 && rv->n == 1 && b->pt->pieces[sd->first].addr == b->pt->pieces[rv->first].addr &&
         b->pt->pieces[sd->first].len == b->pt->pieces[rv->first].len && b->pt->pieces[rv->first].space == SP_USER;
}

/* A message whose pieces are not one contiguous range travels through a buffer of its own:
   packed before the run starts (reading origins) or unpacked after the wait (writing final
   values), by memcpy. MPICH's derived datatypes over the same pieces cost several times
   more for short pieces, and neither side then takes part in snapshots. Except pieces
   long enough on average that a datatype moves them faster than packing (sched_vector_pays:
   an hvector for one length at one stride, an hindexed otherwise; make_desc). */
static int pieces_packed(const sched_part *pt, int64_t first, int64_t n) {
  if (n < 1 || (n == 1 && pt->pieces[first].n == 1)) return 0;   /* (a part without pieces has no array to point into) */
  int contiguous = 1;
  uint64_t bytes = 0, blocks = 0;
  for (int64_t k = first; k < first + n; k++) {   /* a strided piece's blocks count each */
    const part_piece *z = &pt->pieces[k];
    if (z->n > 1 && z->stride != z->len) contiguous = 0;
    if (k > first && (pt->pieces[k - 1].space != z->space || pt->pieces[k - 1].addr + part_piece_span(&pt->pieces[k - 1]) != z->addr))
      contiguous = 0;
    bytes += part_piece_bytes(z), blocks += z->n;
  }
  return !contiguous && !sched_vector_pays(bytes / blocks);
}

static int pair_packed(const sched_part *pt, const part_pair *pr) { return pieces_packed(pt, pr->first, pr->n); }

/* A slot of an alltoallw or a bcast is packed as a residual message is (pieces_packed):
   into a buffer of its own before the run (a send) or unpacked from it after the wait (a
   receive), so MPI moves contiguous bytes (MPICH moves a datatype of short blocks inside a
   collective as slowly as in a message: an alltoallw of 4,096 doubles at a stride per rank
   took 197 us at 2 ranks, packed 23 us). */
static int slot_packed(const sched_part *pt, const part_coll *c, const part_slot *sl) {
  return (c->method == SM_ALLTOALLW || c->method == SM_BCAST) && pieces_packed(pt, sl->first, sl->n);
}

static int collect_ranges(bstate *b) {
  int rc = CDAG_OK;
#define RD(a, l) if ((rc = add_range(&b->rd, &b->nrd, &b->cap_rd, (a), (l)))) return rc
#define WR(a, l) if ((rc = add_range(&b->wr, &b->nwr, &b->cap_wr, (a), (l)))) return rc
  for (int64_t k = 0; k < b->pt->ncolls; k++) {
    const part_coll *c = &b->pt->colls[k];
    if (c->after && c->me == c->rootm) continue;   /* sends a result after the run wrote it: no origin */
    if ((b->inplace[c - b->pt->colls] = reduction_in_place(b, c))) {
      const part_piece *pc = &b->pt->pieces[b->pt->slots[c->slot_first + c->nsend].first];
      WR(pc->addr, pc->len);
      continue;
    }
    for (int q = 0; q < c->nsend + c->nrecv; q++) {
      const part_slot *sl = &b->pt->slots[c->slot_first + q];
      int send = q < c->nsend;
      int reduction = c->method == SM_ALLREDUCE || c->method == SM_REDUCE || c->method == SM_REDSCAT;
      if (reduction && send) b->packed[sl - b->pt->slots] = c->method == SM_REDSCAT || sl->n != 1;
      if (reduction && !send) b->packed[sl - b->pt->slots] = !slot_direct(b, sl, sl->bytes) || c->method == SM_REDSCAT;
      if (!reduction) b->packed[sl - b->pt->slots] = slot_packed(b->pt, c, sl);
      if (b->packed[sl - b->pt->slots]) continue;
      for (int64_t pi = sl->first; pi < sl->first + sl->n; pi++) {
        if (send) { RD(b->pt->pieces[pi].addr, b->pt->pieces[pi].len); }
        else { WR(b->pt->pieces[pi].addr, b->pt->pieces[pi].len); }
      }
    }
  }
  for (int64_t k = 0; k < b->pt->nout; k++)   /* a strided piece's blocks each */
    if (!pair_packed(b->pt, &b->pt->out[k]))
      for (int64_t pi = b->pt->out[k].first; pi < b->pt->out[k].first + b->pt->out[k].n; pi++)
        for (uint64_t j = 0; j < b->pt->pieces[pi].n; j++) RD(b->pt->pieces[pi].addr + j * b->pt->pieces[pi].stride, b->pt->pieces[pi].len);
  for (int64_t k = 0; k < b->pt->nin; k++)
    if (!pair_packed(b->pt, &b->pt->in[k]))
      for (int64_t pi = b->pt->in[k].first; pi < b->pt->in[k].first + b->pt->in[k].n; pi++)
        for (uint64_t j = 0; j < b->pt->pieces[pi].n && b->pt->pieces[pi].space == SP_USER; j++)
          WR(b->pt->pieces[pi].addr + j * b->pt->pieces[pi].stride, b->pt->pieces[pi].len);
  for (int64_t k = 0; k < b->pt->ncopies; k++) {
    const part_copy *c = &b->pt->copies[k];
    for (uint64_t j = 0; j < c->n && c->dst_space == SP_USER; j++) {
      RD(c->src + j * c->src_stride, c->len);
      WR(c->dst + j * c->dst_stride, c->len);
    }
  }
#undef RD
#undef WR
  return rc;
}

/* Snapshot ranges = merged reads ∩ merged writes (two-pointer sweep). */
static int build_snapshots(cdag_schedule *s, bstate *b) {
  int rc = collect_ranges(b);
  if (rc) return rc;
  int64_t nr = merge_ranges(b->rd, b->nrd / 2), nw = merge_ranges(b->wr, b->nwr / 2);
  b->nrd = 2 * nr;
  b->nwr = 2 * nw;
  int64_t cap = nr + nw + 1;
  s->snap_lo = malloc((size_t)cap * sizeof *s->snap_lo);
  s->snap_hi = malloc((size_t)cap * sizeof *s->snap_hi);
  s->snap_off = malloc((size_t)cap * sizeof *s->snap_off);
  if (!s->snap_lo || !s->snap_hi || !s->snap_off) return CDAG_NOMEM("snapshots");
  uint64_t total = 0;
  for (int64_t i = 0, j = 0; i < nr && j < nw;) {
    uint64_t lo = b->rd[2 * i] > b->wr[2 * j] ? b->rd[2 * i] : b->wr[2 * j];
    uint64_t hi = b->rd[2 * i + 1] < b->wr[2 * j + 1] ? b->rd[2 * i + 1] : b->wr[2 * j + 1];
    if (lo < hi) {
      s->snap_lo[s->nsnaps] = lo;
      s->snap_hi[s->nsnaps] = hi;
      s->snap_off[s->nsnaps++] = total;
      total += hi - lo;
    }
    if (b->rd[2 * i + 1] < b->wr[2 * j + 1]) i++;
    else j++;
  }
  if (total && !(s->snapbuf = malloc(total))) return CDAG_NOMEM("snapshot buffer");
  return CDAG_OK;
}

/* ---- redirected pieces and datatypes ---- */

typedef struct { uint8_t *ptr; uint64_t len; } rpiece;
typedef struct { rpiece *v; int64_t n, cap; } rlist;

static int rl_add(rlist *l, uint8_t *ptr, uint64_t len) {
  if (!len) return CDAG_OK;
  if (l->n && l->v[l->n - 1].ptr + l->v[l->n - 1].len == ptr) {  /* coalesce neighbours */
    l->v[l->n - 1].len += len;
    return CDAG_OK;
  }
  int rc = sched_grow((void **)&l->v, l->n, &l->cap, sizeof *l->v);
  if (rc) return rc;
  l->v[l->n++] = (rpiece){ptr, len};
  return CDAG_OK;
}

/* The first snapshot ending after addr (nsnaps: none). */
static int64_t snap_after(const cdag_schedule *s, uint64_t addr) {
  int64_t lo = 0, hi = s->nsnaps;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (s->snap_hi[mid] <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* A read of [addr, addr+len): the parts inside snapshots come from the snapshot buffer. */
static int rl_read(const cdag_schedule *s, rlist *l, uint64_t addr, uint64_t len) {
  int64_t lo = snap_after(s, addr);
  uint64_t end = addr + len;
  int rc;
  for (int64_t k = lo; addr < end; k++) {
    uint64_t next = k < s->nsnaps && s->snap_lo[k] < end ? s->snap_lo[k] : end;
    if (next > addr) {
      if ((rc = rl_add(l, (uint8_t *)(uintptr_t)addr, next - addr))) return rc;
      addr = next;
    }
    if (k >= s->nsnaps || addr >= end) break;
    uint64_t stop = s->snap_hi[k] < end ? s->snap_hi[k] : end;
    if ((rc = rl_add(l, s->snapbuf + s->snap_off[k] + (addr - s->snap_lo[k]), stop - addr))) return rc;
    addr = stop;
  }
  return CDAG_OK;
}

/* Does a snapshot meet [addr, addr+len)? */
static int snapshot_meets(const cdag_schedule *s, uint64_t addr, uint64_t len) {
  int64_t k = snap_after(s, addr);
  return k < s->nsnaps && s->snap_lo[k] < addr + len;
}

static uint8_t *piece_ptr(const cdag_schedule *s, const part_piece *p) {
  return p->space == SP_RED ? s->redbuf + p->addr : (uint8_t *)(uintptr_t)p->addr;
}

/* The pieces of a slot or pair as raw pointers (reads redirected through snapshots; a
   strided piece's blocks each, which make_desc finds regular again). */
static int rl_pieces(const cdag_schedule *s, const bstate *b, int64_t first, int64_t n, int read, rlist *l) {
  l->n = 0;
  int rc = CDAG_OK;
  for (int64_t k = first; k < first + n && !rc; k++) {
    const part_piece *p = &b->pt->pieces[k];
    for (uint64_t j = 0; j < p->n && !rc; j++) {
      if (read && p->space == SP_USER) rc = rl_read(s, l, p->addr + j * p->stride, p->len);
      else rc = rl_add(l, piece_ptr(s, p) + j * p->stride, p->len);
    }
  }
  return rc;
}

static int keep(cdag_schedule *s, void *p) {
  if (sched_grow((void **)&s->keep, s->nkeep, &s->cap_keep, sizeof *s->keep)) {
    free(p);
    return CDAG_NOMEM("schedule arrays");
  }
  s->keep[s->nkeep++] = p;
  return CDAG_OK;
}

static void *keep_alloc(cdag_schedule *s, size_t n) {
  void *p = calloc(n ? n : 1, 1);
  if (!p || keep(s, p)) return NULL;
  return p;
}

void *sched_keep_alloc(cdag_schedule *s, size_t n) { return keep_alloc(s, n); }

/* A message description: buf, count, type (for several pieces an absolute hindexed type
   from MPI_BOTTOM, or an hvector from the first piece when they are regular), displ: buf's
   address. */
typedef struct { void *buf; MPI_Count count; MPI_Datatype type; MPI_Aint displ; } mdesc;

/* Do the n pieces have one length and one stride (at least the length: a matrix column, a
   vector datatype's blocks)? */
static int regular(const MPI_Count *len, const MPI_Count *disp, int64_t n) {
  if (n < 2 || disp[1] - disp[0] < len[0]) return 0;
  for (int64_t k = 1; k < n; k++)
    if (len[k] != len[0] || disp[k] - disp[k - 1] != disp[1] - disp[0]) return 0;
  return 1;
}

/* The widest word dividing a block's length, the stride and the address: MPICH's pack
   (yaksa) copies blocks element by element. Messages are bytes to cdag; a word type of the
   right size carries them unchanged between ranks of one machine representation. */
static MPI_Count word_unit(MPI_Count len, MPI_Count stride, MPI_Count addr) {
  MPI_Count all = len | stride | addr;
  return all % 8 == 0 ? 8 : all % 4 == 0 ? 4 : all % 2 == 0 ? 2 : 1;
}

static MPI_Datatype word_type(MPI_Count unit) {
  return unit == 8 ? MPI_UINT64_T : unit == 4 ? MPI_UINT32_T : unit == 2 ? MPI_UINT16_T : MPI_BYTE;
}

/* n blocks of len bytes at one stride as an hvector from the first block: MPI packs a vector
   with one loop of one stride, where an hindexed reads a displacement per block (and an
   hindexed over MPI_BOTTOM wrapping the hvector, one level more, costs MPICH a quarter more
   at 8 KiB). Committed, and kept in s->types, freed with s. */
int sched_vector_type(cdag_schedule *s, MPI_Count n, MPI_Count len, MPI_Count stride, const void *first,
                      MPI_Datatype *t) {
  MPI_Aint at;
  MPI_Get_address(first, &at);
  MPI_Count unit = word_unit(len, stride, (MPI_Count)at);
  int rc = sched_grow((void **)&s->types, s->ntypes, &s->cap_types, sizeof *s->types);
  if (rc) return rc;
  int mrc = MPI_Type_create_hvector_c(n, len / unit, stride, word_type(unit), t);
  if (mrc == MPI_SUCCESS && (mrc = MPI_Type_commit(t)) != MPI_SUCCESS) MPI_Type_free(t);
  if (mrc != MPI_SUCCESS) return sched_mpi_error(mrc, "MPI_Type_create_hvector_c", s->rank);
  s->types[s->ntypes++] = *t;
  return CDAG_OK;
}

static int make_desc(cdag_schedule *s, const rlist *l, mdesc *d) {
  d->type = MPI_BYTE;
  d->buf = MPI_BOTTOM;
  d->count = 0;
  d->displ = 0;
  if (l->n == 1) {
    d->buf = l->v[0].ptr;
    d->count = (MPI_Count)l->v[0].len;
    MPI_TRY(MPI_Get_address(d->buf, &d->displ), "MPI_Get_address");
    return CDAG_OK;
  }
  if (l->n == 0) return CDAG_OK;
  MPI_Count *len = malloc((size_t)l->n * sizeof *len), *disp = malloc((size_t)l->n * sizeof *disp);
  int rc = CDAG_OK;
  if (!len || !disp) rc = CDAG_NOMEM("datatype");
  for (int64_t k = 0; !rc && k < l->n; k++) {
    MPI_Aint a;
    MPI_Get_address(l->v[k].ptr, &a);
    disp[k] = (MPI_Count)a;
    len[k] = (MPI_Count)l->v[k].len;
  }
  if (!rc && regular(len, disp, l->n)) {   /* relative to the first piece, which the buffer names */
    d->buf = l->v[0].ptr;
    d->displ = (MPI_Aint)disp[0];
    rc = sched_vector_type(s, l->n, len[0], disp[1] - disp[0], d->buf, &d->type);
  } else if (!rc && !(rc = sched_grow((void **)&s->types, s->ntypes, &s->cap_types, sizeof *s->types))) {
    int mrc = MPI_Type_create_hindexed_c(l->n, len, disp, MPI_BYTE, &d->type);
    if (mrc == MPI_SUCCESS) mrc = MPI_Type_commit(&d->type);
    if (mrc != MPI_SUCCESS) rc = sched_mpi_error(mrc, "MPI_Type_create_hindexed_c", s->rank);
    else s->types[s->ntypes++] = d->type;
  }
  free(len);
  free(disp);
  d->count = 1;
  return rc;
}

static MPI_Request *new_req(cdag_schedule *s) { return &s->reqs[s->nreqs++]; }

/* ---- copies (packs before start, local copies after, unpacks after wait) ---- */

static int add_copy(sched_copy **v, int64_t *n, int64_t *cap, const uint8_t *src, uint8_t *dst, uint64_t len) {
  if (!len) return CDAG_OK;
  int rc = sched_grow((void **)v, *n, cap, sizeof **v);
  if (rc) return rc;
  (*v)[(*n)++] = (sched_copy){src, dst, len, 1, len, len};
  return CDAG_OK;
}

/* nb blocks of len bytes, from src + j*ss to dst + j*ds, as one move. */
static int add_copy_blocks(sched_copy **v, int64_t *n, int64_t *cap, const uint8_t *src, uint8_t *dst, uint64_t len,
                           uint64_t nb, uint64_t ss, uint64_t ds) {
  int rc = add_copy(v, n, cap, src, dst, len);
  if (!rc && len) (*v)[*n - 1].n = nb, (*v)[*n - 1].src_stride = ss, (*v)[*n - 1].dst_stride = ds;
  return rc;
}

typedef struct { int64_t pre, mid, post; } caps;

/* Packs the slot's user pieces (origins, read before anything is written) into tmp. */
static int pack_slot(cdag_schedule *s, const bstate *b, const part_slot *sl, uint8_t *tmp, caps *cp) {
  uint64_t off = 0;
  for (int64_t k = sl->first; k < sl->first + sl->n; k++) {
    const part_piece *p = &b->pt->pieces[k];
    int rc = add_copy_blocks(&s->pre, &s->npre, &cp->pre, piece_ptr(s, p), tmp + off, p->len, p->n, p->stride, p->len);
    if (rc) return rc;
    off += part_piece_bytes(p);
  }
  return CDAG_OK;
}

static int unpack_slot(cdag_schedule *s, const bstate *b, const part_slot *sl, const uint8_t *tmp, caps *cp) {
  uint64_t off = 0;
  for (int64_t k = sl->first; k < sl->first + sl->n; k++) {
    const part_piece *p = &b->pt->pieces[k];
    int rc = add_copy_blocks(&s->post, &s->npost, &cp->post, tmp + off, piece_ptr(s, p), p->len, p->n, p->len, p->stride);
    if (rc) return rc;
    off += part_piece_bytes(p);
  }
  return CDAG_OK;
}

/* ---- collectives ---- */

static int coll_comm(cdag_schedule *s, const bstate *b, const part_coll *c, MPI_Comm *comm) {
  if (c->setid < 0) {
    *comm = s->comm;
    return CDAG_OK;
  }
  if (c->setid >= s->ncomms) {
    MPI_Comm *v = realloc(s->comms, (size_t)(c->setid + 1) * sizeof *v);
    if (!v) return CDAG_NOMEM("sub-communicators");
    for (int64_t k = s->ncomms; k <= c->setid; k++) v[k] = MPI_COMM_NULL;
    s->comms = v;
    s->ncomms = (int)c->setid + 1;
  }
  if (s->comms[c->setid] == MPI_COMM_NULL) {
    MPI_Group world, sub;
    MPI_TRY(MPI_Comm_group(s->comm, &world), "MPI_Comm_group");
    int mrc = MPI_Group_incl(world, c->n, b->pt->members + c->members_first, &sub);
    MPI_Group_free(&world);
    if (mrc != MPI_SUCCESS) return sched_mpi_error(mrc, "MPI_Group_incl", s->rank);
    mrc = MPI_Comm_create_group(s->comm, sub, (int)(c->setid & 0x7fff), &s->comms[c->setid]);
    MPI_Group_free(&sub);
    if (mrc != MPI_SUCCESS) return sched_mpi_error(mrc, "MPI_Comm_create_group", s->rank);
  }
  *comm = s->comms[c->setid];
  return CDAG_OK;
}

/* The description of the pieces of sl: a buffer of its own (packed), packed before the run
   (a send) or unpacked after the wait, or the pieces where they are (make_desc; `read`: a
   send reading origins, through snapshots). */
static int pieces_desc(cdag_schedule *s, const bstate *b, const part_slot *sl, int packed, int send, int read, rlist *l,
                       caps *cp, mdesc *d) {
  if (!packed) {
    int rc = rl_pieces(s, b, sl->first, sl->n, read, l);
    return rc ? rc : make_desc(s, l, d);
  }
  uint8_t *tmp = keep_alloc(s, sl->bytes);
  if (!tmp) return CDAG_NOMEM("message buffer");
  *d = (mdesc){tmp, (MPI_Count)sl->bytes, MPI_BYTE, 0};
  MPI_TRY(MPI_Get_address(tmp, &d->displ), "MPI_Get_address");
  return send ? pack_slot(s, b, sl, tmp, cp) : unpack_slot(s, b, sl, tmp, cp);
}

/* A collective's slot: packed as slot_packed decided (b->packed). */
static int slot_desc(cdag_schedule *s, const bstate *b, const part_slot *sl, int send, int read, rlist *l, caps *cp,
                     mdesc *d) {
  return pieces_desc(s, b, sl, b->packed[sl - b->pt->slots], send, read, l, cp, d);
}

static int coll_alltoallw(cdag_schedule *s, const bstate *b, const part_coll *c, MPI_Comm comm, rlist *l, caps *cp) {
  int n = c->n, rc;
  MPI_Count *cnt = keep_alloc(s, 2 * (size_t)n * sizeof *cnt);
  MPI_Aint *dsp = keep_alloc(s, 2 * (size_t)n * sizeof *dsp);
  MPI_Datatype *typ = keep_alloc(s, 2 * (size_t)n * sizeof *typ);
  mdesc *slotd = calloc((size_t)(c->nsend + c->nrecv) + 1, sizeof *slotd);
  if (!cnt || !dsp || !typ || !slotd) {
    free(slotd);
    return CDAG_NOMEM("alltoallw arguments");
  }
  for (int q = 0; q < c->nsend + c->nrecv; q++) {
    const part_slot *sl = &b->pt->slots[c->slot_first + q];
    if ((rc = slot_desc(s, b, sl, q < c->nsend, q < c->nsend, l, cp, &slotd[q]))) {
      free(slotd);
      return rc;
    }
  }
  for (int j = 0; j < n; j++) {
    for (int side = 0; side < 2; side++) {
      int v = b->pt->map[c->map_first + 2 * j + side], k = side * n + j;
      mdesc *d = v ? &slotd[side ? c->nsend + v - 1 : v - 1] : NULL;
      cnt[k] = d ? d->count : 0;
      dsp[k] = d && d->buf != MPI_BOTTOM ? d->displ : 0;   /* an absolute hindexed has its addresses */
      typ[k] = d ? d->type : MPI_BYTE;
    }
  }
  free(slotd);
  MPI_TRY(MPI_Alltoallw_init_c(MPI_BOTTOM, cnt, dsp, typ, MPI_BOTTOM, cnt + n, dsp + n, typ + n, comm,
                               MPI_INFO_NULL, new_req(s)), "MPI_Alltoallw_init_c");
  return CDAG_OK;
}

/* MPI_Allgatherv over absolute addresses: block j lands at the address of recv slot j; the
   own block runs in place when its slot is empty (or through a temporary if the send slot
   is not one piece). */
static int coll_allgatherv(cdag_schedule *s, const bstate *b, const part_coll *c, MPI_Comm comm, rlist *l) {
  int n = c->n, rc;
  MPI_Count *cnt = keep_alloc(s, (size_t)n * sizeof *cnt);
  MPI_Aint *dsp = keep_alloc(s, (size_t)n * sizeof *dsp);
  if (!cnt || !dsp) return CDAG_NOMEM("allgatherv arguments");
  const part_slot *send = &b->pt->slots[c->slot_first], *recv = send + c->nsend;
  mdesc d;
  if ((rc = rl_pieces(s, b, send->first, send->n, 1, l)) || (rc = make_desc(s, l, &d))) return rc;
  for (int j = 0; j < n; j++) {
    cnt[j] = (MPI_Count)(j == c->me ? send->bytes : recv[j].bytes);
    if (recv[j].n) MPI_TRY(MPI_Get_address(piece_ptr(s, &b->pt->pieces[recv[j].first]), &dsp[j]), "MPI_Get_address");
  }
  const void *sbuf = d.buf;
  if (!recv[c->me].n && send->bytes) {
    if (l->n == 1) {
      sbuf = MPI_IN_PLACE;
      dsp[c->me] = d.displ;
    } else {
      void *tmp = keep_alloc(s, send->bytes);
      if (!tmp) return CDAG_NOMEM("allgatherv temporary");
      MPI_TRY(MPI_Get_address(tmp, &dsp[c->me]), "MPI_Get_address");
    }
  }
  MPI_TRY(MPI_Allgatherv_init_c(sbuf, d.count, d.type, MPI_BOTTOM, cnt, dsp, MPI_BYTE, comm, MPI_INFO_NULL,
                                new_req(s)), "MPI_Allgatherv_init_c");
  return CDAG_OK;
}

/* The send buffer of a reduction: the single (redirected) piece, or a packed temporary. */
static int red_buf(cdag_schedule *s, const bstate *b, const part_slot *sl, int send, uint64_t bytes, rlist *l,
                   caps *cp, void **buf) {
  int rc;
  if (!b->packed[sl - b->pt->slots] && send) {
    if ((rc = rl_pieces(s, b, sl->first, sl->n, 1, l))) return rc;
    if (l->n == 1) {
      *buf = l->v[0].ptr;
      return CDAG_OK;
    }
  }
  if (!b->packed[sl - b->pt->slots] && !send) {
    *buf = piece_ptr(s, &b->pt->pieces[sl->first]);
    return CDAG_OK;
  }
  uint8_t *tmp = keep_alloc(s, bytes);
  if (!tmp) return CDAG_NOMEM("reduction temporary");
  *buf = tmp;
  return send ? pack_slot(s, b, sl, tmp, cp) : unpack_slot(s, b, sl, tmp, cp);
}

static int coll_reduction(cdag_schedule *s, const bstate *b, const part_coll *c, MPI_Comm comm, rlist *l, caps *cp) {
  MPI_Datatype t;
  MPI_Op op;
  int tsize = ir_type_size(c->type), rc = sched_mpi_reduction(c->type, c->op, &t, &op);
  if (rc) return rc;
  const part_slot *send = &b->pt->slots[c->slot_first], *recv = &b->pt->slots[c->slot_first + c->nsend];
  void *sbuf = NULL, *rbuf = NULL;
  if (c->method == SM_REDSCAT) {
    uint64_t total = 0;
    MPI_Count *counts = keep_alloc(s, (size_t)c->n * sizeof *counts);
    if (!counts) return CDAG_NOMEM("reduce_scatter counts");
    for (int j = 0; j < c->nsend; j++) {
      counts[j] = (MPI_Count)(send[j].bytes / (uint64_t)tsize);
      total += send[j].bytes;
    }
    uint8_t *tmp = keep_alloc(s, total);
    if (!tmp) return CDAG_NOMEM("reduce_scatter temporary");
    uint64_t off = 0;
    for (int j = 0; j < c->nsend; j++) {
      if ((rc = pack_slot(s, b, &send[j], tmp + off, cp))) return rc;
      off += send[j].bytes;
    }
    if ((rc = red_buf(s, b, recv, 0, (uint64_t)counts[c->me] * (uint64_t)tsize, l, cp, &rbuf))) return rc;
    MPI_TRY(MPI_Reduce_scatter_init_c(tmp, rbuf, counts, t, op, comm, MPI_INFO_NULL, new_req(s)),
            "MPI_Reduce_scatter_init_c");
    return CDAG_OK;
  }
  uint64_t bytes = send->bytes;
  if (b->inplace[c - b->pt->colls]) {
    sbuf = MPI_IN_PLACE;
    rbuf = piece_ptr(s, &b->pt->pieces[recv->first]);
  } else if ((rc = red_buf(s, b, send, 1, bytes, l, cp, &sbuf))) {
    return rc;
  }
  int has_recv = c->method == SM_ALLREDUCE || c->me == c->rootm;
  if (has_recv && !b->inplace[c - b->pt->colls] && (rc = red_buf(s, b, recv, 0, bytes, l, cp, &rbuf))) return rc;
  MPI_Count count = (MPI_Count)(bytes / (uint64_t)tsize);
  if (c->method == SM_ALLREDUCE)
    MPI_TRY(MPI_Allreduce_init_c(sbuf, rbuf, count, t, op, comm, MPI_INFO_NULL, new_req(s)), "MPI_Allreduce_init_c");
  else
    MPI_TRY(MPI_Reduce_init_c(sbuf, rbuf, count, t, op, c->rootm, comm, MPI_INFO_NULL, new_req(s)),
            "MPI_Reduce_init_c");
  return CDAG_OK;
}

/* A slot's pieces as an iov (reads redirected through snapshots); arrays malloc'd. */
static int slot_iov(const cdag_schedule *s, const bstate *b, const part_slot *sl, int read, rlist *l, sched_iov *v) {
  int rc = rl_pieces(s, b, sl->first, sl->n, read, l);
  if (rc) return rc;
  v->n = (int)l->n;
  v->addr = malloc((size_t)(l->n + 1) * sizeof *v->addr);
  v->len = malloc((size_t)(l->n + 1) * sizeof *v->len);
  if (!v->addr || !v->len) return CDAG_NOMEM("kernel slot");
  for (int64_t k = 0; k < l->n; k++) {
    v->addr[k] = (uint64_t)(uintptr_t)l->v[k].ptr;
    v->len[k] = l->v[k].len;
  }
  return CDAG_OK;
}

/* A collective run by one of cdag's kernels (compile_kernel.c), over point-to-point. */
static int build_kernel(cdag_schedule *s, const bstate *b, const part_coll *c, rlist *l) {
  int nslots = c->nsend + c->nrecv, rc = CDAG_OK;
  sched_iov *v = calloc((size_t)nslots, sizeof *v);
  if (!v) return CDAG_NOMEM("kernel slots");
  for (int q = 0; q < nslots && !rc; q++) rc = slot_iov(s, b, &b->pt->slots[c->slot_first + q], q < c->nsend, l, &v[q]);
  sched_kcoll k = {c->kind, c->alg, c->n, c->me, c->rootm, c->setid >= 0 ? b->pt->members + c->members_first : NULL,
                   c->type, c->op, b->inplace[c - b->pt->colls], b->pt->counts + c->counts_first, v[0], v + c->nsend,
                   &b->pt->model};
  if (!rc) rc = sched_kernel_build(s, &k, &s->kerns[s->nkerns]);
  if (!rc) s->nkerns++;
  for (int q = 0; q < nslots; q++) {
    free(v[q].addr);
    free(v[q].len);
  }
  free(v);
  return rc;
}

static int build_coll(cdag_schedule *s, const bstate *b, const part_coll *c, rlist *l, caps *cp) {
  if (c->method == SM_KERNEL) return build_kernel(s, b, c, l);
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = coll_comm(s, b, c, &comm);
  if (rc) return rc;
  if (comm == MPI_COMM_NULL) return cdag__error(CDAG_ERR_MPI, "rank %d: no sub-communicator for a collective", s->rank);
  switch (c->method) {
  case SM_BARRIER:
    MPI_TRY(MPI_Barrier_init(comm, MPI_INFO_NULL, new_req(s)), "MPI_Barrier_init");
    return CDAG_OK;
  case SM_BCAST: {
    int root = c->me == c->rootm;
    const part_slot *sl = &b->pt->slots[c->slot_first + (root ? 0 : c->nsend)];
    mdesc d;   /* a replication's root sends the result in place, never a snapshot (nor packed) */
    if ((rc = slot_desc(s, b, sl, root, root && !c->after, l, cp, &d))) return rc;
    MPI_TRY(MPI_Bcast_init_c(d.buf, d.count, d.type, c->rootm, comm, MPI_INFO_NULL, new_req(s)), "MPI_Bcast_init_c");
    return CDAG_OK;
  }
  case SM_ALLREDUCE:
  case SM_REDUCE:
  case SM_REDSCAT:
    return coll_reduction(s, b, c, comm, l, cp);
  case SM_ALLTOALLW:
    return coll_alltoallw(s, b, c, comm, l, cp);
  case SM_ALLGATHERV:
    return coll_allgatherv(s, b, c, comm, l);
  default:
    return cdag__error(CDAG_ERR_FORMAT, "schedule part: unknown collective method %d", c->method);
  }
}

/* ---- residual messages, copies, reductions ---- */

/* The buffer a message of pair pr goes through: its own packing buffer (pair_packed), or
   the user's pieces as they are (an hindexed type where snapshots split them). */
static int pair_desc(cdag_schedule *s, const bstate *b, const part_pair *pr, int out, rlist *l, caps *cp,
                     mdesc *d) {
  part_slot sl = {pr->first, pr->n, 0};
  for (int64_t k = pr->first; k < pr->first + pr->n; k++) sl.bytes += part_piece_bytes(&b->pt->pieces[k]);
  return pieces_desc(s, b, &sl, pair_packed(b->pt, pr), out, out, l, cp, d);
}

static int build_pairs(cdag_schedule *s, const bstate *b, rlist *l, caps *cp) {
  int rc;
  mdesc d;
  for (int64_t k = 0; k < b->pt->nin; k++) {
    if ((rc = pair_desc(s, b, &b->pt->in[k], 0, l, cp, &d))) return rc;
    MPI_TRY(MPI_Recv_init_c(d.buf, d.count, d.type, b->pt->in[k].peer, b->pt->in[k].tag, s->comm, new_req(s)),
            "MPI_Recv_init_c");
  }
  for (int64_t k = 0; k < b->pt->nout; k++) {
    if ((rc = pair_desc(s, b, &b->pt->out[k], 1, l, cp, &d))) return rc;
    MPI_TRY(MPI_Send_init_c(d.buf, d.count, d.type, b->pt->out[k].peer, b->pt->out[k].tag, s->comm, new_req(s)),
            "MPI_Send_init_c");
  }
  return CDAG_OK;
}

/* Does [lo, hi) overlap a range of the sorted disjoint pairs v[0..2n)? */
static int overlaps(const uint64_t *v, int64_t n, uint64_t lo, uint64_t hi) {
  int64_t a = 0, z = n;
  while (a < z) {  /* first range ending after lo */
    int64_t m = a + (z - a) / 2;
    if (v[2 * m + 1] <= lo) a = m + 1;
    else z = m;
  }
  return a < n && v[2 * a] < hi;
}

/* A rank's own contribution to a residual reduction is read where it lives, after the wait,
   when nothing the run writes touches it (or it is the first contribution of a reduction
   into the same bytes: in place); otherwise it is copied to the reduction buffer first.
   post: merged ranges written by unpacks; dsts: sorted disjoint reduction destinations. */
static int own_in_place(const cdag_schedule *s, const bstate *b, const uint64_t *post, int64_t npost,
                        const uint64_t *dsts, int64_t ndsts, const part_copy *c, sched_contrib *ct, const sched_red *rd) {
  uint64_t lo = c->src, hi = c->src + c->len;
  if (overlaps(b->wr, b->nwr / 2, lo, hi) || overlaps(post, npost, lo, hi)) return 0;
  if (!overlaps(dsts, ndsts, lo, hi)) return 1;
  return rd && ct == s->contribs + rd->first && ct->mult == 1 && (uint8_t *)(uintptr_t)lo == rd->dst &&
         c->len == rd->count * (uint64_t)ir_type_size(rd->type);
}

static int off_cmp(const void *x, const void *y) {
  const int64_t *a = x, *b = y;
  return (a[0] > b[0]) - (a[0] < b[0]);
}

/* Ranges written after the wait (unpacks; reduction destinations) and the contribution of
   each reduction-buffer offset, for own_in_place. */
static int own_contribs(cdag_schedule *s, const bstate *b, caps *cp) {
  int64_t n = s->npost, nd = s->nreds;
  uint64_t *post = malloc((size_t)(2 * n + 1) * sizeof *post), *dsts = malloc((size_t)(2 * nd + 1) * sizeof *dsts);
  int64_t *offs = malloc((size_t)(2 * s->ncontribs + 1) * sizeof *offs), *red_of = malloc((size_t)(s->ncontribs + 1) * sizeof *red_of);
  if (!post || !dsts || !offs || !red_of) {
    free(post); free(dsts); free(offs); free(red_of);
    return CDAG_NOMEM("reduction contributions");
  }
  for (int64_t k = 0; k < n; k++) {   /* a strided unpack by its hull: a contribution near it is copied first */
    post[2 * k] = (uint64_t)(uintptr_t)s->post[k].dst;
    post[2 * k + 1] = post[2 * k] + (s->post[k].n - 1) * s->post[k].dst_stride + s->post[k].len;
  }
  for (int64_t k = 0; k < nd; k++) {
    dsts[2 * k] = (uint64_t)(uintptr_t)s->reds[k].dst;
    dsts[2 * k + 1] = dsts[2 * k] + s->reds[k].count * (uint64_t)ir_type_size(s->reds[k].type);
    for (int64_t q = 0; q < s->reds[k].n; q++) red_of[s->reds[k].first + q] = k;
  }
  int64_t np = merge_ranges(post, n), ndm = merge_ranges(dsts, nd);
  for (int64_t q = 0; q < s->ncontribs; q++) {
    offs[2 * q] = (int64_t)(s->contribs[q].buf - s->redbuf);
    offs[2 * q + 1] = q;
  }
  if (s->ncontribs) base_sort(offs, (size_t)s->ncontribs, 2 * sizeof *offs, off_cmp);
  int rc = CDAG_OK;
  for (int64_t k = 0; k < b->pt->ncopies && !rc; k++) {
    const part_copy *c = &b->pt->copies[k];
    if (c->dst_space != SP_RED) continue;
    int64_t key[2] = {(int64_t)c->dst, 0}, *hit = bsearch(key, offs, (size_t)s->ncontribs, 2 * sizeof *offs, off_cmp);
    sched_contrib *ct = hit ? &s->contribs[hit[1]] : NULL;
    if (ct && own_in_place(s, b, post, np, dsts, ndm, c, ct, &s->reds[red_of[hit[1]]]))
      ct->buf = (const uint8_t *)(uintptr_t)c->src;  /* read in place after the wait */
    else  /* copied before anything runs: an origin */
      rc = add_copy(&s->pre, &s->npre, &cp->pre, (uint8_t *)(uintptr_t)c->src, s->redbuf + c->dst, c->len);
  }
  free(post); free(dsts); free(offs); free(red_of);
  return rc;
}

static int build_copies(cdag_schedule *s, const bstate *b, rlist *l, caps *cp) {
  int rc;
  for (int64_t k = 0; k < b->pt->ncopies; k++) {
    const part_copy *c = &b->pt->copies[k];
    if (c->dst_space == SP_RED) continue;  /* own reduction contributions: own_contribs */
    if (c->n > 1 && !snapshot_meets(s, c->src, part_copy_span(c, c->src_stride))) {   /* a strided copy whole */
      rc = add_copy_blocks(&s->mid, &s->nmid, &cp->mid, (const uint8_t *)(uintptr_t)c->src, (uint8_t *)(uintptr_t)c->dst,
                           c->len, c->n, c->src_stride, c->dst_stride);
      if (rc) return rc;
      continue;
    }
    for (uint64_t j = 0; j < c->n; j++) {
      l->n = 0;
      if ((rc = rl_read(s, l, c->src + j * c->src_stride, c->len))) return rc;
      uint8_t *dst = (uint8_t *)(uintptr_t)(c->dst + j * c->dst_stride);
      for (int64_t q = 0; q < l->n; q++) {
        if ((rc = add_copy(&s->mid, &s->nmid, &cp->mid, l->v[q].ptr, dst, l->v[q].len))) return rc;
        dst += l->v[q].len;
      }
    }
  }
  return CDAG_OK;
}

/* Residual reductions: contributions point into the reduction buffer (bounds checked by
   part_read). */
static int build_reds(cdag_schedule *s, const sched_part *pt) {
  s->reds = malloc((size_t)(pt->nreds ? pt->nreds : 1) * sizeof *s->reds);
  s->contribs = malloc((size_t)(pt->ncontribs ? pt->ncontribs : 1) * sizeof *s->contribs);
  if (!s->reds || !s->contribs) return CDAG_NOMEM("schedule reductions");
  for (int64_t k = 0; k < pt->nreds; k++) {
    const part_red *rd = &pt->reds[k];
    s->reds[k] = (sched_red){(uint8_t *)(uintptr_t)rd->dst, rd->count, rd->type, rd->op, rd->first, rd->n};
  }
  for (int64_t q = 0; q < pt->ncontribs; q++)
    s->contribs[q] = (sched_contrib){s->redbuf + pt->contribs[q].off, pt->contribs[q].mult};
  s->nreds = pt->nreds;
  s->ncontribs = pt->ncontribs;
  return CDAG_OK;
}

static int build_plan(cdag_schedule *s, const sched_part *pt) {
  bstate b = {.pt = pt};
  rlist l = {0};
  caps cp = {0};
  int rc = CDAG_OK;
  b.packed = calloc((size_t)(pt->nslots + 1), 1);
  b.inplace = calloc((size_t)(pt->ncolls + 1), 1);
  if (!b.packed || !b.inplace) rc = CDAG_NOMEM("schedule slots");
  if (!rc) rc = build_snapshots(s, &b);
  if (!rc && pt->redsize && !(s->redbuf = calloc(1, pt->redsize))) rc = CDAG_NOMEM("reduction buffer");
  if (!rc) {
    int64_t nreq = pt->ncolls + pt->nin + pt->nout;
    s->reqs = malloc((size_t)(nreq ? nreq : 1) * sizeof *s->reqs);
    s->kerns = calloc((size_t)(pt->ncolls ? pt->ncolls : 1), sizeof *s->kerns);
    if (!s->reqs || !s->kerns) rc = CDAG_NOMEM("requests");
  }
  for (int64_t k = 0; !rc && k < pt->ncolls; k++)
    if (!pt->colls[k].after) rc = build_coll(s, &b, &pt->colls[k], &l, &cp);
  if (!rc) rc = build_pairs(s, &b, &l, &cp);
  int first = s->nreqs;   /* the replications' requests come last */
  for (int64_t k = 0; !rc && k < pt->ncolls; k++)
    if (pt->colls[k].after) rc = build_coll(s, &b, &pt->colls[k], &l, &cp);
  s->nlate = s->nreqs - first;
  if (!rc) rc = build_copies(s, &b, &l, &cp);
  if (!rc) rc = build_reds(s, pt);
  if (!rc) rc = own_contribs(s, &b, &cp);
  free(l.v);
  bstate_free(&b);
  return rc;
}

/* A plan in stages: one plan-mode schedule per stage, built in stage order on every rank
   (their persistent collectives are created in the same order everywhere), then the
   computations that run between them. */
static int build_stages(cdag_schedule *s, cdag_graph *g, const sched_part *pt) {
  if (!(s->sub = calloc((size_t)(pt->nstages ? pt->nstages : 1), sizeof *s->sub))) return CDAG_NOMEM("stages");
  int rc = CDAG_OK;
  for (int64_t k = 0; k < pt->nstages && !rc; k++) {
    cdag_schedule *t = calloc(1, sizeof *t);
    if (!t) return CDAG_NOMEM("stages");
    s->sub[s->nsub++] = t;
    t->comm = s->comm;
    t->rank = s->rank;
    t->nprocs = s->nprocs;
    t->mode = PART_PLAN;
    rc = build_plan(t, &pt->stages[k]);
  }
  return rc ? rc : sched_comps_build(s, g, pt);
}

int sched_build_part(cdag_schedule *s, cdag_graph *g) {
  const sched_part *part = &s->core->part;
  s->mode = part->mode;
  if (s->mode == PART_PLAN) return build_plan(s, part);
  if (s->mode == PART_STAGES) return build_stages(s, g, part);
  int rc = engine_build(s, g, part);
  if (!rc) rc = sched_comps_build(s, g, part);
  for (int64_t k = 0; !rc && k < s->ncomps; k++) {
    int64_t pos = part->comps[k].pos;
    if (pos >= s->eng.nops || s->eng.kind[pos] != IR_CALC)
      rc = cdag__error(CDAG_ERR_FORMAT, "rank %d: baseline schedule names op %lld as a computation", s->rank,
                       (long long)pos);
    else s->eng.comp_of[pos] = (int32_t)k;
  }
  return rc;
}

sched_core *sched_core_new(void) {
  sched_core *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->refs = 1;
  c->comm = MPI_COMM_NULL;
  return c;
}

sched_core *sched_core_ref(sched_core *c) {
  if (c) __atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
  return c;
}

void sched_core_unref(sched_core *c) {
  if (!c || __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL)) return;
  cdag_schedule *spare = c->spare;   /* its requests go before the communicator they use */
  if (spare) {
    spare->core = NULL;
    sched_destroy(spare);
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
  exec_arena_unref(c->arena);
  free(c->temps);
  free(c->report_text);
  free(c->report_json);
  part_free(&c->part);
  free(c);
}

/* Names the rank in a decoding error (part.c cannot know it). */
static int part_error(int rc, int rank) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s", cdag__error_text());
  return cdag__error(rc, "rank %d: %s", rank, msg);
}

int sched_from_core(sched_core *core, cdag_graph *g, cdag_schedule **out) {
  *out = NULL;
  cdag_schedule *s = calloc(1, sizeof *s);
  if (!s) return CDAG_NOMEM("schedule");
  s->core = sched_core_ref(core);
  s->serial = __atomic_fetch_add(&core->nbuilt, 1, __ATOMIC_RELAXED);
  s->comm = core->comm;
  MPI_Comm_rank(s->comm, &s->rank);
  MPI_Comm_size(s->comm, &s->nprocs);
  int rc = sched_build_part(s, g);
  if (rc) {
    sched_destroy(s);
    return rc;
  }
  *out = s;
  return CDAG_OK;
}

int sched_build(const uint8_t *part, int64_t len, cdag_graph *g, MPI_Comm comm, cdag_schedule **out) {
  *out = NULL;
  sched_core *core = sched_core_new();
  if (!core) return CDAG_NOMEM("schedule");
  int rank = 0, nprocs = 0, rc = CDAG_OK, mrc = MPI_Comm_dup(comm, &core->comm);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nprocs);
  if (mrc != MPI_SUCCESS) {
    core->comm = MPI_COMM_NULL;
    rc = sched_mpi_error(mrc, "MPI_Comm_dup", rank);
  } else {
    MPI_Comm_set_errhandler(core->comm, MPI_ERRORS_RETURN);
    if ((rc = part_read(part, len, nprocs, &core->part))) rc = part_error(rc, rank);
    else rc = sched_temps_bind(core);
  }
  if (!rc) rc = sched_from_core(core, g, out);
  sched_core_unref(core);   /* the handle holds it now */
  return rc;
}

void sched_spare_put(cdag_schedule *s) {
  sched_core *c = s->core;
  cdag_schedule *none = NULL;
  if (c) {   /* idle as a spare: flag clear (cdag_schedule_free holds it), no result pending */
    s->completed = 0;
    __atomic_store_n(&s->busy, 0, __ATOMIC_RELAXED);   /* published by the exchange below */
  }
  if (!c || s->started || s->failed || !__atomic_compare_exchange_n(&c->spare, &none, s, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    sched_destroy(s);
    return;
  }
  sched_core_unref(c);   /* the spare holds none: the last reference destroys it */
}

cdag_schedule *sched_spare_take(sched_core *c) {
  cdag_schedule *s = __atomic_exchange_n(&c->spare, NULL, __ATOMIC_ACQ_REL);
  if (s) sched_core_ref(c);   /* the caller holds one, so c is alive */
  return s;
}

/* The run of s is over (completed, failed or abandoned): another handle of its core may start. */
static void core_release(cdag_schedule *s) {
  s->started = 0;
  if (s->core) __atomic_store_n(&s->core->running, 0, __ATOMIC_RELEASE);
}

void sched_destroy(cdag_schedule *s) {
  if (!s) return;
  if (s->started) core_release(s);   /* freed in the middle of a run (its wait failed) */
  sched_core_unref(s->core);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    for (int k = 0; k < s->nreqs; k++)
      if (s->reqs[k] != MPI_REQUEST_NULL) MPI_Request_free(&s->reqs[k]);
    for (int k = 0; k < s->nkerns; k++) kern_free(&s->kerns[k]);
    for (int64_t k = 0; k < s->ntypes; k++) MPI_Type_free(&s->types[k]);
    for (int k = 0; k < s->ncomms; k++)
      if (s->comms[k] != MPI_COMM_NULL) MPI_Comm_free(&s->comms[k]);
  }
  for (int64_t k = 0; k < s->nkeep; k++) free(s->keep[k]);
  free(s->keep); free(s->reqs); free(s->types); free(s->comms); free(s->kerns);
  free(s->snap_lo); free(s->snap_hi); free(s->snap_off); free(s->snapbuf);
  free(s->pre); free(s->mid); free(s->post); free(s->reds); free(s->contribs); free(s->redbuf);
  engine_free(&s->eng);
  for (int k = 0; k < s->nsub; k++) sched_destroy(s->sub[k]);
  free(s->sub);
  free(s->comps);
  free(s->unhashed);
  free(s);
}

/* ---- running ---- */

/* Element-sized copies (a transposed block moves one double at a time) as the compiler's own
   moves: a call of memcpy per 8 bytes cost more than the bytes. */
/* A strided move's blocks (the inner loops let the compiler copy short ones as words). */
static void run_blocks(const sched_copy *c) {
  const uint8_t *src = c->src;
  uint8_t *dst = c->dst;
  switch (c->len) {
    case 8:
      for (uint64_t j = 0; j < c->n; j++, src += c->src_stride, dst += c->dst_stride) memcpy(dst, src, 8);
      break;
    case 16:
      for (uint64_t j = 0; j < c->n; j++, src += c->src_stride, dst += c->dst_stride) memcpy(dst, src, 16);
      break;
    default:
      for (uint64_t j = 0; j < c->n; j++, src += c->src_stride, dst += c->dst_stride) memcpy(dst, src, c->len);
  }
}

static void run_copies(const sched_copy *c, int64_t n) {
  for (int64_t k = 0; k < n; k++) switch (c[k].n > 1 ? 0 : c[k].len) {
      case 0: run_blocks(&c[k]); break;
      case 4: memcpy(c[k].dst, c[k].src, 4); break;
      case 8: memcpy(c[k].dst, c[k].src, 8); break;
      case 16: memcpy(c[k].dst, c[k].src, 16); break;
      default: memcpy(c[k].dst, c[k].src, c[k].len);
    }
}

/* dst = a op b in one pass for the common aligned sums, maxima and minima (the usual
   two-contribution case saves a copy of the whole vector); 0 if not handled here. */
#define RED3(T, EXPR)                                                  \
  do {                                                                 \
    const T *a_ = (const T *)a, *b_ = (const T *)b;                    \
    T *d_ = (T *)dst;                                                  \
    for (uint64_t i = 0; i < n; i++) d_[i] = (EXPR);                   \
  } while (0)
/* Exactly ir_reduce_apply(in = b, inout = a): same operand order, so the same bits (signed
   zeros and NaNs included); integer sums wrap through the unsigned type. */
#define RED3_OPS(T, U)                                                 \
  switch (op) {                                                        \
  case CDAG_SUM: RED3(T, (T)((U)a_[i] + (U)b_[i])); return 1;          \
  case CDAG_MAX: RED3(T, b_[i] > a_[i] ? b_[i] : a_[i]); return 1;     \
  case CDAG_MIN: RED3(T, b_[i] < a_[i] ? b_[i] : a_[i]); return 1;     \
  default: return 0;                                                   \
  }
/* Floating-point min/max have NaN and signed-zero rules: ir_reduce_apply does them. */
#define RED3_FLT_OPS(T)                                                \
  if (op == CDAG_SUM) {                                                \
    RED3(T, a_[i] + b_[i]);                                            \
    return 1;                                                          \
  }                                                                    \
  return 0;
static int reduce3(int type, int op, const void *a, const void *b, void *dst, uint64_t n) {
  uintptr_t align = (uintptr_t)a | (uintptr_t)b | (uintptr_t)dst;
  if (align % (uintptr_t)ir_type_size(type)) return 0;
  switch (type) {
  case CDAG_DOUBLE: RED3_FLT_OPS(double)
  case CDAG_FLOAT: RED3_FLT_OPS(float)
  case CDAG_INT32: RED3_OPS(int32_t, uint32_t)
  case CDAG_INT64: RED3_OPS(int64_t, uint64_t)
  case CDAG_UINT64: RED3_OPS(uint64_t, uint64_t)
  default: return 0;
  }
}
#undef RED3_OPS
#undef RED3_FLT_OPS
#undef RED3

/* dst = c0 op c1 op ... in contribution order (each counted mult times). */
static void run_reds(const cdag_schedule *s) {
  for (int64_t k = 0; k < s->nreds; k++) {
    const sched_red *rd = &s->reds[k];
    const sched_contrib *c = s->contribs + rd->first;
    int64_t q = 0;
    uint32_t m = 1;
    if (rd->n >= 2 && c[0].mult == 1 && reduce3(rd->type, rd->op, c[0].buf, c[1].buf, rd->dst, rd->count)) {
      q = 1;  /* c0 op c1 done */
      m = 1;
    } else if (c[0].buf != rd->dst) {
      memcpy(rd->dst, c[0].buf, rd->count * (uint64_t)ir_type_size(rd->type));
    }
    for (; q < rd->n; q++, m = 0)
      for (; m < c[q].mult; m++) ir_reduce_apply(rd->type, rd->op, c[q].buf, rd->dst, rd->count);
  }
}

/* fn names the call the user made (cdag_run reaches cdag_start and cdag_wait). MPI may not
   be called after MPI_Finalize (MPICH aborts), so that is checked first. */
static int check_sched(const cdag_schedule *s, const char *fn) {
  if (!s) return cdag__error(CDAG_ERR_ARG, "%s: schedule is NULL", fn);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return cdag__error(CDAG_ERR_STATE, "rank %d: %s after MPI_Finalize (a schedule runs over MPI: run it before "
                       "MPI_Finalize; only cdag_schedule_free may follow)", s->rank, fn);
  return exec_thread_check(fn);
}

/* cdag's kernels run one after the other in plan order, every member alike (their
   messages share tags): the next starts when the one in flight completes. */
static int kernels_advance(cdag_schedule *s, int block) {
  int rc = CDAG_OK, done = 1;
  while (!rc && done && s->kcur < s->nkerns) {
    if (block) rc = kern_complete(s->kerns[s->kcur]);
    else rc = kern_test(s->kerns[s->kcur], &done);
    if (!rc && done && ++s->kcur < s->nkerns) rc = kern_start(s->kerns[s->kcur]);
  }
  return rc;
}

/* Calls on one handle never overlap and two handles of one core never run at once (they
   share its buffers and communicator): an atomic flag on the handle (held during a call) and
   one on the core (held from a start to its completion), taken without waiting, turn an
   overlap into CDAG_ERR_STATE; nothing blocks. enter: the checks, then the handle's flag. */
static int enter(cdag_schedule *s, const char *fn) {
  int rc = check_sched(s, fn);
  if (rc) return rc;
  if (__atomic_exchange_n(&s->busy, 1, __ATOMIC_ACQUIRE))
    return cdag__error(CDAG_ERR_STATE, "rank %d: %s: another thread is inside a call on this schedule (calls on one "
                       "schedule must not overlap)", s->rank, fn);
  return CDAG_OK;
}

static int leave(cdag_schedule *s, int rc) {
  if (rc) s->failed = 1;
  __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
  return rc;
}

static int start_run(cdag_schedule *s);
static int test_run(cdag_schedule *s, int *done);
static int wait_run(cdag_schedule *s);

/* Stages mode: the computations that follow stage `after`, in the rank's order. */
static void run_comps(cdag_schedule *s, int after) {
  for (; s->cnext < s->ncomps && s->comps[s->cnext].after == after; s->cnext++) sched_comp_run(s, &s->comps[s->cnext]);
}

static int stages_start(cdag_schedule *s) {
  s->chain = 0;
  s->cnext = 0;
  s->cur = 0;
  run_comps(s, -1);
  int rc = s->nsub ? start_run(s->sub[0]) : CDAG_OK;
  if (!rc) s->started = 1;
  return rc;
}

/* Drives the stages: each one's run completes (waited for, or tested: block 0 returns at
   the first stage still in flight), then the computations after it, then the next starts. */
static int stages_advance(cdag_schedule *s, int block, int *done) {
  int rc = CDAG_OK;
  *done = 0;
  while (s->cur < s->nsub) {
    cdag_schedule *t = s->sub[s->cur];
    if (block) {
      rc = wait_run(t);
      t->started = 0;
    } else {
      int fin = 0;
      if ((rc = test_run(t, &fin)) || !fin) return rc;
    }
    if (rc) return rc;
    run_comps(s, s->cur);
    if (++s->cur < s->nsub && (rc = start_run(s->sub[s->cur]))) return rc;
  }
  *done = 1;
  return CDAG_OK;
}

static int start_run(cdag_schedule *s) {
  int rc;
  if (s->mode == PART_STAGES) return stages_start(s);
  if (s->mode == PART_GRAPH) {
    s->chain = 0;
    if ((rc = engine_start(s))) return rc;
    s->started = 1;
    return CDAG_OK;
  }
  for (int64_t k = 0; k < s->nsnaps; k++)
    memcpy(s->snapbuf + s->snap_off[k], (const void *)(uintptr_t)s->snap_lo[k], s->snap_hi[k] - s->snap_lo[k]);
  run_copies(s->pre, s->npre);
  if (s->nreqs - s->nlate) MPI_TRY(MPI_Startall(s->nreqs - s->nlate, s->reqs), "MPI_Startall");
  run_copies(s->mid, s->nmid);
  s->kcur = 0;
  s->tested = 0;
  s->late_started = 0;
  if (s->nkerns && (rc = kern_start(s->kerns[0]))) return rc;
  s->started = 1;
  return CDAG_OK;
}

/* With the handle's flag held. */
static int start_as(cdag_schedule *s, const char *fn) {
  if (s->started)
    return cdag__error(CDAG_ERR_STATE, "rank %d: %s: the schedule is already running (started and not yet waited "
                       "for, by this thread or another)", s->rank, fn);
  int idle = 0;
  if (!__atomic_compare_exchange_n(&s->core->running, &idle, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return cdag__error(CDAG_ERR_STATE, "rank %d: %s: another handle of this compiled schedule (a cdag_compile that "
                       "found it cached) is running: handles of one schedule share its buffers, so they run one "
                       "after the other", s->rank, fn);
  s->completed = 0;
  int rc = start_run(s);
  if (rc) core_release(s);
  return rc;
}

int cdag_start(cdag_schedule *s) {
  int rc = enter(s, "cdag_start");
  return rc ? rc : leave(s, start_as(s, "cdag_start"));
}

/* After the first requests: unpacks (the results a replication sends are in place now),
   then the replications start. */
static int start_late(cdag_schedule *s) {
  run_copies(s->post, s->npost);
  s->late_started = 1;
  if (s->nlate) MPI_TRY(MPI_Startall(s->nlate, s->reqs + s->nreqs - s->nlate), "MPI_Startall");
  return CDAG_OK;
}

int cdag_test(cdag_schedule *s, int *done) {
  int rc = s && !done ? cdag__error(CDAG_ERR_ARG, "rank %d: cdag_test: done is NULL", s->rank) : CDAG_OK;
  if (!rc) rc = enter(s, "cdag_test");
  if (rc) return rc;
  rc = test_run(s, done);
  if (rc && s->started) core_release(s);   /* a failed run is over */
  return leave(s, rc);
}

static int test_run(cdag_schedule *s, int *done) {
  int rc = CDAG_OK, flag = 1;
  /* not running: nothing to wait for, as MPI_Test on an inactive request (flag = true); a
     loop `while (!done) cdag_test(...)` would spin forever on done = 0 */
  *done = 1;
  if (!s->started) return CDAG_OK;
  *done = 0;
  if (s->mode == PART_STAGES) {
    if ((rc = stages_advance(s, 0, &flag)) || !flag) return rc;
    core_release(s);
    s->completed = 1;
    *done = 1;
    return CDAG_OK;
  }
  if (s->mode == PART_GRAPH) rc = engine_test(s, &flag);
  else if (!(rc = kernels_advance(s, 0))) {
    /* one MPI_Test per request, in order: MPICH 4.0's MPI_Testall fails on persistent
       collective requests (MPI_ERR_IN_STATUS with no status set) */
    while (s->tested < s->nreqs && flag && !rc) {
      if (s->tested == s->nreqs - s->nlate && !s->late_started) {
        if (s->kcur < s->nkerns) break;   /* the kernels first: a replication may send their result */
        if ((rc = start_late(s))) break;
      }
      int mrc = MPI_Test(&s->reqs[s->tested], &flag, MPI_STATUS_IGNORE);
      if (mrc != MPI_SUCCESS) rc = sched_mpi_error(mrc, "MPI_Test", s->rank);
      else s->tested += flag;
    }
  }
  if (rc || !flag || (s->mode != PART_GRAPH && s->kcur < s->nkerns)) return rc;
  if (s->mode != PART_GRAPH && !s->late_started && (rc = start_late(s))) return rc;
  if (s->mode != PART_GRAPH && s->tested < s->nreqs) return CDAG_OK;   /* replications in flight */
  if (s->mode != PART_GRAPH) run_reds(s);
  core_release(s);
  s->completed = 1;
  *done = 1;
  return CDAG_OK;
}

static int wait_run(cdag_schedule *s) {
  int done;
  if (s->mode == PART_STAGES) return stages_advance(s, 1, &done);
  if (s->mode == PART_GRAPH) return engine_wait(s);
  int rc = kernels_advance(s, 1);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow" /* GCC misreads MPI_STATUSES_IGNORE as an array */
#endif
  int first = s->late_started ? s->nreqs : s->nreqs - s->nlate;
  if (first) MPI_TRY(MPI_Waitall(first, s->reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
  if (rc) return rc;
  if (!s->late_started && (rc = start_late(s))) return rc;
  if (s->nreqs > first) MPI_TRY(MPI_Waitall(s->nreqs - first, s->reqs + first, MPI_STATUSES_IGNORE), "MPI_Waitall");
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  run_reds(s);
  return CDAG_OK;
}

/* With the handle's flag held; the core is free again once the run is over. */
static int wait_as(cdag_schedule *s, const char *fn) {
  if (!s->started && s->completed) {   /* cdag_test finished the run */
    s->completed = 0;
    return CDAG_OK;
  }
  if (!s->started)
    return cdag__error(CDAG_ERR_STATE, "rank %d: %s with no run in progress (never started, or already completed by "
                       "cdag_wait)", s->rank, fn);
  int rc = wait_run(s);
  core_release(s);
  return rc;
}

int cdag_wait(cdag_schedule *s) {
  int rc = enter(s, "cdag_wait");
  return rc ? rc : leave(s, wait_as(s, "cdag_wait"));
}

/* One call: no other thread's call on s can come between the start and the wait. */
int cdag_run(cdag_schedule *s) {
  int rc = enter(s, "cdag_run");
  if (rc) return rc;
  rc = start_as(s, "cdag_run");
  return leave(s, rc ? rc : wait_as(s, "cdag_run"));
}

/* Takes the handle's flag as the calls do, and keeps it until the handle is destroyed or
   idle as its core's spare: freeing while another thread is inside a call on s would pull
   the memory from under it, so that is refused and nothing is freed. A run started and not
   completed is completed first, as cdag_wait does (MPI_Request_free lets an active request
   complete; cdag's kernels and computations advance only inside cdag's calls, so the
   completion is here, and the buffers hold the results when it returns). If it cannot be
   completed (after MPI_Finalize, or a thread MPI forbids), s is freed all the same (its
   requests released) and the reason returned. */
int cdag_schedule_free(cdag_schedule **ps) {
  if (!ps || !*ps) return CDAG_OK;
  cdag_schedule *s = *ps;
  if (__atomic_exchange_n(&s->busy, 1, __ATOMIC_ACQUIRE))
    return cdag__error(CDAG_ERR_STATE, "rank %d: cdag_schedule_free: another thread is inside a call on this schedule "
                       "(calls on one schedule must not overlap); nothing was freed", s->rank);
  int rc = CDAG_OK, finalized = 0;
  if (s->started && (MPI_Finalized(&finalized), finalized))
    rc = cdag__error(CDAG_ERR_STATE, "rank %d: cdag_schedule_free: the run cdag_start began was not completed before "
                     "MPI_Finalize; the schedule is freed, its results are not in place", s->rank);
  else if (s->started && !(rc = exec_thread_check("cdag_schedule_free")))
    rc = wait_as(s, "cdag_schedule_free");
  if (rc) s->failed = 1;   /* never a spare */
  sched_spare_put(s);   /* kept idle for the next cache hit, or destroyed; its core lives on
                           while the cache or another handle holds it */
  *ps = NULL;
  return rc;
}
