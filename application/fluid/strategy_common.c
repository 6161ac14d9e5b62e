/* strategy_common.c -- settings and boundary arrays shared by the strategies. */
#include "strategy_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge_physics.h"
#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_error.h"

int ef_bc_arrays_create(int64_t n, ef_bc_arrays *bc) {
  memset(bc, 0, sizeof *bc);
  bc->n = n;
  EF_CALLOC(bc->velocity_fixed, 3 * n);
  EF_CALLOC(bc->pressure_fixed, n);
  EF_CALLOC(bc->slip_type, n);
  EF_CALLOC(bc->slip_normal, 3 * n);
  EF_CALLOC(bc->slip_tangent, 3 * n);
  EF_CALLOC(bc->body_force, 3 * n);
  return EF_SUCCESS;
}

void ef_bc_arrays_free(ef_bc_arrays *bc) {
  if (!bc) return;
  free(bc->velocity_fixed);
  free(bc->pressure_fixed);
  free(bc->slip_type);
  free(bc->slip_normal);
  free(bc->slip_tangent);
  free(bc->body_force);
  memset(bc, 0, sizeof *bc);
}

int ef_bc_arrays_gather(ef_bc_arrays *bc, ef_model_part mp) {
  ef_variable *vel, *p, *slip, *normal, *tangent, *bf;
  EF_CALL(ef_model_part_get_variable(mp, "VELOCITY", &vel));
  EF_CALL(ef_model_part_get_variable(mp, "PRESSURE", &p));
  EF_CALL(ef_model_part_get_variable(mp, "IS_SLIP", &slip));
  EF_CALL(ef_model_part_get_variable(mp, "NORMAL", &normal));
  EF_CALL(ef_model_part_get_variable(mp, "SLIP_TANGENT", &tangent));
  EF_CALL(ef_model_part_get_variable(mp, "BODY_FORCE", &bf));
  EF_CHECK(mp->n_nodes == bc->n, EF_ERR_INTERNAL, "the mesh changed size under the strategy");
  int64_t n = bc->n, n_fixed_p = 0;
  memcpy(bc->velocity_fixed, vel->fixed, (size_t)(3 * n));
  memcpy(bc->pressure_fixed, p->fixed, (size_t)n);
  memcpy(bc->slip_normal, normal->values, sizeof(double) * (size_t)(3 * n));
  memcpy(bc->slip_tangent, tangent->values, sizeof(double) * (size_t)(3 * n));
  memcpy(bc->body_force, bf->values, sizeof(double) * (size_t)(3 * n));
  for (int64_t i = 0; i < n; i++) {
    double s = slip->values[i];
    bc->slip_type[i] = s >= 2.5 ? EF_SLIP_CORNER : s >= 1.5 ? EF_SLIP_EDGE : s >= 0.5 ? EF_SLIP_FACE : EF_SLIP_NONE;
    n_fixed_p += bc->pressure_fixed[i] != 0;
  }
  bc->n_fixed_pressure = n_fixed_p;
  return EF_SUCCESS;
}

