/* cdag — src/record/pmpi_vcoll.c: the v- and w-collectives, MPI_Reduce_scatter, MPI_Scan,
 * MPI_Exscan and the neighbourhood collectives, recorded as the graph format's native calls
 * (gatherv, scatterv, allgatherv, alltoallv, alltoallw, reduce_scatter, scan, exscan,
 * neighbor_*; docs/format.md) with the sides of pmpi_coll.h.
 *
 * A buffer of blocks at displacements is one side: the blocks' byte ranges one after the
 * other, in member order. Through a packing area (a side of more than one range) the blocks
 * then lie back to back, and so they do in a side of one range, so the call's lists say each
 * block's bytes and, as displacements, the sums of the bytes before it: what the program's
 * counts, displacements and datatypes meant, in bytes. MPI_Alltoallw, whose blocks have a
 * datatype each, is written the same way, with alltoallv's lists. Each call is described
 * here once (coll_gatherv, ...), for the blocking wrappers at the end of this file and the
 * nonblocking forms of pmpi_nbcoll.c; a reduction with a user op or a derived datatype is
 * computed (pmpi_coll.c, coll_combined). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record/pmpi_coll.h"

/* A side of n blocks: block m is cnt[m] elements of ts[m] (ts NULL: of t) at base + disp[m] *
   unit bytes. bytes[m] and at[m] (NULL: not wanted) get each block's bytes and where it starts
   in the side. 0, or -1 (unrecordable). */
static int side_blocks(side *sd, const void *base, int n, const int *cnt, const int *disp, int64_t unit,
                       MPI_Datatype t, const MPI_Datatype *ts, uint64_t *bytes, uint64_t *at) {
  ranges one = {0};
  int rc = 0;
  sd->bytes = 0;
  sd->r.n = 0;
  sd->type = ts ? NULL : type_name(t);
  for (int m = 0; m < n && !rc; m++) {
    MPI_Datatype tm = ts ? ts[m] : t;
    uint64_t b = cnt[m] > 0 ? type_bytes(cnt[m], tm) : 0;
    bytes[m] = b;
    if (at) at[m] = sd->bytes;
    sd->bytes += b;
    if (!b) continue;
    rc = layout((const char *)base + (int64_t)disp[m] * unit, cnt[m], tm, NULL, b, &one);
    for (int64_t i = 0; i < one.n && !rc; i++) rc = ranges_add(&sd->r, one.a[i], one.l[i]);
  }
  free(one.a);
  free(one.l);
  if (rc || ranges_copies(&sd->r)) return -1;
  sd->addr = !sd->bytes ? (uint64_t)(uintptr_t)base : sd->r.n == 1 ? sd->r.a[0] : pack_area(sd->bytes);
  return 0;
}

/* k values for a call's lists; NULL (out of memory, counted) otherwise. */
static uint64_t *lists_new(int64_t k) {
  uint64_t *v = calloc((size_t)(k ? k : 1), sizeof *v);
  if (!v) nomem(OOM_CALLS);
  return v;
}

/* The call's line: ir_add_collv's fields, the lists v (NULL: none on this rank). */
static void vcoll_line(const coll *c, int kind, int root, uint64_t count, int type, int rop, const uint64_t *v) {
  ir_call call = {.op = -1, .kind = (uint8_t)kind, .comm = c->x->id, .root = root, .type = type, .rop = rop,
                  .in = c->in.addr, .out = c->out.addr, .count = count, .nonblocking = (uint8_t)c->nonblocking};
  ir_line l = line_of(IR_LINE_COLL);
  l.call = &call;
  l.rank = R->rank;
  l.lists = v;
  l.members = c->x->n;
  out_op(R->phase, c->seq, &l);
}

/* One block of `count` elements of t at base + disp * extent(t): the in-place side. */
static int own_block(side *sd, const void *base, int disp, int count, MPI_Datatype t) {
  return side_of(sd, (const char *)base + (int64_t)disp * type_extent(t), count, t);
}

