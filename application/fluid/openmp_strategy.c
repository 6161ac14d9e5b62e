/* openmp_strategy.c -- strategy "openmp_edge_based": the edge-based fractional
 * step on the host, OpenMP over nodes (custom_utilities/fractional_step.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef EF_HAVE_OPENMP
#include <omp.h>
#endif

#include "edge_data.h"
#include "edge_physics.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_log.h"
#include "edgeflow/ef_registry.h"
#include "fluid_application.h"
#include "fractional_step.h"
#include "fractional_step_mpi.h"
#include "matrix_io.h"
#include "strategy_common.h"

typedef struct {
  ef_strategy_config config;
  ef_model_part mp;
  ef_edge_data edges;
  ef_fs *fs;
  ef_fs_mpi *fs_mpi; /* MPI: on a rank's piece (config.partition), the step runs here (fractional_step_mpi.h) */
  ef_fs_settings settings;
  ef_fs_dt_settings dt_settings;
  ef_bc_arrays bc;
  ef_parameters solver_settings; /* linear_solver_settings, validated in create */
  ef_linear_solver *solver;
  const char *export_pressure_system; /* "" or a file for the last pressure system */
  double *pressure;  /* kinematic pressure p / rho */
  double *reaction;  /* executor reaction (kinematic force), 3n */
  double *pressure_prev; /* p_n as the last step started (for copy_pressure_system's warm start) */
  double last_dt, last_residual;
  int last_iterations;
  ef_variable *velocity_var, *pressure_var, *reaction_var;
  ef_divergence_bound divergence;
  long steps, iterations;
  long viscous_iterations; /* implicit viscosity: CG iterations of all stage solves */
  long projection_iterations; /* implicit_viscosity.projection "converged": PCG iterations of all steps */
  int viscous_max_stage_iterations;
  double viscous_max_residual;
  int ev_viscous;
  int ev_build, ev_prepare, ev_momentum, ev_assembly, ev_solve, ev_correction;
} ef_openmp_strategy;

static void ef_openmp_destroy(void **p) {
  if (!p || !*p) return;
  ef_openmp_strategy *s = *p;
  ef_fs_destroy(&s->fs);
  ef_fs_mpi_destroy(&s->fs_mpi); /* MPI */
  ef_edge_data_free(&s->edges);
  ef_bc_arrays_free(&s->bc);
  ef_linear_solver_destroy(&s->solver);
  free(s->pressure);
  free(s->reaction);
  free(s->pressure_prev);
  free(s);
  *p = NULL;
}

/* MPI: the pressure solver is a registry solver that runs across ranks ("petsc"), not the built-in CG. */
static int ef_openmp_mpi_registry_solver(const ef_openmp_strategy *s) {
  const char *solver = NULL, *pc = NULL;
  const ef_linear_solver_ops *ops = NULL;
  if (ef_parameters_get_string(s->solver_settings, "solver_type", &solver) ||
      ef_parameters_get_string(s->solver_settings, "preconditioner_type", &pc))
    return 0;
  if (!strcmp(solver, "cg") && !strcmp(pc, "jacobi")) return 0; /* the executor's built-in CG */
  return !ef_registry_find_linear_solver(solver, EF_MEMORY_HOST, &ops) && ops->distributed;
}

