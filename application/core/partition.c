/* partition.c -- node graph, METIS partition, the pieces of ranks and the halo exchange
 * (ef_partition.h). */
#include "edgeflow/ef_partition.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_tools.h"

#ifdef EF_HAVE_METIS
#include <metis.h>
#endif

/* ---------------------------------------------------------------------------
 * METIS. */

int ef_mesh_partition_nodes(ef_model_part mp, int n_parts, int *part) {
  EF_CHECK(mp && part, EF_ERR_PARAMETER, "partition: NULL model part or part array");
  const int64_t n_nodes = mp->n_nodes;
  EF_CHECK(n_parts >= 1, EF_ERR_PARAMETER, "partition: %d parts", n_parts);
  EF_CHECK(n_parts <= n_nodes, EF_ERR_PARAMETER, "partition: %d parts for a mesh of %lld nodes", n_parts,
           (long long)n_nodes);
  if (n_parts == 1) {
    memset(part, 0, (size_t)n_nodes * sizeof *part);
    return EF_SUCCESS;
  }
#ifndef EF_HAVE_METIS
  return EF_ERROR(EF_ERR_UNSUPPORTED,
                  "partition: built without METIS (configure with EDGEFLOW_MPI=ON and libmetis-dev installed)");
#else
  int64_t *xadj = NULL;
  ef_index *adjncy = NULL;
  EF_CALL(ef_mesh_node_graph(mp, 1, &xadj, &adjncy));
  int err = EF_SUCCESS;
  idx_t *mx = NULL, *ma = NULL, *mpart = NULL;
  EF_CHECK_GOTO(xadj[n_nodes] <= (int64_t)INT32_MAX, EF_ERR_UNSUPPORTED, done,
                "partition: %lld graph edges do not fit METIS' 32-bit indices", (long long)xadj[n_nodes]);
  mx = malloc((size_t)(n_nodes + 1) * sizeof *mx);
  ma = malloc((size_t)(xadj[n_nodes] + 1) * sizeof *ma);
  mpart = malloc((size_t)n_nodes * sizeof *mpart);
  EF_CHECK_GOTO(mx && ma && mpart, EF_ERR_MEMORY, done, "partition: out of memory for METIS' graph (%lld nodes)",
                (long long)n_nodes);
  for (int64_t i = 0; i <= n_nodes; ++i) mx[i] = (idx_t)xadj[i];
  for (int64_t k = 0; k < xadj[n_nodes]; ++k) ma[k] = (idx_t)adjncy[k];
  idx_t nv = (idx_t)n_nodes, ncon = 1, np = (idx_t)n_parts, cut = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  options[METIS_OPTION_SEED] = 12345; /* the same on every rank: a deterministic partition */
  int rc = METIS_PartGraphKway(&nv, &ncon, mx, ma, NULL, NULL, NULL, &np, NULL, NULL, options, &cut, mpart);
  EF_CHECK_GOTO(rc == METIS_OK, rc == METIS_ERROR_MEMORY ? EF_ERR_MEMORY : EF_ERR_INTERNAL, done,
                "partition: METIS_PartGraphKway failed (%s) on %lld nodes, %d parts",
                rc == METIS_ERROR_INPUT ? "bad input" : rc == METIS_ERROR_MEMORY ? "out of memory" : "error",
                (long long)n_nodes, n_parts);
  for (int64_t i = 0; i < n_nodes; ++i) {
    EF_CHECK_GOTO(mpart[i] >= 0 && mpart[i] < np, EF_ERR_INTERNAL, done, "partition: METIS put node %lld in part %d",
                  (long long)i, (int)mpart[i]);
    part[i] = (int)mpart[i];
  }
done:
  free(mx);
  free(ma);
  free(mpart);
  free(xadj);
  free(adjncy);
  return err;
#endif
}

/* ---------------------------------------------------------------------------
 * Pieces. */

void ef_partition_free(ef_partition *p) {
  if (!p) return;
  free(p->global_node);
  free(p->coords);
  free(p->elements);
  free(p->global_element);
  free(p->neighbours);
  free(p->send_offsets);
  free(p->send_nodes);
  free(p->recv_offsets);
  memset(p, 0, sizeof *p);
}

/* (rank, global node) pairs: ghosts by owner, send lists by destination. */
typedef struct {
  int64_t rank, node;
} rank_node;

static int cmp_rank_node(const void *a, const void *b) {
  const rank_node *x = a, *y = b;
  if (x->rank != y->rank) return (x->rank > y->rank) - (x->rank < y->rank);
  return (x->node > y->node) - (x->node < y->node);
}