/* ---- each call described (pmpi_coll.h), for the blocking wrappers below and the
   nonblocking ones of pmpi_nbcoll.c: the counts, displacements and datatypes are read here,
   at the call; what the recording keeps are the sides' ranges ---- */

int coll_gatherv(coll *c, int call, int nonblocking, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                 const int *rcounts, const int *displs, MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (!coll_start(c, comm, call, nonblocking)) return 0;
  if (c->ic) return ic_gatherv(c, sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, root);
  int n = c->x->n, ok;
  uint64_t *v = NULL;
  if (sbuf == MPI_IN_PLACE) ok = !own_block(&c->in, rbuf, displs[c->me], rcounts[c->me], rtype);
  else ok = !side_of(&c->in, sbuf, scount, stype);
  if (c->me == root)
    ok = ok && (v = lists_new(2 * (int64_t)n)) &&
         !side_blocks(&c->out, rbuf, n, rcounts, displs, type_extent(rtype), rtype, NULL, v, v + n);
  int rec = !coll_ready(c, call, ok);
  if (rec) vcoll_line(c, IR_COLL_GATHERV, world_of(c->x, root), c->in.bytes, 0, 0, v);
  free(v);
  return rec;
}

int coll_scatterv(coll *c, int call, int nonblocking, const void *sbuf, const int *scounts, const int *displs,
                  MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (!coll_start(c, comm, call, nonblocking)) return 0;
  if (c->ic) return ic_scatterv(c, sbuf, 0, scounts, displs, stype, rbuf, rcount, rtype, root);
  int n = c->x->n, ok = 1;
  uint64_t *v = NULL;
  if (c->me == root)
    ok = (v = lists_new(2 * (int64_t)n)) &&
         !side_blocks(&c->in, sbuf, n, scounts, displs, type_extent(stype), stype, NULL, v, v + n);
  if (rbuf == MPI_IN_PLACE) ok = ok && !own_block(&c->out, sbuf, displs[c->me], scounts[c->me], stype);
  else ok = ok && !side_of(&c->out, rbuf, rcount, rtype);
  int rec = !coll_ready(c, call, ok);
  if (rec) vcoll_line(c, IR_COLL_SCATTERV, world_of(c->x, root), c->out.bytes, 0, 0, v);
  free(v);
  return rec;
}

int coll_allgatherv(coll *c, int call, int nonblocking, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm) {
  if (!coll_start(c, comm, call, nonblocking)) return 0;
  if (c->ic) return ic_allgatherv(c, sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype);
  int n = c->x->n, ok;
  uint64_t *v = NULL;
  if (sbuf == MPI_IN_PLACE) ok = !own_block(&c->in, rbuf, displs[c->me], rcounts[c->me], rtype);
  else ok = !side_of(&c->in, sbuf, scount, stype);
  ok = ok && (v = lists_new(2 * (int64_t)n)) &&
       !side_blocks(&c->out, rbuf, n, rcounts, displs, type_extent(rtype), rtype, NULL, v, v + n);
  int rec = !coll_ready(c, call, ok);
  if (rec) vcoll_line(c, IR_COLL_ALLGATHERV, -1, c->in.bytes, 0, 0, v);
  free(v);
  return rec;
}

