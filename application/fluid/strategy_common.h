/* strategy_common.h -- what the OpenMP and OpenCL strategies share: reading
 * solver_settings into executor settings, gathering boundary-condition arrays
 * from the model part, and turning executor errors into user messages. */
#ifndef EF_STRATEGY_COMMON_H
#define EF_STRATEGY_COMMON_H

#include <stdint.h>

#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_strategy.h"
#include "fractional_step.h"

/* Boundary-condition arrays in the executor's layout, refreshed from the model part. */
typedef struct {
  int64_t n;
  uint8_t *velocity_fixed; /* 3n */
  uint8_t *pressure_fixed; /* n */
  uint8_t *slip_type;      /* n */
  double *slip_normal;     /* 3n */
  double *slip_tangent;    /* 3n */
  double *body_force;      /* 3n */
  int64_t n_fixed_pressure;
} ef_bc_arrays;

int ef_bc_arrays_create(int64_t n, ef_bc_arrays *bc);
void ef_bc_arrays_free(ef_bc_arrays *bc);
/* Copy fixity, slip data and body force from the model part's variables. */
int ef_bc_arrays_gather(ef_bc_arrays *bc, ef_model_part mp);

/* The executor settings and time-step control from the validated solver_settings. */
int ef_strategy_read_settings(const ef_strategy_config *config, ef_fs_settings *fs, ef_fs_dt_settings *dt);

/* Add the file id and coordinates of the node an executor error names ("... at node N"). */
int ef_strategy_explain_node_error(int err, ef_model_part mp);

/* The divergence check's bound: min(divergence_velocity_bound, divergence_velocity_factor x U),
 * U the case's velocity scale, the largest |u| of the initial state and of every prescribed
 * velocity met so far (the absolute bound alone while U is 0 or the factor is 0). */
typedef struct {
  double absolute, factor, scale;
} ef_divergence_bound;
int ef_divergence_bound_read(const ef_strategy_config *config, ef_divergence_bound *d);
/* Raise U by the velocities of all nodes (all) or of the fixed components; the bound now. */
double ef_divergence_bound_update(ef_divergence_bound *d, ef_model_part mp, int all);
/* On EF_ERR_DIVERGED: say how the bound came about. */
int ef_divergence_bound_explain(int err, const ef_divergence_bound *d);

/* Restart records both fluid strategies write and read alike (so either continues the other's
 * file): the kinematic pressure p / rho as the executor holds it, the last step and counters. */
int ef_fluid_save_state(ef_restart_writer *w, int64_t n, const double *kinematic_pressure, double last_dt, long steps,
                        long iterations);
int ef_fluid_load_state(ef_restart_reader *r, int64_t n, double *kinematic_pressure, double *last_dt, long *steps,
                        long *iterations);

/* The history of solver_settings.pressure_initial_guess (ef_fs_pressure_history), alike for both strategies:
 * records pressure_guess_levels, pressure_guess_dt, pressure_guess_previous(2) and pressure_guess_last (none when
 * no level is known).  load reads them into prev, prev2, last (n each) and sets *h; a file without them (older, or
 * from a run with "previous") gives levels 0, so the first step starts from p_n. */
int ef_fluid_save_pressure_history(ef_restart_writer *w, int64_t n, const ef_fs_pressure_history *h);
int ef_fluid_load_pressure_history(ef_restart_reader *r, int64_t n, double *prev, double *prev2, double *last,
                                   ef_fs_pressure_history *h);

/* MPI: summary "mpi": {"ranks", "exchange_seconds": [per rank]} from this rank's exchange time
 * (collective: every rank's time reaches rank 0). */
int ef_fluid_summary_mpi(const ef_strategy_config *config, double exchange_seconds);

#endif
