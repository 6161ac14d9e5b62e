/* ef_mesh_check.h -- mesh quality and topology checks in the manner of OpenFOAM's checkMesh.
 *
 * ef_mesh_check computes, in O(elements) time through the node-to-element adjacency:
 *   - tangled faces: an interior face whose two elements lie on the same side of it (a fold or an
 *     overlap, what an inverted element of a mesh becomes once re-oriented), and faces shared by
 *     more than two elements;
 *   - duplicate elements: two elements on the same nodes (they double the mass and the stiffness
 *     there: a run ends with exit 0 and a wrong local answer);
 *   - quality: the shape measure q = 4 sqrt(3) A / sum(l^2) (triangles) or 6 sqrt(2) V / l_rms^3
 *     (tetrahedra), 1 for the equilateral element and 0 for a flat one, the smallest and largest
 *     measure and edge; slivers (q below EF_MESH_SLIVER_QUALITY) and elements far below the mean
 *     measure (below EF_MESH_TINY_RATIO of it) pin the stable time step;
 *   - boundary faces that no sub model part in `covered` holds (all the face's nodes in one of
 *     them): no boundary condition acts there.
 * ef_mesh_check_verdict turns a report into an error (tangled, over-shared or duplicate elements)
 * or warnings (slivers, tiny elements, uncovered boundary faces) printed to `warn`.
 */
#ifndef EF_MESH_CHECK_H
#define EF_MESH_CHECK_H

#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_parameters.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EF_MESH_SLIVER_QUALITY 1e-3
#define EF_MESH_TINY_RATIO 1e-9

typedef struct {
  int dim;
  int64_t n_nodes, n_elements;
  int64_t n_interior_faces, n_boundary_faces;
  double min_measure, max_measure, mean_measure; /* area (2D) or volume (3D) */
  double min_edge, max_edge;
  double min_quality, mean_quality;
  int64_t worst_element_id;   /* file id of the element of min_quality */
  int64_t smallest_element_id;
  int64_t n_slivers;          /* quality < EF_MESH_SLIVER_QUALITY */
  int64_t n_tiny;             /* measure < EF_MESH_TINY_RATIO * mean */
  int64_t n_tangled_faces;    /* interior faces with both elements on one side */
  int64_t tangled_ids[2];     /* element ids of the first */
  int64_t n_overshared_faces; /* faces of more than two elements */
  int64_t overshared_id;      /* an element of the first */
  int64_t n_duplicate_elements;
  int64_t duplicate_ids[2];   /* element ids of the first pair */
  int64_t n_uncovered_faces;  /* boundary faces in no covered sub model part (-1: not checked) */
  double uncovered_at[3];     /* centroid of the first */
  char uncovered_hint[256];   /* the sub model parts checked against */
} ef_mesh_report;

/* Compute the report; covered is a NULL-terminated list of sub model part paths (NULL: every
 * sub model part of mp; an empty list skips the boundary coverage check). */
int ef_mesh_check(ef_model_part mp, const char *const *covered, ef_mesh_report *report);
/* The statistics and findings, one per line, to out. */
void ef_mesh_check_print(const ef_mesh_report *r, FILE *out);
/* EF_ERR_MESH naming source and the first offending elements for tangled, over-shared or duplicate
 * elements; otherwise 0, printing a warning line per finding to warn (when not NULL). */
int ef_mesh_check_verdict(const ef_mesh_report *r, const char *source, FILE *warn);
/* The check of a case: boundary coverage against the sub model parts its boundary processes name
 * (project's "processes" lists but initial conditions, gravity and auxiliary), the report to
 * `report` (NULL: none), then the verdict. */
int ef_mesh_check_case(ef_model_part mp, ef_parameters project, const char *source, FILE *report, FILE *warn);

#ifdef __cplusplus
}
#endif
#endif
