/* process_forces.c -- compute_forces_process: the force the fluid exerts on a wall.
 *
 * The reaction method.  The strategies write REACTION at every node with a fixed
 * velocity component: the force the wall exerts on the fluid there, taken from the
 * discrete momentum residual of the step (the RK-weighted residual minus the inertia of
 * the prescribed motion, custom_utilities/fractional_step.h).  The force of the fluid on
 * the wall is then F = -sum_{I in part} REACTION_I.  Because it is the residual of the
 * very equations that were solved, it is consistent with the discrete momentum balance
 * and converges faster than integrating P1 surface stresses, whose velocity gradients are
 * one order less accurate than the velocities (see docs/processes.md).
 *
 * The CSV is written row by row so that a crash never leaves a truncated row (ef_csv_file,
 * ef_process_tools.h): the file always ends with a complete row and survives a crash of
 * the program or of the machine up to the last synced step.  The sync costs one disk
 * round trip per row (1-40 ms measured on a shared virtual disk), so "sync_each_row" is
 * false by default: the single write per row (a crash of the program still never
 * truncates or loses a row: the kernel has it) and one sync when the file is closed;
 * true adds the per-row sync against a crash of the machine.
 */
#include "edgeflow/ef_process_tools.h"
#include "edgeflow/ef_registry.h"
#include "fluid_application.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * compute_forces_process */

static const char ef_forces_defaults[] =
    "{\"model_part_name\": \"\", \"output_file_name\": \"\", \"output_path\": \"\","
    " \"write_output_file\": true, \"print_to_screen\": false, \"sync_each_row\": false,"
    " \"output_control_type\": \"step\", \"output_interval\": 1.0, \"interval\": [0.0, \"End\"],"
    " \"reference_velocity\": 0.0, \"reference_area\": 0.0, \"reference_density\": 0.0,"
    " \"drag_direction\": [1.0, 0.0, 0.0], \"lift_direction\": [0.0, 1.0, 0.0]}";

/* Kratos' ComputeBodyFittedDragProcess defaults (plus the GUI's block keys). */
static const char ef_kratos_drag_defaults[] =
    "{\"model_part_name\": \"\", \"interval\": [0.0, 1e30], \"print_drag_to_screen\": false,"
    " \"print_format\": \".8f\", \"write_drag_output_file\": true, \"output_file_settings\": {}, "
    EF_KRATOS_BLOCK_KEYS "}";

typedef struct {
  ef_model_part mp;
  ef_sub_model_part *smp;
  char label[EF_PROCESS_LABEL_MAX];
  char file_name[1024];
  char output_path[1024];
  int write_file, print_screen, sync_each_row;
  ef_output_control control;
  const long *solver_step; /* the solver's step count, for "solver_step" schedules */
  double output_interval, next_output;
  ef_interval interval;
  int coefficients;         /* reference velocity and area given */
  double q_ref;             /* 0.5 rho U^2 A */
  double drag[3], lift[3], side[3];
  ef_csv_file csv;
  ef_comm comm; /* MPI: the force is summed over the owned nodes of every rank, once; rank 0 writes */
} ef_forces;

/* Unit vector of v, or an error naming key when |v| = 0. */
static int ef_forces_unit(const char *label, const char *key, double *v) {
  double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  EF_CHECK(n > 0 && isfinite(n), EF_ERR_PARAMETER, "%s: %s = [%g, %g, %g] is not a direction", label, key, v[0],
           v[1], v[2]);
  for (int d = 0; d < 3; d++) v[d] /= n;
  return EF_SUCCESS;
}

/* The settings common to both names, after their own keys have been read. */
static int ef_forces_finish(ef_forces *f, const ef_process_context *ctx) {
  if (!f->file_name[0]) snprintf(f->file_name, sizeof f->file_name, "%s_forces.csv", f->smp ? f->smp->name : f->mp->name);
  char header[256];
  snprintf(header, sizeof header, "time,Fx,Fy,Fz%s\n",
           !f->coefficients ? "" : (f->mp->dim == 3 ? ",Cd,Cl,Cs" : ",Cd,Cl"));
  f->next_output = 1.0; /* no reaction exists before the first step */
  f->solver_step = ctx->solver_step;
  f->comm = ctx->comm;
  if (ef_comm_rank(f->comm) != 0) f->write_file = f->print_screen = 0; /* MPI: rank 0 writes the sum */
  if (f->write_file) {
    int err = ef_csv_open_run(ctx, f->output_path, f->file_name, header, f->sync_each_row, &f->csv);
    if (err) return ef_error_push(err, __FILE__, __LINE__, "%s", f->label);
  }
  return EF_SUCCESS;
}

