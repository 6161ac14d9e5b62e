/* edge_data.h -- the edge data of a P1 mesh, built once on the host.
 *
 * For every directed edge IJ (I != J) of a triangle (2D) or tetrahedron (3D)
 * mesh the exact P1 integrals
 *     M^c_IJ = int N_I N_J,  L^d_IJ = int grad N_I (x) grad N_J,
 *     nabla_IJ = int N_I grad N_J,  G_IJ = int grad N_I N_J = nabla_JI
 * are kept row by row in a non-symmetric CSR (each undirected edge twice, so a
 * node sums over its own row without atomics).  The record layout (16 doubles
 * per edge in 3D, 9 in 2D, no padding) and the accessors are defined in
 * custom_kernels/edge_physics.h, the single place that knows it.
 *
 * Per node: lumped mass M_II = sum_J M^c_IJ (diagonal included), its inverse,
 * the diagonal nabla_II = int N_I grad N_I (= -sum_{J!=I} nabla_IJ), the size
 * h_I = M_II^(1/dim) and hmin_I, the smallest element height (vertex to
 * opposite face/edge) among the elements around I, for the time step.
 *
 * Sizes: row offsets are int64 (a 10-million-node tet mesh has ~1.4e8 directed
 * edges and ~2.2e9 edge doubles); columns are int32 node indices.  On the host
 * the records are one allocation indexed with 64-bit offsets.  A device that
 * cannot hold them in one buffer splits them by contiguous row blocks
 * (ef_edge_data_row_blocks): block b holds rows [row_begin[b], row_begin[b+1])
 * and the records/columns of edges [row_ptr[row_begin[b]], row_ptr[row_begin[b+1]]);
 * a kernel for block b offsets row_ptr by row_ptr[row_begin[b]] and hands the
 * row functions of edge_physics.h pointers into that block.
 *
 * Two ways to build: ef_edge_data_build keeps every record on the host (the host executor
 * reads them); ef_edge_data_build_structure builds all but the records and keeps the mesh
 * (borrowed), its node -> element adjacency and the element cache (below), so that ef_edge_data_records computes the
 * records of any row range on demand -- the device executor writes them straight into its
 * staging buffers and never holds them all on the host.  Both run the same per-row code in the
 * same order, so the records are bitwise the same.
 */
#ifndef EF_EDGE_DATA_H
#define EF_EDGE_DATA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The mesh a structure-only build borrows and its node -> element adjacency (edge_data.c). */
typedef struct ef_edge_source_s ef_edge_source;

typedef struct {
  int dim;            /* 2 or 3 */
  int stride;         /* doubles per edge record: 16 (3D) or 9 (2D) */
  int64_t n_nodes;
  int64_t n_edges;    /* directed edges = row_ptr[n_nodes] */
  int max_row;        /* the longest row (edges of one node) */
  int64_t *row_ptr;   /* n_nodes + 1 */
  int32_t *col;       /* n_edges, sorted inside each row, no diagonal */
  double *values;     /* n_edges * stride, records in row order; NULL after ef_edge_data_build_structure */
  double *mass;       /* n_nodes: lumped M_II */
  double *inv_mass;   /* n_nodes: 1 / M_II */
  double *nabla_diag; /* 3 * n_nodes: nabla_II (z = 0 in 2D) */
  double *h;          /* n_nodes: M_II^(1/dim) */
  double *hmin;       /* n_nodes: smallest element height around the node */
  double measure;     /* |Omega| = sum_I M_II */
  ef_edge_source *source; /* ef_edge_data_build_structure: what ef_edge_data_records computes from; else NULL */
} ef_edge_data;

/* Build the edge data of a mesh of n_elements simplices (nodes_per_element = dim + 1)
 * with node coordinates coords (3 per node, z ignored in 2D) and connectivity elements
 * (nodes_per_element per element, 0-based).  Orientation does not matter.  Fails with
 * EF_ERR_MESH on an out-of-range node or a degenerate element (naming it) and on a node
 * no element uses.  Two passes over the node-element adjacency, O(edges), OpenMP over
 * rows; the result does not depend on the number of threads.  On success *out owns
 * its arrays (free with ef_edge_data_free); on failure *out is left empty. */