int ef_strategy_read_settings(const ef_strategy_config *config, ef_fs_settings *fs, ef_fs_dt_settings *dt) {
  ef_parameters ts, stab;
  ef_fs_settings_default(fs);
  fs->nu = config->kinematic_viscosity;
  fs->fixed_pressure_scale = 1.0 / config->density;
  EF_CALL(ef_parameters_get(config->settings, "stabilization", &stab));
  EF_CALL(ef_parameters_get_double(stab, "tau_c1", &fs->tau_c1));
  EF_CALL(ef_parameters_get_double(stab, "tau_c2", &fs->tau_c2));
  EF_CALL(ef_parameters_get_double(stab, "tau_c3", &fs->tau_c3));
  EF_CALL(ef_parameters_get_bool(stab, "use_oss", &fs->stabilization));
  EF_CALL(ef_parameters_get_double(config->settings, "divergence_velocity_bound", &fs->velocity_bound));
  EF_CHECK(fs->tau_c1 >= 0 && fs->tau_c2 >= 0 && fs->tau_c3 >= 0, EF_ERR_PARAMETER,
           "solver_settings.stabilization: tau constants must be >= 0");
  EF_CHECK(fs->velocity_bound > 0, EF_ERR_PARAMETER, "solver_settings.divergence_velocity_bound must be > 0");
  /* The viscous term in time (docs/implicit_viscosity.md). */
  const char *vti;
  ef_parameters iv;
  EF_CALL(ef_parameters_get_string(config->settings, "viscous_time_integration", &vti));
  EF_CHECK(!strcmp(vti, "explicit") || !strcmp(vti, "implicit"), EF_ERR_PARAMETER,
           "solver_settings.viscous_time_integration must be \"explicit\" or \"implicit\", got \"%s\"", vti);
  fs->viscous_implicit = !strcmp(vti, "implicit");
  EF_CALL(ef_parameters_get(config->settings, "implicit_viscosity", &iv));
  EF_CALL(ef_parameters_get_double(iv, "tolerance", &fs->viscous_rtol));
  long max_it = 0;
  EF_CALL(ef_parameters_get_int(iv, "max_iteration", &max_it));
  EF_CHECK(max_it > 0 && max_it <= 1000000000L, EF_ERR_PARAMETER,
           "solver_settings.implicit_viscosity.max_iteration must be in [1, 1e9], got %ld", max_it);
  fs->viscous_max_iterations = (int)max_it;
  EF_CALL(ef_parameters_get_double(iv, "maximum_viscous_number", &fs->viscous_number_max));
  if (ef_parameters_has(iv, "maximum_time_step_growth")) /* optional, as correction */
    EF_CALL(ef_parameters_get_double(iv, "maximum_time_step_growth", &fs->viscous_dt_growth));
  EF_CHECK(fs->viscous_dt_growth == 0.0 || fs->viscous_dt_growth >= 1.0, EF_ERR_PARAMETER,
           "solver_settings.implicit_viscosity.maximum_time_step_growth must be 0 (no limit) or >= 1, got %g",
           fs->viscous_dt_growth);
  const char *corr = "lumped"; /* optional: settings built without the defaults (tests) lack it */
  if (ef_parameters_has(iv, "correction")) EF_CALL(ef_parameters_get_string(iv, "correction", &corr));
  EF_CHECK(!strcmp(corr, "lumped") || !strcmp(corr, "viscous") || !strcmp(corr, "viscous_unfiltered") ||
               !strcmp(corr, "rotational"),
           EF_ERR_PARAMETER,
           "solver_settings.implicit_viscosity.correction must be \"lumped\", \"viscous\", "
           "\"viscous_unfiltered\" or \"rotational\", got \"%s\"",
           corr);
  fs->viscous_correction =
      !strcmp(corr, "lumped") ? 0 : !strcmp(corr, "viscous") ? 1 : !strcmp(corr, "viscous_unfiltered") ? 2 : 3;
  const char *pres = "frozen"; /* optional, as correction */
  if (ef_parameters_has(iv, "pressure")) EF_CALL(ef_parameters_get_string(iv, "pressure", &pres));
  EF_CHECK(!strcmp(pres, "frozen") || !strcmp(pres, "extrapolated"), EF_ERR_PARAMETER,
           "solver_settings.implicit_viscosity.pressure must be \"frozen\" or \"extrapolated\", got \"%s\"", pres);
  fs->viscous_pressure = !strcmp(pres, "extrapolated");
  const char *proj = "single"; /* optional, as correction */
  if (ef_parameters_has(iv, "projection")) EF_CALL(ef_parameters_get_string(iv, "projection", &proj));
  EF_CHECK(!strcmp(proj, "single") || !strcmp(proj, "converged"), EF_ERR_PARAMETER,
           "solver_settings.implicit_viscosity.projection must be \"single\" or \"converged\", got \"%s\"", proj);
  fs->viscous_projection = !strcmp(proj, "converged");
  const char *tdt = "explicit_limit"; /* optional, as correction (TAU_TIME_STEP) */
  if (ef_parameters_has(iv, "tau_time_step")) EF_CALL(ef_parameters_get_string(iv, "tau_time_step", &tdt));
  EF_CHECK(!strcmp(tdt, "explicit_limit") || !strcmp(tdt, "step"), EF_ERR_PARAMETER,
           "solver_settings.implicit_viscosity.tau_time_step must be \"explicit_limit\" or \"step\", got \"%s\"", tdt);
  fs->tau_time_step = !strcmp(tdt, "step");
  EF_CHECK(!fs->viscous_projection || !fs->viscous_correction, EF_ERR_PARAMETER,
           "solver_settings.implicit_viscosity.projection \"converged\" needs correction \"lumped\", got \"%s\"", corr);
  EF_CHECK(fs->viscous_rtol > 0 && fs->viscous_rtol < 1 && fs->viscous_max_iterations > 0, EF_ERR_PARAMETER,
           "solver_settings.implicit_viscosity: need 0 < tolerance < 1 and max_iteration > 0");
  EF_CHECK(fs->viscous_number_max >= 0, EF_ERR_PARAMETER,
           "solver_settings.implicit_viscosity.maximum_viscous_number must be >= 0 (0: no cap)");

  /* The pressure solve's initial guess (issue 12; optional: settings built without the defaults lack it). */
  const char *pig = "auto";
  if (ef_parameters_has(config->settings, "pressure_initial_guess"))
    EF_CALL(ef_parameters_get_string(config->settings, "pressure_initial_guess", &pig));
  EF_CHECK(!strcmp(pig, "auto") || !strcmp(pig, "previous") || !strcmp(pig, "linear") || !strcmp(pig, "quadratic"),
           EF_ERR_PARAMETER,
           "%s: solver_settings.pressure_initial_guess must be \"auto\", \"previous\" (p_n), \"linear\" or "
           "\"quadratic\" (extrapolated from the previous steps; docs/parameters.md), got \"%s\"",
           ef_parameters_origin(config->settings), pig);
  /* "auto": "quadratic" on one process; the distributed steps start from p_n ("previous"). */
  if (!strcmp(pig, "auto")) pig = config->partition ? "previous" : "quadratic";
  fs->pressure_guess = !strcmp(pig, "linear") ? 1 : !strcmp(pig, "quadratic") ? 2 : 0;

  int automatic;
  memset(dt, 0, sizeof *dt);
  EF_CALL(ef_parameters_get(config->settings, "time_stepping", &ts));
  EF_CALL(ef_parameters_get_bool(ts, "automatic_time_step", &automatic));
  ef_parameters cfl;
  EF_CALL(ef_parameters_get(ts, "CFL_number", &cfl));
  if (ef_parameters_type(cfl) == EF_JSON_NULL) /* not given: the scheme's own (fractional_step.h) */
    dt->cfl = fs->viscous_implicit ? EF_FS_CFL_IMPLICIT : EF_FS_CFL_EXPLICIT;
  else
    EF_CALL(ef_parameters_get_double(ts, "CFL_number", &dt->cfl));
  EF_CALL(ef_parameters_get_double(ts, "time_step", &dt->dt_fixed));
  EF_CALL(ef_parameters_get_double(ts, "minimum_delta_time", &dt->dt_min));
  EF_CALL(ef_parameters_get_double(ts, "maximum_delta_time", &dt->dt_max));
  dt->fixed = !automatic;
  EF_CHECK(automatic || dt->dt_fixed > 0, EF_ERR_PARAMETER,
           "solver_settings.time_stepping.time_step must be > 0 when automatic_time_step is false");
  EF_CHECK(dt->cfl > 0, EF_ERR_PARAMETER, "solver_settings.time_stepping.CFL_number must be > 0");
  EF_CHECK(dt->dt_min > 0 && dt->dt_max >= dt->dt_min, EF_ERR_PARAMETER,
           "solver_settings.time_stepping: need 0 < minimum_delta_time <= maximum_delta_time");
  return EF_SUCCESS;
}

