/* process_vtk_output.c -- Kratos' vtk_output_process on top of ef_vtk_output.
 *
 * Kratos' VtkOutput writes legacy .vtk files; we write VTK XML (.vtu pieces
 * plus a .pvd time series) with the same folder, naming and scheduling rules,
 * so a ParaView user finds the files where Kratos would have put them.
 * Settings we cannot honour are accepted where ignoring them is harmless
 * (write_deformed_configuration) and named in one warning
 * where data would be missing (variables and flags we do not have).
 */
#include "process_internal.h"
#include "output_writer.h"
#include "edgeflow/ef_log.h"
#include "edgeflow/ef_vtk_output.h"
#include "edgeflow/ef_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kratos' VtkOutput::GetDefaultParameters, key for key. */
static const char ef_vtk_defaults[] =
    "{\"model_part_name\": \"\", \"file_format\": \"binary\", \"output_precision\": 7,"
    " \"output_control_type\": \"step\", \"output_interval\": 1.0, \"output_sub_model_parts\": false,"
    " \"output_path\": \"VTK_Output\", \"custom_name_prefix\": \"\", \"custom_name_postfix\": \"\","
    " \"save_output_files_in_folder\": true, \"entity_type\": \"automatic\", \"write_deformed_configuration\": false,"
    " \"write_ids\": false, \"nodal_solution_step_data_variables\": [], \"nodal_data_value_variables\": [],"
    " \"nodal_flags\": [], \"element_data_value_variables\": [], \"element_flags\": [],"
    " \"condition_data_value_variables\": [], \"condition_flags\": [],"
    " \"gauss_point_variables_extrapolated_to_nodes\": [], \"gauss_point_variables_in_elements\": [],"
    " \"sync_each_file\": false, \"asynchronous_write\": \"auto\"}"; /* the last two keys are edgeflow's */

/* asynchronous_write: "auto" (on where the strategy copies asynchronously, ef_model_part.h), true or false. */
static const ef_poly_key ef_vtk_poly[] = {
    {"asynchronous_write", EF_TYPE_BIT(EF_JSON_STRING) | EF_TYPE_BIT(EF_JSON_BOOL), "\"auto\", true or false"}};

typedef struct {
  ef_model_part mp;
  ef_vtk_output out;
  char label[EF_PROCESS_LABEL_MAX];
  ef_output_control control;
  const long *solver_step; /* the solver's step count, for "solver_step" schedules */
  double interval;
  double next_output;
  char *folder;
  char *base_name;
  int n_variables;
  char **variables;
  char *sub_model_part; /* the one part named by model_part_name, if not the root */
  /* Asynchronous writing.  Ownership: while jobs are queued, `out` belongs to the writer thread;
   * the main thread touches it only after ef_output_writer_drain (save_state, finalize) or
   * release (destroy).  The model part's mesh is read by both (nobody changes it in a run). */
  int async_setting;         /* -1: auto, 0, 1 */
  int async;                 /* decided at the first output: -1 not yet */
  ef_output_writer *writer;  /* the analysis' writer thread (shared by its outputs) */
} ef_vtk_process;

/* One queued output: a snapshot of the variables and where it goes (the writer thread's). */
typedef struct {
  ef_vtk_process *v;
  ef_model_part_snapshot snapshot;
  int number, step;
  double time;
} ef_vtk_job;

/* Log events of the main thread's output work (ef_log.h is main-thread only). */
static int ef_vtk_event_main(void) {
  static int ev = -1;
  if (ev < 0) ev = ef_log_event("output", "main thread (snapshot + queue + waits, or the write)");
  return ev;
}
static int ef_vtk_event_snapshot(void) {
  static int ev = -1;
  if (ev < 0) ev = ef_log_event("output", "main thread: snapshot");
  return ev;
}

/* Kratos' __ScheduleNextOutput: advance next_output past the current step or time.  The
 * scheduled time is rounded like the step time, so that summing the interval does not drift
 * past a step time that lands on it (0.01 added twenty times is 0.20000000000000004). */
static void ef_vtk_schedule(ef_vtk_process *v, double time, int step) {
  /* interval 0: every call is an output step */
  ef_output_schedule(v->control, v->interval, ef_output_clock(v->control, v->solver_step, time, step),
                     &v->next_output);
}

/* Kratos' renamed keys: output_frequency -> output_interval, folder_name ->
 * output_path, write_properties_id -> write_ids (both present is an error). */