int ef_edge_data_build(int dim, int64_t n_nodes, const double *coords, int64_t n_elements,
                       int nodes_per_element, const int32_t *elements, ef_edge_data *out);

/* As ef_edge_data_build, without the records: values stays NULL and source keeps the node -> element
 * adjacency and borrows coords and elements, which must outlive it (until ef_edge_data_release_source
 * or ef_edge_data_free).  Every other array is bitwise the one ef_edge_data_build makes. */
int ef_edge_data_build_structure(int dim, int64_t n_nodes, const double *coords, int64_t n_elements,
                                 int nodes_per_element, const int32_t *elements, ef_edge_data *out);

/* The records of rows [r0, r1) -- (row_ptr[r1] - row_ptr[r0]) * stride doubles, row order -- into out:
 * copied from values when the build kept them, else computed from source by the build's own per-row
 * code (bitwise the same), OpenMP over rows.  Fails when neither is there. */
int ef_edge_data_records(const ef_edge_data *ed, int64_t r0, int64_t r1, double *out);

/* A structure-only build's records of its first rows computed ahead into a buffer its source keeps (released
 * with it), which ef_edge_data_records then copies: for a caller with time to spare, e.g. while a device
 * context is created on another thread.  Pieces of about 8 MiB until stop(ctx) returns nonzero (checked before
 * each; NULL: never), max_bytes are held, or every row is done; the records are bitwise those computed when
 * asked.  Does nothing for a build that kept its records, once rows were computed ahead, or when the buffer
 * cannot be allocated.  ef_edge_data_rows_ahead: how many rows (0: none). */
int ef_edge_data_records_ahead(ef_edge_data *ed, size_t max_bytes, int (*stop)(void *), void *ctx);
int64_t ef_edge_data_rows_ahead(const ef_edge_data *ed);

/* The element cache: a build keeps each element's barycentric gradients and measure ((dim^2 + 1) doubles, 80
 * bytes per tetrahedron: 86 MB for the 1.07e6 tetrahedra of the 3D cavity at level 2, ~4.8 GB for a 1e7-node
 * mesh) when they fit in this many bytes, computed once by the element check instead of once per vertex in the
 * build and again in ef_edge_data_records.  A structure-only build keeps it in its source (released with it); a
 * full build frees it at its end.  Over the limit, or when it cannot be allocated, the gradients are recomputed
 * as before: the results are bitwise the same either way.  Process-wide; 0 turns the cache off; returns the
 * previous limit. */
#define EF_EDGE_DATA_CACHE_LIMIT_DEFAULT ((size_t)2 << 30)
size_t ef_edge_data_set_cache_limit(size_t bytes);

/* Free the source of a structure-only build (the records can no longer be computed); accepts NULL. */
void ef_edge_data_release_source(ef_edge_data *ed);

/* Free the arrays and zero the struct; accepts NULL and an empty struct. */
void ef_edge_data_free(ef_edge_data *ed);

/* Bytes held on the host by the edge data: columns, offsets, node arrays, the records when kept and
 * the source's adjacency while it is held. */
size_t ef_edge_data_bytes(const ef_edge_data *ed);

/* Bytes of the records alone, n_edges * stride doubles, whether held or not. */
size_t ef_edge_data_record_bytes(const ef_edge_data *ed);

/* Split the rows into contiguous blocks whose edge records fit in max_doubles doubles
 * each (a row is never split).  With row_begin == NULL only *n_blocks is computed;
 * otherwise row_begin (n_blocks + 1 entries, from a first call) receives the first row of
 * each block and n_nodes at the end.  Fails when a single row does not fit. */
int ef_edge_data_row_blocks(const ef_edge_data *ed, int64_t max_doubles, int64_t *n_blocks,
                            int64_t *row_begin);

/* Position of edge IJ inside the records (index k with col[k] == j, row_ptr[i] <= k <
 * row_ptr[i+1]), or -1 when I and J are not neighbours.  Binary search. */
int64_t ef_edge_data_find(const ef_edge_data *ed, int64_t i, int64_t j);

#ifdef __cplusplus
}
#endif
#endif