static void ef_forces_free(ef_forces *f) {
  if (!f) return;
  ef_csv_close(&f->csv);
  free(f);
}

/* Create from our own keys: reference values give C = F.e / (0.5 rho U^2 A). */
static int ef_forces_create(const ef_process_context *ctx, ef_parameters p, void **data) {
  *data = NULL;
  EF_CHECK(ctx && ctx->model_part, EF_ERR_PARAMETER, "compute_forces_process: no model part in the process context");
  EF_CALL(ef_process_validate(p, ef_forces_defaults, NULL, 0));
  ef_forces *f = calloc(1, sizeof *f);
  EF_CHECK(f, EF_ERR_MEMORY, "out of memory");
  f->csv.fd = -1;
  f->mp = ctx->model_part;
  ef_process_label(f->label, sizeof f->label, "compute_forces_process", p);
  int err;
  const char *text, *control;
  EF_CALL_GOTO(ef_process_resolve_part(f->mp, p, "model_part_name", &f->smp, NULL), fail);
  EF_CALL_GOTO(ef_parameters_get_string(p, "output_file_name", &text), fail);
  snprintf(f->file_name, sizeof f->file_name, "%s", text);
  EF_CALL_GOTO(ef_parameters_get_string(p, "output_path", &text), fail);
  snprintf(f->output_path, sizeof f->output_path, "%s", text);
  EF_CALL_GOTO(ef_parameters_get_bool(p, "write_output_file", &f->write_file), fail);
  EF_CALL_GOTO(ef_parameters_get_bool(p, "print_to_screen", &f->print_screen), fail);
  EF_CALL_GOTO(ef_parameters_get_bool(p, "sync_each_row", &f->sync_each_row), fail);
  EF_CALL_GOTO(ef_parameters_get_string(p, "output_control_type", &control), fail);
  EF_CALL_GOTO(ef_output_control_parse(f->label, control, &f->control), fail);
  EF_CALL_GOTO(ef_parameters_get_double(p, "output_interval", &f->output_interval), fail);
  EF_CHECK_GOTO(isfinite(f->output_interval) && f->output_interval >= 0.0, EF_ERR_PARAMETER, fail,
                "%s: output_interval = %g must be >= 0 (0: every step)", f->label, f->output_interval);
  EF_CALL_GOTO(ef_interval_from_parameters(p, "interval", &f->interval), fail);
  double u_ref, a_ref, rho;
  EF_CALL_GOTO(ef_parameters_get_double(p, "reference_velocity", &u_ref), fail);
  EF_CALL_GOTO(ef_parameters_get_double(p, "reference_area", &a_ref), fail);
  EF_CALL_GOTO(ef_parameters_get_double(p, "reference_density", &rho), fail);
  EF_CHECK_GOTO(isfinite(u_ref) && isfinite(a_ref) && u_ref >= 0 && a_ref >= 0 && isfinite(rho) && rho >= 0,
                EF_ERR_PARAMETER, fail,
                "%s: reference_velocity (%g), reference_area (%g) and reference_density (%g) must be >= 0", f->label,
                u_ref, a_ref, rho);
  EF_CHECK_GOTO((u_ref > 0) == (a_ref > 0), EF_ERR_PARAMETER, fail,
                "%s: give both reference_velocity and reference_area (> 0) for coefficients, or neither", f->label);
  if (rho == 0) (void)ef_model_part_get_value(f->mp, "DENSITY", &rho); /* the fluid's, when set */
  f->coefficients = u_ref > 0;
  if (f->coefficients) {
    EF_CHECK_GOTO(rho > 0, EF_ERR_PARAMETER, fail, "%s: no density for the coefficients: give reference_density",
                  f->label);
    f->q_ref = 0.5 * rho * u_ref * u_ref * a_ref;
  }
  EF_CALL_GOTO(ef_parameters_get_vector(p, "drag_direction", 3, f->drag), fail);
  EF_CALL_GOTO(ef_parameters_get_vector(p, "lift_direction", 3, f->lift), fail);
  EF_CALL_GOTO(ef_forces_unit(f->label, "drag_direction", f->drag), fail);
  EF_CALL_GOTO(ef_forces_unit(f->label, "lift_direction", f->lift), fail);
  double dot = f->drag[0] * f->lift[0] + f->drag[1] * f->lift[1] + f->drag[2] * f->lift[2];
  EF_CHECK_GOTO(fabs(dot) < 1e-9, EF_ERR_PARAMETER, fail,
                "%s: drag_direction and lift_direction must be perpendicular (their cosine is %g)", f->label, dot);
  /* Side force along drag x lift (right-handed frame). */
  f->side[0] = f->drag[1] * f->lift[2] - f->drag[2] * f->lift[1];
  f->side[1] = f->drag[2] * f->lift[0] - f->drag[0] * f->lift[2];
  f->side[2] = f->drag[0] * f->lift[1] - f->drag[1] * f->lift[0];
  EF_CALL_GOTO(ef_forces_finish(f, ctx), fail);
  *data = f;
  return EF_SUCCESS;
fail:
  ef_forces_free(f);
  return err;
}