static int ef_vtk_translate_legacy(ef_parameters p) {
  static const char *pairs[3][2] = {
      {"output_frequency", "output_interval"}, {"folder_name", "output_path"}, {"write_properties_id", "write_ids"}};
  for (int i = 0; i < 3; i++) {
    if (!ef_parameters_has(p, pairs[i][0])) continue;
    EF_CHECK(!ef_parameters_has(p, pairs[i][1]), EF_ERR_PARAMETER,
             "%s: '%s' has both '%s' and its newer name '%s'; remove '%s'", ef_parameters_origin(p),
             ef_parameters_path(p), pairs[i][0], pairs[i][1], pairs[i][0]);
    ef_parameters old;
    EF_CALL(ef_parameters_get(p, pairs[i][0], &old));
    char *text = ef_parameters_to_string(old, 0);
    EF_CHECK(text, EF_ERR_MEMORY, "out of memory");
    int err = ef_parameters_set_json(p, pairs[i][1], text);
    free(text);
    EF_CALL(err);
    EF_CALL(ef_parameters_remove(p, pairs[i][0]));
  }
  return EF_SUCCESS;
}

/* Append s to a ", "-separated list in buf. */
static void ef_list_append(char *buf, size_t size, const char *s) {
  size_t used = strlen(buf);
  if (used + 1 >= size) return;
  snprintf(buf + used, size - used, "%s%s", used ? ", " : "", s);
}

/* Collect the nodal variables we have into v->variables, the others into missing. */
static int ef_vtk_collect(ef_vtk_process *v, ef_parameters p, const char *key, int nodal, char *missing,
                          size_t missing_size) {
  ef_parameters list;
  EF_CALL(ef_parameters_get(p, key, &list));
  for (int i = 0; i < ef_parameters_size(list); i++) {
    ef_parameters item;
    const char *name;
    EF_CALL(ef_parameters_at(list, i, &item));
    EF_CALL(ef_parameters_as_string(item, &name));
    if (!nodal || !ef_model_part_find_variable(v->mp, name)) {
      char entry[256];
      snprintf(entry, sizeof entry, "%s (%s)", name, key);
      ef_list_append(missing, missing_size, entry);
      continue;
    }
    int seen = 0;
    for (int k = 0; k < v->n_variables; k++) seen |= !strcmp(v->variables[k], name);
    if (seen) continue;
    char **grown = realloc(v->variables, (size_t)(v->n_variables + 1) * sizeof *grown);
    EF_CHECK(grown, EF_ERR_MEMORY, "out of memory");
    v->variables = grown;
    EF_CHECK(v->variables[v->n_variables] = ef_strdup(name), EF_ERR_MEMORY, "out of memory");
    v->n_variables++;
  }
  return EF_SUCCESS;
}

/* "a/b" joined, b alone when absolute or a is empty/".". */
static char *ef_join(const char *a, const char *b) {
  if (b[0] == '/' || !a || !a[0] || !strcmp(a, ".")) return ef_strdup(b[0] ? b : ".");
  size_t n = strlen(a) + strlen(b) + 2;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s%s%s", a, b[0] ? "/" : "", b);
  return s;
}

static void ef_vtk_free(ef_vtk_process *v) {
  if (!v) return;
  ef_output_writer_release(&v->writer); /* drains: the writer thread lets go of `out` */
  ef_vtk_output_destroy(&v->out);
  free(v->folder);
  free(v->base_name);
  for (int i = 0; i < v->n_variables; i++) free(v->variables[i]);
  free(v->variables);
  free(v->sub_model_part);
  free(v);
}

