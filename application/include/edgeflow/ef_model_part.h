/* ef_model_part.h -- the mesh and its data, in Kratos' vocabulary.
 *
 * A model part holds nodes (internally numbered 0..n_nodes-1, with the ids the
 * file gave them kept in node_ids), elements (triangles in 2D, tetrahedra in
 * 3D), conditions (boundary lines in 2D, boundary triangles in 3D), properties,
 * a tree of named sub model parts and nodal solution variables with
 * per-component fixity.
 *
 * The geometry is plain data (CSparse style): readers, refinement, writers and
 * strategies use the arrays directly.  Node numbering is designed for a later
 * split across devices: owned nodes first, halo nodes after (n_owned_nodes).
 *
 * Where the nodal data lives: a strategy may keep the solution on a device.
 * Before anyone reads nodal values on the host, ef_model_part_sync_to_host()
 * brings them back; after the host changes values or fixity, it calls
 * ef_model_part_mark_modified() so the strategy uploads them before its next
 * step.
 */
#ifndef EF_MODEL_PART_H
#define EF_MODEL_PART_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t ef_index; /* a node, element or condition index inside one model part */

typedef struct ef_sub_model_part_s ef_sub_model_part;
struct ef_sub_model_part_s {
  char *name;                  /* local name ("Inlet"), not the dotted path */
  ef_sub_model_part *parent;   /* NULL for children of the root */
  int64_t n_nodes;             /* sorted, unique internal node indices */
  ef_index *nodes;
  int64_t n_elements;          /* sorted, unique element indices */
  ef_index *elements;
  int64_t n_conditions;        /* sorted, unique condition indices */
  ef_index *conditions;
  int n_children;
  ef_sub_model_part **children;
};

/* One property block: id and named scalar values (DENSITY, DYNAMIC_VISCOSITY, ...). */
typedef struct {
  int64_t id;
  int n_values;
  char **names;
  double *values;
} ef_properties;

/* A nodal solution variable: n_components values per node, interleaved
 * (values[node*n_components + c]), with a fixity flag per component. */
typedef struct {
  char *name;
  int n_components;  /* 1 (scalar) or 3 (vector; z is 0 in 2D) */
  double *values;
  uint8_t *fixed;
  int host_modified; /* set by ef_model_part_mark_modified, cleared by the strategy */
} ef_variable;

struct ef_model_part_s; /* defined below; named here so the hook's parameter type is the same */

/* Called by the host side when it needs current values from the device. */
typedef struct {
  void *context;
  int (*sync_to_host)(void *context, struct ef_model_part_s *mp);
  /* Optional (both or neither; NULL: ef_model_part_snapshot_take falls back to sync_to_host and a
   * copy): an asynchronous copy of what sync_to_host brings back, for an output written on another
   * thread while the next steps run.  snapshot_begin (main thread) starts copying the device's
   * current values of those of the n variables it holds into dest[i] (mp->n_nodes * n_components
   * doubles, owned by the caller), sets covered[i] = 1 for each of them and returns a ticket; the
   * variables it does not cover must be current on the host without a sync.  It may block until an
   * earlier ticket is waited for.  snapshot_wait (any one thread, exactly once per ticket, before the
   * strategy is destroyed) blocks until dest holds the values in the model part's units. */
  int (*snapshot_begin)(void *context, struct ef_model_part_s *mp, int n, const char *const *names,
                        double *const *dest, int *covered, long *ticket);
  int (*snapshot_wait)(void *context, long ticket);
} ef_device_hooks;

typedef struct ef_model_part_s {
  char *name;         /* solver_settings.model_part_name */
  char *source_file;  /* the mesh file it came from, for messages */
  int dim;            /* 2 or 3 */

  int64_t n_nodes;
  int64_t n_owned_nodes; /* == n_nodes, except on a rank's piece of a partitioned mesh (ef_partition.h):
                            owned nodes 0..n_owned_nodes-1, then the ghosts */
  double *coords;     /* 3 * n_nodes (z = 0 in 2D) */
  int64_t *node_ids;  /* the id each node has in the file */

  int64_t n_elements;
  int nodes_per_element; /* 3 (triangle) or 4 (tetrahedron) */
  ef_index *elements;    /* n_elements * nodes_per_element node indices */
  int64_t *element_ids;
  int64_t *element_properties; /* property id of each element */

  int64_t n_conditions;
  int nodes_per_condition; /* 2 (line) or 3 (triangle) */
  ef_index *conditions;
  int64_t *condition_ids;
  int64_t *condition_properties;

  int n_properties;
  ef_properties *properties;

  int n_children;                /* top-level sub model parts */
  ef_sub_model_part **children;

  int n_variables;
  ef_variable *variables;

  ef_device_hooks device;
  int device_newer; /* the device holds values newer than the host copy */
} *ef_model_part;

