/* strategy_common.h -- what the OpenMP and OpenCL strategies share: reading
 * solver_settings into executor settings, gathering boundary-condition arrays
 * from the model part, and turning executor errors into user messages. */
#ifndef EF_STRATEGY_COMMON_H
#define EF_STRATEGY_COMMON_H

#include <stdint.h>

#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_strategy.h"
#include "fractional_step.h"

/* linear_solver_settings keys shared by the host and device CG, so one case
 * file runs with either strategy (device-only keys are ignored on the host). */
#define EF_CG_SETTINGS_DEFAULTS                                                                   \
  "{\"solver_type\": \"cg\", \"tolerance\": 1e-8, \"max_iteration\": 5000,"                      \
  " \"cg_variant\": \"standard\", \"check_every\": 1, \"workgroup_size_bits\": -1,"               \
  " \"rows_per_workgroup_bits\": -1, \"autotune\": true, \"retune\": false,"                      \
  " \"export_pressure_system\": \"\"}"

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

/* linear_solver_settings validated against EF_CG_SETTINGS_DEFAULTS. */
typedef struct {
  double tolerance;
  int max_iteration;
  int three_term; /* cg_variant "three_term" */
  int check_every;
  int workgroup_size_bits, rows_per_workgroup_bits; /* -1: tuned */
  int autotune, retune;
  const char *export_pressure_system; /* "" or a file to write the last pressure system to */
} ef_cg_settings;
int ef_cg_settings_read(ef_parameters linear_solver_settings, ef_cg_settings *s);

/* Add the file id and coordinates of the node an executor error names ("... at node N"). */
int ef_strategy_explain_node_error(int err, ef_model_part mp);

#endif