static int64_t unique_rank_nodes(rank_node *v, int64_t n) {
  qsort(v, (size_t)n, sizeof *v, cmp_rank_node);
  int64_t u = 0;
  for (int64_t k = 0; k < n; ++k)
    if (u == 0 || cmp_rank_node(v + k, v + u - 1)) v[u++] = v[k];
  return u;
}

int ef_partition_build(ef_model_part mp, const int *part, int rank, int size, ef_partition *out) {
  EF_CHECK(out && mp, EF_ERR_PARAMETER, "partition: NULL model part or result");
  memset(out, 0, sizeof *out);
  const int dim = mp->dim, nodes_per_element = mp->nodes_per_element;
  const int64_t n_nodes = mp->n_nodes, n_elements = mp->n_elements;
  const double *coords = mp->coords;
  const ef_index *elements = mp->elements;
  EF_CHECK(dim == 2 || dim == 3, EF_ERR_PARAMETER, "partition: dimension %d", dim);
  EF_CHECK(nodes_per_element == dim + 1, EF_ERR_PARAMETER, "partition: %d nodes per element in %dD",
           nodes_per_element, dim);
  EF_CHECK(n_nodes > 0 && n_nodes <= INT32_MAX && n_elements > 0 && coords && elements && part, EF_ERR_PARAMETER,
           "partition: a mesh of %lld nodes and %lld elements", (long long)n_nodes, (long long)n_elements);
  EF_CHECK(size >= 1 && rank >= 0 && rank < size, EF_ERR_PARAMETER, "partition: rank %d of %d", rank, size);
  const int npe = nodes_per_element;
  for (int64_t i = 0; i < n_nodes; ++i)
    EF_CHECK(part[i] >= 0 && part[i] < size, EF_ERR_PARAMETER, "partition: node %lld is given to rank %d of %d",
             (long long)i, part[i], size);
  for (int64_t e = 0; e < n_elements * npe; ++e)
    EF_CHECK(elements[e] >= 0 && elements[e] < n_nodes, EF_ERR_MESH,
             "partition: element %lld names node %d, outside 0..%lld", (long long)(e / npe), (int)elements[e],
             (long long)n_nodes - 1);

  int err = EF_SUCCESS;
  ef_index *local = NULL; /* global -> local, -1 when not on this rank */
  rank_node *ghosts = NULL, *sends = NULL;
  ef_partition p = {0};
  p.rank = rank;
  p.size = size;
  p.dim = dim;
  p.n_global_nodes = n_nodes;
  p.n_global_elements = n_elements;
  p.nodes_per_element = npe;
  local = malloc((size_t)n_nodes * sizeof *local);
  EF_CHECK_GOTO(local, EF_ERR_MEMORY, fail, "partition: out of memory (%lld nodes)", (long long)n_nodes);
  for (int64_t i = 0; i < n_nodes; ++i) local[i] = -1;

  /* Owned nodes, ascending. */
  for (int64_t i = 0; i < n_nodes; ++i)
    if (part[i] == rank) local[i] = (ef_index)p.n_owned++;
  EF_CHECK_GOTO(p.n_owned > 0, EF_ERR_MESH, fail,
                "partition: rank %d of %d owns no node (the mesh of %lld nodes is too small or badly connected "
                "for %d ranks)",
                rank, size, (long long)n_nodes, size);

  /* Elements with an owned node; their other nodes are ghosts (with repeats), and the owned
   * nodes they hold are sent to the ranks of those ghosts. */
  int64_t n_ghost_refs = 0;
  for (int64_t e = 0; e < n_elements; ++e) {
    int owned = 0, other = 0;
    for (int k = 0; k < npe; ++k) {
      if (part[elements[e * npe + k]] == rank)
        owned++;
      else
        other++;
    }
    if (owned) {
      p.n_elements++;
      n_ghost_refs += other * (int64_t)(1 + owned);
    }
  }
  ghosts = malloc((size_t)(n_ghost_refs + 1) * sizeof *ghosts);
  sends = malloc((size_t)(n_ghost_refs + 1) * sizeof *sends);
  p.elements = malloc((size_t)(p.n_elements * npe) * sizeof *p.elements);
  p.global_element = malloc((size_t)p.n_elements * sizeof *p.global_element);
  EF_CHECK_GOTO(ghosts && sends && p.elements && p.global_element, EF_ERR_MEMORY, fail,
                "partition: out of memory (%lld local elements)", (long long)p.n_elements);
  int64_t ng = 0, ns = 0, le = 0;
  for (int64_t e = 0; e < n_elements; ++e) {
    const ef_index *v = elements + e * npe;
    int owned = 0;
    for (int k = 0; k < npe; ++k) owned += part[v[k]] == rank;
    if (!owned) continue;
    p.global_element[le++] = e;
    for (int k = 0; k < npe; ++k) {
      if (part[v[k]] == rank) continue;
      ghosts[ng++] = (rank_node){part[v[k]], v[k]};
      for (int l = 0; l < npe; ++l)
        if (part[v[l]] == rank) sends[ns++] = (rank_node){part[v[k]], v[l]};
    }
  }
  ng = unique_rank_nodes(ghosts, ng);
  ns = unique_rank_nodes(sends, ns);

  /* Local numbering: owned, then ghosts by owner and global index. */
  p.n_nodes = p.n_owned + ng;
  EF_CHECK_GOTO(p.n_nodes <= INT32_MAX, EF_ERR_UNSUPPORTED, fail, "partition: %lld local nodes",
                (long long)p.n_nodes);
  p.global_node = malloc((size_t)p.n_nodes * sizeof *p.global_node);
  p.coords = malloc((size_t)p.n_nodes * 3 * sizeof *p.coords);
  EF_CHECK_GOTO(p.global_node && p.coords, EF_ERR_MEMORY, fail, "partition: out of memory (%lld local nodes)",
                (long long)p.n_nodes);
  for (int64_t i = 0; i < n_nodes; ++i)
    if (local[i] >= 0) p.global_node[local[i]] = i;
  for (int64_t g = 0; g < ng; ++g) {
    local[ghosts[g].node] = (ef_index)(p.n_owned + g);
    p.global_node[p.n_owned + g] = ghosts[g].node;
  }
  for (int64_t i = 0; i < p.n_nodes; ++i) memcpy(p.coords + 3 * i, coords + 3 * p.global_node[i], 3 * sizeof(double));
  for (int64_t e = 0; e < p.n_elements; ++e)
    for (int k = 0; k < npe; ++k) p.elements[e * npe + k] = local[elements[p.global_element[e] * npe + k]];

  /* Neighbours: the owners of the ghosts, which must also be the destinations of the sends. */
  for (int64_t g = 0; g < ng; ++g)
    if (g == 0 || ghosts[g].rank != ghosts[g - 1].rank) p.n_neighbours++;
  p.neighbours = malloc((size_t)(p.n_neighbours + 1) * sizeof *p.neighbours);
  p.recv_offsets = calloc((size_t)p.n_neighbours + 1, sizeof *p.recv_offsets);
  p.send_offsets = calloc((size_t)p.n_neighbours + 1, sizeof *p.send_offsets);
  p.send_nodes = malloc((size_t)(ns + 1) * sizeof *p.send_nodes);
  EF_CHECK_GOTO(p.neighbours && p.recv_offsets && p.send_offsets && p.send_nodes, EF_ERR_MEMORY, fail,
                "partition: out of memory (%d neighbours)", p.n_neighbours);
  int q = -1;
  for (int64_t g = 0; g < ng; ++g) {
    if (g == 0 || ghosts[g].rank != ghosts[g - 1].rank) p.neighbours[++q] = (int)ghosts[g].rank;
    p.recv_offsets[q + 1] = g + 1;
  }
  q = 0;
  for (int64_t s = 0; s < ns; ++s) {
    while (q < p.n_neighbours && p.neighbours[q] < sends[s].rank) p.send_offsets[++q] = s;
    EF_CHECK_GOTO(q < p.n_neighbours && p.neighbours[q] == sends[s].rank, EF_ERR_INTERNAL, fail,
                  "partition: rank %d sends to rank %lld, which owns none of its ghosts", rank,
                  (long long)sends[s].rank);
    p.send_nodes[s] = local[sends[s].node];
  }
  while (q < p.n_neighbours) p.send_offsets[++q] = ns;
  for (int k = 0; k < p.n_neighbours; ++k)
    EF_CHECK_GOTO(p.send_offsets[k + 1] > p.send_offsets[k], EF_ERR_INTERNAL, fail,
                  "partition: rank %d receives from rank %d but sends it nothing", rank, p.neighbours[k]);
  *out = p;
  memset(&p, 0, sizeof p);
fail:
  ef_partition_free(&p);
  free(local);
  free(ghosts);
  free(sends);
  return err;
}

