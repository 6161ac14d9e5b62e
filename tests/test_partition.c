/* test_partition.c -- the invariants of the pieces of ef_partition.h, all ranks in one process.
 *
 * For 2D and 3D jittered boxes (tests/ef_test_mesh.h) split into P = 1, 2, 3, 5 parts (METIS in
 * builds with EDGEFLOW_MPI; otherwise, and in addition, slabs in x):
 *  - every node is owned by exactly one piece, the one part[] names; owned nodes come first in
 *    ascending global order, ghosts after them by owner and global index;
 *  - the ghosts of a piece are exactly the off-rank neighbours of its owned nodes in the node
 *    graph; the elements of a piece are exactly those with an owned node, so together they cover
 *    the mesh; the local connectivity and coordinates map back to the global ones;
 *  - the neighbour lists are symmetric and what rank r sends to q is, in order, what q stores as
 *    ghosts of r;
 *  - the halo exchange (ef_halo over a loopback communicator: P simulated ranks in this process,
 *    exchange_begin of every rank, then exchange_end of every rank) gives every ghost its owner's
 *    value, for 1 and 3 components per node;
 * and the errors: a part out of range, a rank that owns nothing, more parts than nodes, the
 * serial communicator asked to talk to a peer, METIS absent (builds without EDGEFLOW_MPI).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ef_test.h"
#include "ef_test_mesh.h"
#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_mesh_tools.h"
#include "edgeflow/ef_partition.h"

/* ---------------------------------------------------------------------------
 * Loopback communicator: P ranks in one process sharing a mailbox. */

typedef struct {
  int size;
  double **data; /* size * size messages, [from * size + to] */
  int64_t *count;
} mailbox;

typedef struct {
  mailbox *box;
  int rank;
} loop_rank;

typedef struct {
  int n;
  const int *peers;
  double *const *recv;
  const int64_t *recv_count;
} loop_pending;

static int loop_allreduce(void *c, double *v, int n, ef_comm_op op) {
  (void)c;
  (void)v;
  (void)n;
  (void)op;
  return EF_ERROR(EF_ERR_UNSUPPORTED, "loopback communicator: no collectives");
}
static int loop_barrier(void *c) {
  (void)c;
  return EF_SUCCESS;
}
static void loop_abort(void *c, int code) {
  (void)c;
  exit(code);
}
static int loop_begin(void *c, int n_peers, const int *peers, double *const *send, const int64_t *send_count,
                      double *const *recv, const int64_t *recv_count, int tag, void **pending) {
  (void)tag;
  loop_rank *r = c;
  mailbox *b = r->box;
  for (int k = 0; k < n_peers; ++k) {
    const int slot = r->rank * b->size + peers[k];
    EF_CHECK(!b->data[slot], EF_ERR_INTERNAL, "loopback: message %d -> %d sent twice", r->rank, peers[k]);
    b->data[slot] = malloc((size_t)(send_count[k] + 1) * sizeof(double));
    EF_CHECK(b->data[slot], EF_ERR_MEMORY, "loopback: out of memory");
    memcpy(b->data[slot], send[k], (size_t)send_count[k] * sizeof(double));
    b->count[slot] = send_count[k];
  }
  loop_pending *p = malloc(sizeof *p);
  EF_CHECK(p, EF_ERR_MEMORY, "loopback: out of memory");
  *p = (loop_pending){n_peers, peers, recv, recv_count};
  *pending = p;
  return EF_SUCCESS;
}
static int loop_end(void *c, void *pending) {
  loop_rank *r = c;
  mailbox *b = r->box;
  loop_pending *p = pending;
  int err = EF_SUCCESS;
  for (int k = 0; k < p->n && !err; ++k) {
    const int slot = p->peers[k] * b->size + r->rank;
    if (!b->data[slot] || b->count[slot] != p->recv_count[k]) {
      err = EF_ERROR(EF_ERR_INTERNAL, "loopback: rank %d expects %lld doubles from %d, got %lld", r->rank,
                     (long long)p->recv_count[k], p->peers[k], b->data[slot] ? (long long)b->count[slot] : -1LL);
      break;
    }
    memcpy(p->recv[k], b->data[slot], (size_t)b->count[slot] * sizeof(double));
    free(b->data[slot]);
    b->data[slot] = NULL;
  }
  free(p);
  return err;
}
static const ef_comm_ops loop_ops = {"loopback", loop_allreduce, loop_barrier, loop_abort, loop_begin, loop_end, NULL};