static int ef_vtk_create(const ef_process_context *ctx, ef_parameters p, void **data) {
  *data = NULL;
  EF_CHECK(ctx && ctx->model_part, EF_ERR_PARAMETER, "vtk_output_process: no model part in the process context");
  EF_CHECK(ef_parameters_type(p) == EF_JSON_OBJECT, EF_ERR_PARAMETER, "%s: '%s' is %s, expected an object",
           ef_parameters_origin(p), ef_parameters_path(p), ef_json_type_name(ef_parameters_type(p)));
  EF_CALL(ef_vtk_translate_legacy(p));
  EF_CALL(ef_process_validate(p, ef_vtk_defaults, ef_vtk_poly, 1));
  ef_vtk_process *v = calloc(1, sizeof *v);
  EF_CHECK(v, EF_ERR_MEMORY, "out of memory");
  v->mp = ctx->model_part;
  ef_process_label(v->label, sizeof v->label, "vtk_output_process", p);
  int err;
  ef_sub_model_part *smp;
  const char *part_name, *control, *format_name, *path, *prefix, *postfix, *entity;
  int save_in_folder, sub_parts, write_ids;
  EF_CALL_GOTO(ef_process_resolve_part(v->mp, p, "model_part_name", &smp, &part_name), fail);
  EF_CALL_GOTO(ef_parameters_get_string(p, "output_control_type", &control), fail);
  EF_CALL_GOTO(ef_output_control_parse(v->label, control, &v->control), fail);
  EF_CALL_GOTO(ef_parameters_get_double(p, "output_interval", &v->interval), fail);
  EF_CHECK_GOTO(isfinite(v->interval) && v->interval >= 0.0, EF_ERR_PARAMETER, fail,
                "%s: output_interval = %g must be >= 0 (0: every step)", v->label, v->interval);
  ef_vtk_format format;
  EF_CALL_GOTO(ef_parameters_get_string(p, "file_format", &format_name), fail);
  err = ef_vtk_format_from_string(format_name, &format);
  if (err) {
    err = ef_error_push(err, __FILE__, __LINE__, "%s: file_format", v->label);
    goto fail;
  }
  long precision; /* significant digits of ascii floating-point values, as Kratos' VtkOutput */
  EF_CALL_GOTO(ef_parameters_get_int(p, "output_precision", &precision), fail);
  EF_CHECK_GOTO(precision >= 1 && precision <= 17, EF_ERR_PARAMETER, fail,
                "%s: output_precision = %ld must be 1..17 significant digits (17 reads back exactly)", v->label,
                precision);
  EF_CALL_GOTO(ef_parameters_get_bool(p, "save_output_files_in_folder", &save_in_folder), fail);
  EF_CALL_GOTO(ef_parameters_get_string(p, "output_path", &path), fail);
  EF_CALL_GOTO(ef_parameters_get_string(p, "custom_name_prefix", &prefix), fail);
  EF_CALL_GOTO(ef_parameters_get_string(p, "custom_name_postfix", &postfix), fail);
  EF_CALL_GOTO(ef_parameters_get_bool(p, "output_sub_model_parts", &sub_parts), fail);
  EF_CALL_GOTO(ef_parameters_get_bool(p, "write_ids", &write_ids), fail);
  EF_CALL_GOTO(ef_parameters_get_string(p, "entity_type", &entity), fail);
  EF_CHECK_GOTO(!strcmp(entity, "automatic") || !strcmp(entity, "element") || !strcmp(entity, "condition"),
                EF_ERR_PARAMETER, fail, "%s: entity_type is '%s'; expected \"automatic\", \"element\" or \"condition\"",
                v->label, entity);
  int deformed, sync_each_file;
  EF_CALL_GOTO(ef_parameters_get_bool(p, "write_deformed_configuration", &deformed), fail);
  EF_CALL_GOTO(ef_parameters_get_bool(p, "sync_each_file", &sync_each_file), fail);
  v->async = -1;
  v->async_setting = -1;
  ef_parameters async;
  EF_CALL_GOTO(ef_parameters_get(p, "asynchronous_write", &async), fail);
  if (ef_parameters_type(async) == EF_JSON_BOOL) {
    EF_CALL_GOTO(ef_parameters_get_bool(p, "asynchronous_write", &v->async_setting), fail);
  } else {
    const char *text;
    EF_CALL_GOTO(ef_parameters_as_string(async, &text), fail);
    EF_CHECK_GOTO(!strcmp(text, "auto"), EF_ERR_PARAMETER, fail,
                  "%s: asynchronous_write is \"%s\"; expected \"auto\", true or false", v->label, text);
  }

  char missing[2048] = "";
  EF_CALL_GOTO(ef_vtk_collect(v, p, "nodal_solution_step_data_variables", 1, missing, sizeof missing), fail);
  EF_CALL_GOTO(ef_vtk_collect(v, p, "nodal_data_value_variables", 1, missing, sizeof missing), fail);
  static const char *not_ours[] = {"nodal_flags", "element_data_value_variables", "element_flags",
                                   "condition_data_value_variables", "condition_flags",
                                   "gauss_point_variables_extrapolated_to_nodes", "gauss_point_variables_in_elements"};
  for (size_t i = 0; i < sizeof not_ours / sizeof not_ours[0]; i++)
    EF_CALL_GOTO(ef_vtk_collect(v, p, not_ours[i], 0, missing, sizeof missing), fail);
  if (missing[0])
    fprintf(stderr, "edgeflow: warning: %s: not written (edgeflow has no such data): %s\n", v->label, missing);

  /* Kratos writes into output_path (relative to the run folder here) or, without a folder, beside the run. */
  v->folder = save_in_folder ? ef_join(ctx->output_folder, path)
                             : ef_strdup(ctx->output_folder && ctx->output_folder[0] ? ctx->output_folder : ".");
  const char *name = smp ? smp->name : v->mp->name;
  size_t nb = strlen(prefix) + strlen(name) + strlen(postfix) + 1;
  v->base_name = malloc(nb);
  EF_CHECK_GOTO(v->folder && v->base_name, EF_ERR_MEMORY, fail, "out of memory");
  snprintf(v->base_name, nb, "%s%s%s", prefix, name, postfix);
  EF_CHECK_GOTO(!strchr(v->base_name, '/'), EF_ERR_PARAMETER, fail,
                "%s: the file name '%s' (custom_name_prefix + model part + custom_name_postfix) contains '/'", v->label,
                v->base_name);

  ef_vtk_output_options opt;
  memset(&opt, 0, sizeof opt);
  opt.output_folder = v->folder;
  opt.base_name = v->base_name;
  opt.n_variables = v->n_variables;
  opt.variables = (const char *const *)v->variables;
  opt.format = format;
  opt.compress = 0; /* Kratos' binary files are raw too */
  opt.precision = (int)precision; /* ascii only: binary is exact */
  opt.write_ids = write_ids;
  opt.write_conditions = !strcmp(entity, "condition");
  opt.output_sub_model_parts = sub_parts;
  opt.sync = sync_each_file;
  if (ctx->partition) { /* MPI: this rank's piece, a .pvtu per step from rank 0 (ef_vtk_output.h) */
    opt.n_ranks = ctx->partition->size;
    opt.rank = ctx->partition->rank;
  }
  if (smp) {
    /* A sub model part by name: as Kratos, the files hold only that part (its elements, else
     * its conditions, else its nodes) and are named after it. */
    const char *rest = part_name;
    size_t n = strlen(v->mp->name);
    if (!strncmp(rest, v->mp->name, n) && rest[n] == '.') rest += n + 1;
    EF_CHECK_GOTO(v->sub_model_part = ef_strdup(rest), EF_ERR_MEMORY, fail, "out of memory");
    opt.part = v->sub_model_part;
  }
  EF_CALL_GOTO(ef_vtk_output_create(&opt, &v->out), fail);
  /* MPI: what each part holds over the ranks, once (collective: every rank creates its processes alike). */
  if (ctx->partition) EF_CALL_GOTO(ef_vtk_output_reduce_parts(v->out, v->mp, ctx->comm), fail);

  /* Kratos schedules once at construction (restarts start later than 0). */
  double start_time = 0.0;
  ef_parameters problem;
  if (ctx->project && ef_parameters_has(ctx->project, "problem_data") &&
      !ef_parameters_get(ctx->project, "problem_data", &problem) && ef_parameters_has(problem, "start_time") &&
      ef_parameters_get_double(problem, "start_time", &start_time))
    ef_error_clear();
  v->next_output = 0.0;
  ef_vtk_schedule(v, start_time, 0);
  v->solver_step = ctx->solver_step; /* after the schedule at construction: the solver is at step 0 */
  *data = v;
  return EF_SUCCESS;
fail:
  ef_vtk_free(v);
  return err;
}