/* The name a model part gets when none is given (Kratos' default; mesh files and cases use it). */
#define EF_DEFAULT_MODEL_PART_NAME "FluidModelPart"

/* Create an empty model part of dimension dim (2 or 3); name NULL or "": the default name. */
int ef_model_part_create(const char *name, int dim, ef_model_part *mp);
/* Free everything; accepts NULL and sets *mp to NULL. */
void ef_model_part_destroy(ef_model_part *mp);

/* Allocate the geometry arrays (previous contents are freed). */
int ef_model_part_alloc_nodes(ef_model_part mp, int64_t n_nodes);
int ef_model_part_alloc_elements(ef_model_part mp, int64_t n_elements, int nodes_per_element);
int ef_model_part_alloc_conditions(ef_model_part mp, int64_t n_conditions, int nodes_per_condition);

/* Sub model parts.  Paths are dotted ("Parent.Child"); a leading root model
 * part name ("MainPart.Inlet") is accepted and stripped.  Adding a path
 * that exists returns the existing sub model part; missing levels are created. */
int ef_model_part_add_sub_model_part(ef_model_part mp, ef_sub_model_part *parent, const char *name,
                                     ef_sub_model_part **smp);
/* Find by path; on failure the error lists the available paths. */
int ef_model_part_get_sub_model_part(ef_model_part mp, const char *path, ef_sub_model_part **smp);
/* NULL when absent (no error recorded). */
ef_sub_model_part *ef_model_part_find_sub_model_part(ef_model_part mp, const char *path);
/* Append indices to a sub model part's lists (kept unsorted until finalize;
 * each call reallocates, so append in batches). */
int ef_sub_model_part_add_nodes(ef_sub_model_part *smp, const ef_index *nodes, int64_t n);
int ef_sub_model_part_add_elements(ef_sub_model_part *smp, const ef_index *elements, int64_t n);
int ef_sub_model_part_add_conditions(ef_sub_model_part *smp, const ef_index *conditions, int64_t n);
/* Sort and deduplicate the node/element/condition lists of every sub model part. */
int ef_model_part_finalize_sub_model_parts(ef_model_part mp);
/* Visit every sub model part depth-first; path is the dotted path. */
typedef int (*ef_sub_model_part_visitor)(ef_sub_model_part *smp, const char *path, void *user);
int ef_model_part_visit_sub_model_parts(ef_model_part mp, ef_sub_model_part_visitor visit, void *user);

/* Properties. */
int ef_model_part_set_property(ef_model_part mp, int64_t id, const char *name, double value);
/* Returns 1 and sets *value when property `id` has `name`, 0 otherwise. */
int ef_model_part_get_property(ef_model_part mp, int64_t id, const char *name, double *value);

/* Model-wide scalars an application publishes for processes (Kratos' ProcessInfo), e.g.
 * DENSITY.  get returns 1 and sets *value when `name` is set, 0 otherwise. */
int ef_model_part_set_value(ef_model_part mp, const char *name, double value);
int ef_model_part_get_value(ef_model_part mp, const char *name, double *value);

/* Names that stand for the whole model part when a process names "<root>.<alias>" (Kratos
 * solvers' computational model parts).  is_root_alias: 1 when path is such a name. */
int ef_model_part_add_root_alias(ef_model_part mp, const char *name);
int ef_model_part_is_root_alias(ef_model_part mp, const char *path);

/* Nodal variables.  Adding an existing name with the same component count is
 * a no-op; values start at 0, fixity at 0. */
int ef_model_part_add_variable(ef_model_part mp, const char *name, int n_components);
/* NULL when absent. */
ef_variable *ef_model_part_find_variable(ef_model_part mp, const char *name);
/* Error naming the variable and listing the existing ones when absent. */
int ef_model_part_get_variable(ef_model_part mp, const char *name, ef_variable **var);