int coll_alltoallvw(coll *c, int call, int nonblocking, const void *sbuf, const int *scounts, const int *sdispls,
                    MPI_Datatype st, const MPI_Datatype *sts, void *rbuf, const int *rcounts, const int *rdispls,
                    MPI_Datatype rt, const MPI_Datatype *rts, MPI_Comm comm) {
  if (!coll_start(c, comm, call, nonblocking)) return 0;
  if (c->ic) return ic_alltoallvw(c, sbuf, 0, scounts, sdispls, st, sts, rbuf, 0, rcounts, rdispls, rt, rts);
  int n = c->x->n, ok;
  int in_place = sbuf == MPI_IN_PLACE;   /* the send side's arguments are ignored, maybe null */
  int64_t sunit = sts || in_place ? 1 : type_extent(st), runit = rts ? 1 : type_extent(rt);
  uint64_t *v = lists_new(4 * (int64_t)n);
  if (in_place)   /* the receive blocks are sent, then received in place */
    ok = v && !side_blocks(&c->in, rbuf, n, rcounts, rdispls, runit, rt, rts, v, v + n);
  else
    ok = v && !side_blocks(&c->in, sbuf, n, scounts, sdispls, sunit, st, sts, v, v + n);
  ok = ok && !side_blocks(&c->out, rbuf, n, rcounts, rdispls, runit, rt, rts, v + 2 * n, v + 3 * n);
  int rec = !coll_ready(c, call, ok);
  if (rec) vcoll_line(c, rts ? IR_COLL_ALLTOALLW : IR_COLL_ALLTOALLV, -1, c->in.bytes, 0, 0, v);
  free(v);
  return rec;
}

/* MPI_Reduce_scatter with a user op or a derived datatype (v: the n counts, replaced by
   alltoallv's 4 lists, n each): member j's block of every input reaches j through an
   alltoallv into a scratch area, where j computes its block from all of them (as
   coll_combined does for the other reductions). */
static void computed_scatter(coll *c, int call, const void *sbuf, void *rbuf, const int *rcounts, int64_t sum,
                             MPI_Datatype t, uint64_t *v) {
  int n = c->x->n;
  uint64_t elem = type_bytes(1, t), mine = v[c->me] * elem;
  int ok = !side_of(&c->in, sbuf == MPI_IN_PLACE ? rbuf : sbuf, sum, t) && !side_of(&c->out, rbuf, rcounts[c->me], t);
  if (coll_ready(c, call, ok)) return;
  uint64_t at = 0;
  for (int m = 0; m < n; at += v[m], m++) {   /* counts in bytes, their offsets, what j receives */
    v[m] *= elem;
    v[n + m] = at;
    v[2 * n + m] = mine;
    v[3 * n + m] = (uint64_t)m * mine;
  }
  uint64_t area = mine ? pack_area(mine * (uint64_t)n) : 0;
  coll g = *c;   /* the line's out is the area */
  g.out.addr = area;
  vcoll_line(&g, IR_COLL_ALLTOALLV, -1, c->in.bytes, 0, 0, v);
  c->calc_at = area;
  c->calc_len = mine * (uint64_t)n;
}

int coll_reduce_scatter(coll *c, int call, int nonblocking, const void *sbuf, void *rbuf, const int *rcounts,
                        MPI_Datatype t, MPI_Op o, MPI_Comm comm) {
  if (!coll_start(c, comm, call, nonblocking)) return 0;
  if (c->ic) return ic_reduction(c, IR_COLL_REDUCE_SCATTER, sbuf, rbuf, 0, rcounts, t, -1);
  int n = c->x->n, type, rop;
  int64_t sum = 0;
  uint64_t *v = lists_new(4 * (int64_t)n);   /* a computed one needs alltoallv's lists */
  if (!v) {
    not_recorded(call);
    c->x = NULL;
    return 0;
  }
  for (int m = 0; m < n; m++) {
    v[m] = rcounts[m] > 0 ? (uint64_t)rcounts[m] : 0;
    sum += (int64_t)v[m];
  }
  if (reduction_computed(t, o)) {
    computed_scatter(c, call, sbuf, rbuf, rcounts, sum, t, v);
  } else if (reduction(c, call, sbuf, rbuf, sum, rcounts[c->me], 1, t, o, &type, &rop)) {
    if (sbuf == MPI_IN_PLACE && c->in.bytes) {   /* the input, copied away before the result overwrites it */
      c->in.addr = pack_area(c->in.bytes);
      pack_copies(&c->in.r, c->in.addr, c->seq - REC_SEQ_STEP / 4, 1);
    }
    vcoll_line(c, IR_COLL_REDUCE_SCATTER, -1, v[c->me], type, rop, v);
  }
  free(v);
  return c->x != NULL;   /* each way of not recording it cleared x */
}