/* Kratos' IsOutputStep: step >= next_output (or rounded time >= next_output). */
static int ef_vtk_is_output_step(void *data, double time, int step) {
  ef_vtk_process *v = data;
  return ef_output_clock(v->control, v->solver_step, time, step) >= v->next_output;
}

/* Writer thread: wait for the copy, then format and write the files of one output. */
static int ef_vtk_job_run(void *data) {
  ef_vtk_job *job = data;
  ef_vtk_process *v = job->v;
  ef_model_part view;
  const double t0 = ef_wtime();
  int err = ef_model_part_snapshot_wait(job->snapshot, &view);
  ef_output_writer_add_copy_wait(v->writer, ef_wtime() - t0);
  if (!err) err = ef_vtk_output_write(v->out, view, job->number, job->time);
  if (err)
    return ef_error_push(err, __FILE__, __LINE__, "%s at step %d (t = %g)", v->label, job->step, job->time);
  return EF_SUCCESS;
}

/* After the job (or instead of it): the snapshot is settled (a copy in flight waited for) and freed. */
static void ef_vtk_job_drop(void *data, int ran) {
  (void)ran;
  ef_vtk_job *job = data;
  ef_model_part_snapshot_destroy(&job->snapshot);
  free(job);
}

/* Main thread: snapshot the variables and queue the write. */
static int ef_vtk_queue(ef_vtk_process *v, int number, int step, double time) {
  EF_CALL(ef_output_writer_check(v->writer));
  ef_vtk_job *job = calloc(1, sizeof *job);
  EF_CHECK(job, EF_ERR_MEMORY, "out of memory");
  *job = (ef_vtk_job){v, NULL, number, step, time};
  int err = ef_model_part_snapshot_create(v->mp, v->n_variables, (const char *const *)v->variables, &job->snapshot);
  if (!err) {
    ef_log_event_begin(ef_vtk_event_snapshot());
    err = ef_model_part_snapshot_take(job->snapshot, NULL);
    ef_log_event_end(ef_vtk_event_snapshot());
  }
  if (err) {
    ef_vtk_job_drop(job, 0);
    return err;
  }
  return ef_output_writer_submit(v->writer, ef_vtk_job_run, ef_vtk_job_drop, job);
}