/* MPI: what the piece's executor (fractional_step_mpi.h) runs; the rest is refused on several ranks. */
static int ef_openmp_check_mpi(const ef_openmp_strategy *s) {
  const char *solver, *pc;
  EF_CALL(ef_parameters_get_string(s->solver_settings, "solver_type", &solver));
  EF_CALL(ef_parameters_get_string(s->solver_settings, "preconditioner_type", &pc));
  EF_CHECK((!strcmp(solver, "cg") && !strcmp(pc, "jacobi")) || ef_openmp_mpi_registry_solver(s), EF_ERR_UNSUPPORTED,
           "openmp_edge_based on several ranks: linear_solver_settings asks for solver_type '%s' with "
           "preconditioner_type '%s'; only \"cg\" with \"jacobi\" runs across ranks in the built-in CG; registry "
           "solvers across ranks: \"cg\" with \"amg\", \"fcg\" with \"amg\" or \"jacobi\", \"amgcl\" and "
           "\"petsc\" (docs/mpi.md)",
           solver, pc);
  EF_CHECK(!s->export_pressure_system || !s->export_pressure_system[0], EF_ERR_UNSUPPORTED,
           "openmp_edge_based on several ranks: export_pressure_system is not supported (docs/mpi.md)");
  const ef_fs_settings *fss = &s->settings;
  EF_CHECK(!fss->viscous_implicit ||
               (fss->viscous_correction == 0 && fss->viscous_pressure == 0 && fss->viscous_projection == 0),
           EF_ERR_UNSUPPORTED,
           "openmp_edge_based on several ranks: viscous_time_integration \"implicit\" runs with "
           "implicit_viscosity.correction \"lumped\", pressure \"frozen\" and projection \"single\" (the defaults) "
           "only (docs/mpi.md)");
  EF_CHECK(fss->pressure_guess == 0, EF_ERR_UNSUPPORTED,
           "openmp_edge_based on several ranks: pressure_initial_guess \"linear\" and \"quadratic\" run on one rank "
           "only; use \"previous\" or \"auto\" (docs/mpi.md)");
  return EF_SUCCESS;
}

static int ef_openmp_create(const ef_strategy_config *config, void **out) {
  *out = NULL;
  ef_openmp_strategy *s = calloc(1, sizeof *s);
  EF_CHECK(s, EF_ERR_MEMORY, "out of memory");
  int err = EF_SUCCESS;
  s->config = *config;
  s->mp = config->model_part;
  EF_CALL_GOTO(ef_strategy_read_settings(config, &s->settings, &s->dt_settings), fail);
  EF_CALL_GOTO(ef_divergence_bound_read(config, &s->divergence), fail);
  EF_CALL_GOTO(ef_parameters_get(config->settings, "linear_solver_settings", &s->solver_settings), fail);
  EF_CALL_GOTO(ef_linear_solver_validate(s->solver_settings, EF_MEMORY_HOST), fail);
  EF_CALL_GOTO(ef_parameters_get_string(s->solver_settings, "export_pressure_system", &s->export_pressure_system),
               fail);
  if (config->partition) EF_CALL_GOTO(ef_openmp_check_mpi(s), fail); /* MPI */
  EF_CALL_GOTO(ef_model_part_get_variable(s->mp, "VELOCITY", &s->velocity_var), fail);
  EF_CALL_GOTO(ef_model_part_get_variable(s->mp, "PRESSURE", &s->pressure_var), fail);
  EF_CALL_GOTO(ef_model_part_get_variable(s->mp, "REACTION", &s->reaction_var), fail);
  s->ev_build = ef_log_event("setup", "edge data build");
  s->ev_prepare = ef_log_event("step", "1 tau and projections");
  s->ev_momentum = ef_log_event("step", s->settings.viscous_implicit ? "1 momentum IMEX" : "1 momentum RK4");
  if (s->settings.viscous_implicit) s->ev_viscous = ef_log_event("step", "1 viscous stage CG");
  s->ev_assembly = ef_log_event("step", "2 pressure assembly");
  s->ev_solve = ef_log_event("step", "2 pressure CG");
  s->ev_correction = ef_log_event("step", "3 correction");
  *out = s;
  return EF_SUCCESS;
fail:
  ef_openmp_destroy((void **)&s);
  return err;
}

/* Pressure from the model part (physical) into the kinematic array. */
static void ef_openmp_load_pressure(ef_openmp_strategy *s, int fixed_only) {
  double inv_rho = 1.0 / s->config.density;
  for (int64_t i = 0; i < s->mp->n_nodes; i++)
    if (!fixed_only || s->pressure_var->fixed[i]) s->pressure[i] = s->pressure_var->values[i] * inv_rho;
}