/* ---------------------------------------------------------------------------
 * Meshes. */

static ef_model_part box(int dim, int n) {
  ef_test_mesh tm;
  int bad = dim == 2 ? ef_test_mesh_2d(n + 4, n, 1.0, 0.7, 0.25, 11, &tm)
                     : ef_test_mesh_3d(n, n + 1, n - 1, 1.0, 1.2, 0.8, 0.25, 11, &tm);
  if (bad) return NULL;
  ef_model_part mp = NULL;
  int err = ef_model_part_create(NULL, dim, &mp);
  if (!err) err = ef_model_part_alloc_nodes(mp, tm.n_nodes);
  if (!err) err = ef_model_part_alloc_elements(mp, tm.n_elements, dim + 1);
  if (!err) {
    memcpy(mp->coords, tm.coords, (size_t)tm.n_nodes * 3 * sizeof(double));
    memcpy(mp->elements, tm.elements, (size_t)(tm.n_elements * (dim + 1)) * sizeof(ef_index));
    for (int64_t i = 0; i < tm.n_nodes; ++i) mp->node_ids[i] = i + 1;
    for (int64_t e = 0; e < tm.n_elements; ++e) mp->element_ids[e] = e + 1;
  }
  ef_test_mesh_free(&tm);
  if (err) ef_model_part_destroy(&mp);
  return mp;
}

/* Slabs in x: a partition without METIS. */
static void slabs(ef_model_part mp, int P, int *part) {
  for (int64_t i = 0; i < mp->n_nodes; ++i) {
    int q = (int)floor(mp->coords[3 * i] * P);
    part[i] = q < 0 ? 0 : q >= P ? P - 1 : q;
  }
}

static double value(int64_t g, int c) { return 1000.0 * (double)g + c + 0.25; }