int ef_model_part_split(ef_model_part mp, const ef_partition *p, ef_model_part *piece) {
  EF_CHECK(piece, EF_ERR_PARAMETER, "partition: NULL result");
  *piece = NULL;
  EF_CHECK(mp && p && p->global_node, EF_ERR_PARAMETER, "partition: NULL model part or piece");
  EF_CHECK(p->n_global_nodes == mp->n_nodes && p->n_global_elements == mp->n_elements && p->dim == mp->dim,
           EF_ERR_PARAMETER,
           "partition: the piece is of a %dD mesh of %lld nodes and %lld elements, the model part '%s' is %dD with "
           "%lld and %lld",
           p->dim, (long long)p->n_global_nodes, (long long)p->n_global_elements, mp->name, mp->dim,
           (long long)mp->n_nodes, (long long)mp->n_elements);
  return ef_model_part_extract(mp, p->n_nodes, p->n_owned, p->global_node, p->n_elements, p->global_element, piece);
}

/* A checksum of the partition, exact in a double (< 2^52). */
static double partition_checksum(int64_t n, const int *part) {
  uint64_t h = 0;
  for (int64_t i = 0; i < n; ++i) h = (h * 1000003u + (uint64_t)part[i] + 1u) & ((1ull << 52) - 1);
  return (double)h;
}