/* scan and exscan: count elements of t and o, native if predefined; exscan leaves rank 0's rbuf alone
   (MPI defines nothing there), so nothing is written there for the shadow either. */
int coll_prefix(coll *c, int call, int nonblocking, int kind, const void *sbuf, void *rbuf, int count, MPI_Datatype t,
                MPI_Op o, MPI_Comm comm) {
  if (!coll_start(c, comm, call, nonblocking)) return 0;
  if (c->ic) return ic_undefined(c);
  int type, rop, writes = kind == IR_COLL_SCAN || c->me > 0;
  if (reduction_computed(t, o))   /* a user op or derived type: allgathered and computed */
    return coll_combined(c, call, kind, sbuf, rbuf, count, t, -1);
  if (!reduction(c, call, sbuf, rbuf, count, count, writes, t, o, &type, &rop)) return 0;
  c->out.addr = (uint64_t)(uintptr_t)rbuf;   /* the line names it on rank 0 too */
  vcoll_line(c, kind, -1, (uint64_t)count, type, rop, NULL);
  return 1;
}

/* ---- neighbourhood collectives ----
 * Block i of the send buffer goes to the i-th destination of the communicator's topology,
 * block j of the receive buffer comes from the j-th source (MPI_Cart: per dimension the
 * neighbour below, then above; MPI_Graph: the neighbours both ways; MPI_Dist_graph: its
 * lists). A side is its blocks grouped by peer, in member order: so it is an alltoallv's
 * side, a block per member, and the call is written with an alltoallv's lists under the
 * kind the program called. A peer that is a neighbour several times (a periodic dimension
 * of 1 or 2 processes, a graph's repeated edge) pairs its blocks as MPICH 4.0 does: in
 * MPI_Neighbor_alltoall the first block sent to a peer is the last received from it (MPI-4.0's
 * rule for Cartesian topologies: what is sent below arrives from above), so its receive side
 * takes one peer's blocks in reverse list order; the v- and w-forms pair them in list order
 * (tests/record/rec_vcoll.c checks both at 2 processes). MPI_PROC_NULL neighbours move
 * nothing. */

typedef struct {
  const char *p;
  int count, peer, index;   /* peer: a member, -1 MPI_PROC_NULL; index: in its list */
  MPI_Datatype t;
} nblock;

typedef struct {
  int *src, *dst, nin, nout;   /* neighbour lists (communicator ranks) */
  nblock *sb, *rb;             /* a block per destination, per source */
} nbr;