/* Every invariant of the P pieces of mp under part. */
static void check_pieces(ef_model_part mp, const int *part, int P, const char *what) {
  const int64_t n = mp->n_nodes, ne = mp->n_elements;
  const int npe = mp->nodes_per_element;
  ef_partition *pc = calloc((size_t)P, sizeof *pc);
  int *owners = calloc((size_t)n, sizeof *owners);
  int *covered = calloc((size_t)ne, sizeof *covered);
  int64_t *xadj = NULL;
  ef_index *adj = NULL;
  ASSERT(pc && owners && covered, "out of memory");
  ASSERT_OK(ef_mesh_node_graph(mp, 1, &xadj, &adj));
  for (int r = 0; r < P; ++r) ASSERT_OK(ef_partition_build(mp, part, r, P, pc + r));
  char *mark = calloc((size_t)n, 1);
  ASSERT(mark, "out of memory");

  for (int r = 0; r < P; ++r) {
    const ef_partition *p = pc + r;
    EXPECT(p->rank == r && p->size == P && p->n_global_nodes == n && p->n_global_elements == ne, "%s: header", what);
    /* Owned: ascending, part[] == r. */
    for (int64_t i = 0; i < p->n_owned; ++i) {
      const int64_t g = p->global_node[i];
      EXPECT(part[g] == r, "%s: rank %d owns node %lld of part %d", what, r, (long long)g, part[g]);
      EXPECT(i == 0 || g > p->global_node[i - 1], "%s: rank %d: owned nodes not ascending at %lld", what, r,
             (long long)i);
      owners[g]++;
    }
    /* Ghosts: by owner then global; exactly the off-rank neighbours of owned nodes. */
    memset(mark, 0, (size_t)n);
    for (int64_t i = 0; i < p->n_owned; ++i) {
      const int64_t g = p->global_node[i];
      for (int64_t k = xadj[g]; k < xadj[g + 1]; ++k)
        if (part[adj[k]] != r) mark[adj[k]] = 1;
    }
    int64_t expected = 0;
    for (int64_t g = 0; g < n; ++g) expected += mark[g];
    EXPECT(p->n_nodes - p->n_owned == expected, "%s: rank %d has %lld ghosts, the graph says %lld", what, r,
           (long long)(p->n_nodes - p->n_owned), (long long)expected);
    for (int64_t i = p->n_owned; i < p->n_nodes; ++i) {
      const int64_t g = p->global_node[i];
      EXPECT(mark[g] == 1, "%s: rank %d: ghost %lld (global %lld) is not an off-rank neighbour (or repeated)", what,
             r, (long long)i, (long long)g);
      mark[g] = 2;
      if (i > p->n_owned) {
        const int64_t h = p->global_node[i - 1];
        EXPECT(part[h] < part[g] || (part[h] == part[g] && h < g), "%s: rank %d: ghosts out of order at %lld", what,
               r, (long long)i);
      }
    }
    /* Coordinates. */
    for (int64_t i = 0; i < p->n_nodes; ++i)
      EXPECT(!memcmp(p->coords + 3 * i, mp->coords + 3 * p->global_node[i], 3 * sizeof(double)),
             "%s: rank %d: coordinates of local node %lld", what, r, (long long)i);
    /* Elements: exactly those with an owned node, connectivity mapping back. */
    int64_t with_owned = 0;
    for (int64_t e = 0; e < ne; ++e) {
      int o = 0;
      for (int k = 0; k < npe; ++k) o += part[mp->elements[e * npe + k]] == r;
      with_owned += o > 0;
    }
    EXPECT(p->n_elements == with_owned, "%s: rank %d holds %lld elements, %lld have an owned node", what, r,
           (long long)p->n_elements, (long long)with_owned);
    for (int64_t e = 0; e < p->n_elements; ++e) {
      const int64_t ge = p->global_element[e];
      int o = 0;
      covered[ge]++;
      for (int k = 0; k < npe; ++k) {
        const ef_index l = p->elements[e * npe + k];
        EXPECT(l >= 0 && l < p->n_nodes && p->global_node[l] == mp->elements[ge * npe + k],
               "%s: rank %d: element %lld node %d maps to the wrong global node", what, r, (long long)e, k);
        o += l < p->n_owned;
      }
      EXPECT(o > 0, "%s: rank %d: element %lld has no owned node", what, r, (long long)ge);
    }
    /* Neighbours: ascending; receive blocks hold that owner's ghosts; the send list to q is q's
     * receive block from r, in order. */
    for (int k = 0; k < p->n_neighbours; ++k) {
      const int q = p->neighbours[k];
      EXPECT(q != r && (k == 0 || q > p->neighbours[k - 1]), "%s: rank %d: neighbour list", what, r);
      for (int64_t g = p->recv_offsets[k]; g < p->recv_offsets[k + 1]; ++g)
        EXPECT(part[p->global_node[p->n_owned + g]] == q, "%s: rank %d: ghost in the block of rank %d is not its",
               what, r, q);
      const ef_partition *o = pc + q;
      int m = -1;
      for (int j = 0; j < o->n_neighbours; ++j)
        if (o->neighbours[j] == r) m = j;
      EXPECT(m >= 0, "%s: rank %d lists %d as neighbour, not the other way round", what, r, q);
      if (m < 0) continue;
      const int64_t ns = p->send_offsets[k + 1] - p->send_offsets[k];
      const int64_t nr = o->recv_offsets[m + 1] - o->recv_offsets[m];
      EXPECT(ns == nr && ns > 0, "%s: rank %d sends %lld nodes to %d, which expects %lld", what, r, (long long)ns, q,
             (long long)nr);
      for (int64_t s = 0; s < ns && s < nr; ++s) {
        const ef_index l = p->send_nodes[p->send_offsets[k] + s];
        EXPECT(l >= 0 && l < p->n_owned && p->global_node[l] == o->global_node[o->n_owned + o->recv_offsets[m] + s],
               "%s: send %lld of rank %d to %d is not the ghost %d stores there", what, (long long)s, r, q, q);
      }
    }
  }
  for (int64_t g = 0; g < n; ++g) EXPECT(owners[g] == 1, "%s: node %lld owned %d times", what, (long long)g, owners[g]);
  for (int64_t e = 0; e < ne; ++e) EXPECT(covered[e] >= 1, "%s: element %lld is on no rank", what, (long long)e);

  /* Halo exchange over the loopback communicator, 1 and 3 components. */
  mailbox b = {P, calloc((size_t)P * P, sizeof(double *)), calloc((size_t)P * P, sizeof(int64_t))};
  loop_rank *lr = calloc((size_t)P, sizeof *lr);
  ef_comm *comm = calloc((size_t)P, sizeof *comm);
  ef_halo *halo = calloc((size_t)P, sizeof *halo);
  double **x = calloc((size_t)P, sizeof *x);
  ASSERT(b.data && b.count && lr && comm && halo && x, "out of memory");
  for (int r = 0; r < P; ++r) {
    lr[r] = (loop_rank){&b, r};
    ASSERT_OK(ef_comm_create(&loop_ops, lr + r, r, P, comm + r));
    ASSERT_OK(ef_halo_create(comm[r], pc + r, 3, halo + r));
    x[r] = malloc((size_t)pc[r].n_nodes * 3 * sizeof(double));
    ASSERT(x[r], "out of memory");
  }
  for (int nc = 1; nc <= 3; nc += 2) {
    for (int r = 0; r < P; ++r)
      for (int64_t i = 0; i < pc[r].n_nodes; ++i)
        for (int c = 0; c < nc; ++c) x[r][i * nc + c] = i < pc[r].n_owned ? value(pc[r].global_node[i], c) : NAN;
    for (int r = 0; r < P; ++r) EXPECT_OK(ef_halo_begin(halo[r], x[r], nc));
    for (int r = 0; r < P; ++r) EXPECT_OK(ef_halo_end(halo[r]));
    for (int r = 0; r < P; ++r)
      for (int64_t i = 0; i < pc[r].n_nodes; ++i)
        for (int c = 0; c < nc; ++c)
          EXPECT(x[r][i * nc + c] == value(pc[r].global_node[i], c),
                 "%s: %d components: rank %d local %lld (global %lld) component %d holds %g", what, nc, r,
                 (long long)i, (long long)pc[r].global_node[i], c, x[r][i * nc + c]);
  }
  for (int r = 0; r < P; ++r) {
    ef_halo_destroy(halo + r);
    ef_comm_destroy(comm + r);
    free(x[r]);
    ef_partition_free(pc + r);
  }
  for (int s = 0; s < P * P; ++s) EXPECT(!b.data[s], "%s: message %d -> %d never received", what, s / P, s % P);
  free(b.data);
  free(b.count);
  free(lr);
  free(comm);
  free(halo);
  free(x);
  free(mark);
  free(xadj);
  free(adj);
  free(pc);
  free(owners);
  free(covered);
}

