/* ef_process.h -- processes: boundary conditions, initial conditions, outputs.
 *
 * A process is created from one block of ProjectParameters.json's "processes"
 * or "output_processes" lists, selected by its "python_module" name as in
 * Kratos, and called at the points of the analysis loop (AnalysisStage).
 * Processes run in the order of the lists; where two conditions act on the
 * same node and component, the later one wins.
 */
#ifndef EF_PROCESS_H
#define EF_PROCESS_H

#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_partition.h"
#include "edgeflow/ef_restart.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a process gets besides its Parameters. */
typedef struct {
  ef_model_part model_part;
  ef_parameters project;      /* the whole ProjectParameters.json */
  const char *output_folder;  /* where outputs go (run folder) */
  const char *case_folder;    /* folder of ProjectParameters.json, for relative paths */
  int echo_level;
  /* The solver's step count (NULL outside an analysis).  The `step` the analysis passes to the
   * process hooks counts the user's fixed time steps when the solver had to cut them (ef_analysis.h);
   * an output_control_type "solver_step" schedule reads this instead. */
  const long *solver_step;
  /* 1: the run continues from a restart file: open existing output files for appending (no
   * header, nothing truncated); load_state then cuts them back to the restart point. */
  int restart;
  /* The ranks of the run (NULL: one process) and this rank's piece of the mesh (NULL on one rank;
   * ef_partition.h): model_part is then the piece, owned nodes first, then the ghosts. */
  ef_comm comm;
  const ef_partition *partition;
} ef_process_context;

typedef struct {
  const char *name; /* the python_module it honours, e.g. "apply_noslip_process" */
  int (*create)(const ef_process_context *context, ef_parameters parameters, void **data);
  int (*execute_initialize)(void *data);
  int (*execute_before_solution_loop)(void *data);
  /* Apply values and fixity for the step that ends at `time`. */
  int (*execute_initialize_solution_step)(void *data, double time);
  /* Time-dependent boundary values at time t into the fixed entries
   * (see ef_fixed_values_fn); NULL for processes that set no values. */
  int (*evaluate_fixed_values)(void *data, double t, double *velocity, double *pressure);
  /* 1 if evaluate_fixed_values depends on t. */
  int (*is_time_dependent)(void *data);
  int (*execute_finalize_solution_step)(void *data, double time, int step);
  int (*is_output_step)(void *data, double time, int step);
  int (*print_output)(void *data, double time, int step);
  int (*execute_finalize)(void *data);
  /* Optional: 1 when the process asks the analysis to end the run after this step (a steady
   * state); every output process then writes that step. */
  int (*stop_requested)(void *data);
  void (*destroy)(void **data);
  /* Optional: what the next steps need to continue bit-identically (schedules' next times,
   * output file lengths, series written so far) into / out of the process's own section of a
   * restart file (ef_restart.h); load_state runs after ExecuteBeforeSolutionLoop. */
  int (*save_state)(void *data, ef_restart_writer *w);
  int (*load_state)(void *data, ef_restart_reader *r);
  /* Optional: make every output written so far durable (flush and fsync its files).  The analysis
   * calls it before each restart file, so a restart file never lists an output a crash of the
   * machine could still lose; an output process that writes files implements it. */
  int (*sync_outputs)(void *data);
  /* 1: gives the same answers on a rank's piece of a partitioned mesh as on the whole mesh (e.g. it
   * sets values on the nodes of its sub model parts, owned and ghost alike).  0: the analysis refuses
   * it on several ranks with EF_ERR_UNSUPPORTED (docs/mpi.md), never a silently wrong answer. */
  int distributed;
} ef_process_ops;

/* Register the built-in processes of the core (called once by the analysis).  An
 * application registers its own with ef_registry_add_process, using ef_process_tools.h. */
int ef_register_core_processes(void);

/* Expressions of x, y, z, t (libmatheval; Python's ** is accepted for ^). */
typedef struct ef_expression_s *ef_expression;
/* A JSON number or string at p[key] (or the view itself when key is NULL). */
int ef_expression_from_parameters(ef_parameters p, const char *key, ef_expression *e);
int ef_expression_create(const char *text, const char *where, ef_expression *e);
double ef_expression_eval(ef_expression e, double x, double y, double z, double t);
int ef_expression_is_constant(ef_expression e);      /* no x, y, z, t */
int ef_expression_depends_on_time(ef_expression e);
void ef_expression_destroy(ef_expression *e);
/* The formula as given ("" for NULL), for messages. */
const char *ef_expression_text(ef_expression e);

/* A Kratos interval [start, end] where end may be "End" (infinity). */
typedef struct {
  double start, end;
} ef_interval;
int ef_interval_from_parameters(ef_parameters p, const char *key, ef_interval *interval);
int ef_interval_contains(ef_interval interval, double t);

/* Area-weighted outward unit normals at the nodes of a sub model part's
 * conditions (boundary faces/lines), outward with respect to the adjacent
 * element.  normals has 3*mp->n_nodes entries; nodes outside stay 0. */
int ef_model_part_nodal_normals(ef_model_part mp, const ef_sub_model_part *smp, double *normals);

#ifdef __cplusplus
}
#endif
#endif