/* Device / host coherence (see the top of this file). */
int ef_model_part_sync_to_host(ef_model_part mp);
int ef_model_part_mark_modified(ef_model_part mp, const char *variable_name);
/* For strategies: 1 if the variable was modified on the host since the last call (and clear it). */
int ef_model_part_take_modified(ef_model_part mp, const char *variable_name);

/* Snapshots: n nodal variables copied at one moment on the main thread and read later on another
 * (the VTK writer thread) while the main thread steps on.  The copy starts in _take (through the
 * device hooks' snapshot_begin when the strategy has it, else sync_to_host and a copy at once) and
 * is complete after _wait, which gives a read-only model part `view`: the model part's mesh, ids
 * and sub model parts (shared: they must not change while a view is read) with only the snapshot's
 * variables.  One copy in flight per snapshot; _take again only after _wait. */
typedef struct ef_model_part_snapshot_s *ef_model_part_snapshot;
int ef_model_part_snapshot_create(ef_model_part mp, int n, const char *const *variables, ef_model_part_snapshot *s);
/* Main thread.  *asynchronous (may be NULL): 1 when the copy runs on after the return. */
int ef_model_part_snapshot_take(ef_model_part_snapshot s, int *asynchronous);
/* Any one thread, once per take: finish the copy; *view is valid until the next take or destroy. */
int ef_model_part_snapshot_wait(ef_model_part_snapshot s, ef_model_part *view);
/* 1 when the model part's device hooks copy asynchronously (snapshot_begin is set). */
int ef_model_part_has_async_snapshot(ef_model_part mp);
/* Free (a copy still in flight is waited for first); accepts NULL and sets *s to NULL. */
void ef_model_part_snapshot_destroy(ef_model_part_snapshot *s);

/* Renumber nodes: new index of old node i is perm[i].  Coordinates, ids,
 * connectivity, sub model parts and nodal variables follow. */
int ef_model_part_permute_nodes(ef_model_part mp, const ef_index *perm);

/* A piece of mp as a model part of its own (a rank's piece of a partitioned mesh: ef_partition.h's
 * ef_model_part_split builds the maps).  Its nodes are mp's nodes node_map[0..n_nodes), the first
 * n_owned of them owned (n_owned_nodes); its elements are mp's elements element_map[0..n_elements),
 * whose nodes must all be among the piece's; its conditions are mp's conditions with at least one
 * owned node, in mp's order (all their nodes must be in the piece: a condition is a face of an
 * element); the sub model part tree is mp's with each list restricted to the piece (lists may be
 * empty).  Node, element and condition ids, properties, model-wide values, root aliases and the nodal
 * variables (values and fixity) are copied; device hooks are not. */
int ef_model_part_extract(ef_model_part mp, int64_t n_nodes, int64_t n_owned, const int64_t *node_map,
                          int64_t n_elements, const int64_t *element_map, ef_model_part *piece);

/* Node index of a file id (binary search over a sorted copy); -1 if absent. */
ef_index ef_model_part_node_index(ef_model_part mp, int64_t id);

/* Signed measure of element e (area in 2D, volume in 3D). */
double ef_model_part_element_measure(ef_model_part mp, int64_t e);

/* Mesh checks: inverted elements are re-oriented (count returned in
 * *n_reoriented), degenerate ones, nodes used by no element, duplicate ids
 * and out-of-range references are errors naming the element or node id. */
int ef_model_part_check_mesh(ef_model_part mp, int64_t *n_reoriented);

/* Flat accessors for language bindings (ctypes): the arrays of a variable
 * (values, fixity, component count) and the coordinates.  Call
 * ef_model_part_sync_to_host first when reading, ef_model_part_mark_modified
 * after writing. */
int ef_model_part_variable_arrays(ef_model_part mp, const char *name, double **values, uint8_t **fixed,
                                  int *n_components);
int64_t ef_model_part_node_count(ef_model_part mp);
double *ef_model_part_coordinates(ef_model_part mp);
/* Element connectivity: n_elements x nodes_per_element internal node indices. */
ef_index *ef_model_part_element_arrays(ef_model_part mp, int64_t *n_elements, int *nodes_per_element);

/* Print a one-screen summary (counts, sub model parts, variables, properties). */
void ef_model_part_print_summary(ef_model_part mp, void *file /* FILE* */);

#ifdef __cplusplus
}
#endif
#endif