/* Kratos' compute_body_fitted_drag_process: its keys mapped onto ours (every step, in
 * its interval; output_file_settings.file_name/output_path name the file). */
static int ef_kratos_drag_create(const ef_process_context *ctx, ef_parameters p, void **data) {
  *data = NULL;
  EF_CHECK(ctx && ctx->model_part, EF_ERR_PARAMETER,
           "compute_body_fitted_drag_process: no model part in the process context");
  EF_CALL(ef_process_validate(p, ef_kratos_drag_defaults, NULL, 0));
  ef_forces *f = calloc(1, sizeof *f);
  EF_CHECK(f, EF_ERR_MEMORY, "out of memory");
  f->csv.fd = -1;
  f->mp = ctx->model_part;
  ef_process_label(f->label, sizeof f->label, "compute_body_fitted_drag_process", p);
  int err;
  EF_CALL_GOTO(ef_process_resolve_part(f->mp, p, "model_part_name", &f->smp, NULL), fail);
  EF_CALL_GOTO(ef_parameters_get_bool(p, "write_drag_output_file", &f->write_file), fail);
  EF_CALL_GOTO(ef_parameters_get_bool(p, "print_drag_to_screen", &f->print_screen), fail);
  EF_CALL_GOTO(ef_interval_from_parameters(p, "interval", &f->interval), fail);
  ef_parameters settings;
  EF_CALL_GOTO(ef_parameters_get(p, "output_file_settings", &settings), fail);
  EF_CALL_GOTO(ef_parameters_validate_defaults(settings, "{\"file_name\": \"\", \"output_path\": \"\","
                                                         " \"file_extension\": \"csv\"}"),
               fail);
  const char *name, *path, *ext;
  EF_CALL_GOTO(ef_parameters_get_string(settings, "file_name", &name), fail);
  EF_CALL_GOTO(ef_parameters_get_string(settings, "output_path", &path), fail);
  EF_CALL_GOTO(ef_parameters_get_string(settings, "file_extension", &ext), fail);
  /* Kratos names the file <part>_drag.dat; the format here is CSV either way. */
  if (name[0]) snprintf(f->file_name, sizeof f->file_name, "%s%s%s", name, strchr(name, '.') ? "" : ".", strchr(name, '.') ? "" : ext);
  else snprintf(f->file_name, sizeof f->file_name, "%s_drag.%s", f->smp ? f->smp->name : f->mp->name, ext);
  snprintf(f->output_path, sizeof f->output_path, "%s", path);
  f->output_interval = 1.0;
  f->sync_each_row = 0; /* rows reach the kernel at once (one write each); fdatasync at the end */
  f->drag[0] = f->lift[1] = f->side[2] = 1.0;
  EF_CALL_GOTO(ef_forces_finish(f, ctx), fail);
  *data = f;
  return EF_SUCCESS;
fail:
  ef_forces_free(f);
  return err;
}

/* Output when inside the interval, from step 1 on, every output_interval steps or time units. */
static int ef_forces_is_output_step(void *data, double time, int step) {
  ef_forces *f = data;
  if (step < 1 || !ef_interval_contains(f->interval, time)) return 0;
  if (f->output_interval <= 0.0) return 1;
  return ef_output_clock(f->control, f->solver_step, time, step) >= f->next_output;
}

/* F = -sum_{I in part} REACTION_I; coefficients C_k = (F . e_k) / (0.5 rho U^2 A).  On several ranks each
 * rank sums its owned nodes and the sums are reduced (collective: every rank's print_output calls it). */
static int ef_forces_compute(ef_model_part mp, const ef_sub_model_part *smp, ef_comm comm, double force[3]) {
  EF_CALL(ef_model_part_sync_to_host(mp));
  ef_variable *r;
  EF_CALL(ef_model_part_get_variable(mp, "REACTION", &r));
  EF_CHECK(r->n_components == 3, EF_ERR_PARAMETER, "REACTION must be a vector variable");
  double s[3] = {0.0, 0.0, 0.0};
  const int64_t n = ef_part_n_nodes(mp, smp);
  const int64_t owned = ef_comm_size(comm) > 1 ? mp->n_owned_nodes : INT64_MAX; /* MPI: each node once */
  for (int64_t k = 0; k < n; k++) {
    const int64_t node = ef_part_node(smp, k);
    if (node >= owned) continue;
    const double *v = r->values + 3 * node;
    for (int d = 0; d < 3; d++) s[d] += v[d];
  }
  EF_CALL(ef_comm_allreduce(comm, s, 3, EF_COMM_SUM));
  for (int d = 0; d < 3; d++) force[d] = -s[d];
  return EF_SUCCESS;
}