/* MPI: the divergence bound from the velocity scale of every rank (the largest bound: U is a maximum). */
static int ef_openmp_bound_mpi(ef_openmp_strategy *s, double *bound) {
  EF_CALL(ef_comm_allreduce(s->config.comm, bound, 1, EF_COMM_MAX));
  return EF_SUCCESS;
}

static int ef_openmp_initialize(void *data) {
  ef_openmp_strategy *s = data;
  ef_model_part mp = s->mp;
  ef_log_event_begin(s->ev_build);
  EF_CALL(ef_edge_data_build(mp->dim, mp->n_nodes, mp->coords, mp->n_elements, mp->nodes_per_element,
                             mp->elements, &s->edges));
  ef_log_event_end(s->ev_build);
  EF_CALL(ef_bc_arrays_create(mp->n_nodes, &s->bc));
  EF_MALLOC(s->pressure, mp->n_nodes);
  EF_CALLOC(s->reaction, 3 * mp->n_nodes);
  EF_MALLOC(s->pressure_prev, mp->n_nodes);
  ef_openmp_load_pressure(s, 0);
  EF_CALL(ef_bc_arrays_gather(&s->bc, mp));
  s->settings.velocity_fixed = s->bc.velocity_fixed;
  s->settings.pressure_fixed = s->bc.pressure_fixed;
  s->settings.slip_type = s->bc.slip_type;
  s->settings.slip_normal = s->bc.slip_normal;
  s->settings.slip_tangent = s->bc.slip_tangent;
  s->settings.body_force = s->bc.body_force;
  if (s->config.time_dependent_bcs) {
    s->settings.eval_fixed = s->config.fixed_values;
    s->settings.eval_fixed_ctx = s->config.fixed_values_context;
  }
  EF_CALL(ef_fs_create(&s->edges, &s->settings, &s->fs));
  /* The pressure solver, from the registry, for H's pattern. */
  const ef_csr *H = ef_fs_pressure_matrix(s->fs);
  ef_matrix A = {.memory = EF_MEMORY_HOST, .layout = {H->n, 0, NULL}, .nnz = H->nnz,
                 .constant_null_space = H->constant_null_space, .row_ptr = H->row_ptr, .row_ptr32 = H->row_ptr32,
                 .col = H->col, .values = H->val, .diag = H->diag};
  /* MPI: "petsc" across ranks is created below for the distributed matrix (the piece's serial fs is
   * never stepped on several ranks). */
  const int mpi_registry = s->config.partition && ef_openmp_mpi_registry_solver(s);
  if (!mpi_registry) EF_CALL(ef_linear_solver_create(s->solver_settings, EF_MEMORY_HOST, &A, &s->solver));
  s->settings.solver = s->solver;
  s->settings.velocity_bound = ef_divergence_bound_update(&s->divergence, mp, 1);
  if (s->config.partition) EF_CALL(ef_openmp_bound_mpi(s, &s->settings.velocity_bound)); /* MPI */
  EF_CALL(ef_fs_set_settings(s->fs, &s->settings));
  if (mpi_registry) { /* MPI: the piece's executor; the registry solver for its distributed pressure matrix */
    EF_CALL(ef_fs_mpi_create(&s->edges, &s->settings, s->config.comm, s->config.partition, &s->fs_mpi));
    EF_CALL(ef_fs_mpi_pressure_matrix(s->fs_mpi, &A));
    EF_CALL(ef_linear_solver_create(s->solver_settings, EF_MEMORY_HOST, &A, &s->solver));
    EF_CALL(ef_fs_mpi_set_pressure_solver(s->fs_mpi, s->solver));
  } else if (s->config.partition) { /* MPI: the piece's executor, the pressure solver's tolerance */
    const ef_linear_solver_common *ls = ef_linear_solver_settings(s->solver);
    s->settings.pressure_rtol = ls->tolerance;
    s->settings.pressure_max_iterations = ls->max_iteration;
    EF_CALL(ef_fs_mpi_create(&s->edges, &s->settings, s->config.comm, s->config.partition, &s->fs_mpi));
  }

  int threads = 1;
#ifdef EF_HAVE_OPENMP
  threads = omp_get_max_threads();
#endif
  char json[512];
  snprintf(json, sizeof json,
           "{\"threads\": %d, \"directed_edges\": %lld, \"edge_data_bytes\": %zu, \"dimension\": %d}", threads,
           (long long)s->edges.n_edges, ef_edge_data_bytes(&s->edges), mp->dim);
  EF_CALL(ef_parameters_set_json(s->config.summary, "host", json));
  if (s->config.echo_level > 0)
    printf("openmp_edge_based: %d threads, %lld directed edges, %.1f MB of edge data\n", threads,
           (long long)s->edges.n_edges, ef_edge_data_bytes(&s->edges) / 1e6);
  return EF_SUCCESS;
}