int main(void) {
  /* The serial communicator. */
  ef_comm serial = ef_comm_serial();
  EXPECT(ef_comm_rank(serial) == 0 && ef_comm_size(serial) == 1 && ef_comm_rank(NULL) == 0 &&
             ef_comm_size(NULL) == 1 && !strcmp(ef_comm_name(NULL), "serial"),
         "serial rank/size/name");
  double v[3] = {1.5, -2.0, 3.0};
  EXPECT_OK(ef_comm_allreduce(NULL, v, 3, EF_COMM_SUM));
  EXPECT_OK(ef_comm_allreduce(serial, v, 3, EF_COMM_MAX));
  EXPECT(v[0] == 1.5 && v[1] == -2.0 && v[2] == 3.0, "a serial reduction returns its input");
  EXPECT_OK(ef_comm_barrier(NULL));
  void *pending = NULL;
  EXPECT_OK(ef_comm_exchange_begin(NULL, 0, NULL, NULL, NULL, NULL, NULL, 1, &pending));
  EXPECT_OK(ef_comm_exchange_end(NULL, pending));
  int peer = 1;
  int64_t cnt = 1;
  double buf = 0.0, *bp = &buf;
  EXPECT_FAIL(ef_comm_exchange_begin(NULL, 1, &peer, &bp, &cnt, &bp, &cnt, 1, &pending), EF_ERR_PARAMETER, "bad peer");
  ef_comm_destroy(&serial);
  EXPECT(ef_comm_serial() && ef_comm_size(ef_comm_serial()) == 1, "destroying the serial communicator is harmless");

  static const int parts[] = {1, 2, 3, 5};
  for (int dim = 2; dim <= 3; ++dim) {
    ef_model_part mp = box(dim, dim == 2 ? 14 : 6);
    ASSERT(mp, "the %dD box", dim);
    int *part = malloc((size_t)mp->n_nodes * sizeof *part);
    ASSERT(part, "out of memory");
    for (size_t t = 0; t < sizeof parts / sizeof parts[0]; ++t) {
      const int P = parts[t];
      char what[64];
      slabs(mp, P, part);
      snprintf(what, sizeof what, "%dD slabs P=%d", dim, P);
      check_pieces(mp, part, P, what);
      int err = ef_mesh_partition_nodes(mp, P, part);
      if (P > 1 && err == EF_ERR_UNSUPPORTED) {
        EXPECT(strstr(ef_error_message(), "METIS"), "the error names METIS: %s", ef_error_message());
        ef_error_clear();
        continue;
      }
      EXPECT_OK(err);
      if (err) continue;
      /* Deterministic: the same call gives the same partition. */
      int *again = malloc((size_t)mp->n_nodes * sizeof *again);
      ASSERT(again, "out of memory");
      EXPECT_OK(ef_mesh_partition_nodes(mp, P, again));
      EXPECT(!memcmp(part, again, (size_t)mp->n_nodes * sizeof *part), "METIS gave two partitions for P=%d", P);
      free(again);
      snprintf(what, sizeof what, "%dD METIS P=%d", dim, P);
      check_pieces(mp, part, P, what);
    }
    /* ef_partition_create on the serial communicator: the whole mesh. */
    ef_partition whole;
    EXPECT_OK(ef_partition_create(NULL, mp, NULL, &whole));
    EXPECT(whole.n_owned == mp->n_nodes && whole.n_nodes == mp->n_nodes && whole.n_elements == mp->n_elements &&
               whole.n_neighbours == 0,
           "one rank's piece is the whole mesh");
    ef_partition_free(&whole);

    /* Errors. */
    ef_partition bad;
    slabs(mp, 3, part);
    part[5] = 7;
    EXPECT_FAIL(ef_partition_build(mp, part, 0, 3, &bad), EF_ERR_PARAMETER, "given to rank 7 of 3");
    slabs(mp, 1, part); /* everything on rank 0: rank 1 owns nothing */
    EXPECT_FAIL(ef_partition_build(mp, part, 1, 2, &bad), EF_ERR_MESH, "owns no node");
    EXPECT_FAIL(ef_partition_build(mp, part, 2, 2, &bad), EF_ERR_PARAMETER, "rank 2 of 2");
    EXPECT_FAIL(ef_mesh_partition_nodes(mp, (int)mp->n_nodes + 1, part), EF_ERR_PARAMETER, "parts for a mesh");
    free(part);
    ef_model_part_destroy(&mp);
  }
  if (failures) fprintf(stderr, "test_partition: %d failure(s)\n", failures);
  return failures ? 1 : 0;
}
