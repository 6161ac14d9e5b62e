/* ef_mesh_io.h -- reading meshes into a model part.
 *
 * Formats:
 *   - Kratos .mdpa: Properties, Nodes, Elements/Conditions (geometry taken from
 *     the Kratos name suffix: 2D3N/3D4N elements, 2D2N/3D3N conditions),
 *     NodalData (VAR_X components go into a 3-component VAR), nested
 *     SubModelParts.  ModelPartData, ElementalData, ConditionalData, Table,
 *     Geometries and constraint blocks are parsed and skipped.
 *   - Gmsh .msh 4.1 (ASCII and little-endian binary) and 2.2 (ASCII).  The
 *     highest-dimensional cells (tetrahedra if any, else triangles) become
 *     elements, the next dimension down conditions (only those in a physical
 *     group), physical groups become sub model parts by name ("Physical_<dim>_<tag>"
 *     when unnamed; a dotted name nests); lower-dimensional physical groups
 *     (points, lines in 3D) become node-only sub model parts.  Nodes no element
 *     uses are dropped.  Gmsh has no properties: every element and condition
 *     gets property id 0.
 *
 * Nodes are numbered 0..n-1 in file order (among the kept ones); the file's ids
 * stay in node_ids/element_ids/condition_ids.  After reading, sub model parts
 * are finalized and ef_model_part_check_mesh has run (inverted elements are
 * re-oriented).
 *
 * Errors name the file and the line ("mesh.mdpa:12: ...") or, inside binary
 * gmsh data, the byte offset ("mesh.msh: byte 4711: ..."), and say what was
 * expected.  After a failure the model part is still safe to destroy but its
 * contents are unspecified.
 */
#ifndef EF_MESH_IO_H
#define EF_MESH_IO_H

#include "edgeflow/ef_model_part.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read a Kratos .mdpa file into mp, which must hold no nodes or elements yet. */
int ef_read_mdpa(const char *path, ef_model_part mp);

/* Read a Gmsh .msh (4.1 ASCII/binary or 2.2 ASCII) file into an empty mp. */
int ef_read_gmsh(const char *path, ef_model_part mp);

/* Create a model part named EF_DEFAULT_MODEL_PART_NAME and read path into it.
 * input_type: "mdpa", "gmsh" (or "msh"), or NULL to decide by the extension.
 * Sets (*mp)->source_file.  On failure *mp is NULL. */
int ef_read_mesh(const char *path, const char *input_type, ef_model_part *mp);

#ifdef __cplusplus
}
#endif
#endif