static int ef_openmp_compute_time_step(void *data, double *dt) {
  ef_openmp_strategy *s = data;
  double stable;
  int reduced = 0;
  if (s->fs_mpi) /* MPI */
    EF_CALL(ef_fs_mpi_compute_dt(s->fs_mpi, s->velocity_var->values, &s->dt_settings, dt, &stable, &reduced));
  else
    EF_CALL(ef_fs_compute_dt(s->fs, s->velocity_var->values, &s->dt_settings, dt, &stable, &reduced));
  s->dt_settings.dt_previous = *dt; /* the implicit option's growth limit (the automatic step, unclipped) */
  (void)stable;
  (void)reduced; /* the analysis warns once, with what it does about it */
  return EF_SUCCESS;
}

/* The user's fixed time_step (0: automatic), which the analysis keeps as the unit of step counts. */
static int ef_openmp_fixed_time_step(void *data, double *dt) {
  const ef_openmp_strategy *s = data;
  *dt = s->dt_settings.fixed ? s->dt_settings.dt_fixed : 0.0;
  return EF_SUCCESS;
}

static int ef_openmp_solve_step(void *data, double t, double dt, ef_step_info *info) {
  ef_openmp_strategy *s = data;
  ef_model_part mp = s->mp;
  /* Processes and Python change values and fixity on the host: refresh. */
  EF_CALL(ef_bc_arrays_gather(&s->bc, mp));
  ef_model_part_take_modified(mp, "VELOCITY"); /* the executor works on VELOCITY's array itself */
  ef_openmp_load_pressure(s, !ef_model_part_take_modified(mp, "PRESSURE"));

  double bound = ef_divergence_bound_update(&s->divergence, mp, 0);
  if (s->fs_mpi) EF_CALL(ef_openmp_bound_mpi(s, &bound)); /* MPI */
  if (bound != s->settings.velocity_bound) {
    s->settings.velocity_bound = bound;
    EF_CALL(ef_fs_set_settings(s->fs, &s->settings));
    if (s->fs_mpi) EF_CALL(ef_fs_mpi_set_settings(s->fs_mpi, &s->settings)); /* MPI */
  }
  ef_fs_stats stats;
  memset(&stats, 0, sizeof stats);
  memcpy(s->pressure_prev, s->pressure, (size_t)mp->n_nodes * sizeof *s->pressure);
  int err = s->fs_mpi /* MPI */
                ? ef_fs_mpi_step(s->fs_mpi, t, dt, s->velocity_var->values, s->pressure, s->reaction, &stats)
                : ef_fs_step(s->fs, t, dt, s->velocity_var->values, s->pressure, s->reaction, &stats);
  if (err) return ef_divergence_bound_explain(ef_strategy_explain_node_error(err, mp), &s->divergence);
  s->last_dt = dt;
  s->last_iterations = stats.cg_iterations;
  s->last_residual = stats.cg_residual;

  /* Physical pressure; reactions as Kratos' REACTION: the force the wall exerts on the fluid. */
  double rho = s->config.density;
  for (int64_t i = 0; i < mp->n_nodes; i++) s->pressure_var->values[i] = rho * s->pressure[i];
  for (int64_t i = 0; i < 3 * mp->n_nodes; i++) s->reaction_var->values[i] = -rho * s->reaction[i];

  ef_log_event_add(s->ev_prepare, stats.seconds_prepare);
  ef_log_event_add(s->ev_momentum, stats.seconds_momentum);
  if (s->settings.viscous_implicit) {
    ef_log_event_add(s->ev_viscous, stats.seconds_viscous);
    s->viscous_iterations += stats.viscous_iterations;
    if (stats.viscous_max_stage_iterations > s->viscous_max_stage_iterations)
      s->viscous_max_stage_iterations = stats.viscous_max_stage_iterations;
    if (stats.viscous_residual > s->viscous_max_residual) s->viscous_max_residual = stats.viscous_residual;
    s->projection_iterations += stats.projection_iterations;
  }
  ef_log_event_add_bytes(s->ev_momentum, ef_fs_momentum_bytes(s->fs));
  ef_log_event_add(s->ev_assembly, stats.seconds_assembly);
  ef_log_event_add(s->ev_solve, stats.seconds_solve);
  ef_log_event_add(s->ev_correction, stats.seconds_correction);
  info->pressure_iterations = stats.cg_iterations;
  info->pressure_residual = stats.cg_residual;
  info->seconds_momentum = stats.seconds_prepare + stats.seconds_momentum;
  info->seconds_pressure = stats.seconds_assembly + stats.seconds_solve;
  info->seconds_correction = stats.seconds_correction;
  s->steps++;
  s->iterations += stats.cg_iterations;
  return EF_SUCCESS;
}

