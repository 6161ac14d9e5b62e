/* ef_process_tools.h -- what a process needs to be written outside the core.
 *
 * An application (plugin) registers its processes by python_module name with
 * ef_registry_add_process (ef_registry.h) from its ef_application_register; this
 * header gives them the parameter helpers, the part a process acts on, the
 * boundary-condition group the value-assigning processes join, and the CSV files
 * the output processes write.
 *
 * Value-assigning processes (assign_*, an application's inlet or wall) are
 * "members" of one group per model part.  The group decides values and fixity
 * from all of its members together, so that the later process in the list wins
 * on a shared node and component no matter which of them switches on or off
 * (see docs/processes.md).
 */
#ifndef EF_PROCESS_TOOLS_H
#define EF_PROCESS_TOOLS_H

#include <stddef.h>
#include <stdint.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_process.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EF_VARIABLE_NAME_MAX 64
#define EF_PROCESS_LABEL_MAX 512

/* --------------------------------------------------------------------------
 * Parameters. */

/* Bit masks of JSON types for keys that accept several (Kratos' "trick"). */
#define EF_TYPE_BIT(t) (1u << (unsigned)(t))

typedef struct {
  const char *key;
  unsigned types;   /* EF_TYPE_BIT(EF_JSON_NUMBER) | ... */
  const char *what; /* "a number or an expression string" */
} ef_poly_key;

/* Validate against defaults (unknown keys and wrong types are errors listing
 * the valid keys); keys listed in poly may hold any of their allowed types. */
int ef_process_validate(ef_parameters p, const char *defaults, const ef_poly_key *poly, int n_poly);

/* Defaults of the keys Kratos' GUI writes into some processes' Parameters. */
#define EF_KRATOS_BLOCK_KEYS "\"help\": null, \"kratos_module\": null, \"process_name\": null, \"mesh_id\": 0"

/* "local_axes" must be an empty object. */
int ef_process_check_local_axes(ef_parameters p);

/* "<module> on '<model_part_name>' (<file>: <path>)", for messages. */
void ef_process_label(char *label, size_t size, const char *module, ef_parameters p);

/* --------------------------------------------------------------------------
 * The part a process acts on. */

/* Resolve p[key], a model part name: the root itself (or "<root>.<alias>", see
 * ef_model_part_add_root_alias) gives *smp = NULL; name (may be NULL) gets the text. */
int ef_process_resolve_part(ef_model_part mp, ef_parameters p, const char *key, ef_sub_model_part **smp,
                            const char **name);

/* Number of nodes of a part (NULL: the whole model part) and its i-th node. */
static inline int64_t ef_part_n_nodes(ef_model_part mp, const ef_sub_model_part *smp) {
  return smp ? smp->n_nodes : mp->n_nodes;
}
static inline ef_index ef_part_node(const ef_sub_model_part *smp, int64_t i) {
  return smp ? smp->nodes[i] : (ef_index)i;
}
/* Number of conditions of a part (NULL: the whole model part) and its i-th condition. */
static inline int64_t ef_part_n_conditions(ef_model_part mp, const ef_sub_model_part *smp) {
  return smp ? smp->n_conditions : mp->n_conditions;
}
static inline ef_index ef_part_condition(const ef_sub_model_part *smp, int64_t i) {
  return smp ? smp->conditions[i] : (ef_index)i;
}

/* Area-weighted outward normals (length = face measure) of conditions
 * cond[0..n) (indices into mp->conditions), outward with respect to the
 * element that has the face; 3 doubles per condition. */
int ef_condition_face_normals(ef_model_part mp, int64_t n, const ef_index *cond, double *normals);

/* --------------------------------------------------------------------------
 * Value-assigning boundary conditions: fix values of a variable on a part. */

typedef struct ef_bc_group_s ef_bc_group;

typedef struct {
  ef_model_part mp;
  char label[EF_PROCESS_LABEL_MAX];  /* "apply_inlet_process on MainPart.Inlet", for messages */
  char variable[EF_VARIABLE_NAME_MAX]; /* nodal variable it writes */
  int n_components;                  /* of that variable */
  int assign[3];                     /* components it sets */
  int constrained[3];                /* components it also fixes */
  ef_expression expr[3];             /* value of component c = scale[c] * expr[c](x, y, z, t) */
  double scale[3];
  ef_expression owned[3];            /* the distinct expressions, destroyed with the member */
  int n_owned;
  ef_sub_model_part *smp;            /* NULL: every node */
  ef_interval interval;
  int active;                        /* inside its interval at the last update */
  ef_bc_group *group;
  ef_comm comm;                      /* the context's ranks (NULL: one process): a mean normal sums over them */
} ef_bc_member;