int ef_partition_create(ef_comm comm, ef_model_part mp, int *part, ef_partition *out) {
  EF_CHECK(out && mp, EF_ERR_PARAMETER, "partition: NULL model part or result");
  memset(out, 0, sizeof *out);
  const int rank = ef_comm_rank(comm), size = ef_comm_size(comm);
  const int64_t n_nodes = mp->n_nodes;
  /* Every rank must hold the same mesh: compare sizes before anything can fail on one rank only. */
  double sizes[2][3] = {{(double)mp->dim, (double)n_nodes, (double)mp->n_elements}};
  memcpy(sizes[1], sizes[0], sizeof sizes[0]);
  EF_CALL(ef_comm_allreduce(comm, sizes[0], 3, EF_COMM_MIN));
  EF_CALL(ef_comm_allreduce(comm, sizes[1], 3, EF_COMM_MAX));
  EF_CHECK(!memcmp(sizes[0], sizes[1], sizeof sizes[0]), EF_ERR_MESH,
           "partition: the ranks hold different meshes (dimension %g..%g, %g..%g nodes, %g..%g elements)",
           sizes[0][0], sizes[1][0], sizes[0][1], sizes[1][1], sizes[0][2], sizes[1][2]);
  int *own = part;
  if (!own) EF_MALLOC(own, n_nodes > 0 ? n_nodes : 1);
  int err = ef_mesh_partition_nodes(mp, size, own);
  /* Agree on success and on the partition: {failed, checksum} min and max over ranks. */
  double check[2][2] = {{err ? 1.0 : 0.0, err ? -1.0 : partition_checksum(n_nodes, own)}};
  memcpy(check[1], check[0], sizeof check[0]);
  int cerr = ef_comm_allreduce(comm, check[0], 2, EF_COMM_MIN);
  if (!cerr) cerr = ef_comm_allreduce(comm, check[1], 2, EF_COMM_MAX);
  if (!err && cerr) err = cerr;
  if (!err && check[1][0] > 0.0)
    err = EF_ERROR(EF_ERR_INTERNAL, "partition: METIS failed on another rank (rank %d of %d succeeded)", rank, size);
  if (!err && check[0][1] != check[1][1])
    err = EF_ERROR(EF_ERR_INTERNAL,
                   "partition: the ranks computed different partitions of the same mesh (checksums %.0f..%.0f): "
                   "METIS is not deterministic across these processes",
                   check[0][1], check[1][1]);
  /* Every rank must own a node; all ranks see the same partition, so all fail alike. */
  int64_t *owned = NULL;
  if (!err) {
    owned = calloc((size_t)size, sizeof *owned);
    if (!owned) err = EF_ERROR(EF_ERR_MEMORY, "partition: out of memory (%d ranks)", size);
  }
  if (!err) {
    int empty = 0, first = -1;
    for (int64_t i = 0; i < n_nodes; ++i) owned[own[i]]++;
    for (int q = size - 1; q >= 0; --q)
      if (!owned[q]) {
        empty++;
        first = q;
      }
    if (empty)
      err = EF_ERROR(EF_ERR_MESH,
                     "partition: METIS left %d of %d ranks without a node (rank %d first): the mesh of %lld nodes is "
                     "too small for %d ranks",
                     empty, size, first, (long long)n_nodes, size);
  }
  free(owned);
  if (!err) err = ef_partition_build(mp, own, rank, size, out);
  if (own != part) free(own);
  return err;
}

/* ---------------------------------------------------------------------------
 * Halo exchange. */