/* Compute the force now and append its row (and/or print it). */
static int ef_forces_print_output(void *data, double time, int step) {
  ef_forces *f = data;
  double F[3] = {0.0, 0.0, 0.0};
  int err = ef_forces_compute(f->mp, f->smp, f->comm, F);
  if (err) return ef_error_push(err, __FILE__, __LINE__, "%s at step %d", f->label, step);
  char row[512];
  int n = snprintf(row, sizeof row, "%.12g,%.12e,%.12e,%.12e", time, F[0], F[1], F[2]);
  if (f->coefficients) {
    const double *e[3] = {f->drag, f->lift, f->side};
    for (int k = 0; k < (f->mp->dim == 3 ? 3 : 2); k++)
      n += snprintf(row + n, sizeof row - (size_t)n, ",%.12e",
                    (F[0] * e[k][0] + F[1] * e[k][1] + F[2] * e[k][2]) / f->q_ref);
  }
  n += snprintf(row + n, sizeof row - (size_t)n, "\n");
  if (f->write_file) {
    err = ef_csv_append(&f->csv, row, (size_t)n);
    if (err) return ef_error_push(err, __FILE__, __LINE__, "%s at step %d", f->label, step);
  }
  if (f->print_screen) {
    printf("forces on %s: t = %.9g  F = (%.6e, %.6e, %.6e)\n", f->smp ? f->smp->name : f->mp->name, time, F[0],
           F[1], F[2]);
    fflush(stdout);
  }
  ef_output_schedule(f->control, f->output_interval, ef_output_clock(f->control, f->solver_step, time, step),
                     &f->next_output);
  return EF_SUCCESS;
}

/* Close the file at the end of the run. */
static int ef_forces_finalize(void *data) {
  ef_forces *f = data;
  ef_csv_close(&f->csv);
  return EF_SUCCESS;
}

/* Free the process (NULL-safe; sets *data to NULL). */
static void ef_forces_destroy(void **data) {
  if (!data || !*data) return;
  ef_forces_free(*data);
  *data = NULL;
}

/* Restarts: the schedule and the file's length. */
static int ef_forces_save_state(void *data, ef_restart_writer *w) {
  ef_forces *f = data;
  EF_CALL(ef_restart_write_double(w, "next_output", f->next_output));
  return ef_csv_save_state(&f->csv, w, "csv_length");
}

static int ef_forces_load_state(void *data, ef_restart_reader *r) {
  ef_forces *f = data;
  EF_CALL(ef_restart_read_double(r, "next_output", &f->next_output));
  return ef_csv_load_state(&f->csv, r, "csv_length");
}

/* A restart point: the rows so far durable. */
static int ef_forces_sync_outputs(void *data) { return ef_csv_sync(&((ef_forces *)data)->csv); }

static const ef_process_ops ef_compute_forces_process_ops = {
    .name = "compute_forces_process",
    .distributed = 1, /* MPI: owned nodes summed over the ranks once, rank 0 writes */
    .create = ef_forces_create,
    .is_output_step = ef_forces_is_output_step,
    .print_output = ef_forces_print_output,
    .execute_finalize = ef_forces_finalize,
    .destroy = ef_forces_destroy,
    .save_state = ef_forces_save_state,
    .load_state = ef_forces_load_state,
    .sync_outputs = ef_forces_sync_outputs,
};

static const ef_process_ops ef_compute_body_fitted_drag_process_ops = {
    .name = "compute_body_fitted_drag_process",
    .distributed = 1, /* MPI: as compute_forces_process */
    .create = ef_kratos_drag_create,
    .is_output_step = ef_forces_is_output_step,
    .print_output = ef_forces_print_output,
    .execute_finalize = ef_forces_finalize,
    .destroy = ef_forces_destroy,
    .save_state = ef_forces_save_state,
    .load_state = ef_forces_load_state,
    .sync_outputs = ef_forces_sync_outputs,
};

int ef_register_force_processes(void) {
  EF_CALL(ef_registry_add_process(&ef_compute_forces_process_ops));
  return ef_registry_add_process(&ef_compute_body_fitted_drag_process_ops);
}
