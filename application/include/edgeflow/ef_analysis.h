/* ef_analysis.h -- the analysis loop in the shape of Kratos' AnalysisStage.
 *
 *   ef_analysis_create(ProjectParameters.json)
 *   ef_analysis_initialize          load the applications, read + refine the mesh,
 *                                   the strategy's variables and materials, processes, strategy
 *   ef_analysis_run_solution_loop   while keep_advancing:
 *       initialize_solution_step    time step, boundary conditions
 *       solve_solution_step         the strategy's fractional step
 *       finalize_solution_step      processes (forces, probes, ...)
 *       output_solution_step        output processes
 *   ef_analysis_finalize            timing table, run_summary.json
 *
 * Every stage is callable on its own, so a Python subclass can override the
 * per-step hooks (python_scripts/edgeflow_analysis.py).
 */
#ifndef EF_ANALYSIS_H
#define EF_ANALYSIS_H

#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_partition.h"
#include "edgeflow/ef_strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ef_analysis_s *ef_analysis;

/* Command-line style overrides applied on top of ProjectParameters.json. */
typedef struct {
  const char *solver_type;      /* NULL: as in the file */
  const char *output_folder;    /* NULL: problem_data.output_folder */
  int refinement_levels;        /* < 0: as in the file */
  long max_steps;               /* <= 0: run to end_time */
  int skip_unsupported_processes; /* < 0: as in the file, 0/1 override */
  int quiet;                    /* no progress lines */
  int load_only;                /* initialize reads the mesh and parameters, no strategy */
  const char *applications;     /* comma-separated plugins to load when problem_data.applications
                                   names none (the program's default list) */
  int stop_when_steady;         /* 1: stop once the relative change of velocity and pressure per unit
                                   time stays below problem_data.steady_state.relative_tolerance
                                   (EF_STEADY_DEFAULT_RELATIVE_TOLERANCE when that is 0) */
  const char *restart_file;     /* continue the run this restart file saved (docs/restart.md) */
  int overwrite;                /* an output folder holding another run's manifest: 0 refuses
                                   (the edgeflow program and the Python workflow), 1 removes the files
                                   that manifest lists, -1 (the default here: embedding programs,
                                   tests) neither checks nor refuses; the manifest is written anyway */
  ef_comm comm;                 /* NULL: the ranks problem_data.parallel_type asks for; else run on these,
                                   whatever parallel_type says (ef_comm_serial(): one process, also
                                   under mpirun; for embedding programs and tests) */
} ef_analysis_options;

#define EF_STEADY_DEFAULT_RELATIVE_TOLERANCE 1e-3

void ef_analysis_options_default(ef_analysis_options *options);

int ef_analysis_create(const char *parameters_path, const ef_analysis_options *options, ef_analysis *a);
void ef_analysis_destroy(ef_analysis *a);

int ef_analysis_initialize(ef_analysis a);
int ef_analysis_run_solution_loop(ef_analysis a);
int ef_analysis_keep_advancing(ef_analysis a); /* 1 while time < end_time and steps remain */
int ef_analysis_initialize_solution_step(ef_analysis a);
int ef_analysis_solve_solution_step(ef_analysis a);
int ef_analysis_finalize_solution_step(ef_analysis a);
int ef_analysis_output_solution_step(ef_analysis a);
int ef_analysis_finalize(ef_analysis a);
/* Initialize, run the loop and finalize. */
int ef_analysis_run(ef_analysis a);

/* The model part: on several ranks (problem_data.parallel_type "MPI" under mpirun) this rank's piece. */
ef_model_part ef_analysis_model_part(ef_analysis a);
/* The ranks (NULL: one process; the MPI world under parallel_type "MPI", set by initialize) and this
 * rank's piece of the mesh (NULL on one rank; its coords and elements are NULL: the model part holds
 * them).  A program that gets an error on several ranks calls ef_comm_abort on ef_analysis_comm, so no
 * rank waits for one that gave up (docs/mpi.md). */
ef_comm ef_analysis_comm(ef_analysis a);
const ef_partition *ef_analysis_partition(ef_analysis a);
/* The last pressure system the strategy solved, copied to the host. */
int ef_analysis_copy_pressure_system(ef_analysis a, ef_pressure_system *out);
ef_parameters ef_analysis_parameters(ef_analysis a);
double ef_analysis_time(ef_analysis a);
double ef_analysis_delta_time(ef_analysis a);
long ef_analysis_step(ef_analysis a); /* solver steps taken */
/* The step the processes see: the solver's step, or, once the stability limit cut a fixed time_step,
 * the number of those time steps completed (the solver then lands on each of their ends). */
long ef_analysis_output_step(ef_analysis a);
int ef_analysis_last_iterations(ef_analysis a);
const char *ef_analysis_output_folder(ef_analysis a);

/* ---------------------------------------------------------------------------
 * Restart, signals and limits (docs/restart.md). */

/* Write a restart file of the current state now (after a step's outputs) into the restart
 * folder; its path into path (may be NULL). */
int ef_analysis_write_restart(ef_analysis a, char *path, size_t size);
/* Ask the running loop to stop at the end of the current step: outputs, a restart file and a
 * run summary marked "interrupted" are written.  Async-signal-safe (it stores the number). */
void ef_request_stop(int signal_number);
/* Route SIGINT and SIGTERM to ef_request_stop (a second signal acts at once). */
int ef_install_stop_handlers(void);
/* "running", "completed", "interrupted" or "failed" (as run_summary.json's status). */
const char *ef_analysis_status(ef_analysis a);
/* Why an interrupted run stopped: the signal number, or 0 for problem_data.max_wall_time. */
int ef_analysis_stop_signal(ef_analysis a);

#ifdef __cplusplus
}
#endif
#endif