/* The last pressure system H p = f (kinematic pressure) as solved, plus H before the
 * fixed pressures were eliminated: each row recomputed with the executor's own row
 * function (edge_physics.h) with the fixity ignored, from the step's tau and dt/2. */
static int ef_openmp_copy_pressure_system(void *data, ef_pressure_system *out) {
  ef_openmp_strategy *s = data;
  memset(out, 0, sizeof *out);
  EF_CHECK(s->fs && s->steps > 0, EF_ERR_INTERNAL, "openmp_edge_based: no pressure system solved yet");
  EF_CHECK(!s->fs_mpi, EF_ERR_UNSUPPORTED, "openmp_edge_based: the pressure system of several ranks cannot be copied yet (MPI)");
  const ef_csr *H = ef_fs_pressure_matrix(s->fs);
  const ef_edge_data *ed = &s->edges;
  const int64_t n = H->n, nnz = H->nnz;
  int err = EF_SUCCESS;
  double *zero = NULL;
  EF_CALL(ef_pressure_system_alloc(n, nnz, out));
  zero = calloc((size_t)(3 * n), sizeof *zero); /* uh, p_n, xp: only f reads them, and f is dropped */
  EF_CHECK_GOTO(zero, EF_ERR_MEMORY, fail, "out of memory copying the pressure system (%lld rows)", (long long)n);
  memcpy(out->row_ptr, H->row_ptr, (size_t)(n + 1) * sizeof *out->row_ptr);
  memcpy(out->col, H->col, (size_t)nnz * sizeof *out->col);
  memcpy(out->values, H->val, (size_t)nnz * sizeof *out->values);
  memcpy(out->rhs, ef_fs_pressure_rhs(s->fs), (size_t)n * sizeof *out->rhs);
  memcpy(out->solution, s->pressure, (size_t)n * sizeof *out->solution);
  memcpy(out->fixed, s->bc.pressure_fixed, (size_t)n);
  /* The warm start was p_n with the fixed values of t + dt, which are the rhs of the identity rows. */
  for (int64_t i = 0; i < n; ++i) out->initial_guess[i] = out->fixed[i] ? out->rhs[i] : s->pressure_prev[i];
  const double *tau = ef_fs_tau(s->fs), cc = 0.5 * s->last_dt;
  for (int64_t i = 0; i < n; ++i) {
    const int ne = (int)(ed->row_ptr[i + 1] - ed->row_ptr[i]);
    const int32_t *ci = ed->col + ed->row_ptr[i];
    const double *ei = ed->values + ed->row_ptr[i] * ed->stride;
    if (ed->dim == 3)
      (void)ef_row_pressure_system(3, i, ne, ci, ei, tau, cc, zero, zero, zero, zero, NULL, 0,
                                   out->values_full + H->row_ptr[i]);
    else
      (void)ef_row_pressure_system(2, i, ne, ci, ei, tau, cc, zero, zero, zero, zero, NULL, 0,
                                   out->values_full + H->row_ptr[i]);
  }
  out->tolerance = ef_linear_solver_settings(s->solver)->tolerance;
  out->iterations = s->last_iterations;
  out->relative_residual = s->last_residual;
  free(zero);
  return EF_SUCCESS;
fail:
  free(zero);
  ef_pressure_system_free(out);
  return err;
}