int ef_strategy_explain_node_error(int err, ef_model_part mp) {
  const char *at = strstr(ef_error_message(), "at node ");
  long long node;
  if (!at || sscanf(at, "at node %lld", &node) != 1 || node < 0 || node >= mp->n_nodes) return err;
  return ef_error_push(err, __FILE__, __LINE__, "node %lld is mesh node id %lld at (%g, %g, %g)", node,
                       (long long)mp->node_ids[node], mp->coords[3 * node], mp->coords[3 * node + 1],
                       mp->coords[3 * node + 2]);
}

/* Records shared by the fluid strategies' restart state. */
int ef_fluid_save_state(ef_restart_writer *w, int64_t n, const double *kinematic_pressure, double last_dt, long steps,
                        long iterations) {
  EF_CALL(ef_restart_write_doubles(w, "kinematic_pressure", kinematic_pressure, n));
  EF_CALL(ef_restart_write_double(w, "last_dt", last_dt));
  const int64_t counters[2] = {steps, iterations};
  return ef_restart_write_int64s(w, "counters", counters, 2);
}

int ef_fluid_load_state(ef_restart_reader *r, int64_t n, double *kinematic_pressure, double *last_dt, long *steps,
                        long *iterations) {
  int64_t counters[2];
  EF_CALL(ef_restart_read_doubles(r, "kinematic_pressure", kinematic_pressure, n));
  EF_CALL(ef_restart_read_double(r, "last_dt", last_dt));
  EF_CALL(ef_restart_read_int64s(r, "counters", counters, 2));
  *steps = (long)counters[0];
  *iterations = (long)counters[1];
  return EF_SUCCESS;
}

int ef_fluid_save_pressure_history(ef_restart_writer *w, int64_t n, const ef_fs_pressure_history *h) {
  if (!h || h->levels <= 0) return EF_SUCCESS;
  const int64_t levels = h->levels;
  EF_CALL(ef_restart_write_int64s(w, "pressure_guess_levels", &levels, 1));
  EF_CALL(ef_restart_write_doubles(w, "pressure_guess_dt", h->dt, 2));
  EF_CALL(ef_restart_write_doubles(w, "pressure_guess_previous", h->prev, n));
  if (levels == 2) EF_CALL(ef_restart_write_doubles(w, "pressure_guess_previous2", h->prev2, n));
  return ef_restart_write_doubles(w, "pressure_guess_last", h->last, n);
}