static int by_peer(const void *a, const void *b) {
  const nblock *x = a, *y = b;
  if (x->peer != y->peer) return x->peer < y->peer ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

static void nbr_free(nbr *nb) {
  free(nb->src);
  free(nb->sb);
}

/* comm's neighbour lists: 1, or 0 when comm has none or memory ran out (counted). */
static int nbr_start(coll *c, MPI_Comm comm, int call, nbr *nb) {
  int topo = MPI_UNDEFINED, w = 0;
  memset(nb, 0, sizeof *nb);
  if (c->ic) return ic_undefined(c);
  PMPI_Topo_test(comm, &topo);
  if (topo == MPI_CART) {
    PMPI_Cartdim_get(comm, &nb->nin);
    nb->nin = nb->nout = 2 * nb->nin;
  } else if (topo == MPI_GRAPH) {
    PMPI_Graph_neighbors_count(comm, c->me, &nb->nin);
    nb->nout = nb->nin;
  } else if (topo == MPI_DIST_GRAPH) {
    PMPI_Dist_graph_neighbors_count(comm, &nb->nin, &nb->nout, &w);
  } else {
    unsupported_because(call, "a neighbourhood collective on a communicator without a topology");
    c->x = NULL;
    return 0;
  }
  int64_t k = (int64_t)nb->nin + nb->nout;
  nb->src = malloc((size_t)(2 * k + 1) * sizeof *nb->src);   /* the lists, then dist graph weights */
  nb->sb = malloc((size_t)(k + 1) * sizeof *nb->sb);
  if (!nb->src || !nb->sb) {
    nomem(OOM_CALLS);
    not_recorded(call);
    nbr_free(nb);
    c->x = NULL;
    return 0;
  }
  nb->dst = nb->src + nb->nin;
  nb->rb = nb->sb + nb->nout;
  if (topo == MPI_CART) {
    for (int d = 0; d < nb->nin / 2; d++) {
      PMPI_Cart_shift(comm, d, 1, &nb->src[2 * d], &nb->src[2 * d + 1]);
      nb->dst[2 * d] = nb->src[2 * d];
      nb->dst[2 * d + 1] = nb->src[2 * d + 1];
    }
  } else if (topo == MPI_GRAPH) {
    PMPI_Graph_neighbors(comm, c->me, nb->nin, nb->src);
    for (int i = 0; i < nb->nin; i++) nb->dst[i] = nb->src[i];
  } else {
    PMPI_Dist_graph_neighbors(comm, nb->nin, nb->src, nb->src + k, nb->nout, nb->dst, nb->src + k + nb->nin);
  }
  return 1;
}

/* Block i of a side (peer from list[i]): count elements of t at p. */
static void nblock_set(nblock *b, int i, const int *list, const void *p, int count, MPI_Datatype t) {
  b[i] = (nblock){(const char *)p, count, list[i] == MPI_PROC_NULL ? -1 : list[i], i, t};
}

/* A side of k blocks grouped by peer: cnt[m] bytes to or from member m, at dsp[m] in it. */
static int side_peers(side *sd, nblock *b, int k, int n, const char *type, uint64_t *cnt, uint64_t *dsp) {
  ranges one = {0};
  int rc = 0;
  qsort(b, (size_t)k, sizeof *b, by_peer);
  sd->bytes = 0;
  sd->r.n = 0;
  sd->type = type;
  for (int i = 0; i < k && !rc; i++) {
    uint64_t bytes = b[i].peer >= 0 && b[i].count > 0 ? type_bytes(b[i].count, b[i].t) : 0;
    if (!bytes) continue;
    cnt[b[i].peer] += bytes;
    sd->bytes += bytes;
    rc = layout(b[i].p, b[i].count, b[i].t, NULL, bytes, &one);
    for (int64_t j = 0; j < one.n && !rc; j++) rc = ranges_add(&sd->r, one.a[j], one.l[j]);
  }
  free(one.a);
  free(one.l);
  uint64_t at = 0;
  for (int m = 0; m < n; at += cnt[m], m++) dsp[m] = at;
  if (rc || ranges_copies(&sd->r)) return -1;
  sd->addr = !sd->bytes ? (k ? (uint64_t)(uintptr_t)b[0].p : 0) : sd->r.n == 1 ? sd->r.a[0] : pack_area(sd->bytes);
  return 0;
}

/* The blocks are set: the call's sides and line; nb freed. 1 when recorded. */
static int nbr_record(coll *c, int kind, int call, nbr *nb, const char *stype, const char *rtype) {
  int n = c->x->n;
  uint64_t *v = lists_new(4 * (int64_t)n);
  for (int j = 0; kind == IR_COLL_NEIGHBOR_ALLTOALL && j < nb->nin; j++)   /* one peer's blocks: last first */
    nb->rb[j].index = -nb->rb[j].index;
  int ok = v && !side_peers(&c->in, nb->sb, nb->nout, n, stype, v, v + n) &&
           !side_peers(&c->out, nb->rb, nb->nin, n, rtype, v + 2 * n, v + 3 * n);
  int rec = !coll_ready(c, call, ok);
  if (rec) vcoll_line(c, kind, -1, c->in.bytes, 0, 0, v);
  free(v);
  nbr_free(nb);
  return rec;
}

/* Each form: its blocks, block i of a side at i * count * extent (allgather: the one send
   block to every destination) or at its displacement (in elements; the w-form's in bytes). */
int coll_neighbor_allgather(coll *c, int call, int nonblocking, const void *sbuf, int scount, MPI_Datatype stype,
                            void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm) {
  nbr nb;
  if (!coll_start(c, comm, call, nonblocking) || !nbr_start(c, comm, call, &nb)) return 0;
  for (int i = 0; i < nb.nout; i++) nblock_set(nb.sb, i, nb.dst, sbuf, scount, stype);
  for (int j = 0; j < nb.nin; j++)
    nblock_set(nb.rb, j, nb.src, (char *)rbuf + (int64_t)j * rcount * type_extent(rtype), rcount, rtype);
  return nbr_record(c, IR_COLL_NEIGHBOR_ALLGATHER, call, &nb, type_name(stype), type_name(rtype));
}

int coll_neighbor_allgatherv(coll *c, int call, int nonblocking, const void *sbuf, int scount, MPI_Datatype stype,
                             void *rbuf, const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm) {
  nbr nb;
  if (!coll_start(c, comm, call, nonblocking) || !nbr_start(c, comm, call, &nb)) return 0;
  for (int i = 0; i < nb.nout; i++) nblock_set(nb.sb, i, nb.dst, sbuf, scount, stype);
  for (int j = 0; j < nb.nin; j++)
    nblock_set(nb.rb, j, nb.src, (char *)rbuf + (int64_t)displs[j] * type_extent(rtype), rcounts[j], rtype);
  return nbr_record(c, IR_COLL_NEIGHBOR_ALLGATHERV, call, &nb, type_name(stype), type_name(rtype));
}

int coll_neighbor_alltoall(coll *c, int call, int nonblocking, const void *sbuf, int scount, MPI_Datatype stype,
                           void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm) {
  nbr nb;
  if (!coll_start(c, comm, call, nonblocking) || !nbr_start(c, comm, call, &nb)) return 0;
  for (int i = 0; i < nb.nout; i++)
    nblock_set(nb.sb, i, nb.dst, (const char *)sbuf + (int64_t)i * scount * type_extent(stype), scount, stype);
  for (int j = 0; j < nb.nin; j++)
    nblock_set(nb.rb, j, nb.src, (char *)rbuf + (int64_t)j * rcount * type_extent(rtype), rcount, rtype);
  return nbr_record(c, IR_COLL_NEIGHBOR_ALLTOALL, call, &nb, type_name(stype), type_name(rtype));
}

int coll_neighbor_alltoallv(coll *c, int call, int nonblocking, const void *sbuf, const int *scounts,
                            const int *sdispls, MPI_Datatype stype, void *rbuf, const int *rcounts, const int *rdispls,
                            MPI_Datatype rtype, MPI_Comm comm) {
  nbr nb;
  if (!coll_start(c, comm, call, nonblocking) || !nbr_start(c, comm, call, &nb)) return 0;
  for (int i = 0; i < nb.nout; i++)
    nblock_set(nb.sb, i, nb.dst, (const char *)sbuf + (int64_t)sdispls[i] * type_extent(stype), scounts[i], stype);
  for (int j = 0; j < nb.nin; j++)
    nblock_set(nb.rb, j, nb.src, (char *)rbuf + (int64_t)rdispls[j] * type_extent(rtype), rcounts[j], rtype);
  return nbr_record(c, IR_COLL_NEIGHBOR_ALLTOALLV, call, &nb, type_name(stype), type_name(rtype));
}

int coll_neighbor_alltoallw(coll *c, int call, int nonblocking, const void *sbuf, const int *scounts,
                            const MPI_Aint *sdispls, const MPI_Datatype *stypes, void *rbuf, const int *rcounts,
                            const MPI_Aint *rdispls, const MPI_Datatype *rtypes, MPI_Comm comm) {
  nbr nb;
  if (!coll_start(c, comm, call, nonblocking) || !nbr_start(c, comm, call, &nb)) return 0;
  for (int i = 0; i < nb.nout; i++)
    nblock_set(nb.sb, i, nb.dst, (const char *)sbuf + sdispls[i], scounts[i], stypes[i]);
  for (int j = 0; j < nb.nin; j++) nblock_set(nb.rb, j, nb.src, (char *)rbuf + rdispls[j], rcounts[j], rtypes[j]);
  return nbr_record(c, IR_COLL_NEIGHBOR_ALLTOALLW, call, &nb, NULL, NULL);
}

/* ---- the blocking calls: the output is the shadow's when MPI returns ----*/

#pragma GCC visibility push(default)

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[], const int displs[],
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  COUNT(C_Gatherv);
  coll c;
  coll_gatherv(&c, C_Gatherv, 0, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
  int rc = PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm) {
  COUNT(C_Scatterv);
  coll c;
  coll_scatterv(&c, C_Scatterv, 0, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
  int rc = PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  COUNT(C_Allgatherv);
  coll c;
  coll_allgatherv(&c, C_Allgatherv, 0, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  int rc = PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  COUNT(C_Alltoallv);
  coll c;
  coll_alltoallvw(&c, C_Alltoallv, 0, sbuf, scounts, sdispls, stype, NULL, rbuf, rcounts, rdispls, rtype, NULL, comm);
  int rc = PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[], void *rbuf,
                  const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm) {
  COUNT(C_Alltoallw);
  coll c;
  coll_alltoallvw(&c, C_Alltoallw, 0, sbuf, scounts, sdispls, MPI_DATATYPE_NULL, stypes, rbuf, rcounts, rdispls,
                  MPI_DATATYPE_NULL, rtypes, comm);
  int rc = PMPI_Alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype t, MPI_Op o, MPI_Comm comm) {
  COUNT(C_Reduce_scatter);
  coll c;
  coll_reduce_scatter(&c, C_Reduce_scatter, 0, sbuf, rbuf, rcounts, t, o, comm);
  int rc = PMPI_Reduce_scatter(sbuf, rbuf, rcounts, t, o, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm) {
  COUNT(C_Scan);
  coll c;
  coll_prefix(&c, C_Scan, 0, IR_COLL_SCAN, sbuf, rbuf, count, t, o, comm);
  int rc = PMPI_Scan(sbuf, rbuf, count, t, o, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm) {
  COUNT(C_Exscan);
  coll c;
  coll_prefix(&c, C_Exscan, 0, IR_COLL_EXSCAN, sbuf, rbuf, count, t, o, comm);
  int rc = PMPI_Exscan(sbuf, rbuf, count, t, o, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Neighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                           MPI_Datatype rtype, MPI_Comm comm) {
  COUNT(C_Neighbor_allgather);
  coll c;
  coll_neighbor_allgather(&c, C_Neighbor_allgather, 0, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  int rc = PMPI_Neighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Neighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                            const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  COUNT(C_Neighbor_allgatherv);
  coll c;
  coll_neighbor_allgatherv(&c, C_Neighbor_allgatherv, 0, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  int rc = PMPI_Neighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Neighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                          MPI_Datatype rtype, MPI_Comm comm) {
  COUNT(C_Neighbor_alltoall);
  coll c;
  coll_neighbor_alltoall(&c, C_Neighbor_alltoall, 0, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  int rc = PMPI_Neighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Neighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                           void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  COUNT(C_Neighbor_alltoallv);
  coll c;
  coll_neighbor_alltoallv(&c, C_Neighbor_alltoallv, 0, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype,
                          comm);
  int rc = PMPI_Neighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Neighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const MPI_Aint rdispls[],
                           const MPI_Datatype rtypes[], MPI_Comm comm) {
  COUNT(C_Neighbor_alltoallw);
  coll c;
  coll_neighbor_alltoallw(&c, C_Neighbor_alltoallw, 0, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
                          rtypes, comm);
  int rc = PMPI_Neighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
  coll_returned(&c, rc);
  return rc;
}