static int ef_openmp_finalize(void *data) {
  ef_openmp_strategy *s = data;
  if (s->export_pressure_system && s->export_pressure_system[0] && s->fs && s->steps > 0) {
    const ef_csr *H = ef_fs_pressure_matrix(s->fs);
    ef_csr_matrix A = {H->n, H->nnz, H->row_ptr, H->col, H->val};
    EF_CALL(ef_linear_system_write(s->export_pressure_system, &A, ef_fs_pressure_rhs(s->fs), s->pressure));
  }
  double total_cg = ef_log_event_seconds(s->ev_solve);
  char json[512];
  snprintf(json, sizeof json,
           "{\"steps\": %ld, \"cg_iterations\": %ld, \"cg_seconds\": %.6f, \"cg_us_per_iteration\": %.6g}",
           s->steps, s->iterations, total_cg, s->iterations ? 1e6 * total_cg / (double)s->iterations : 0.0);
  EF_CALL(ef_parameters_set_json(s->config.summary, "pressure_solver", json));
  if (s->fs_mpi) EF_CALL(ef_fluid_summary_mpi(&s->config, ef_fs_mpi_exchange_seconds(s->fs_mpi))); /* MPI */
  if (s->solver) { /* the solver's own report (e.g. the AMG hierarchy: levels, set-up seconds) */
    ef_parameters ps, view;
    EF_CALL(ef_parameters_get(s->config.summary, "pressure_solver", &ps));
    EF_CALL(ef_parameters_set_json(ps, "view", "{}"));
    EF_CALL(ef_parameters_get(ps, "view", &view));
    EF_CALL(ef_linear_solver_view(s->solver, view));
  }
  if (s->settings.viscous_implicit) {
    double tv = ef_log_event_seconds(s->ev_viscous);
    char projection[64] = ""; /* the projection "converged": its PCG iterations */
    if (s->settings.viscous_projection)
      snprintf(projection, sizeof projection, ", \"projection_iterations\": %ld", s->projection_iterations);
    snprintf(json, sizeof json,
             "{\"scheme\": \"IMEX ARS(3,4,3)\", \"stage_solves\": %ld, \"cg_iterations\": %ld, "
             "\"max_stage_iterations\": %d, \"max_scaled_residual\": %.3e, \"tolerance\": %.3e, "
             "\"cg_seconds\": %.6f%s}",
             3 * s->steps, s->viscous_iterations, s->viscous_max_stage_iterations, s->viscous_max_residual,
             s->settings.viscous_rtol, tv, projection);
    EF_CALL(ef_parameters_set_json(s->config.summary, "viscous_solver", json));
  }
  return EF_SUCCESS;
}

/* Restarts: the unrounded kinematic pressure (the model part holds rho p), the warm start of the
 * last system, the counters; the linear solver's own state in its section. */