struct ef_halo_s {
  ef_comm comm;
  const ef_partition *p;
  int max_components, n_components;
  double *send_buffer;  /* send_offsets[n_neighbours] * max_components */
  double **send, **recv; /* per neighbour */
  int64_t *send_count, *recv_count;
  void *pending;
  int active;
};

void ef_halo_destroy(ef_halo *halo) {
  if (!halo || !*halo) return;
  ef_halo h = *halo;
  if (h->active) (void)ef_comm_exchange_end(h->comm, h->pending);
  free(h->send_buffer);
  free(h->send);
  free(h->recv);
  free(h->send_count);
  free(h->recv_count);
  free(h);
  *halo = NULL;
}

int ef_halo_create(ef_comm comm, const ef_partition *p, int max_components, ef_halo *halo) {
  EF_CHECK(halo && p, EF_ERR_PARAMETER, "halo: NULL partition or result");
  *halo = NULL;
  EF_CHECK(max_components >= 1, EF_ERR_PARAMETER, "halo: %d components per node", max_components);
  EF_CHECK(p->rank == ef_comm_rank(comm) && p->size == ef_comm_size(comm), EF_ERR_PARAMETER,
           "halo: the piece of rank %d of %d on rank %d of %d", p->rank, p->size, ef_comm_rank(comm),
           ef_comm_size(comm));
  struct ef_halo_s *h;
  EF_CALLOC(h, 1);
  int err = EF_SUCCESS;
  const int nn = p->n_neighbours;
  h->comm = comm;
  h->p = p;
  h->max_components = max_components;
  h->send_buffer = malloc((size_t)(p->send_offsets[nn] * max_components + 1) * sizeof *h->send_buffer);
  h->send = calloc((size_t)nn + 1, sizeof *h->send);
  h->recv = calloc((size_t)nn + 1, sizeof *h->recv);
  h->send_count = calloc((size_t)nn + 1, sizeof *h->send_count);
  h->recv_count = calloc((size_t)nn + 1, sizeof *h->recv_count);
  EF_CHECK_GOTO(h->send_buffer && h->send && h->recv && h->send_count && h->recv_count, EF_ERR_MEMORY, fail,
                "halo: out of memory (%lld sent nodes)", (long long)p->send_offsets[nn]);
  *halo = h;
  return EF_SUCCESS;
fail:
  ef_halo_destroy(&h);
  return err;
}

int ef_halo_begin(ef_halo h, double *x, int n_components) {
  EF_CHECK(h, EF_ERR_PARAMETER, "halo: NULL halo");
  EF_CHECK(!h->active, EF_ERR_INTERNAL, "halo: begin while an exchange is in flight");
  EF_CHECK(n_components >= 1 && n_components <= h->max_components && (x || h->p->n_nodes == 0), EF_ERR_PARAMETER,
           "halo: %d components per node (created for at most %d)", n_components, h->max_components);
  const ef_partition *p = h->p;
  const int nc = n_components;
  for (int k = 0; k < p->n_neighbours; ++k) {
    double *buf = h->send_buffer + p->send_offsets[k] * nc;
    for (int64_t s = p->send_offsets[k]; s < p->send_offsets[k + 1]; ++s)
      for (int c = 0; c < nc; ++c) buf[(s - p->send_offsets[k]) * nc + c] = x[(int64_t)p->send_nodes[s] * nc + c];
    h->send[k] = buf;
    h->send_count[k] = (p->send_offsets[k + 1] - p->send_offsets[k]) * nc;
    h->recv[k] = x + (p->n_owned + p->recv_offsets[k]) * nc;
    h->recv_count[k] = (p->recv_offsets[k + 1] - p->recv_offsets[k]) * nc;
  }
  h->n_components = nc;
  EF_CALL(ef_comm_exchange_begin(h->comm, p->n_neighbours, p->neighbours, h->send, h->send_count, h->recv,
                                 h->recv_count, 7100 + nc, &h->pending));
  h->active = 1;
  return EF_SUCCESS;
}

int ef_halo_end(ef_halo h) {
  EF_CHECK(h, EF_ERR_PARAMETER, "halo: NULL halo");
  EF_CHECK(h->active, EF_ERR_INTERNAL, "halo: end without begin");
  h->active = 0;
  void *pending = h->pending;
  h->pending = NULL;
  return ef_comm_exchange_end(h->comm, pending);
}

int ef_halo_exchange(ef_halo h, double *x, int n_components) {
  EF_CALL(ef_halo_begin(h, x, n_components));
  return ef_halo_end(h);
}