/* Allocate a member (zeroed, scale 1, always active interval) of mp. */
int ef_bc_member_new(ef_model_part mp, const char *label, ef_bc_member **m);
/* Check the variable exists with the right shape; accepts "VELOCITY_X" style
 * component names for scalar assignments (sets *component, else -1). */
int ef_bc_member_set_variable(ef_bc_member *m, const char *name, int want_vector, int *component);
/* The create steps every value-assigning process shares: validate p against
 * defaults (poly: keys of several types), check local_axes, make the member
 * with its label and resolve "model_part_name". */
int ef_bc_member_begin(const ef_process_context *ctx, ef_parameters p, const char *module, const char *defaults,
                       const ef_poly_key *poly, int n_poly, ef_bc_member **m);
/* Component c takes value e (the member owns e; one e may serve several components). */
int ef_bc_member_take_expression(ef_bc_member *m, int c, ef_expression e);
/* Kratos' "modulus" (number or expression) times a unit "direction" ([x, y, z],
 * or "automatic_inwards_normal"/"automatic_outwards_normal": the area-weighted
 * mean outward normal of the part's conditions, as one direction for all its
 * nodes), with "constrained" (bool) and "interval": fills m for every component. */
int ef_bc_setup_by_direction(ef_bc_member *m, ef_parameters p);
/* Join the group of m->mp (the order of joining is the order of the lists). */
int ef_bc_member_attach(ef_bc_member *m);
/* Leave the group and free the member; NULL-safe. */
void ef_bc_member_destroy(ef_bc_member **m);

/* The ops every value-assigning process shares (data: its ef_bc_member). */
int ef_bc_execute_initialize_solution_step(void *data, double time);
int ef_bc_evaluate_fixed_values(void *data, double t, double *velocity, double *pressure);
int ef_bc_is_time_dependent(void *data);
void ef_bc_destroy(void **data);

/* --------------------------------------------------------------------------
 * Output files: an append-only CSV whose rows reach the disk whole (one write,
 * and an fdatasync per row when sync_each_row; a short write is cut back). */

typedef struct {
  int fd;
  int64_t length;    /* bytes of complete rows */
  int sync_each_row; /* fdatasync after every row (else only at close) */
  char path[4096];
} ef_csv_file;

/* Open (truncate) folder/sub/name (sub may be absolute or empty) and write the header. */
int ef_csv_open(const char *folder, const char *sub, const char *name, const char *header, int sync_each_row,
                ef_csv_file *f);
int ef_csv_append(ef_csv_file *f, const char *row, size_t n);
/* Every row appended so far durable (fdatasync; nothing to do with sync_each_row or no file):
 * a process's sync_outputs, at restart points. */
int ef_csv_sync(ef_csv_file *f);
/* NULL-safe, idempotent. */
void ef_csv_close(ef_csv_file *f);
/* t rounded to 12 significant digits (Kratos' comparison of output times). */
double ef_output_time(double t);
/* ef_csv_open into context->output_folder, or, when the run continues from a restart file
 * (context->restart), the existing file reopened for appending (no header; ef_csv_load_state
 * then cuts it back to the restart point). */
int ef_csv_open_run(const ef_process_context *context, const char *sub, const char *name, const char *header,
                    int sync_each_row, ef_csv_file *f);
/* The file's length into a restart record key / the file cut back to that length. */
int ef_csv_save_state(const ef_csv_file *f, ef_restart_writer *w, const char *key);
int ef_csv_load_state(ef_csv_file *f, ef_restart_reader *r, const char *key);

/* What an output_interval counts ("output_control_type"): "step" the analysis' steps, which are the
 * user's time steps even when the stability limit makes the solver cut them (ef_analysis.h), "time"
 * simulated time, "solver_step" the solver's own steps. */
typedef enum { EF_CONTROL_STEP = 0, EF_CONTROL_TIME = 1, EF_CONTROL_SOLVER_STEP = 2 } ef_output_control;
/* Parse "step" / "time" / "solver_step"; the error names label. */
int ef_output_control_parse(const char *label, const char *text, ef_output_control *control);
/* The schedule's clock now: the rounded time, the step, or *solver_step (the step when NULL). */
double ef_output_clock(ef_output_control control, const long *solver_step, double time, int step);
/* Advance *next past now by interval (rounded like the step times for "time", so sums do not drift). */
void ef_output_schedule(ef_output_control control, double interval, double now, double *next);

#ifdef __cplusplus
}
#endif
#endif