static int ef_openmp_save_state(void *data, ef_restart_writer *w) {
  ef_openmp_strategy *s = data;
  EF_CALL(ef_fluid_save_state(w, s->mp->n_nodes, s->pressure, s->last_dt, s->steps, s->iterations));
  EF_CALL(ef_restart_write_doubles(w, "pressure_previous", s->pressure_prev, s->mp->n_nodes));
  EF_CALL(ef_restart_write_double(w, "velocity_scale", s->divergence.scale));
  EF_CALL(ef_restart_write_double(w, "dt_previous", s->dt_settings.dt_previous));
  ef_fs_pressure_history h = {0};
  if (s->fs) EF_CALL(ef_fs_get_pressure_history(s->fs, &h));
  EF_CALL(ef_fluid_save_pressure_history(w, s->mp->n_nodes, &h));
  EF_CALL(ef_restart_writer_section(w, "linear_solver"));
  return ef_linear_solver_save_state(s->solver, w);
}

static int ef_openmp_load_state(void *data, ef_restart_reader *r, int same_kind) {
  ef_openmp_strategy *s = data;
  EF_CALL(ef_fluid_load_state(r, s->mp->n_nodes, s->pressure, &s->last_dt, &s->steps, &s->iterations));
  if (ef_restart_count(r, "velocity_scale") == 1) EF_CALL(ef_restart_read_double(r, "velocity_scale", &s->divergence.scale));
  if (ef_restart_count(r, "dt_previous") == 1) EF_CALL(ef_restart_read_double(r, "dt_previous", &s->dt_settings.dt_previous));
  if (ef_restart_count(r, "pressure_previous") == s->mp->n_nodes)
    EF_CALL(ef_restart_read_doubles(r, "pressure_previous", s->pressure_prev, s->mp->n_nodes));
  if (s->fs && s->settings.pressure_guess) { /* the guess's history (a file without it: the first step starts from p_n) */
    const int64_t n = s->mp->n_nodes;
    double *hist = malloc(3 * (size_t)(n > 0 ? n : 1) * sizeof *hist);
    EF_CHECK(hist, EF_ERR_MEMORY, "openmp_edge_based: out of memory reading the pressure guess's history");
    ef_fs_pressure_history h;
    int err = ef_fluid_load_pressure_history(r, n, hist, hist + n, hist + 2 * n, &h);
    if (!err) err = ef_fs_set_pressure_history(s->fs, &h);
    free(hist);
    EF_CALL(err);
  }
  /* The executor reads VELOCITY's array itself; the pressure is the one just read, not rho p / rho. */
  ef_model_part_take_modified(s->mp, "VELOCITY");
  ef_model_part_take_modified(s->mp, "PRESSURE");
  if (same_kind && ef_restart_reader_section(r, "linear_solver")) EF_CALL(ef_linear_solver_load_state(s->solver, r));
  return EF_SUCCESS;
}

static const char *ef_openmp_where(void *data) {
  (void)data;
  return "host";
}

static const ef_strategy_ops ef_openmp_ops = {
    .name = "openmp_edge_based",
    .distributed = 1, /* MPI: RK4 or the IMEX stages with cg + jacobi or a registry solver across ranks on a rank's
                         piece (fractional_step_mpi.h) */
    .description = "edge-based fractional step on the host (OpenMP)",
    .settings_defaults = ef_fluid_settings_defaults,
    .ignored_settings = ef_fluid_kratos_keys,
    .steady_state_variable = "VELOCITY",
    .add_variables = ef_fluid_add_variables,
    .prepare = ef_fluid_prepare,
    .create = ef_openmp_create,
    .initialize = ef_openmp_initialize,
    .compute_time_step = ef_openmp_compute_time_step,
    .fixed_time_step = ef_openmp_fixed_time_step,
    .solve_step = ef_openmp_solve_step,
    .copy_pressure_system = ef_openmp_copy_pressure_system,
    .finalize = ef_openmp_finalize,
    .destroy = ef_openmp_destroy,
    .save_state = ef_openmp_save_state,
    .load_state = ef_openmp_load_state,
    .where = ef_openmp_where,
};

int ef_register_openmp_strategy(void) { return ef_registry_add_strategy(&ef_openmp_ops); }
