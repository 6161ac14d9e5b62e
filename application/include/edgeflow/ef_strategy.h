/* ef_strategy.h -- a solution strategy and a linear solver, as tables of operations.
 *
 * A strategy advances the flow on one model part by one time step.  It may keep
 * the solution on a device; it then installs device hooks on the model part
 * (ef_model_part.h) so outputs and processes see current values, and it uploads
 * variables the host marked modified before its next step.
 */
#ifndef EF_STRATEGY_H
#define EF_STRATEGY_H

#include <stdint.h>

#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_partition.h"
#include "edgeflow/ef_restart.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the prescribed values at time t into the FIXED entries of velocity
 * (3 per node) and pressure (1 per node, physical pressure), leaving the rest. */
typedef int (*ef_fixed_values_fn)(void *context, double t, double *velocity, double *pressure);

typedef struct {
  ef_model_part model_part;
  /* solver_settings, already validated against the core's and the strategy's
   * defaults; the strategy validates its own sub-blocks (linear_solver_settings, device). */
  ef_parameters settings;
  double density;             /* rho (set by the strategy's prepare) */
  double kinematic_viscosity; /* nu = mu / rho (set by the strategy's prepare) */
  ef_fixed_values_fn fixed_values;
  void *fixed_values_context;
  int time_dependent_bcs;     /* 0: fixed values are constant in time */
  int echo_level;
  ef_parameters summary;      /* object in run_summary.json the strategy may fill */
  /* The ranks of the run (NULL: one process) and this rank's piece (NULL on one rank; ef_partition.h):
   * model_part is then the piece, owned nodes first, then the ghosts.  Only a strategy whose table
   * sets `distributed` is created on several ranks. */
  ef_comm comm;
  const ef_partition *partition;
} ef_strategy_config;

/* What one step reports back to the analysis loop. */
typedef struct {
  int pressure_iterations;
  double pressure_residual;
  double seconds_momentum, seconds_pressure, seconds_correction, seconds_transfer;
} ef_step_info;

/* A host copy of the last pressure system a strategy solved (for verification
 * and export).  All arrays are malloc'ed; free with ef_pressure_system_free. */
typedef struct {
  int64_t n, nnz;
  int64_t *row_ptr;            /* n + 1 */
  int32_t *col;                /* nnz, sorted, diagonal included */
  double *values;              /* as solved: fixed-pressure rows/columns eliminated (identity rows) */
  double *values_full;         /* before the elimination (may be NULL) */
  double *rhs;                 /* right-hand side as solved */
  double *solution;            /* the solver's solution */
  double *initial_guess;       /* p_n with fixed values: the warm start of "previous" (pressure_initial_guess
                                * "linear" and "quadratic" start from their extrapolation, not given here) */
  uint8_t *fixed;              /* n: 1 for fixed-pressure rows */
  double tolerance;            /* the requested relative tolerance */
  int iterations;              /* iterations the solver used */
  double relative_residual;    /* the residual the solver reported */
} ef_pressure_system;
/* Allocate every array of an n-row, nnz-entry system (other fields zero); on failure nothing
 * is left allocated. */
int ef_pressure_system_alloc(int64_t n, int64_t nnz, ef_pressure_system *s);
void ef_pressure_system_free(ef_pressure_system *s);

/* What the analysis hands a strategy's prepare, before the processes are created. */
typedef struct {
  ef_model_part model_part;    /* read, refined and renumbered, with the strategy's variables */
  ef_parameters settings;      /* solver_settings, validated */
  const char *parameters_path; /* ProjectParameters.json, for messages */
  const char *case_folder;     /* its folder: relative file names resolve against it */
  ef_parameters summary;       /* the run_summary.json object */
  int quiet;                   /* print nothing */
} ef_strategy_setup;

typedef struct {
  const char *name;
  const char *description;
  /* The solver_settings keys the strategy reads beyond the core's own (solver_type,
   * model_part_name, domain_size, echo_level, model_import_settings), as a JSON object of
   * defaults; the analysis validates solver_settings against both (unknown keys are errors). */
  const char *settings_defaults;
  /* NULL-terminated keys of other codes' solvers accepted with one warning (may be NULL). */
  const char *const *ignored_settings;
  /* The nodal variable problem_data.steady_state watches (NULL: no steady-state test). */
  const char *steady_state_variable;
  /* Optional: called once solver_settings are validated, before the mesh is read (one process, not
   * --load-only): start set-up work that needs only the settings, to overlap the mesh reading (the
   * OpenCL strategy creates its device context on a thread; initialize takes it over).  Reports no
   * error: initialize repeats whatever failed here and reports it there. */
  void (*begin_setup)(ef_parameters settings);
  /* Optional: the node ordering the strategy steps fastest with ("rcm", "morton" or "none"), used where
   * model_import_settings.renumbering is "auto" (NULL: "rcm"). */
  const char *renumbering;
  /* Optional: add the nodal variables the strategy needs to the model part just read. */
  int (*add_variables)(ef_model_part mp);
  /* Optional: read what the strategy needs besides the mesh (materials, loads) into the
   * model part and config; called after add_variables, before the processes are created. */
  int (*prepare)(const ef_strategy_setup *setup, ef_strategy_config *config);
  int (*create)(const ef_strategy_config *config, void **data);
  /* Once after the processes ran ExecuteBeforeSolutionLoop: build operators, upload. */
  int (*initialize)(void *data);
  /* The stable time step for the current state (CFL and viscous limits,
   * bounds and a fixed step from settings). */
  int (*compute_time_step)(void *data, double *dt);
  /* Optional: the user's fixed time step (0: automatic stepping).  When compute_time_step returns less,
   * the analysis keeps the user's step as the unit of step-based schedules (ef_analysis.h). */
  int (*fixed_time_step)(void *data, double *dt);
  /* Advance from t_old to t_old + dt. */
  int (*solve_step)(void *data, double t_old, double dt, ef_step_info *info);
  /* Optional: copy the last pressure system to the host (NULL if unsupported). */
  int (*copy_pressure_system)(void *data, ef_pressure_system *out);
  /* Fill the run summary / print the timing table at the end. */
  int (*finalize)(void *data);
  void (*destroy)(void **data);
  /* Optional (a strategy without them cannot be restarted): everything the next step reads
   * beyond the model part's nodal variables, which the analysis saves and restores itself
   * (unrounded internal arrays, the step history, the linear solver's tuned state), into /
   * out of the "strategy" section (selected by the analysis; the strategy may open others,
   * e.g. "linear_solver").  load_state runs after initialize and after the analysis restored
   * the nodal variables; same_kind is 0 when the file was written by another strategy or
   * device (device-specific records are then skipped). */
  int (*save_state)(void *data, ef_restart_writer *w);
  int (*load_state)(void *data, ef_restart_reader *r, int same_kind);
  /* Optional: a short description of where it runs ("host", the device's name) that
   * restarts compare, to warn that results will differ in the last bits. */
  const char *(*where)(void *data);
  /* 1: runs on a rank's piece of a partitioned mesh (config.comm, config.partition: owned rows
   * updated, ghosts by halo exchange, reductions over the ranks).  0: the analysis refuses it on
   * several ranks with EF_ERR_UNSUPPORTED (docs/mpi.md). */
  int distributed;
} ef_strategy_ops;

/* A plain CSR view with the diagonal inside each row and sorted columns
 * (used to exchange matrices: export, device upload). */
typedef struct {
  int64_t n;
  int64_t nnz;
  const int64_t *row_ptr;
  const int32_t *col;
  const double *values;
} ef_csr_matrix;


#ifdef __cplusplus
}
#endif
#endif
