/* ef_partition.h -- a simplex mesh split over the ranks of a communicator, and the halo exchange.
 *
 * Strategy (docs/mpi.md): every rank reads the whole mesh and partitions it redundantly with the
 * same deterministic METIS call (METIS_PartGraphKway on the node graph, fixed seed); the ranks
 * check that they got the same partition (a checksum through two reductions) and each keeps its
 * piece.  No rank sends mesh data to another.  Memory: while it partitions, every rank holds the
 * global mesh (~200 B/node in 3D: coordinates, ids, 5-6 tetrahedra per node), the node graph (~64
 * B/node in 3D), METIS' copy of it and METIS' work arrays: an estimated 0.5 kB per node in 3D, 5 GB
 * per rank at 10M nodes (docs/mpi.md has the measurement).  Beyond that, rank 0 partitions and
 * scatters, or ParMETIS (later options).
 *
 * A rank's piece: the owned nodes first (local 0..n_owned-1, ascending global index), then one
 * layer of ghost nodes (n_owned..n_nodes-1, grouped by owning rank, ascending, and inside a rank by
 * ascending global index); every element with at least one owned node (ascending global index),
 * its connectivity in local indices.  So every element around an owned node is present and the
 * rows of owned nodes of anything assembled on the piece (edge data, matrices) are complete;
 * ghost rows are partial and are only ever received.  The ghosts are exactly the nodes of other
 * ranks that share an element with an owned node, and a neighbour rank is one with such a node;
 * the relation is symmetric, so the same list of neighbours both sends and receives.
 *
 * METIS is linked in builds with EDGEFLOW_MPI; without it ef_mesh_partition_nodes and
 * ef_partition_create with more than one rank fail with EF_ERR_UNSUPPORTED.  Everything else
 * (the graph, the pieces, the halo exchange) is plain C over ef_comm.h.
 */
#ifndef EF_PARTITION_H
#define EF_PARTITION_H

#include <stdint.h>

#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_model_part.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int rank, size;
  int dim;
  int64_t n_global_nodes, n_global_elements;
  int64_t n_owned;          /* owned nodes: local 0..n_owned-1 */
  int64_t n_nodes;          /* owned + ghost */
  int64_t *global_node;     /* n_nodes: local -> global node index */
  double *coords;           /* 3 * n_nodes */
  int64_t n_elements;
  int nodes_per_element;
  ef_index *elements;       /* n_elements * nodes_per_element, local node indices */
  int64_t *global_element;  /* n_elements: local -> global element index */
  int n_neighbours;
  int *neighbours;          /* ranks, ascending */
  int64_t *send_offsets;    /* n_neighbours + 1 */
  ef_index *send_nodes;     /* owned local nodes sent to neighbours[k]: send_offsets[k].. [k+1]), in the
                               order the neighbour stores them as ghosts (ascending global index) */
  int64_t *recv_offsets;    /* n_neighbours + 1: ghosts of neighbours[k] are the local nodes
                               n_owned + recv_offsets[k] .. n_owned + recv_offsets[k+1] - 1 */
} ef_partition;

/* part[i] in 0..n_parts-1 for each node of mp: METIS_PartGraphKway on the node graph
 * (ef_mesh_node_graph of ef_mesh_tools.h), fixed options and seed (deterministic for the same
 * input and library).  n_parts = 1 gives zeros without METIS. */
int ef_mesh_partition_nodes(ef_model_part mp, int n_parts, int *part);

/* The piece of rank `rank` (of `size`) of mp's nodes and elements under the node partition part
 * (a value in 0..size-1 for every node).  No communication: any rank's piece can be built
 * anywhere (the tests build all of them in one process).  Fails with EF_ERR_MESH when the rank
 * owns no node or the mesh is bad.  ef_model_part_split makes the piece a model part. */
int ef_partition_build(ef_model_part mp, const int *part, int rank, int size, ef_partition *out);

/* Collective over comm: partition the global mesh mp (held by every rank, identical) into
 * ef_comm_size(comm) pieces with ef_mesh_partition_nodes, check that all ranks agree on the
 * mesh sizes and the partition, and build this rank's piece.  part (may be NULL) receives the
 * node partition (mp->n_nodes ints).  On one rank the piece is the whole mesh. */
int ef_partition_create(ef_comm comm, ef_model_part mp, int *part, ef_partition *out);

/* The piece p of mp (the model part p was built from) as a model part of its own, in p's local
 * numbering: owned nodes first (n_owned_nodes = p->n_owned), then the ghosts; the elements with an
 * owned node; the conditions with an owned node; sub model parts restricted to the piece; ids,
 * properties and nodal variables kept (ef_model_part_extract of ef_model_part.h). */
int ef_model_part_split(ef_model_part mp, const ef_partition *p, ef_model_part *piece);

/* Free the arrays and zero the struct; accepts NULL. */
void ef_partition_free(ef_partition *p);

/* ---------------------------------------------------------------------------
 * Halo exchange of node vectors: x holds n_components doubles per local node, interleaved
 * (x[i * n_components + c]); the owned values are sent, the ghost values are overwritten with
 * their owners' values.  Nonblocking (ef_comm_exchange_begin/_end: Irecv/Isend under MPI); the
 * ghosts of a neighbour are contiguous, so they are received in place, and only the send lists
 * are packed.  begin ... end may enclose work that reads owned values and writes neither the
 * owned nor the ghost values of x. */
typedef struct ef_halo_s *ef_halo;

/* Buffers for vectors of up to max_components per node; comm and p must outlive the halo. */
int ef_halo_create(ef_comm comm, const ef_partition *p, int max_components, ef_halo *halo);
void ef_halo_destroy(ef_halo *halo);
int ef_halo_begin(ef_halo halo, double *x, int n_components);
int ef_halo_end(ef_halo halo);
/* begin + end. */
int ef_halo_exchange(ef_halo halo, double *x, int n_components);

#ifdef __cplusplus
}
#endif
#endif
