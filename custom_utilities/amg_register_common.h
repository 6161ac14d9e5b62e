/* amg_register_common.h -- what the host and the device registrations of the AMG solvers
 * share (custom_utilities/amg_register.c): the settings of the preconditioner "amg", its
 * report, the aggregate maps a restart file carries, and the "amgcl" block (Kratos' keys),
 * which runs on either memory through the registry.  Internal to the plugin. */
#ifndef EF_AMG_REGISTER_COMMON_H
#define EF_AMG_REGISTER_COMMON_H

#include <stdint.h>

#include "amg.h"
#include "edgeflow/ef_linear_solver.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_restart.h"

#define EF_AMG_DEFAULTS                                                                                     \
  "{\"amg_max_levels\": 10, \"amg_coarse_enough\": 128, \"amg_aggregation_passes\": 3,"                     \
  " \"amg_strength\": 0.25, \"amg_coarse_strength\": 0.0, \"amg_smoother\": \"l1_jacobi\", \"amg_omega\": 1.3333333333333333,"            \
  " \"amg_sweeps\": 1, \"amg_cycle\": \"auto\", \"amg_small_rows\": 1024, \"amg_kcycle_levels\": 2, \"amg_over_correction\": 1.0,"                         \
  " \"amg_gather_rows\": 20000}"

/* The keys of "amgcl" (see amg_register.c). */
#define EF_AMGCL_DEFAULTS                                                                                  \
  "{\"smoother_type\": \"ilu0\", \"krylov_type\": \"gmres\", \"coarsening_type\": \"aggregation\","             \
  " \"max_levels\": -1, \"coarse_enough\": 1000, \"pre_sweeps\": 1, \"post_sweeps\": 1,"                        \
  " \"provide_coordinates\": false, \"gmres_krylov_space_dimension\": 100, \"scaling\": false,"               \
  " \"block_size\": 1, \"use_block_matrices_if_possible\": true, \"use_gpgpu\": false}"

/* Aggregate maps read from a restart file: the next set-up builds the hierarchy from them
 * (the hierarchy of the run that saved it), so a restarted run rounds as the uninterrupted one. */
typedef struct {
  int n_maps; /* -1: none */
  int32_t *maps[32];
} ef_amg_saved;

/* ef_amg_settings from linear_solver_settings (keys already validated against EF_AMG_DEFAULTS). */
int ef_amg_read_settings(ef_parameters p, ef_amg_settings *s);
/* The figures every view of "amg" reports. */
int ef_amg_view_common(const ef_amg *h, ef_parameters report);
void ef_amg_saved_free(ef_amg_saved *m);
/* Records "amg.levels" and "amg.agg<l>" of hierarchy h (nothing when h is NULL). */
int ef_amg_save_maps(const ef_amg *h, ef_restart_writer *w);
/* The maps of ef_amg_save_maps into m (n_maps -1 when the file has none). */
int ef_amg_load_maps(ef_restart_reader *r, ef_amg_saved *m);

/* "amgcl": the operations of ef_host_amgcl_ops and ef_cl_amgcl_ops (the inner solver is
 * created in the matrix's memory). */
int ef_amgcl_create(ef_parameters settings, const ef_linear_solver_common *common, const ef_matrix *A,
                    ef_preconditioner *pc, void **out);
int ef_amgcl_setup(void *data, const ef_matrix *A);
int ef_amgcl_solve(void *data, const ef_vector *b, ef_vector *x, ef_solve_result *res);
int ef_amgcl_view(void *data, ef_parameters report);
int ef_amgcl_save_state(void *data, ef_restart_writer *w);
int ef_amgcl_load_state(void *data, ef_restart_reader *r);
void ef_amgcl_destroy(void **data);
/* The "amgcl" table of one memory space (ef_host_amgcl_ops, ef_cl_amgcl_ops). */
#define EF_AMGCL_OPS(memory_space, text)                                                                  \
  {                                                                                                      \
    .name = "amgcl", .description = (text), .memory = (memory_space), .defaults = EF_AMGCL_DEFAULTS,     \
    .uses_preconditioner = 0, .create = ef_amgcl_create, .setup = ef_amgcl_setup, .solve = ef_amgcl_solve, \
    .view = ef_amgcl_view, .destroy = ef_amgcl_destroy, .save_state = ef_amgcl_save_state,                \
    .load_state = ef_amgcl_load_state,                                                                   \
    .distributed = 1 /* the inner solvers decide (several ranks; on the device with "amg") */            \
  }

#endif
