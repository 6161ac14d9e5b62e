/* ef_mesh_tools.h -- uniform refinement, locality renumbering and mesh statistics.
 *
 * Refinement (ef_mesh_refine_uniform) works IN PLACE on a model part: every
 * array of the model part is replaced by the refined one, so handles to
 * sub model parts stay valid but any pointer into the old arrays does not.
 * Refine before a strategy is created (a strategy copies the mesh to the
 * device); refining a model part whose nodes are split into owned and halo
 * nodes (n_owned_nodes < n_nodes) is refused.
 *
 * Rules of one refinement level:
 *  - every undirected edge of the elements gets one new node at its midpoint,
 *    so nodes(k+1) = nodes(k) + edges(k);
 *  - a triangle splits into 4 (three corners and the triangle of midpoints);
 *    a tetrahedron into 8: four corner tetrahedra plus the inner octahedron
 *    cut along its SHORTEST diagonal (of the three segments joining the
 *    midpoints of opposite edges) into four; the shortest diagonal keeps the
 *    quality of the children bounded over repeated levels;
 *  - conditions split consistently with the element faces: boundary
 *    triangles into 4, lines into 2 (children keep the parent's orientation,
 *    so outward normals stay outward); a condition edge must be an element
 *    edge, else EF_ERR_MESH;
 *  - child k of element e is element e*8+k (tetrahedra) or e*4+k
 *    (triangles); child k of condition c is c*4+k (triangles) or c*2+k
 *    (lines).  Children inherit the parent's properties id and its membership
 *    of sub model parts.  Children get fresh ids 1..n in this order; nodes
 *    keep their ids and the node of edge j gets id max_node_id + 1 + j;
 *  - a new node joins a sub model part only when its edge lies on one of
 *    that part's conditions, or on one of its elements.  Two nodes of a part
 *    joined by an edge that is not on such an entity (an interior edge
 *    between two wall nodes) do NOT bring the midpoint in; a part that lists
 *    nodes only (a pressure reference point) never grows;
 *  - nodal variables: new nodes get the mean of the two end values and
 *    fixity 0.  Boundary conditions must be (re)applied by the processes
 *    after refinement, which is where fixity is decided anyway.
 * Time and memory are linear in the mesh size: edges are found through a
 * CSR of node pairs keyed by the smaller node index.  Each level is
 * all-or-nothing: on failure (EF_ERR_MEMORY, or EF_ERR_MESH for a condition
 * edge that is no element edge) the model part is as it was before that level.
 *
 * Renumbering (ef_mesh_renumber) orders nodes by reverse Cuthill-McKee for
 * locality of the edge loops and the sparse matrix, then sorts elements and
 * conditions by their smallest new node index.  File ids (node_ids,
 * element_ids, condition_ids) travel with their entities, so sub model parts
 * still name the same file entities.  Mesh splitting across devices will
 * number owned nodes first and halo nodes after: when n_owned_nodes <
 * n_nodes, only the owned nodes are reordered (among themselves, on the
 * graph restricted to them) and the halo nodes keep their places, so
 * renumbering is done per partition after the split.
 */
#ifndef EF_MESH_TOOLS_H
#define EF_MESH_TOOLS_H

#include <stdint.h>

#include "edgeflow/ef_model_part.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Refine every element, condition and sub model part `levels` times in place (levels >= 0). */
int ef_mesh_refine_uniform(ef_model_part mp, int levels);
/* Refuse, before anything is allocated, a refinement whose mesh would not fit: the estimate of
 * the refined mesh's memory against /proc/meminfo's MemAvailable (EDGEFLOW_MEMORY_AVAILABLE_MB
 * overrides), and counts beyond a 32-bit index.  where names the case in the message. */
int ef_mesh_refine_memory_check(ef_model_part mp, int levels, const char *where);

/* Number of distinct undirected edges of the elements. */
int ef_mesh_count_edges(ef_model_part mp, int64_t *n_edges);

/* Node graph of the elements in CSR form; free() both arrays.
 * symmetric = 0: row i lists the neighbours j > i (each undirected edge once);
 * symmetric = 1: row i lists every neighbour j != i.
 * Columns are sorted within rows; row_ptr has n_nodes + 1 entries. */
int ef_mesh_node_graph(ef_model_part mp, int symmetric, int64_t **row_ptr, ef_index **cols);

/* "rcm": reorder nodes by reverse Cuthill-McKee, "morton": along a Morton (Z-order) curve of
 * the coordinates (no node graph: much cheaper), then elements and conditions by their smallest
 * node index; "none" (or NULL): change nothing.  Halo nodes keep their places. */
int ef_mesh_renumber(ef_model_part mp, const char *method);

/* Bandwidth of the node graph: max over elements of (max - min node index); 0 for NULL. */
int64_t ef_mesh_bandwidth(ef_model_part mp);

/* Element quality summary. */
typedef struct {
  double total_measure;      /* sum of signed element measures (area/volume) */
  double min_measure;        /* smallest signed element measure */
  double min_radius_ratio;   /* min of d * r_in / r_circ (1 for the regular simplex, d = dim) */
  double mean_radius_ratio;
  double min_dihedral_deg;   /* smallest dihedral angle (3D) or interior angle (2D), degrees */
  double max_dihedral_deg;   /* largest one */
} ef_mesh_quality;

/* Measure and shape statistics over all elements. */
int ef_mesh_compute_quality(ef_model_part mp, ef_mesh_quality *quality);

#ifdef __cplusplus
}
#endif
#endif