int ef_fluid_load_pressure_history(ef_restart_reader *r, int64_t n, double *prev, double *prev2, double *last,
                                   ef_fs_pressure_history *h) {
  memset(h, 0, sizeof *h);
  if (ef_restart_count(r, "pressure_guess_levels") != 1) return EF_SUCCESS;
  int64_t levels = 0;
  EF_CALL(ef_restart_read_int64s(r, "pressure_guess_levels", &levels, 1));
  EF_CHECK(levels == 1 || levels == 2, EF_ERR_PARSE, "restart file %s: pressure_guess_levels must be 1 or 2, got %lld",
           ef_restart_reader_path(r), (long long)levels);
  EF_CALL(ef_restart_read_doubles(r, "pressure_guess_dt", h->dt, 2));
  EF_CALL(ef_restart_read_doubles(r, "pressure_guess_previous", prev, n));
  if (levels == 2) EF_CALL(ef_restart_read_doubles(r, "pressure_guess_previous2", prev2, n));
  EF_CALL(ef_restart_read_doubles(r, "pressure_guess_last", last, n));
  h->levels = (int)levels;
  h->prev = prev;
  h->prev2 = prev2;
  h->last = last;
  return EF_SUCCESS;
}

/* solver_settings.divergence_velocity_bound and divergence_velocity_factor. */
int ef_divergence_bound_read(const ef_strategy_config *config, ef_divergence_bound *d) {
  memset(d, 0, sizeof *d);
  EF_CALL(ef_parameters_get_double(config->settings, "divergence_velocity_bound", &d->absolute));
  d->factor = 100.0; /* the default of ef_fluid_settings_defaults, for settings built by hand */
  if (ef_parameters_has(config->settings, "divergence_velocity_factor"))
    EF_CALL(ef_parameters_get_double(config->settings, "divergence_velocity_factor", &d->factor));
  EF_CHECK(d->factor >= 0 && isfinite(d->factor), EF_ERR_PARAMETER,
           "solver_settings.divergence_velocity_factor must be >= 0 (0: divergence_velocity_bound alone), got %g",
           d->factor);
  return EF_SUCCESS;
}

double ef_divergence_bound_update(ef_divergence_bound *d, ef_model_part mp, int all) {
  ef_variable *u = ef_model_part_find_variable(mp, "VELOCITY");
  if (u && u->n_components == 3) {
    double m2 = d->scale * d->scale;
    for (int64_t i = 0; i < mp->n_nodes; i++) {
      const double *v = u->values + 3 * i;
      const uint8_t *f = u->fixed + 3 * i;
      if (!all && !(f[0] || f[1] || f[2])) continue;
      const double s2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
      if (s2 > m2 && isfinite(s2)) m2 = s2;
    }
    d->scale = sqrt(m2);
  }
  const double relative = d->factor * d->scale;
  return relative > 0.0 && relative < d->absolute ? relative : d->absolute;
}

int ef_divergence_bound_explain(int err, const ef_divergence_bound *d) {
  if (err != EF_ERR_DIVERGED) return err;
  const double relative = d->factor * d->scale;
  if (relative > 0.0 && relative < d->absolute)
    return ef_error_push(err, __FILE__, __LINE__,
                         "the velocity bound is solver_settings.divergence_velocity_factor %g x the case's velocity "
                         "scale %g (the largest initial or prescribed velocity)",
                         d->factor, d->scale);
  return ef_error_push(err, __FILE__, __LINE__, "the velocity bound is solver_settings.divergence_velocity_bound %g",
                       d->absolute);
}

int ef_fluid_summary_mpi(const ef_strategy_config *config, double exchange_seconds) {
  const int size = ef_comm_size(config->comm), rank = ef_comm_rank(config->comm);
  double *t = calloc((size_t)size, sizeof *t);
  EF_CHECK(t, EF_ERR_MEMORY, "out of memory");
  t[rank] = exchange_seconds;
  int err = ef_comm_allreduce(config->comm, t, size, EF_COMM_SUM);
  size_t cap = 64 + 24 * (size_t)size, used = 0;
  char *json = err ? NULL : malloc(cap);
  if (!err && !json) err = EF_ERROR(EF_ERR_MEMORY, "out of memory");
  if (!err) {
    used += (size_t)snprintf(json, cap, "{\"ranks\": %d, \"exchange_seconds\": [", size);
    for (int r = 0; r < size; ++r) used += (size_t)snprintf(json + used, cap - used, "%s%.6f", r ? ", " : "", t[r]);
    snprintf(json + used, cap - used, "]}");
    err = ef_parameters_set_json(config->summary, "mpi", json);
  }
  free(json);
  free(t);
  return err;
}