/* Decide once, at the first output (the strategy installs its hooks after the processes are made). */
static int ef_vtk_decide_async(ef_vtk_process *v) {
  if (v->async >= 0) return EF_SUCCESS;
  v->async = v->async_setting >= 0 ? v->async_setting : ef_model_part_has_async_snapshot(v->mp);
  if (v->async) EF_CALL(ef_output_writer_acquire(v->mp, &v->writer));
  return EF_SUCCESS;
}

/* Wait for this analysis' queued outputs (main thread), timed as the output's main-thread work. */
static int ef_vtk_drain(ef_vtk_process *v) {
  if (!v->writer) return EF_SUCCESS;
  ef_log_event_begin(ef_vtk_event_main());
  int err = ef_output_writer_drain(v->writer);
  ef_log_event_end(ef_vtk_event_main());
  return err ? ef_error_push(err, __FILE__, __LINE__, "%s", v->label) : EF_SUCCESS;
}

static int ef_vtk_print_output(void *data, double time, int step) {
  ef_vtk_process *v = data;
  /* Files are numbered by the clock that schedules them, so solver steps never share a name. */
  const int number = v->control == EF_CONTROL_SOLVER_STEP && v->solver_step ? (int)*v->solver_step : step;
  ef_log_event_begin(ef_vtk_event_main());
  int err = ef_vtk_decide_async(v);
  if (!err) err = v->async ? ef_vtk_queue(v, number, step, time) : ef_vtk_output_write(v->out, v->mp, number, time);
  ef_log_event_end(ef_vtk_event_main());
  if (err) return ef_error_push(err, __FILE__, __LINE__, "%s at step %d (t = %g)", v->label, step, time);
  ef_vtk_schedule(v, time, step);
  return EF_SUCCESS;
}

/* The end of the run: every queued output written, then every file made durable once (fsync),
 * instead of at every output. */
static int ef_vtk_finalize(void *data) {
  ef_vtk_process *v = data;
  EF_CALL(ef_vtk_drain(v));
  int err = ef_vtk_output_sync(v->out);
  return err ? ef_error_push(err, __FILE__, __LINE__, "%s", v->label) : EF_SUCCESS;
}

/* A restart point: every .vtu and .pvd written so far durable, so the restart file never lists an
 * output a crash of the machine could lose. */
static int ef_vtk_sync_outputs(void *data) { return ef_vtk_finalize(data); }

static void ef_vtk_destroy(void **data) {
  if (!data || !*data) return;
  ef_vtk_free(*data);
  *data = NULL;
}

/* Restarts: the next output and the series written so far. */
static int ef_vtk_save_state(void *data, ef_restart_writer *w) {
  ef_vtk_process *v = data;
  EF_CALL(ef_vtk_drain(v)); /* outputs on disk before a restart file names them */
  EF_CALL(ef_restart_write_double(w, "next_output", v->next_output));
  return ef_vtk_output_save_state(v->out, w);
}

static int ef_vtk_load_state(void *data, ef_restart_reader *r) {
  ef_vtk_process *v = data;
  EF_CALL(ef_vtk_drain(v));
  EF_CALL(ef_restart_read_double(r, "next_output", &v->next_output));
  return ef_vtk_output_load_state(v->out, r);
}

const ef_process_ops ef_vtk_output_process_ops = {
    .name = "vtk_output_process",
    .distributed = 1, /* one .vtu piece per rank, a .pvtu per step and the .pvd from rank 0 */
    .create = ef_vtk_create,
    .is_output_step = ef_vtk_is_output_step,
    .print_output = ef_vtk_print_output,
    .execute_finalize = ef_vtk_finalize,
    .destroy = ef_vtk_destroy,
    .save_state = ef_vtk_save_state,
    .load_state = ef_vtk_load_state,
    .sync_outputs = ef_vtk_sync_outputs,
};
