/* analysis.c -- the analysis loop (Kratos AnalysisStage) over processes and a strategy. */
#include "edgeflow/ef_analysis.h"
#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_log.h"
#include "edgeflow/ef_mesh_check.h"
#include "edgeflow/ef_mesh_io.h"
#include "edgeflow/ef_mesh_tools.h"
#include "edgeflow/ef_partition.h"
#include "edgeflow/ef_process_tools.h"
#include "edgeflow/ef_registry.h"
#include "edgeflow/ef_restart.h"
#include "edgeflow/ef_util.h"
#include "process_internal.h"
#include "run_control.h"
#include "output_check.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Top-level keys of ProjectParameters.json. */
static const char ef_project_defaults[] =
    "{\"problem_data\": {}, \"solver_settings\": {}, \"processes\": {}, \"output_processes\": {},"
    " \"analysis_stage\": \"\", \"modelers\": []}";

static const char ef_problem_data_defaults[] =
    "{\"problem_name\": \"edgeflow\", \"parallel_type\": \"OpenMP\", \"echo_level\": 0,"
    " \"start_time\": 0.0, \"end_time\": 1.0, \"output_folder\": \"\","
    " \"progress_interval\": 10, \"skip_unsupported_processes\": false, \"applications\": [], \"max_wall_time\": 0.0,"
    " \"steady_state\": {\"velocity_rate_tolerance\": 0.0, \"check_interval\": 10, \"minimum_time\": 0.0,"
    "     \"relative_tolerance\": 0.0, \"hold_time\": 0.0}}";

/* The solver_settings keys the core reads itself; the strategy adds its own (ef_strategy_ops). */
static const char ef_solver_defaults[] =
    "{\"solver_type\": \"\", \"model_part_name\": \"" EF_DEFAULT_MODEL_PART_NAME "\", \"domain_size\": -1,"
    " \"echo_level\": 0,"
    " \"model_import_settings\": {\"input_type\": \"mdpa\", \"input_filename\": \"\","
    "     \"refinement_levels\": 0, \"renumbering\": \"auto\"}}";

static const char ef_process_block_defaults[] =
    "{\"python_module\": \"\", \"kratos_module\": \"\", \"process_name\": \"\", \"help\": null,"
    " \"Parameters\": {}}";

typedef struct {
  const ef_process_ops *ops;
  void *data;
  int is_output;
  char module[128];
  long printed_step; /* the last step it wrote output at (a stop writes the others) */
} ef_process_entry;

struct ef_analysis_s {
  char *parameters_path;
  char case_folder[4096];
  char output_folder[4096];
  ef_analysis_options options;
  ef_parameters project;
  ef_parameters problem_data, solver_settings;
  ef_parameters summary;
  ef_model_part mp;
  /* problem_data.parallel_type "MPI" (docs/mpi.md): the world communicator (NULL: one process) and,
   * on more than one rank (distributed), this rank's piece; mp is then the piece. */
  ef_comm comm;
  ef_partition partition;
  int distributed;
  uint64_t global_fingerprint; /* MPI: the global mesh's (ef_model_part_fingerprint), for restart points */
  char renumbering[16];        /* the node ordering applied ("rcm", "morton", "none"; "auto" resolved) */

  ef_process_entry *processes;
  int n_processes;

  const ef_strategy_ops *strategy_ops;
  void *strategy;
  ef_strategy_config config;

  double start_time, end_time, time, dt;
  long step;
  int echo_level, progress_interval, initialized, finalized;
  double wall_start, wall_loop_start;
  long total_iterations;
  int last_iterations, max_iterations;
  double last_residual;
  ef_step_info phase_totals;
  /* Steady-state stop: max_I |u_I(t) - u_I(t_check)| / (t - t_check) over check_interval steps. */
  double steady_tolerance, steady_min_time, steady_t_check, steady_rate;
  int steady_interval, steady_reached;
  double *steady_u;
  /* Time-step semantics (ef_analysis_keep_user_time_step): the user's fixed time_step, and from the first
   * step the solver had to cut it, the grid t_cut + k * user_dt the solver lands on and whose k (plus the
   * steps before the cut) the processes see as their step. */
  double user_dt, cut_time, landing_time;
  long cut_step, process_step;
  int cut;
  int stop_requested; /* a process (stop_when_steady_process) ended the run */
  int ev_initialize, ev_read, ev_refine, ev_prepare, ev_create, ev_strategy_init, ev_step, ev_processes, ev_output;
  ef_run_state run; /* restart files, stops, limits, the manifest (functions at the end of this file) */
};

/* Restart, stops and the output manifest: defined at the end of this file. */
static int ef_analysis_configure_restart(ef_analysis a, ef_parameters block);
static int ef_analysis_check_stop_restart_folder(ef_analysis a);
static int ef_analysis_read_wall_time(ef_analysis a);
static int ef_analysis_claim_output_folder(ef_analysis a);
static int ef_analysis_restart_open(ef_analysis a);
static int ef_analysis_restart_open_ranks(ef_analysis a);
static int ef_analysis_any_failed(ef_analysis a, int failed, int *failed_rank);
static int ef_analysis_restart_load(ef_analysis a);
static int ef_analysis_end_of_step(ef_analysis a);
static int ef_analysis_track_outputs(ef_analysis a);
static int ef_analysis_summary_status(ef_analysis a, ef_parameters s);
static void ef_analysis_write_failure_summary(ef_analysis a, int err);

void ef_analysis_options_default(ef_analysis_options *o) {
  memset(o, 0, sizeof *o);
  o->refinement_levels = -1;
  o->skip_unsupported_processes = -1;
  o->overwrite = -1;
}

int ef_analysis_create(const char *parameters_path, const ef_analysis_options *options, ef_analysis *out) {
  *out = NULL;
  ef_analysis a = calloc(1, sizeof *a);
  EF_CHECK(a, EF_ERR_MEMORY, "out of memory");
  int err = EF_SUCCESS;
  if (options)
    a->options = *options;
  else
    ef_analysis_options_default(&a->options);
  a->parameters_path = ef_strdup(parameters_path);
  EF_CHECK_GOTO(a->parameters_path, EF_ERR_MEMORY, fail, "out of memory");
  snprintf(a->case_folder, sizeof a->case_folder, "%s", parameters_path);
  char *slash = strrchr(a->case_folder, '/');
  if (slash)
    *slash = '\0';
  else
    snprintf(a->case_folder, sizeof a->case_folder, ".");
  a->wall_start = ef_wtime();
  a->run.saved_step = -1;
  a->run.status = "running";
  EF_CALL_GOTO(ef_parameters_load_file(parameters_path, &a->project), fail);
  EF_CALL_GOTO(ef_parameters_parse("{}", "run_summary", &a->summary), fail);
  *out = a;
  return EF_SUCCESS;
fail:
  ef_analysis_destroy(&a);
  return err;
}

void ef_analysis_destroy(ef_analysis *pa) {
  if (!pa || !*pa) return;
  ef_analysis a = *pa;
  if (a->strategy_ops && a->strategy) a->strategy_ops->destroy(&a->strategy);
  for (int i = 0; i < a->n_processes; i++)
    if (a->processes[i].ops && a->processes[i].data) a->processes[i].ops->destroy(&a->processes[i].data);
  free(a->processes);
  ef_model_part_destroy(&a->mp);
  ef_partition_free(&a->partition); /* the world communicator stays: it is the process's (ef_comm_world) */
  ef_parameters_destroy(&a->summary);
  ef_parameters_destroy(&a->project);
  free(a->parameters_path);
  free(a->steady_u);
  ef_restart_reader *reader = a->run.reader;
  ef_restart_reader_close(&reader);
  ef_file_list_free(&a->run.written);
  ef_file_list_free(&a->run.foreign);
  free(a);
  *pa = NULL;
}

/* checkMesh at load (O(elements), timed as its own event): errors stop, warnings go to stderr. */
static int ef_analysis_check_mesh(ef_analysis a, const char *source) {
  int event = ef_log_event("setup", "check mesh");
  ef_log_event_begin(event);
  int err = ef_mesh_check_case(a->mp, a->project, source, NULL, stderr);
  ef_log_event_end(event);
  return err;
}

/* The ordering "auto" stands for: a restart file's (so that a run continues in the numbering that wrote it,
 * whichever strategy continues it; "rcm" for files from before the ordering was recorded, the default then),
 * else the strategy's own (ef_strategy_ops.renumbering), else "rcm".  A one-process restart file stays open
 * for ef_analysis_restart_open. */
static int ef_analysis_auto_renumbering(ef_analysis a, char *out, size_t size) {
  const char *strategy = a->strategy_ops && a->strategy_ops->renumbering ? a->strategy_ops->renumbering : "rcm";
  snprintf(out, size, "%s", strategy);
  if (!a->options.restart_file || a->options.load_only) return EF_SUCCESS;
  ef_restart_reader *r = a->run.reader;
  if (!r) EF_CALL(ef_restart_reader_open(a->options.restart_file, &r));
  const int point = ef_restart_reader_section(r, "ranks"); /* MPI: a restart point (small: read, then closed) */
  int err = EF_SUCCESS;
  if (point || ef_restart_reader_section(r, "analysis")) {
    char text[16] = "rcm";
    if (ef_restart_count(r, "renumbering") > 0) err = ef_restart_read_string(r, "renumbering", text, sizeof text);
    if (!err) snprintf(out, size, "%s", text);
  }
  if (point || err)
    ef_restart_reader_close(&r);
  else
    a->run.reader = r;
  return err;
}

/* Read the mesh named by model_import_settings, refine and renumber it. */
static int ef_analysis_read_mesh(ef_analysis a) {
  ef_parameters import;
  const char *type, *name, *renumbering;
  long levels;
  EF_CALL(ef_parameters_get(a->solver_settings, "model_import_settings", &import));
  EF_CALL(ef_parameters_get_string(import, "input_type", &type));
  EF_CALL(ef_parameters_get_string(import, "input_filename", &name));
  EF_CALL(ef_parameters_get_int(import, "refinement_levels", &levels));
  EF_CALL(ef_parameters_get_string(import, "renumbering", &renumbering));
  if (a->options.refinement_levels >= 0) levels = a->options.refinement_levels;
  EF_CHECK(levels >= 0 && levels <= 8, EF_ERR_PARAMETER,
           "%s: solver_settings.model_import_settings.refinement_levels is %ld, expected 0..8",
           a->parameters_path, levels);
  EF_CHECK(!strcmp(type, "mdpa") || !strcmp(type, "gmsh"), EF_ERR_PARAMETER,
           "%s: solver_settings.model_import_settings.input_type is '%s', expected \"mdpa\" or \"gmsh\"",
           a->parameters_path, type);
  EF_CHECK(name[0], EF_ERR_PARAMETER, "%s: solver_settings.model_import_settings.input_filename is empty",
           a->parameters_path);
  char file[4096], resolved[4096];
  /* Kratos gives mdpa names without the extension. */
  const char *dot = strrchr(name, '.');
  if (!strcmp(type, "mdpa") && (!dot || strcmp(dot, ".mdpa")))
    snprintf(file, sizeof file, "%s.mdpa", name);
  else
    snprintf(file, sizeof file, "%s", name);
  ef_resolve_path(a->case_folder, file, resolved, sizeof resolved);

  ef_log_event_begin(a->ev_read);
  EF_CALL(ef_read_mesh(resolved, type, &a->mp));
  ef_log_event_end(a->ev_read);
  const char *mp_name;
  EF_CALL(ef_parameters_get_string(a->solver_settings, "model_part_name", &mp_name));
  char *copy = ef_strdup(mp_name);
  EF_CHECK(copy, EF_ERR_MEMORY, "out of memory");
  free(a->mp->name);
  a->mp->name = copy;

  long domain_size;
  EF_CALL(ef_parameters_get_int(a->solver_settings, "domain_size", &domain_size));
  EF_CHECK(domain_size == -1 || domain_size == a->mp->dim, EF_ERR_PARAMETER,
           "%s: solver_settings.domain_size is %ld but the mesh '%s' is %dD", a->parameters_path, domain_size,
           resolved, a->mp->dim);
  EF_CALL(ef_analysis_check_mesh(a, resolved));
  if (levels > 0) {
    EF_CALL(ef_mesh_refine_memory_check(a->mp, (int)levels, a->parameters_path));
    ef_log_event_begin(a->ev_refine);
    EF_CALL(ef_mesh_refine_uniform(a->mp, (int)levels));
    ef_log_event_end(a->ev_refine);
  }
  EF_CHECK(!strcmp(renumbering, "auto") || !strcmp(renumbering, "rcm") || !strcmp(renumbering, "morton") ||
               !strcmp(renumbering, "none"),
           EF_ERR_PARAMETER,
           "%s: solver_settings.model_import_settings.renumbering is '%s', expected \"auto\", \"rcm\", \"morton\" "
           "or \"none\"",
           a->parameters_path, renumbering);
  if (!strcmp(renumbering, "auto")) {
    EF_CALL(ef_analysis_auto_renumbering(a, a->renumbering, sizeof a->renumbering));
    renumbering = a->renumbering;
  } else {
    snprintf(a->renumbering, sizeof a->renumbering, "%s", renumbering);
  }
  if (strcmp(renumbering, "none")) {
    int event = ef_log_event("setup", !strcmp(renumbering, "rcm") ? "renumber mesh (rcm)" : "renumber mesh (morton)");
    ef_log_event_begin(event);
    EF_CALL(ef_mesh_renumber(a->mp, renumbering));
    ef_log_event_end(event);
  }
  return EF_SUCCESS;
}

/* problem_data.parallel_type: "OpenMP" (one process; "mpirun -n 1" too) or "MPI" (the world
 * communicator; on several ranks the mesh is split over them).  Kratos runs an "OpenMP" case that
 * mpirun started on P ranks as P independent copies of the whole run; edgeflow refuses that instead
 * (the copies would write the same files), as it refuses "MPI" without mpirun or in a build without MPI. */
static int ef_analysis_check_distributed(ef_analysis a);
static int ef_analysis_setup_parallel(ef_analysis a) {
  const char *type;
  EF_CALL(ef_parameters_get_string(a->problem_data, "parallel_type", &type));
  EF_CHECK(!strcmp(type, "OpenMP") || !strcmp(type, "MPI"), EF_ERR_PARAMETER,
           "%s: problem_data.parallel_type is '%s', expected \"OpenMP\" (one process) or \"MPI\"", a->parameters_path,
           type);
  if (a->options.comm) { /* the embedding program chose the ranks */
    a->comm = a->options.comm;
    a->distributed = ef_comm_size(a->comm) > 1;
    return ef_analysis_check_distributed(a);
  }
  const int launched = ef_comm_launched_size();
  if (!strcmp(type, "OpenMP")) {
    EF_CHECK(launched <= 1, EF_ERR_PARAMETER,
             "%s: problem_data.parallel_type is \"OpenMP\" but mpirun started %d processes: each would run the whole "
             "case and write the same files; set parallel_type to \"MPI\" to split the mesh over them, or run without "
             "mpirun",
             a->parameters_path, launched);
    return EF_SUCCESS;
  }
  EF_CHECK(!strcmp(type, "MPI"), EF_ERR_PARAMETER,
           "%s: problem_data.parallel_type is '%s', expected \"OpenMP\" (one process) or \"MPI\"", a->parameters_path,
           type);
  EF_CHECK(ef_comm_have_mpi(), EF_ERR_UNSUPPORTED,
           "%s: problem_data.parallel_type is \"MPI\" but this edgeflow was built without MPI (configure with "
           "-DEDGEFLOW_MPI=ON, libopenmpi-dev and libmetis-dev installed), or set parallel_type to \"OpenMP\"",
           a->parameters_path);
  EF_CHECK(launched >= 1, EF_ERR_PARAMETER,
           "%s: problem_data.parallel_type is \"MPI\" but this process was not started by mpirun or mpiexec (neither "
           "OMPI_COMM_WORLD_SIZE nor PMI_SIZE is set): run \"mpirun -n P edgeflow run %s\", or set parallel_type to "
           "\"OpenMP\" for one process",
           a->parameters_path, a->parameters_path);
  int err = ef_comm_world(&a->comm);
  if (err) return ef_error_push(err, __FILE__, __LINE__, "%s: problem_data.parallel_type \"MPI\"", a->parameters_path);
  a->distributed = ef_comm_size(a->comm) > 1;
  return ef_analysis_check_distributed(a);
}

/* What several ranks cannot run yet (docs/mpi.md). */
static int ef_analysis_check_distributed(ef_analysis a) {
  if (!a->distributed) return EF_SUCCESS;
  EF_CHECK(a->options.load_only || a->strategy_ops->distributed, EF_ERR_UNSUPPORTED,
           "%s: solver_settings.solver_type '%s' does not run on several ranks yet (docs/mpi.md); run it on one rank",
           a->parameters_path, a->strategy_ops->name);
  return EF_SUCCESS;
}

/* On several ranks: partition the mesh every rank read (ef_partition_create: METIS, the same on
 * every rank) and keep this rank's piece as the model part; the global mesh is freed. */
static int ef_analysis_split_mesh(ef_analysis a) {
  int event = ef_log_event("setup", "partition mesh");
  ef_log_event_begin(event);
  ef_model_part piece = NULL;
  int err = ef_partition_create(a->comm, a->mp, NULL, &a->partition);
  if (!err) err = ef_model_part_split(a->mp, &a->partition, &piece);
  ef_log_event_end(event);
  if (err) return err;
  a->global_fingerprint = ef_model_part_fingerprint(a->mp); /* restart points name the global mesh */
  ef_model_part_destroy(&a->mp);
  a->mp = piece;
  /* The piece's coordinates and connectivity live in the model part now; the partition keeps the maps. */
  free(a->partition.coords);
  free(a->partition.elements);
  a->partition.coords = NULL;
  a->partition.elements = NULL;
  return EF_SUCCESS;
}

static void ef_analysis_print_piece(ef_analysis a) {
  const ef_partition *p = &a->partition;
  printf("rank %d of %d: piece of %lld nodes (%lld owned, %lld ghosts) of %lld, %lld elements of %lld, %lld "
         "conditions, %d neighbour ranks\n",
         p->rank, p->size, (long long)a->mp->n_nodes, (long long)p->n_owned, (long long)(p->n_nodes - p->n_owned),
         (long long)p->n_global_nodes, (long long)a->mp->n_elements, (long long)p->n_global_elements,
         (long long)a->mp->n_conditions, p->n_neighbours);
  fflush(stdout);
}

/* Create one process from a block of a process list. */
static int ef_analysis_add_process(ef_analysis a, ef_parameters block, int is_output,
                                   const ef_process_context *context, int skip_unsupported) {
  EF_CALL(ef_parameters_validate_defaults(block, ef_process_block_defaults));
  const char *module;
  EF_CALL(ef_parameters_get_string(block, "python_module", &module));
  if (!strcmp(module, "save_restart_process")) return ef_analysis_configure_restart(a, block);
  const ef_process_ops *ops = ef_registry_lookup_process(module);
  if (!ops) {
    char list[2048];
    ef_registry_list("process", list, sizeof list);
    if (skip_unsupported) {
      fprintf(stderr, "edgeflow: warning: %s: skipping '%s' at %s (not supported; "
                      "problem_data.skip_unsupported_processes is true)\n",
              a->parameters_path, module, ef_parameters_path(block));
      return EF_SUCCESS;
    }
    return EF_ERROR(EF_ERR_NOT_FOUND,
                    "%s: %s: process module '%s' is not supported by edgeflow (supported: %s); set "
                    "problem_data.skip_unsupported_processes to true to run without it",
                    a->parameters_path, ef_parameters_path(block), module, list);
  }
  EF_CHECK(!a->distributed || ops->distributed, EF_ERR_UNSUPPORTED,
           "%s: %s: process '%s' does not run on several ranks yet (docs/mpi.md lists those that do): run the case "
           "on one rank or without it",
           a->parameters_path, ef_parameters_path(block), module);
  ef_parameters parameters;
  EF_CALL(ef_parameters_get(block, "Parameters", &parameters));
  ef_process_entry *grown = realloc(a->processes, (size_t)(a->n_processes + 1) * sizeof *grown);
  EF_CHECK(grown, EF_ERR_MEMORY, "out of memory");
  a->processes = grown;
  ef_process_entry *e = &a->processes[a->n_processes];
  memset(e, 0, sizeof *e);
  e->ops = ops;
  e->is_output = is_output;
  snprintf(e->module, sizeof e->module, "%s", module);
  int err = ops->create(context, parameters, &e->data);
  if (err)
    return ef_error_push(err, __FILE__, __LINE__, "%s: creating '%s' at %s", a->parameters_path, module,
                         ef_parameters_path(block));
  a->n_processes++;
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Stop when steady (process_steady_state.c): problem_data.steady_state.relative_tolerance or the
 * --stop-when-steady switch add a stop_when_steady_process after the case's own processes; a
 * Kratos user may list one among the processes instead.  Any process may ask to stop. */

/* Add the stop_when_steady_process problem_data.steady_state or the switch ask for. */
static int ef_analysis_add_steady_stop(ef_analysis a) {
  ef_parameters steady, block = NULL;
  double tolerance, hold, minimum;
  long interval;
  EF_CALL(ef_parameters_get(a->problem_data, "steady_state", &steady));
  EF_CALL(ef_parameters_get_double(steady, "relative_tolerance", &tolerance));
  EF_CALL(ef_parameters_get_double(steady, "hold_time", &hold));
  EF_CALL(ef_parameters_get_double(steady, "minimum_time", &minimum));
  EF_CALL(ef_parameters_get_int(steady, "check_interval", &interval));
  EF_CHECK(tolerance >= 0 && hold >= 0, EF_ERR_PARAMETER,
           "%s: problem_data.steady_state needs relative_tolerance >= 0 (0: off) and hold_time >= 0 (got %g, %g)",
           a->parameters_path, tolerance, hold);
  if (tolerance == 0 && !a->options.stop_when_steady) return EF_SUCCESS;
  for (int i = 0; i < a->n_processes; i++)
    if (!strcmp(a->processes[i].module, "stop_when_steady_process")) return EF_SUCCESS; /* the case has one */
  if (tolerance == 0) tolerance = EF_STEADY_DEFAULT_RELATIVE_TOLERANCE;
  char json[512];
  snprintf(json, sizeof json,
           "{\"python_module\": \"stop_when_steady_process\", \"Parameters\": {\"relative_tolerance\": %.17g,"
           " \"hold_time\": %.17g, \"check_interval\": %ld, \"minimum_time\": %.17g, \"echo\": %s}}",
           tolerance, hold, interval, minimum, a->options.quiet ? "false" : "true");
  EF_CALL(ef_parameters_parse(json, "problem_data.steady_state", &block));
  ef_process_context context = {a->mp,        a->project, a->output_folder, a->case_folder, a->echo_level, &a->step,
                                a->options.restart_file != NULL, a->comm, a->distributed ? &a->partition : NULL};
  int err = ef_analysis_add_process(a, block, 0, &context, 0);
  ef_parameters_destroy(&block);
  return err;
}

/* After the processes' finalize_solution_step: a process that asks to stop ends the run here. */
static void ef_analysis_poll_stop_requests(ef_analysis a) {
  for (int i = 0; i < a->n_processes; i++)
    if (a->processes[i].ops->stop_requested && a->processes[i].ops->stop_requested(a->processes[i].data))
      a->stop_requested = 1;
}

/* run_summary.json: "steady_state_relative" {tolerance reached, last rate, stop time}. */
static int ef_analysis_report_steady_stop(ef_analysis a) {
  for (int i = 0; i < a->n_processes; i++) {
    if (strcmp(a->processes[i].module, "stop_when_steady_process")) continue;
    double rate;
    int reached;
    EF_CALL(ef_steady_state_process_report(a->processes[i].data, &rate, &reached));
    char json[256];
    snprintf(json, sizeof json, "{\"reached\": %s, \"last_relative_rate\": %.6g, \"time\": %.17g}",
             reached ? "true" : "false", rate, a->time);
    EF_CALL(ef_parameters_set_json(a->summary, "steady_state_relative", json));
  }
  return EF_SUCCESS;
}

/* A block naming save_restart_process (anything else, malformed blocks included, is left to
 * ef_analysis_add_process and its messages). */
static int ef_analysis_is_restart_block(ef_parameters block) {
  ef_parameters module;
  const char *name;
  if (ef_parameters_type(block) != EF_JSON_OBJECT || !ef_parameters_has(block, "python_module")) return 0;
  if (ef_parameters_get(block, "python_module", &module) || ef_parameters_type(module) != EF_JSON_STRING) return 0;
  if (ef_parameters_as_string(module, &name)) return 0;
  return !strcmp(name, "save_restart_process");
}

/* Every list inside "processes" and "output_processes", in file order; the save_restart_process
 * first, so that the restart folder is checked before any process creates a file. */
static int ef_analysis_create_processes(ef_analysis a, int skip_unsupported) {
  static ef_process_context context;
  context.model_part = a->mp;
  context.project = a->project;
  context.output_folder = a->output_folder;
  context.case_folder = a->case_folder;
  context.echo_level = a->echo_level;
  context.solver_step = &a->step;
  context.restart = a->options.restart_file != NULL;
  context.comm = a->comm;
  context.partition = a->distributed ? &a->partition : NULL;
  const char *groups[2] = {"processes", "output_processes"};
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1 && !a->options.load_only) EF_CALL(ef_analysis_check_stop_restart_folder(a));
    for (int g = 0; g < 2; g++) {
      ef_parameters group;
      EF_CALL(ef_parameters_get(a->project, groups[g], &group));
      EF_CHECK(ef_parameters_type(group) == EF_JSON_OBJECT, EF_ERR_PARAMETER, "%s: '%s' must be an object of lists",
               a->parameters_path, groups[g]);
      for (int l = 0; l < ef_parameters_size(group); l++) {
        ef_parameters list;
        EF_CALL(ef_parameters_at(group, l, &list));
        EF_CHECK(ef_parameters_type(list) == EF_JSON_ARRAY, EF_ERR_PARAMETER, "%s: '%s' is %s, expected a list",
                 a->parameters_path, ef_parameters_path(list), ef_json_type_name(ef_parameters_type(list)));
        for (int i = 0; i < ef_parameters_size(list); i++) {
          ef_parameters block;
          EF_CALL(ef_parameters_at(list, i, &block));
          if (ef_analysis_is_restart_block(block) != (pass == 0)) continue;
          EF_CALL(ef_analysis_add_process(a, block, g == 1, &context, skip_unsupported));
        }
      }
    }
  }
  return EF_SUCCESS;
}

/* ef_fixed_values_fn over all processes, in list order (later wins). */
static int ef_analysis_fixed_values(void *context, double t, double *velocity, double *pressure) {
  ef_analysis a = context;
  for (int i = 0; i < a->n_processes; i++) {
    ef_process_entry *e = &a->processes[i];
    if (e->ops->evaluate_fixed_values) EF_CALL(e->ops->evaluate_fixed_values(e->data, t, velocity, pressure));
  }
  return EF_SUCCESS;
}

/* Load the applications problem_data.applications names, else those of the options (none:
 * those already loaded); then find the strategy solver_type names (empty: the first one
 * registered). */
static int ef_analysis_load_applications(ef_analysis a) {
  ef_parameters list;
  EF_CALL(ef_parameters_get(a->problem_data, "applications", &list));
  EF_CHECK(ef_parameters_type(list) == EF_JSON_ARRAY, EF_ERR_PARAMETER,
           "%s: problem_data.applications must be a list of application names", a->parameters_path);
  const int n = ef_parameters_size(list);
  for (int i = 0; i < n; i++) {
    ef_parameters item;
    const char *name;
    EF_CALL(ef_parameters_at(list, i, &item));
    EF_CALL(ef_parameters_as_string(item, &name));
    EF_CALL(ef_registry_load_application(name));
  }
  const char *names = a->options.applications ? a->options.applications : "";
  while (n == 0 && *names) {
    char name[64];
    size_t len = strcspn(names, ", ");
    if (len > 0) {
      snprintf(name, sizeof name, "%.*s", (int)len, names);
      EF_CALL(ef_registry_load_application(name));
    }
    names += len;
    names += strspn(names, ", ");
  }
  const char *solver_type = "";
  if (ef_parameters_has(a->solver_settings, "solver_type"))
    EF_CALL(ef_parameters_get_string(a->solver_settings, "solver_type", &solver_type));
  char first[1024];
  ef_registry_list("strategy", first, sizeof first);
  EF_CHECK(first[0], EF_ERR_NOT_FOUND, "%s: no application is loaded: name one in problem_data.applications",
           a->parameters_path);
  if (!solver_type[0]) {
    first[strcspn(first, ",")] = '\0';
    solver_type = first;
  }
  return ef_registry_find_strategy(solver_type, &a->strategy_ops);
}

/* solver_settings against the core's defaults and the strategy's (which win on a shared key). */
static int ef_analysis_validate_solver_settings(ef_analysis a, char *tolerated, size_t size) {
  tolerated[0] = '\0';
  ef_parameters defaults = NULL, own = NULL, item;
  char *text = NULL;
  int err = EF_SUCCESS;
  EF_CALL_GOTO(ef_parameters_parse(ef_solver_defaults, "<solver_settings defaults>", &defaults), done);
  if (a->strategy_ops->settings_defaults) {
    EF_CALL_GOTO(ef_parameters_parse(a->strategy_ops->settings_defaults, a->strategy_ops->name, &own), done);
    for (int i = 0; ef_parameters_key_at(own, i); i++) {
      const char *key = ef_parameters_key_at(own, i);
      EF_CALL_GOTO(ef_parameters_get(own, key, &item), done);
      text = ef_parameters_to_string(item, 0);
      EF_CHECK_GOTO(text, EF_ERR_MEMORY, done, "out of memory");
      EF_CALL_GOTO(ef_parameters_set_json(defaults, key, text), done);
      free(text);
      text = NULL;
    }
  }
  text = ef_parameters_to_string(defaults, 0);
  EF_CHECK_GOTO(text, EF_ERR_MEMORY, done, "out of memory");
  EF_CALL_GOTO(ef_parameters_validate_defaults_tolerant(a->solver_settings, text, a->strategy_ops->ignored_settings,
                                                        tolerated, size),
               done);
done:
  free(text);
  ef_parameters_destroy(&own);
  ef_parameters_destroy(&defaults);
  return err;
}

int ef_analysis_initialize(ef_analysis a) {
  EF_CHECK(!a->initialized, EF_ERR_INTERNAL, "ef_analysis_initialize called twice");
  a->ev_initialize = ef_log_event("setup", "initialize (total)");
  a->ev_read = ef_log_event("setup", "read mesh");
  a->ev_refine = ef_log_event("setup", "refine mesh");
  a->ev_prepare = ef_log_event("setup", "strategy prepare and processes");
  a->ev_create = ef_log_event("setup", "strategy create");
  a->ev_strategy_init = ef_log_event("setup", "strategy initialize");
  a->ev_step = ef_log_event("loop", "solve step");
  a->ev_processes = ef_log_event("loop", "processes");
  a->ev_output = ef_log_event("loop", "output");
  ef_log_event_begin(a->ev_initialize);

  EF_CALL(ef_parameters_validate_defaults(a->project, ef_project_defaults));
  EF_CALL(ef_parameters_get(a->project, "problem_data", &a->problem_data));
  EF_CALL(ef_analysis_read_wall_time(a));
  EF_CALL(ef_parameters_validate_defaults(a->problem_data, ef_problem_data_defaults));
  EF_CALL(ef_parameters_get(a->project, "solver_settings", &a->solver_settings));
  if (a->options.solver_type) EF_CALL(ef_parameters_set_string(a->solver_settings, "solver_type", a->options.solver_type));
  EF_CALL(ef_register_core_processes());
  EF_CALL(ef_analysis_load_applications(a));
  char tolerated[2048];
  EF_CALL(ef_analysis_validate_solver_settings(a, tolerated, sizeof tolerated));
  EF_CALL(ef_analysis_setup_parallel(a));
  long echo, interval;
  int skip;
  const char *folder;
  EF_CALL(ef_parameters_get_int(a->problem_data, "echo_level", &echo));
  EF_CALL(ef_parameters_get_int(a->problem_data, "progress_interval", &interval));
  EF_CALL(ef_parameters_get_double(a->problem_data, "start_time", &a->start_time));
  EF_CALL(ef_parameters_get_double(a->problem_data, "end_time", &a->end_time));
  EF_CALL(ef_parameters_get_bool(a->problem_data, "skip_unsupported_processes", &skip));
  EF_CALL(ef_parameters_get_string(a->problem_data, "output_folder", &folder));
  EF_CHECK(a->end_time >= a->start_time, EF_ERR_PARAMETER, "%s: problem_data.end_time (%g) < start_time (%g)",
           a->parameters_path, a->end_time, a->start_time);
  ef_parameters steady;
  long steady_interval;
  EF_CALL(ef_parameters_get(a->problem_data, "steady_state", &steady));
  EF_CALL(ef_parameters_get_double(steady, "velocity_rate_tolerance", &a->steady_tolerance));
  EF_CALL(ef_parameters_get_int(steady, "check_interval", &steady_interval));
  EF_CALL(ef_parameters_get_double(steady, "minimum_time", &a->steady_min_time));
  EF_CHECK(a->steady_tolerance >= 0 && steady_interval >= 1, EF_ERR_PARAMETER,
           "%s: problem_data.steady_state needs velocity_rate_tolerance >= 0 (0: off) and check_interval >= 1 "
           "(got %g and %ld)", a->parameters_path, a->steady_tolerance, steady_interval);
  EF_CHECK(a->steady_tolerance == 0 || a->strategy_ops->steady_state_variable, EF_ERR_UNSUPPORTED,
           "%s: problem_data.steady_state: strategy '%s' has no steady-state test", a->parameters_path,
           a->strategy_ops->name);
  a->steady_interval = (int)steady_interval;
  a->steady_rate = -1.0;
  a->echo_level = (int)echo;
  a->progress_interval = interval > 0 ? (int)interval : 10;
  if (a->options.skip_unsupported_processes >= 0) skip = a->options.skip_unsupported_processes;
  if (a->options.output_folder) folder = a->options.output_folder;
  snprintf(a->output_folder, sizeof a->output_folder, "%s", folder[0] ? folder : ".");
  EF_CALL(ef_make_folders(a->output_folder));
  /* On several ranks rank 0 alone owns the folder's bookkeeping (manifest, run_summary.json). */
  if (!a->options.load_only && ef_comm_rank(a->comm) == 0) EF_CALL(ef_analysis_claim_output_folder(a));
  EF_CALL(ef_output_destinations_check(a->project, a->output_folder));
  if (tolerated[0] && !a->options.quiet)
    fprintf(stderr, "edgeflow: warning: %s: solver_settings keys used only by Kratos' own solvers are ignored: %s\n",
            a->parameters_path, tolerated);

  if (a->strategy_ops->begin_setup && !a->distributed && !a->options.load_only)
    a->strategy_ops->begin_setup(a->solver_settings);
  EF_CALL(ef_analysis_read_mesh(a));
  if (a->distributed) EF_CALL(ef_analysis_split_mesh(a));
  if (a->options.restart_file && !a->options.load_only)
    EF_CALL(a->distributed ? ef_analysis_restart_open_ranks(a) : ef_analysis_restart_open(a));
  if (a->strategy_ops->add_variables) EF_CALL(a->strategy_ops->add_variables(a->mp));
  if (!a->options.quiet && a->distributed) ef_analysis_print_piece(a);
  if (!a->options.quiet && ef_comm_rank(a->comm) == 0) ef_model_part_print_summary(a->mp, stdout);
  ef_log_event_begin(a->ev_prepare);
  if (a->strategy_ops->prepare) {
    const ef_strategy_setup setup = {a->mp, a->solver_settings, a->parameters_path, a->case_folder, a->summary,
                                     a->options.quiet};
    EF_CALL(a->strategy_ops->prepare(&setup, &a->config));
  }

  EF_CALL(ef_analysis_create_processes(a, skip));
  EF_CALL(ef_analysis_add_steady_stop(a));
  ef_log_event_end(a->ev_prepare);
  a->time = a->start_time;
  if (a->run.restarted) a->time = a->run.time;
  a->initialized = 1;
  const char *solver_type = a->strategy_ops->name;
  if (a->options.load_only) {
    if (!a->options.quiet) printf("strategy: %s; %d processes created\n", solver_type, a->n_processes);
    ef_log_event_end(a->ev_initialize);
    return EF_SUCCESS;
  }

  int ev_processes = ef_log_event("setup", "processes initialize");
  ef_log_event_begin(ev_processes);
  for (int i = 0; i < a->n_processes; i++)
    if (a->processes[i].ops->execute_initialize) EF_CALL(a->processes[i].ops->execute_initialize(a->processes[i].data));
  ef_log_event_end(ev_processes);
  int time_dependent = 0;
  for (int i = 0; i < a->n_processes; i++)
    if (a->processes[i].ops->is_time_dependent && a->processes[i].ops->is_time_dependent(a->processes[i].data))
      time_dependent = 1;

  a->config.model_part = a->mp;
  a->config.settings = a->solver_settings;
  a->config.fixed_values = ef_analysis_fixed_values;
  a->config.fixed_values_context = a;
  a->config.time_dependent_bcs = time_dependent;
  a->config.echo_level = a->echo_level;
  a->config.comm = a->comm;
  a->config.partition = a->distributed ? &a->partition : NULL;
  EF_CALL(ef_parameters_set_json(a->summary, "strategy", "{}"));
  EF_CALL(ef_parameters_get(a->summary, "strategy", &a->config.summary));
  EF_CALL(ef_parameters_set_string(a->config.summary, "name", solver_type));
  ef_log_event_begin(a->ev_create);
  EF_CALL(a->strategy_ops->create(&a->config, &a->strategy));
  ef_log_event_end(a->ev_create);

  for (int i = 0; i < a->n_processes; i++)
    if (a->processes[i].ops->execute_before_solution_loop)
      EF_CALL(a->processes[i].ops->execute_before_solution_loop(a->processes[i].data));
  /* Boundary values of the initial state, so the strategy starts from them. */
  for (int i = 0; i < a->n_processes; i++)
    if (a->processes[i].ops->execute_initialize_solution_step)
      EF_CALL(a->processes[i].ops->execute_initialize_solution_step(a->processes[i].data, a->time));
  ef_log_event_begin(a->ev_strategy_init);
  EF_CALL(a->strategy_ops->initialize(a->strategy));
  ef_log_event_end(a->ev_strategy_init);
  if (a->strategy_ops->fixed_time_step) EF_CALL(a->strategy_ops->fixed_time_step(a->strategy, &a->user_dt));
  if (a->run.reader) EF_CALL(ef_analysis_restart_load(a));
  EF_CALL(ef_analysis_track_outputs(a));
  ef_log_event_end(a->ev_initialize);
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Time-step semantics.  A user who gives a fixed time_step Δt_u counts in units of it: "output every
 * step", "forces every 10 steps".  When the explicit step's stability limit forces a smaller Δt, the
 * solver takes n = ceil(Δt_u / Δt_stable) equal steps per Δt_u, landing on every t_cut + k Δt_u, and
 * the step the processes see is the number of Δt_u completed, so those schedules keep their meaning in
 * simulated time.  Without a cut (or with automatic stepping) the processes see the solver's step. */

/* Called after compute_time_step: detect the first cut (one warning) and, once cut, shorten dt so
 * the step lands on the next multiple of Δt_u if fewer than one stable step remains to it. */
static int ef_analysis_keep_user_time_step(ef_analysis a) {
  a->landing_time = -HUGE_VAL;
  if (a->user_dt <= 0.0) return EF_SUCCESS;
  if (!a->cut) {
    if (a->dt >= a->user_dt * (1.0 - 1e-12)) return EF_SUCCESS;
    a->cut = 1;
    a->cut_time = a->time;
    a->cut_step = a->step;
    {
      /* stderr even when quiet: it changes what the run writes. */
      const double per = ceil(a->user_dt / a->dt - 1e-9);
      /* save_restart_process's "step" control follows the same rule: named here, with its conversion. */
      char restart[200] = "";
      if (a->run.configured && a->run.control == EF_CONTROL_STEP && a->run.frequency > 0)
        snprintf(restart, sizeof restart, ", \"restart_control_type\": \"step\" of save_restart_process: every "
                 "%.0f x %g = %g", a->run.frequency, a->user_dt, a->run.frequency * a->user_dt);
      fprintf(stderr,
              "edgeflow: warning: the fixed time step %g exceeds the stability limit %g (t = %g); the solver takes "
              "%.0f steps of %.4g per time step, landing on every multiple of %g, and step-based schedules "
              "(\"output_control_type\": \"step\" of outputs and processes%s) count time steps of %g, not solver "
              "steps (\"solver_step\" as either control type counts solver steps)\n",
              a->user_dt, a->dt, a->time, per, a->user_dt / per, a->user_dt, restart, a->user_dt);
    }
  }
  const double k = floor((a->time - a->cut_time) / a->user_dt + 1e-6);
  const double target = a->cut_time + (k + 1.0) * a->user_dt;
  const double remaining = target - a->time;
  const double n = fmax(1.0, ceil(remaining / a->dt - 1e-9));
  a->dt = remaining / n;
  if (n == 1.0) a->landing_time = target;
  return EF_SUCCESS;
}

/* Called after time += dt: snap onto the grid point the step was aimed at, and count the steps the
 * processes see. */
static void ef_analysis_count_user_steps(ef_analysis a) {
  if (!a->cut) {
    a->process_step = a->step;
    return;
  }
  if (a->landing_time > -HUGE_VAL) a->time = a->landing_time;
  a->process_step = a->cut_step + (long)floor((a->time - a->cut_time) / a->user_dt + 1e-6);
}

long ef_analysis_output_step(ef_analysis a) { return a->process_step; }

/* Wrong call orders are errors, not crashes: the Python binding calls the stages one by one.
 * need_strategy: the stage steps the solution (not on a load-only analysis). */
static int ef_analysis_require(ef_analysis a, const char *stage, int need_strategy) {
  EF_CHECK(a, EF_ERR_PARAMETER, "%s: NULL analysis", stage);
  EF_CHECK(a->initialized, EF_ERR_PARAMETER, "%s called before ef_analysis_initialize (Initialize)", stage);
  EF_CHECK(!need_strategy || !a->finalized, EF_ERR_PARAMETER, "%s called after ef_analysis_finalize (Finalize)",
           stage);
  EF_CHECK(!need_strategy || a->strategy, EF_ERR_PARAMETER, "%s: the analysis has no strategy (load only)", stage);
  return EF_SUCCESS;
}

int ef_analysis_keep_advancing(ef_analysis a) {
  if (a->options.max_steps > 0 && a->step - a->run.first_step >= a->options.max_steps) return 0;
  if (a->steady_reached || a->stop_requested || a->run.stopped) return 0;
  return a->time < a->end_time - 1e-12 * fmax(1.0, fabs(a->end_time));
}

int ef_analysis_initialize_solution_step(ef_analysis a) {
  EF_CALL(ef_analysis_require(a, "ef_analysis_initialize_solution_step", 1));
  EF_CHECK(a->strategy, EF_ERR_INTERNAL, "the analysis has no strategy (not initialized, or load_only)");
  /* A caller driving the steps itself (the Python binding) never enters run_solution_loop. */
  if (a->wall_loop_start <= 0) a->wall_loop_start = ef_wtime();
  EF_CALL(a->strategy_ops->compute_time_step(a->strategy, &a->dt));
  EF_CALL(ef_analysis_keep_user_time_step(a));
  /* The last step ends on end_time exactly. */
  if (a->time + a->dt > a->end_time) {
    a->dt = a->end_time - a->time;
    a->landing_time = -HUGE_VAL;
  }
  EF_CHECK(a->dt > 0 && isfinite(a->dt), EF_ERR_SOLVER, "time step %g at t = %g is not positive", a->dt, a->time);
  a->step++;
  ef_log_event_begin(a->ev_processes);
  for (int i = 0; i < a->n_processes; i++)
    if (a->processes[i].ops->execute_initialize_solution_step)
      EF_CALL(a->processes[i].ops->execute_initialize_solution_step(a->processes[i].data, a->time + a->dt));
  ef_log_event_end(a->ev_processes);
  return EF_SUCCESS;
}

int ef_analysis_solve_solution_step(ef_analysis a) {
  EF_CALL(ef_analysis_require(a, "ef_analysis_solve_solution_step", 1));
  ef_step_info info;
  memset(&info, 0, sizeof info);
  ef_log_event_begin(a->ev_step);
  int err = a->strategy_ops->solve_step(a->strategy, a->time, a->dt, &info);
  ef_log_event_end(a->ev_step);
  if (err)
    return ef_error_push(err, __FILE__, __LINE__, "step %ld (t = %.9g -> %.9g, dt = %.3g) failed; the last "
                         "complete output on disk is the last one written before this step", a->step, a->time,
                         a->time + a->dt, a->dt);
  a->time += a->dt;
  ef_analysis_count_user_steps(a);
  a->last_iterations = info.pressure_iterations;
  a->last_residual = info.pressure_residual;
  a->total_iterations += info.pressure_iterations;
  if (info.pressure_iterations > a->max_iterations) a->max_iterations = info.pressure_iterations;
  a->phase_totals.seconds_momentum += info.seconds_momentum;
  a->phase_totals.seconds_pressure += info.seconds_pressure;
  a->phase_totals.seconds_correction += info.seconds_correction;
  a->phase_totals.seconds_transfer += info.seconds_transfer;
  return EF_SUCCESS;
}

/* The steady-state test every check_interval steps: the largest change of the strategy's
 * steady_state_variable (the velocity) since the last check divided by the time between them.  The rate is an
 * average over the interval, so a mode oscillating faster than it is damped in
 * the measure; the interval is the user's to choose. */
static int ef_analysis_check_steady(ef_analysis a) {
  if (a->steady_tolerance <= 0 || a->step % a->steady_interval != 0) return EF_SUCCESS;
  EF_CALL(ef_model_part_sync_to_host(a->mp));
  double *u;
  uint8_t *fixed;
  int nc;
  EF_CALL(ef_model_part_variable_arrays(a->mp, a->strategy_ops->steady_state_variable, &u, &fixed, &nc));
  const int64_t n = a->mp->n_nodes * nc;
  if (!a->steady_u) {
    EF_MALLOC(a->steady_u, (size_t)n);
  } else {
    double du = 0.0;
    for (int64_t i = 0; i < n; i++) du = fmax(du, fabs(u[i] - a->steady_u[i]));
    if (a->distributed) EF_CALL(ef_comm_allreduce(a->comm, &du, 1, EF_COMM_MAX)); /* ghosts: owners' values */
    a->steady_rate = du / (a->time - a->steady_t_check);
    if (a->steady_rate < a->steady_tolerance && a->time >= a->steady_min_time) {
      a->steady_reached = 1;
      if (!a->options.quiet && ef_comm_rank(a->comm) == 0)
        printf("steady state at step %ld, t = %.6g: max |du/dt| = %.3e < %.3e\n", a->step, a->time,
               a->steady_rate, a->steady_tolerance);
    }
  }
  memcpy(a->steady_u, u, (size_t)n * sizeof *u);
  a->steady_t_check = a->time;
  return EF_SUCCESS;
}

int ef_analysis_finalize_solution_step(ef_analysis a) {
  EF_CALL(ef_analysis_require(a, "ef_analysis_finalize_solution_step", 1));
  EF_CALL(ef_analysis_check_steady(a));
  ef_log_event_begin(a->ev_processes);
  for (int i = 0; i < a->n_processes; i++)
    if (a->processes[i].ops->execute_finalize_solution_step)
      EF_CALL(a->processes[i].ops->execute_finalize_solution_step(a->processes[i].data, a->time,
                                                                  (int)a->process_step));
  ef_log_event_end(a->ev_processes);
  ef_analysis_poll_stop_requests(a);
  if (!a->options.quiet && ef_comm_rank(a->comm) == 0 &&
      (a->step % a->progress_interval == 0 || !ef_analysis_keep_advancing(a))) {
    double wall = ef_wtime() - a->wall_loop_start;
    double done = (a->time - a->start_time) / fmax(a->end_time - a->start_time, 1e-300);
    double eta = done > 0 ? wall * (1.0 - done) / done : 0.0;
    const long done_steps = a->step - a->run.first_step;
    if (a->options.max_steps > 0 && done_steps > 0)
      eta = wall * (double)(a->options.max_steps - done_steps) / (double)done_steps;
    printf("step %7ld  t = %-12.6g  dt = %-10.4g  pressure iterations %4d (res %.2e)  wall %8.2f s  left %8.1f s\n",
           a->step, a->time, a->dt, a->last_iterations, a->last_residual, wall, eta);
    fflush(stdout);
  }
  return EF_SUCCESS;
}

int ef_analysis_output_solution_step(ef_analysis a) {
  EF_CALL(ef_analysis_require(a, "ef_analysis_output_solution_step", 1));
  /* A restarted run's first state was written by the run that saved it. */
  if (a->run.restarted && a->step == a->run.first_step) return EF_SUCCESS;
  const double t0 = ef_wtime();
  ef_log_event_begin(a->ev_output);
  /* The step that reached the steady state is the last one: every output process writes it,
   * on schedule or not, so the converged state is on disk. */
  const int last_steady = (a->steady_reached || a->stop_requested) && a->step > 0;
  for (int i = 0; i < a->n_processes; i++) {
    ef_process_entry *e = &a->processes[i];
    if (!e->ops->print_output) continue;
    if (!last_steady && e->ops->is_output_step && !e->ops->is_output_step(e->data, a->time, (int)a->process_step))
      continue;
    EF_CALL(e->ops->print_output(e->data, a->time, (int)a->process_step));
    e->printed_step = a->step;
  }
  ef_log_event_end(a->ev_output);
  a->run.output_seconds = fmax(a->run.output_seconds, ef_wtime() - t0);
  return a->step > a->run.first_step ? ef_analysis_end_of_step(a) : EF_SUCCESS;
}

int ef_analysis_run_solution_loop(ef_analysis a) {
  a->wall_loop_start = ef_wtime();
  while (ef_analysis_keep_advancing(a)) {
    EF_CALL(ef_analysis_initialize_solution_step(a));
    EF_CALL(ef_analysis_solve_solution_step(a));
    EF_CALL(ef_analysis_finalize_solution_step(a));
    EF_CALL(ef_analysis_output_solution_step(a));
  }
  return EF_SUCCESS;
}

int ef_analysis_finalize(ef_analysis a) {
  EF_CALL(ef_analysis_require(a, "ef_analysis_finalize", 0));
  if (a->finalized) return EF_SUCCESS;
  a->finalized = 1;
  for (int i = 0; i < a->n_processes; i++)
    if (a->processes[i].ops->execute_finalize) EF_CALL(a->processes[i].ops->execute_finalize(a->processes[i].data));
  if (a->strategy_ops && a->strategy && a->strategy_ops->finalize) EF_CALL(a->strategy_ops->finalize(a->strategy));

  ef_parameters s = a->summary;
  const char *name;
  EF_CALL(ef_parameters_get_string(a->problem_data, "problem_name", &name));
  EF_CALL(ef_parameters_set_string(s, "problem_name", name));
  EF_CALL(ef_parameters_set_string(s, "parameters_file", a->parameters_path));
  char json[1024];
  snprintf(json, sizeof json,
           "{\"dimension\": %d, \"nodes\": %lld, \"elements\": %lld, \"conditions\": %lld, \"source\": \"%s\","
           " \"renumbering\": \"%s\"}",
           a->mp ? a->mp->dim : 0, a->mp ? (long long)a->mp->n_nodes : 0LL,
           a->mp ? (long long)a->mp->n_elements : 0LL, a->mp ? (long long)a->mp->n_conditions : 0LL,
           a->mp && a->mp->source_file ? a->mp->source_file : "", a->renumbering);
  EF_CALL(ef_parameters_set_json(s, "mesh", json));
  double loop_wall = a->wall_loop_start > 0 ? ef_wtime() - a->wall_loop_start : 0.0;
  snprintf(json, sizeof json,
           "{\"steps\": %ld, \"start_time\": %.17g, \"end_time\": %.17g, \"simulated_time\": %.17g,"
           " \"wall_seconds_total\": %.6f, \"wall_seconds_loop\": %.6f, \"seconds_per_step\": %.9g}",
           a->step, a->start_time, a->time, a->time - a->start_time, ef_wtime() - a->wall_start, loop_wall,
           a->step > a->run.first_step ? loop_wall / (double)(a->step - a->run.first_step) : 0.0);
  EF_CALL(ef_parameters_set_json(s, "run", json));
  if (a->user_dt > 0) {
    snprintf(json, sizeof json,
             "{\"fixed\": %.17g, \"cut_by_stability_limit\": %s, \"cut_at_time\": %.17g, \"output_steps\": %ld}",
             a->user_dt, a->cut ? "true" : "false", a->cut ? a->cut_time : 0.0, a->process_step);
    EF_CALL(ef_parameters_set_json(s, "time_step", json));
  }
  if (a->steady_tolerance > 0) {
    snprintf(json, sizeof json,
             "{\"velocity_rate_tolerance\": %.6g, \"reached\": %s, \"last_velocity_rate\": %.6g}",
             a->steady_tolerance, a->steady_reached ? "true" : "false", a->steady_rate);
    EF_CALL(ef_parameters_set_json(s, "steady_state", json));
  }
  EF_CALL(ef_analysis_report_steady_stop(a));
  snprintf(json, sizeof json,
           "{\"momentum\": %.6f, \"pressure\": %.6f, \"correction\": %.6f, \"transfer\": %.6f,"
           " \"setup\": %.6f, \"output\": %.6f, \"processes\": %.6f}",
           a->phase_totals.seconds_momentum, a->phase_totals.seconds_pressure, a->phase_totals.seconds_correction,
           a->phase_totals.seconds_transfer, ef_log_event_seconds(a->ev_initialize),
           ef_log_event_seconds(a->ev_output), ef_log_event_seconds(a->ev_processes));
  EF_CALL(ef_parameters_set_json(s, "wall_seconds_by_phase", json));
  snprintf(json, sizeof json, "{\"total\": %ld, \"mean_per_step\": %.6g, \"max_per_step\": %d, \"last\": %d}",
           a->total_iterations, a->step ? (double)a->total_iterations / (double)a->step : 0.0, a->max_iterations,
           a->last_iterations);
  EF_CALL(ef_parameters_set_json(s, "pressure_solver_iterations", json));
  EF_CALL(ef_log_to_parameters(s, "events"));
  EF_CALL(ef_analysis_summary_status(a, s));
  if (!a->options.quiet && ef_comm_rank(a->comm) == 0) ef_log_print_table(stdout);

  if (a->comm) {
    snprintf(json, sizeof json, "{\"ranks\": %d, \"communicator\": \"%s\"}", ef_comm_size(a->comm),
             ef_comm_name(a->comm));
    EF_CALL(ef_parameters_set_json(s, "parallel", json));
  }
  /* Rank 0 writes the summary and the manifest, once every rank's outputs are on disk. */
  if (a->distributed) EF_CALL(ef_comm_barrier(a->comm));
  if (ef_comm_rank(a->comm) != 0) return EF_SUCCESS;
  char path[4200];
  snprintf(path, sizeof path, "%s/run_summary.json", a->output_folder);
  char *text = ef_parameters_to_string(s, 1);
  EF_CHECK(text, EF_ERR_MEMORY, "out of memory writing the run summary");
  int err = ef_write_text_file_atomic(path, text);
  free(text);
  if (!err) err = ef_analysis_track_outputs(a);
  return err;
}

int ef_analysis_run(ef_analysis a) {
  int err = ef_analysis_initialize(a);
  if (err) {
    ef_analysis_write_failure_summary(a, err);
    return err;
  }
  if (!a->options.load_only) {
    err = ef_analysis_output_solution_step(a);
    if (!err) err = ef_analysis_run_solution_loop(a);
    if (err) {
      /* Keep what we know: the summary of the steps that completed. */
      char saved[4096];
      snprintf(saved, sizeof saved, "%s", ef_error_message());
      a->run.status = "failed";
      snprintf(a->run.error, sizeof a->run.error, "%s", saved);
      ef_analysis_finalize(a);
      ef_error_set(err, __FILE__, __LINE__, "%s", saved);
      return err;
    }
  }
  return ef_analysis_finalize(a);
}

ef_model_part ef_analysis_model_part(ef_analysis a) { return a->mp; }
ef_parameters ef_analysis_parameters(ef_analysis a) { return a->project; }
double ef_analysis_time(ef_analysis a) { return a->time; }
double ef_analysis_delta_time(ef_analysis a) { return a->dt; }
long ef_analysis_step(ef_analysis a) { return a->step; }
ef_comm ef_analysis_comm(ef_analysis a) { return a ? a->comm : NULL; }
const ef_partition *ef_analysis_partition(ef_analysis a) { return a && a->distributed ? &a->partition : NULL; }
int ef_analysis_last_iterations(ef_analysis a) { return a->last_iterations; }
const char *ef_analysis_output_folder(ef_analysis a) { return a->output_folder; }

int ef_analysis_copy_pressure_system(ef_analysis a, ef_pressure_system *out) {
  memset(out, 0, sizeof *out);
  EF_CHECK(a->strategy, EF_ERR_INTERNAL, "the analysis has no strategy yet");
  EF_CHECK(a->strategy_ops->copy_pressure_system, EF_ERR_UNSUPPORTED,
           "strategy '%s' cannot copy its pressure system", a->strategy_ops->name);
  EF_CHECK(a->step > 0, EF_ERR_INTERNAL, "no step has been solved yet");
  return a->strategy_ops->copy_pressure_system(a->strategy, out);
}

int ef_pressure_system_alloc(int64_t n, int64_t nnz, ef_pressure_system *s) {
  EF_CHECK(s && n >= 0 && nnz >= 0, EF_ERR_PARAMETER, "ef_pressure_system_alloc: bad argument");
  memset(s, 0, sizeof *s);
  s->n = n;
  s->nnz = nnz;
  s->row_ptr = malloc((size_t)(n + 1) * sizeof *s->row_ptr);
  s->col = malloc((size_t)nnz * sizeof *s->col);
  s->values = malloc((size_t)nnz * sizeof *s->values);
  s->values_full = malloc((size_t)nnz * sizeof *s->values_full);
  s->rhs = malloc((size_t)n * sizeof *s->rhs);
  s->solution = malloc((size_t)n * sizeof *s->solution);
  s->initial_guess = malloc((size_t)n * sizeof *s->initial_guess);
  s->fixed = malloc((size_t)n);
  if (!(s->row_ptr && s->col && s->values && s->values_full && s->rhs && s->solution && s->initial_guess &&
        s->fixed)) {
    ef_pressure_system_free(s);
    EF_CHECK(0, EF_ERR_MEMORY, "out of memory copying the pressure system (%lld rows)", (long long)n);
  }
  return EF_SUCCESS;
}

void ef_pressure_system_free(ef_pressure_system *s) {
  if (!s) return;
  free(s->row_ptr);
  free(s->col);
  free(s->values);
  free(s->values_full);
  free(s->rhs);
  free(s->solution);
  free(s->initial_guess);
  free(s->fixed);
  memset(s, 0, sizeof *s);
}

/* ===========================================================================
 * Restart files, stops and limits, the output manifest (docs/restart.md).  Kept together
 * here: the loop above calls them at four points (process creation, initialize, the end of
 * each step's output, finalize). */

/* Kratos' save_restart_process Parameters; the load-side and MPI keys are accepted and unused. */
static const char ef_restart_defaults[] =
    "{\"model_part_name\": \"\", \"echo_level\": 0, \"serializer_trace\": \"no_trace\","
    " \"restart_save_frequency\": 0.0, \"restart_control_type\": \"time\", \"save_restart_files_in_folder\": true,"
    " \"io_path\": \"\", \"io_foldername\": \"\", \"max_files_to_keep\": -1, \"input_filename\": \"\","
    " \"restart_load_file_label\": \"\", \"load_restart_files_from_folder\": true, \"set_mpi_communicator\": true}";

/* problem_data.max_wall_time: seconds, or "HH:MM:SS" / "MM:SS" as batch systems write it. */
static int ef_analysis_read_wall_time(ef_analysis a) {
  if (!ef_parameters_has(a->problem_data, "max_wall_time")) return EF_SUCCESS;
  ef_parameters v;
  EF_CALL(ef_parameters_get(a->problem_data, "max_wall_time", &v));
  if (ef_parameters_type(v) == EF_JSON_STRING) {
    const char *text;
    EF_CALL(ef_parameters_as_string(v, &text));
    double parts[3] = {0, 0, 0}, seconds = 0.0;
    int n = sscanf(text, "%lf:%lf:%lf", &parts[0], &parts[1], &parts[2]);
    EF_CHECK(n >= 2 && n <= 3 && strspn(text, "0123456789:.") == strlen(text), EF_ERR_PARAMETER,
             "%s: problem_data.max_wall_time is \"%s\"; give seconds (a number) or \"HH:MM:SS\"", a->parameters_path,
             text);
    for (int i = 0; i < n; i++) seconds = 60.0 * seconds + parts[i];
    EF_CALL(ef_parameters_set_double(a->problem_data, "max_wall_time", seconds));
  }
  EF_CALL(ef_parameters_get_double(a->problem_data, "max_wall_time", &a->run.max_wall_time));
  EF_CHECK(a->run.max_wall_time >= 0 && isfinite(a->run.max_wall_time), EF_ERR_PARAMETER,
           "%s: problem_data.max_wall_time must be >= 0 seconds (0: no limit), got %g", a->parameters_path,
           a->run.max_wall_time);
  return EF_SUCCESS;
}

/* Where restart files go and how they are named, when no save_restart_process says so. */
static void ef_analysis_restart_defaults(ef_analysis a) {
  ef_run_state *r = &a->run;
  if (r->folder[0]) return;
  const char *name = a->mp && a->mp->name ? a->mp->name : EF_DEFAULT_MODEL_PART_NAME;
  snprintf(r->base, sizeof r->base, "%s", name);
  snprintf(r->folder, sizeof r->folder, "%s/%s__restart_files", a->output_folder, name);
}

/* A save_restart_process block: the analysis saves restart files itself (it owns the state). */
static int ef_analysis_configure_restart(ef_analysis a, ef_parameters block) {
  ef_run_state *r = &a->run;
  ef_parameters p;
  const char *part, *control, *io_path, *io_folder, *trace, *input;
  long keep, echo;
  int in_folder;
  EF_CALL(ef_parameters_get(block, "Parameters", &p));
  EF_CALL(ef_parameters_validate_defaults(p, ef_restart_defaults));
  EF_CHECK(!r->configured, EF_ERR_PARAMETER, "%s: %s: a second save_restart_process (one is enough)",
           a->parameters_path, ef_parameters_path(block));
  EF_CALL(ef_parameters_get_string(p, "model_part_name", &part));
  EF_CALL(ef_parameters_get_string(p, "restart_control_type", &control));
  EF_CALL(ef_parameters_get_double(p, "restart_save_frequency", &r->frequency));
  EF_CALL(ef_parameters_get_bool(p, "save_restart_files_in_folder", &in_folder));
  EF_CALL(ef_parameters_get_string(p, "io_path", &io_path));
  EF_CALL(ef_parameters_get_string(p, "io_foldername", &io_folder));
  EF_CALL(ef_parameters_get_int(p, "max_files_to_keep", &keep));
  EF_CALL(ef_parameters_get_int(p, "echo_level", &echo));
  EF_CALL(ef_parameters_get_string(p, "serializer_trace", &trace));
  EF_CALL(ef_parameters_get_string(p, "input_filename", &input));
  const char *path = ef_parameters_path(p);
  EF_CHECK(!part[0] || !strcmp(part, a->mp->name) || ef_model_part_is_root_alias(a->mp, part), EF_ERR_PARAMETER,
           "%s: %s.model_part_name is '%s': restart files hold the whole model part '%s'", a->parameters_path, path,
           part, a->mp->name);
  char label[1200];
  snprintf(label, sizeof label, "%s: %s.restart_control_type", a->parameters_path, path);
  ef_output_control clock;
  EF_CALL(ef_output_control_parse(label, control, &clock));
  EF_CHECK(r->frequency >= 0 && isfinite(r->frequency), EF_ERR_PARAMETER,
           "%s: %s.restart_save_frequency must be >= 0 (0: every step), got %g", a->parameters_path, path,
           r->frequency);
  EF_CHECK(!strcmp(trace, "no_trace") || !strcmp(trace, "trace_error") || !strcmp(trace, "trace_all"),
           EF_ERR_PARAMETER, "%s: %s.serializer_trace is '%s'; expected \"no_trace\", \"trace_error\" or \"trace_all\"",
           a->parameters_path, path, trace);
  EF_CHECK(!strchr(input, '/'), EF_ERR_PARAMETER, "%s: %s.input_filename '%s' contains '/'; use io_path for folders",
           a->parameters_path, path, input);
  r->configured = 1;
  r->control = (int)clock;
  if (clock != EF_CONTROL_TIME) r->frequency = floor(r->frequency); /* Kratos: a step count is an integer */
  r->next = r->frequency;
  r->max_files = keep > 0 ? (int)keep : 0;
  r->echo_level = (int)echo;
  snprintf(r->base, sizeof r->base, "%s", input[0] ? input : a->mp->name);
  const char *sub = io_path[0] ? io_path : io_folder;
  if (!in_folder)
    snprintf(r->folder, sizeof r->folder, "%s", a->output_folder);
  else if (sub[0] == '/')
    snprintf(r->folder, sizeof r->folder, "%s", sub);
  else if (sub[0])
    snprintf(r->folder, sizeof r->folder, "%s/%s", a->output_folder, sub);
  else
    snprintf(r->folder, sizeof r->folder, "%s/%s__restart_files", a->output_folder, r->base);
  /* The folder is created only at the first restart file: prove it now, before the first step (the
   * output folder itself, save_restart_files_in_folder false, is checked with the outputs). */
  if (in_folder) {
    char given_by[1200];
    if (sub[0]) {
      ef_parameters v;
      EF_CALL(ef_parameters_get(p, io_path[0] ? "io_path" : "io_foldername", &v));
      snprintf(given_by, sizeof given_by, "%s of save_restart_process", ef_parameters_path(v));
    } else {
      snprintf(given_by, sizeof given_by, "%s.io_path \"\" of save_restart_process: the default %s__restart_files",
               path, r->base);
    }
    EF_CALL(ef_restart_destination_check(r->folder, given_by, 1));
  }
  return EF_SUCCESS;
}

/* Without a save_restart_process a restart file is still written on a stop (SIGINT/SIGTERM,
 * max_wall_time) into <output folder>/<model part>__restart_files: prove, without creating it, that
 * it can be made, so a stop hours in does not lose its state. */
static int ef_analysis_check_stop_restart_folder(ef_analysis a) {
  if (a->run.configured) return EF_SUCCESS; /* checked (and created) with its save_restart_process */
  ef_analysis_restart_defaults(a);
  char given_by[1200];
  snprintf(given_by, sizeof given_by,
           "no save_restart_process: the default %s__restart_files of a stop by SIGINT/SIGTERM or max_wall_time",
           a->run.base);
  return ef_restart_destination_check(a->run.folder, given_by, 0);
}

/* A fresh run into a folder holding another run's manifest is refused, or (overwrite) that
 * run's files are removed; then every file already there is someone else's. */
static int ef_analysis_claim_output_folder(ef_analysis a) {
  ef_run_state *r = &a->run;
  ef_file_list old;
  int exists = 0, err = EF_SUCCESS;
  EF_CALL(ef_manifest_read(a->output_folder, &old, &exists));
  if (exists && !a->options.restart_file && a->options.overwrite == 0) {
    err = EF_ERROR(EF_ERR_PARAMETER,
                   "the output folder '%s' holds the files of another run (%d listed in its %s): run with "
                   "--overwrite to remove them first, with --restart FILE to continue that run, or choose another "
                   "folder (--output DIR or problem_data.output_folder)",
                   a->output_folder, old.n, EF_MANIFEST_NAME);
  } else if (exists && !a->options.restart_file && a->options.overwrite > 0) {
    int removed = 0;
    err = ef_manifest_remove_files(a->output_folder, &old, &removed);
    if (!err && !a->options.quiet)
      printf("--overwrite: removed %d files of the previous run in '%s'\n", removed, a->output_folder);
  }
  if (!err) err = ef_folder_scan(a->output_folder, &r->foreign);
  if (!err && a->options.restart_file && exists) {
    /* What the run being continued made is this run's too. */
    int kept = 0;
    for (int i = 0; i < r->foreign.n; i++) {
      if (ef_file_list_has(&old, r->foreign.names[i]))
        free(r->foreign.names[i]);
      else
        r->foreign.names[kept++] = r->foreign.names[i];
    }
    r->foreign.n = kept;
  }
  ef_file_list_free(&old);
  if (!err) r->tracking = 1;
  return err;
}

/* Rewrite the manifest: every file under the output folder that is not someone else's. */
static int ef_analysis_track_outputs(ef_analysis a) {
  if (!a->run.tracking) return EF_SUCCESS;
  ef_file_list now;
  EF_CALL(ef_folder_scan(a->output_folder, &now));
  int err = ef_manifest_write(a->output_folder, &now, &a->run.foreign);
  ef_file_list_free(&now);
  return err;
}

/* The names of list (minus skip) joined by '\n', malloc'ed. */
static char *ef_join_names(const ef_file_list *list, const ef_file_list *skip) {
  size_t size = 1, used = 0;
  for (int i = 0; i < list->n; i++) size += strlen(list->names[i]) + 1;
  char *text = malloc(size);
  if (!text) return NULL;
  text[0] = '\0';
  for (int i = 0; i < list->n; i++)
    if (!skip || !ef_file_list_has(skip, list->names[i]))
      used += (size_t)snprintf(text + used, size - used, "%s\n", list->names[i]);
  return text;
}

/* Split a '\n'-joined record into a list (not sorted). */
static int ef_split_names(const char *text, ef_file_list *out) {
  memset(out, 0, sizeof *out);
  char name[4200];
  for (const char *p = text; *p;) {
    size_t n = strcspn(p, "\n");
    if (n > 0 && n < sizeof name) {
      memcpy(name, p, n);
      name[n] = '\0';
      EF_CALL(ef_file_list_add(out, name));
    }
    p += n;
    if (*p) p++;
  }
  return EF_SUCCESS;
}

/* A string record of any length (malloc'ed into *text). */
static int ef_restart_read_text(ef_restart_reader *r, const char *key, char **text) {
  *text = NULL;
  const int64_t n = ef_restart_count(r, key);
  EF_CHECK(n >= 0, EF_ERR_PARSE, "restart file '%s' has no record '%s'", ef_restart_reader_path(r), key);
  char *t = malloc((size_t)n + 1);
  EF_CHECK(t, EF_ERR_MEMORY, "out of memory");
  int err = ef_restart_read_string(r, key, t, (size_t)n + 1);
  if (err) {
    free(t);
    return err;
  }
  *text = t;
  return EF_SUCCESS;
}

/* Every section: the loop's own state, the nodal variables, the strategy, the processes. */
static int ef_analysis_save_sections(ef_analysis a, ef_restart_writer *w) {
  ef_run_state *r = &a->run;
  const char *where = a->strategy_ops->where ? a->strategy_ops->where(a->strategy) : "";
  EF_CALL(ef_restart_writer_section(w, "analysis"));
  EF_CALL(ef_restart_write_string(w, "parameters_file", a->parameters_path));
  EF_CALL(ef_restart_write_string(w, "strategy", a->strategy_ops->name));
  EF_CALL(ef_restart_write_string(w, "where", where));
  EF_CALL(ef_restart_write_string(w, "renumbering", a->renumbering));
  EF_CALL(ef_restart_write_double(w, "time", a->time));
  EF_CALL(ef_restart_write_int64(w, "step", a->step));
  EF_CALL(ef_restart_write_double(w, "dt", a->dt));
  const int64_t counters[3] = {a->total_iterations, a->max_iterations, a->last_iterations};
  EF_CALL(ef_restart_write_int64s(w, "iterations", counters, 3));
  EF_CALL(ef_restart_write_double(w, "last_residual", a->last_residual));
  const double phases[4] = {a->phase_totals.seconds_momentum, a->phase_totals.seconds_pressure,
                            a->phase_totals.seconds_correction, a->phase_totals.seconds_transfer};
  EF_CALL(ef_restart_write_doubles(w, "phase_seconds", phases, 4));
  const double steady[3] = {a->steady_t_check, a->steady_rate, (double)a->steady_reached};
  EF_CALL(ef_restart_write_doubles(w, "steady", steady, 3));
  /* The user's time-step grid once the stability limit cut a fixed step (time-step semantics). */
  const double grid[5] = {(double)a->cut, a->cut_time, (double)a->cut_step, (double)a->process_step, a->user_dt};
  EF_CALL(ef_restart_write_doubles(w, "user_step_grid", grid, 5));
  int64_t nu = 0;
  if (a->steady_u) {
    ef_variable *v;
    EF_CALL(ef_model_part_get_variable(a->mp, a->strategy_ops->steady_state_variable, &v));
    nu = a->mp->n_nodes * v->n_components;
  }
  EF_CALL(ef_restart_write_doubles(w, "steady_values", a->steady_u, nu));
  EF_CALL(ef_restart_write_double(w, "restart_next", r->next));
  char *text = ef_join_names(&r->written, NULL);
  EF_CHECK(text, EF_ERR_MEMORY, "out of memory");
  int err = ef_restart_write_string(w, "restart_files", text);
  free(text);
  EF_CALL(err);
  ef_file_list now;
  EF_CALL(ef_folder_scan(a->output_folder, &now));
  text = ef_join_names(&now, &r->foreign);
  ef_file_list_free(&now);
  EF_CHECK(text, EF_ERR_MEMORY, "out of memory");
  err = ef_restart_write_string(w, "outputs", text);
  free(text);
  EF_CALL(err);
  EF_CALL(ef_restart_write_int64(w, "processes", a->n_processes));

  EF_CALL(ef_restart_writer_section(w, "model_part"));
  for (int i = 0; i < a->mp->n_variables; i++) {
    const ef_variable *v = &a->mp->variables[i];
    char key[128];
    snprintf(key, sizeof key, "values.%s", v->name);
    EF_CALL(ef_restart_write_doubles(w, key, v->values, a->mp->n_nodes * v->n_components));
  }
  EF_CALL(ef_restart_writer_section(w, "strategy"));
  EF_CALL(a->strategy_ops->save_state(a->strategy, w));
  for (int i = 0; i < a->n_processes; i++) {
    ef_process_entry *e = &a->processes[i];
    char section[32];
    snprintf(section, sizeof section, "process.%d", i);
    EF_CALL(ef_restart_writer_section(w, section));
    EF_CALL(ef_restart_write_string(w, "module", e->module));
    if (e->ops->save_state) EF_CALL(e->ops->save_state(e->data, w));
  }
  return EF_SUCCESS;
}

static int ef_analysis_write_restart_ranks(ef_analysis a, char *out, size_t size);

/* The restart file (one process) or point file (several ranks) of this state, named by the schedule's
 * clock as VTK files (the user's time steps under "step", ef_output_clock); *listed: already written.
 * Returns that clock. */
static double ef_analysis_restart_path(ef_analysis a, char *path, size_t size, int *listed) {
  const ef_run_state *r = &a->run;
  char label[64];
  const double clock = ef_output_clock((ef_output_control)r->control, &a->step, a->time, (int)a->process_step);
  if (r->control == EF_CONTROL_TIME)
    snprintf(label, sizeof label, "%.12g", clock);
  else
    snprintf(label, sizeof label, "%.0f", clock);
  snprintf(path, size, "%s/%s_%s.rest", r->folder, r->base, label);
  *listed = 0;
  for (int i = 0; i < r->written.n; i++) *listed |= !strcmp(r->written.names[i], path);
  if (*listed && a->cut && r->control == EF_CONTROL_STEP) {
    /* Between two of the user's time steps (a stop, the end of the run, frequency 0) that name is an
     * earlier state's: keep it, and add the solver step. */
    snprintf(path, size, "%s/%s_%s_s%ld.rest", r->folder, r->base, label, a->step);
    *listed = 0;
    for (int i = 0; i < r->written.n; i++) *listed |= !strcmp(r->written.names[i], path);
  }
  return clock;
}

int ef_analysis_write_restart(ef_analysis a, char *out, size_t size) {
  if (out && size) out[0] = '\0';
  EF_CHECK(a && a->strategy, EF_ERR_INTERNAL, "ef_analysis_write_restart: the analysis is not initialized");
  EF_CHECK(a->strategy_ops->save_state, EF_ERR_UNSUPPORTED, "strategy '%s' cannot write restart files",
           a->strategy_ops->name);
  if (a->distributed) return ef_analysis_write_restart_ranks(a, out, size); /* MPI: a restart point */
  ef_run_state *r = &a->run;
  const double t0 = ef_wtime();
  ef_analysis_restart_defaults(a);
  EF_CALL(ef_make_folders(r->folder));
  char path[4400];
  int listed;
  const double clock = ef_analysis_restart_path(a, path, sizeof path, &listed);
  /* Every output so far durable first: the restart file lists them (and a continued run keeps them). */
  for (int i = 0; i < a->n_processes; i++) {
    ef_process_entry *e = &a->processes[i];
    if (!e->ops->sync_outputs) continue;
    const int e_err = e->ops->sync_outputs(e->data);
    if (e_err)
      return ef_error_push(e_err, __FILE__, __LINE__, "'%s': making its outputs durable before the restart file at "
                           "step %ld", e->module, a->step);
  }
  EF_CALL(ef_model_part_sync_to_host(a->mp));
  if (!listed) EF_CALL(ef_file_list_add(&r->written, path));
  ef_restart_writer *w = NULL;
  int err = ef_restart_writer_open(path, ef_model_part_fingerprint(a->mp), &w);
  if (!err) err = ef_analysis_save_sections(a, w);
  if (!err) err = ef_restart_writer_commit(&w);
  ef_restart_writer_abort(&w);
  if (err) {
    if (!listed) free(r->written.names[--r->written.n]);
    return ef_error_push(err, __FILE__, __LINE__, "writing the restart file at step %ld (t = %.9g)", a->step,
                         a->time);
  }
  /* Keep the newest max_files_to_keep (Kratos' rule; <= 0 keeps all). */
  while (r->max_files > 0 && r->written.n > r->max_files) {
    if (unlink(r->written.names[0]) != 0 && errno != ENOENT && !a->options.quiet)
      fprintf(stderr, "edgeflow: warning: cannot remove the old restart file '%s': %s\n", r->written.names[0],
              strerror(errno));
    free(r->written.names[0]);
    memmove(r->written.names, r->written.names + 1, (size_t)(--r->written.n) * sizeof *r->written.names);
  }
  ef_output_schedule((ef_output_control)r->control, r->frequency, clock, &r->next);
  snprintf(r->last, sizeof r->last, "%s", path);
  r->saved_step = a->step;
  r->restart_seconds = ef_wtime() - t0;
  if (r->echo_level > 0 && !a->options.quiet) printf("restart file %s written (%.3f s)\n", path, r->restart_seconds);
  if (out) snprintf(out, size, "%s", path);
  return ef_analysis_track_outputs(a);
}

/* Open the restart file, check it belongs to this mesh, take its time and step. */
static int ef_analysis_restart_open(ef_analysis a) {
  ef_restart_reader *r = a->run.reader; /* already open where "auto" renumbering read its ordering */
  if (!r) EF_CALL(ef_restart_reader_open(a->options.restart_file, &r));
  a->run.reader = r;
  const uint64_t mine = ef_model_part_fingerprint(a->mp), theirs = ef_restart_reader_fingerprint(r);
  if (mine != theirs) {
    char written[16] = "", note[96] = "";
    if (ef_restart_reader_section(r, "analysis") && ef_restart_count(r, "renumbering") > 0 &&
        ef_restart_read_string(r, "renumbering", written, sizeof written) == EF_SUCCESS && strcmp(written, a->renumbering))
      snprintf(note, sizeof note, "; the file was written with renumbering \"%s\", this run used \"%s\"", written,
               a->renumbering);
    return EF_ERROR(EF_ERR_PARAMETER,
                    "restart file '%s' was written for another mesh (fingerprint %016llx; this case's mesh '%s' after "
                    "refinement and renumbering has %016llx, %lld nodes%s): restart with the case, refinement level "
                    "and renumbering that wrote it",
                    a->options.restart_file, (unsigned long long)theirs, a->mp->source_file ? a->mp->source_file : "",
                    (unsigned long long)mine, (long long)a->mp->n_nodes, note);
  }
  int64_t ranks = 0;
  if (ef_restart_reader_section(r, "ranks")) { /* MPI: a restart point of several ranks */
    EF_CALL(ef_restart_read_int64(r, "ranks", &ranks));
    return EF_ERROR(EF_ERR_PARAMETER, "restart point '%s' was written on %lld ranks, this run is one process: continue "
                    "it with mpirun -n %lld and problem_data.parallel_type \"MPI\"", a->options.restart_file,
                    (long long)ranks, (long long)ranks);
  }
  EF_CHECK(ef_restart_reader_section(r, "analysis"), EF_ERR_PARSE, "restart file '%s' has no analysis section",
           a->options.restart_file);
  int64_t step;
  EF_CALL(ef_restart_read_int64(r, "step", &step));
  EF_CALL(ef_restart_read_double(r, "time", &a->run.time));
  EF_CALL(ef_restart_read_double(r, "dt", &a->dt));
  EF_CHECK(step >= 0 && isfinite(a->run.time), EF_ERR_PARSE, "restart file '%s': bad step or time",
           a->options.restart_file);
  a->step = (long)step;
  a->run.first_step = (long)step;
  a->run.restarted = 1;
  return EF_SUCCESS;
}

/* After the strategy's initialize: every section back into the loop, the model part, the
 * strategy and the processes; outputs the continued run wrote after this point removed. */
static int ef_analysis_restart_load(ef_analysis a) {
  ef_restart_reader *r = a->run.reader;
  ef_run_state *run = &a->run;
  const char *file = a->options.restart_file;
  char strategy[128], where[512];
  int64_t counters[3], n_processes;
  double phases[4], steady[3];
  char *text = NULL;
  ef_file_list outputs = {0}, manifest = {0};
  int exists = 0, err = EF_SUCCESS;
  ef_restart_reader_section(r, "analysis");
  EF_CALL(ef_restart_read_string(r, "strategy", strategy, sizeof strategy));
  EF_CALL(ef_restart_read_string(r, "where", where, sizeof where));
  EF_CALL(ef_restart_read_int64s(r, "iterations", counters, 3));
  EF_CALL(ef_restart_read_double(r, "last_residual", &a->last_residual));
  EF_CALL(ef_restart_read_doubles(r, "phase_seconds", phases, 4));
  EF_CALL(ef_restart_read_doubles(r, "steady", steady, 3));
  double grid[5];
  EF_CALL(ef_restart_read_doubles(r, "user_step_grid", grid, 5));
  a->cut = grid[0] != 0.0;
  a->cut_time = grid[1];
  a->cut_step = (long)grid[2];
  a->process_step = (long)grid[3];
  EF_CHECK(grid[4] == a->user_dt, EF_ERR_PARAMETER,
           "restart file '%s' was written with a fixed time_step of %g, this case gives %g", file, grid[4], a->user_dt);
  EF_CALL(ef_restart_read_double(r, "restart_next", &run->next));
  EF_CALL(ef_restart_read_int64(r, "processes", &n_processes));
  a->total_iterations = (long)counters[0];
  a->max_iterations = (int)counters[1];
  a->last_iterations = (int)counters[2];
  a->phase_totals.seconds_momentum = phases[0];
  a->phase_totals.seconds_pressure = phases[1];
  a->phase_totals.seconds_correction = phases[2];
  a->phase_totals.seconds_transfer = phases[3];
  a->steady_t_check = steady[0];
  a->steady_rate = steady[1];
  a->steady_reached = steady[2] != 0.0;
  const int64_t nu = ef_restart_count(r, "steady_values");
  if (nu > 0 && a->steady_tolerance > 0) {
    ef_variable *v;
    EF_CALL(ef_model_part_get_variable(a->mp, a->strategy_ops->steady_state_variable, &v));
    EF_CHECK(nu == a->mp->n_nodes * v->n_components, EF_ERR_PARSE, "restart file '%s': steady-state values of "
             "another size", file);
    free(a->steady_u);
    EF_MALLOC(a->steady_u, (size_t)nu);
    EF_CALL(ef_restart_read_doubles(r, "steady_values", a->steady_u, nu));
  }
  EF_CALL(ef_restart_read_text(r, "restart_files", &text));
  ef_file_list_free(&run->written);
  err = ef_split_names(text, &run->written);
  free(text);
  EF_CALL(err);
  EF_CHECK(n_processes == a->n_processes, EF_ERR_PARAMETER,
           "restart file '%s' holds the state of %lld processes, this case creates %d: restart with the "
           "parameters that wrote it (only end_time, output intervals' values and the like may change)",
           file, (long long)n_processes, a->n_processes);

  ef_restart_reader_section(r, "model_part");
  for (int i = 0; i < a->mp->n_variables; i++) {
    ef_variable *v = &a->mp->variables[i];
    char key[128];
    snprintf(key, sizeof key, "values.%s", v->name);
    if (ef_restart_count(r, key) < 0) continue; /* a variable the writing strategy did not have */
    EF_CALL(ef_restart_read_doubles(r, key, v->values, a->mp->n_nodes * v->n_components));
    EF_CALL(ef_model_part_mark_modified(a->mp, v->name));
  }
  const char *my_where = a->strategy_ops->where ? a->strategy_ops->where(a->strategy) : "";
  const int same_kind = !strcmp(strategy, a->strategy_ops->name) && !strcmp(where, my_where);
  if (!same_kind)
    fprintf(stderr, "edgeflow: warning: restarting with '%s' (%s) from a file written by '%s' (%s): the run "
                    "continues, but its results will differ in the last bits from an uninterrupted run\n",
            a->strategy_ops->name, my_where[0] ? my_where : "-", strategy, where[0] ? where : "-");
  EF_CHECK(a->strategy_ops->load_state, EF_ERR_UNSUPPORTED, "strategy '%s' cannot load restart files",
           a->strategy_ops->name);
  EF_CHECK(ef_restart_reader_section(r, "strategy"), EF_ERR_PARSE, "restart file '%s' has no strategy section", file);
  EF_CALL(a->strategy_ops->load_state(a->strategy, r, same_kind));
  for (int i = 0; i < a->n_processes; i++) {
    ef_process_entry *e = &a->processes[i];
    char section[32], module[128];
    snprintf(section, sizeof section, "process.%d", i);
    ef_restart_reader_section(r, section);
    EF_CALL(ef_restart_read_string(r, "module", module, sizeof module));
    EF_CHECK(!strcmp(module, e->module), EF_ERR_PARAMETER,
             "restart file '%s': process %d was '%s' when it was written, this case has '%s' there", file, i, module,
             e->module);
    if (e->ops->load_state) {
      err = e->ops->load_state(e->data, r);
      if (err) return ef_error_push(err, __FILE__, __LINE__, "restoring '%s' from '%s'", e->module, file);
    }
  }

  /* Outputs the continued run wrote after this restart point go (their steps are redone). */
  ef_restart_reader_section(r, "analysis");
  EF_CALL(ef_restart_read_text(r, "outputs", &text));
  err = ef_split_names(text, &outputs);
  free(text);
  const int owner = ef_comm_rank(a->comm) == 0; /* MPI: rank 0 owns the folder's bookkeeping */
  if (!err && owner) err = ef_manifest_read(a->output_folder, &manifest, &exists);
  if (!err && owner) {
    ef_file_list_sort(&outputs);
    ef_file_list later = {0};
    for (int i = 0; !err && i < manifest.n; i++) {
      const char *name = manifest.names[i], *dot = strrchr(name, '.');
      if (ef_file_list_has(&outputs, name) || (dot && !strcmp(dot, ".rest")) || !strcmp(name, "run_summary.json"))
        continue;
      err = ef_file_list_add(&later, name);
    }
    int removed = 0;
    if (!err && later.n) err = ef_manifest_remove_files(a->output_folder, &later, &removed);
    if (!err && !a->options.quiet)
      printf("restart: step %ld, t = %.9g from '%s'; %d later output files removed\n", a->step, a->time, file,
             removed);
    ef_file_list_free(&later);
  }
  ef_file_list_free(&outputs);
  ef_file_list_free(&manifest);
  ef_restart_reader_close(&r);
  run->reader = NULL;
  if (a->distributed) { /* MPI: rank 0's removal done, and failures decided, before any rank writes again */
    int failed_rank = 0;
    const int local = err;
    EF_CALL(ef_analysis_any_failed(a, local != 0, &failed_rank));
    if (!local && failed_rank)
      err = EF_ERROR(EF_ERR_IO, "restart point '%s': rank %d could not restore its piece or the output folder (its "
                     "message says why)", file, failed_rank - 1);
  }
  return err;
}

/* ---------------------------------------------------------------------------
 * MPI: restart points (docs/restart.md, docs/mpi.md).  On P ranks a restart point is P piece files,
 * <prefix>_<label>.rank<R>.rest (the serial format, each with its rank's piece: the model part's
 * values, the strategy and the processes), and the point file <prefix>_<label>.rest that rank 0 writes
 * once every piece is durable: the rank count, the global mesh's fingerprint (header), and per rank
 * its piece's name, size, checksum and partition hash.  --restart takes the point file. */

/* The piece of rank of the restart point point ("X.rest" -> "X.rank<R>.rest"). */
static void ef_restart_piece_path(const char *point, int rank, char *out, size_t size) {
  const size_t n = strlen(point);
  const int cut = n > 5 && !strcmp(point + n - 5, ".rest") ? (int)(n - 5) : (int)n;
  snprintf(out, size, "%.*s.rank%d.rest", cut, point, rank);
}

/* FNV-1a 64 of this rank's ownership: the owned count and the local -> global node map. */
static uint64_t ef_analysis_partition_hash(const ef_partition *p) {
  uint64_t h = 14695981039346656037ull;
  const int64_t head[2] = {p->n_owned, p->n_nodes};
  const unsigned char *bytes[2] = {(const unsigned char *)head, (const unsigned char *)p->global_node};
  const size_t sizes[2] = {sizeof head, (size_t)p->n_nodes * sizeof *p->global_node};
  for (int k = 0; k < 2; k++)
    for (size_t i = 0; bytes[k] && i < sizes[k]; i++) {
      h ^= bytes[k][i];
      h *= 1099511628211ull;
    }
  return h;
}

/* Every rank's three 64-bit values (all[3 R + k]) and whether any rank failed (*any), in one
 * reduction (32-bit halves are exact in doubles). */
static int ef_analysis_gather3(ef_analysis a, int failed, const uint64_t mine[3], uint64_t *all, int *any) {
  const int size = ef_comm_size(a->comm), rank = ef_comm_rank(a->comm);
  double *buf = calloc((size_t)(6 * size + 1), sizeof *buf);
  EF_CHECK(buf, EF_ERR_MEMORY, "out of memory");
  for (int k = 0; k < 3; k++) {
    buf[6 * rank + 2 * k] = (double)(mine[k] >> 32);
    buf[6 * rank + 2 * k + 1] = (double)(mine[k] & 0xffffffffu);
  }
  buf[6 * size] = failed ? 1.0 : 0.0;
  int err = ef_comm_allreduce(a->comm, buf, 6 * size + 1, EF_COMM_SUM);
  if (!err) {
    for (int i = 0; all && i < 3 * size; i++)
      all[i] = ((uint64_t)buf[2 * i] << 32) | (uint64_t)buf[2 * i + 1];
    *any = buf[6 * size] > 0.0;
  }
  free(buf);
  return err;
}

/* One rank's "did it fail" to every rank: the highest failing rank + 1, or 0. */
static int ef_analysis_any_failed(ef_analysis a, int failed, int *failed_rank) {
  double v = failed ? (double)(ef_comm_rank(a->comm) + 1) : 0.0;
  EF_CALL(ef_comm_allreduce(a->comm, &v, 1, EF_COMM_MAX));
  *failed_rank = (int)v;
  return EF_SUCCESS;
}

/* Collective: every rank writes its piece, rank 0 the point file once all are durable; any failure
 * fails every rank (no point file, so no incomplete point is ever taken for a restart). */
static int ef_analysis_write_restart_ranks(ef_analysis a, char *out, size_t size) {
  ef_run_state *r = &a->run;
  const double t0 = ef_wtime();
  const int rank = ef_comm_rank(a->comm), ranks = ef_comm_size(a->comm);
  ef_analysis_restart_defaults(a);
  char path[4400], piece[4500];
  int listed;
  const double clock = ef_analysis_restart_path(a, path, sizeof path, &listed);
  ef_restart_piece_path(path, rank, piece, sizeof piece);
  /* 1. This rank's outputs durable, then every rank's (the reduction): rank 0's piece lists them all. */
  int err = ef_make_folders(r->folder);
  for (int i = 0; !err && i < a->n_processes; i++) {
    ef_process_entry *e = &a->processes[i];
    if (!e->ops->sync_outputs) continue;
    err = e->ops->sync_outputs(e->data);
    if (err)
      err = ef_error_push(err, __FILE__, __LINE__, "'%s': making its outputs durable before the restart point at "
                          "step %ld", e->module, a->step);
  }
  if (!err) err = ef_model_part_sync_to_host(a->mp);
  int failed_rank = 0;
  EF_CALL(ef_analysis_any_failed(a, err != 0, &failed_rank));
  if (err) return err;
  EF_CHECK(!failed_rank, EF_ERR_IO, "restart point '%s' at step %ld: rank %d of %d could not make its outputs "
           "durable (its message says why)", path, a->step, failed_rank - 1, ranks);
  /* 2. The pieces. */
  if (!listed) EF_CALL(ef_file_list_add(&r->written, path));
  ef_restart_writer *w = NULL;
  uint64_t mine[3] = {0, 0, ef_analysis_partition_hash(&a->partition)};
  err = ef_restart_writer_open(piece, ef_model_part_fingerprint(a->mp), &w);
  if (!err) err = ef_analysis_save_sections(a, w);
  if (!err) err = ef_restart_writer_section(w, "piece");
  if (!err) err = ef_restart_write_int64(w, "rank", rank);
  if (!err) err = ef_restart_write_int64(w, "ranks", ranks);
  if (!err) err = ef_restart_write_int64(w, "partition", (int64_t)mine[2]);
  if (!err) err = ef_restart_writer_commit_checksum(&w, &mine[0]);
  ef_restart_writer_abort(&w);
  struct stat st;
  if (!err && stat(piece, &st) != 0)
    err = EF_ERROR(EF_ERR_IO, "cannot stat the restart piece '%s': %s", piece, strerror(errno));
  if (!err) mine[1] = (uint64_t)st.st_size;
  uint64_t *all = calloc((size_t)(3 * ranks), sizeof *all);
  if (!all) err = err ? err : EF_ERROR(EF_ERR_MEMORY, "out of memory");
  int gerr = all ? ef_analysis_gather3(a, err != 0, mine, all, &failed_rank) : EF_ERR_MEMORY;
  if (!err && !gerr && failed_rank)
    err = EF_ERROR(EF_ERR_IO, "restart point '%s' at step %ld: another rank could not write its piece (its message "
                   "names it); no restart point written", path, a->step);
  if (!err) err = gerr;
  /* 3. Rank 0: the point file, then (before any piece goes) the point files max_files_to_keep drops. */
  if (!err && rank == 0) {
    char *names = NULL;
    size_t used = 0, cap = (size_t)ranks * 4600 + 1;
    names = malloc(cap);
    err = names ? EF_SUCCESS : EF_ERROR(EF_ERR_MEMORY, "out of memory");
    for (int k = 0; !err && k < ranks; k++) {
      char p[4500];
      ef_restart_piece_path(path, k, p, sizeof p);
      const char *slash = strrchr(p, '/');
      used += (size_t)snprintf(names + used, cap - used, "%s\n", slash ? slash + 1 : p);
    }
    int64_t *v = err ? NULL : malloc((size_t)(3 * ranks) * sizeof *v);
    if (!err && !v) err = EF_ERROR(EF_ERR_MEMORY, "out of memory");
    if (!err) err = ef_restart_writer_open(path, a->global_fingerprint, &w);
    if (!err) err = ef_restart_writer_section(w, "ranks");
    if (!err) err = ef_restart_write_int64(w, "ranks", ranks);
    if (!err) err = ef_restart_write_int64(w, "step", a->step);
    if (!err) err = ef_restart_write_double(w, "time", a->time);
    if (!err) err = ef_restart_write_string(w, "pieces", names);
    if (!err) err = ef_restart_write_string(w, "renumbering", a->renumbering);
    for (int k = 0; !err && k < 3; k++) {
      static const char *keys[3] = {"piece_checksums", "piece_bytes", "piece_partitions"};
      for (int q = 0; q < ranks; q++) v[q] = (int64_t)all[3 * q + k];
      err = ef_restart_write_int64s(w, keys[k], v, ranks);
    }
    if (!err) err = ef_restart_writer_commit(&w);
    ef_restart_writer_abort(&w);
    free(v);
    free(names);
    for (int i = 0; !err && r->max_files > 0 && i < r->written.n - r->max_files; i++)
      if (unlink(r->written.names[i]) != 0 && errno != ENOENT && !a->options.quiet)
        fprintf(stderr, "edgeflow: warning: cannot remove the old restart point '%s': %s\n", r->written.names[i],
                strerror(errno));
  }
  free(all);
  int rank0 = 0;
  const int local = err;
  EF_CALL(ef_analysis_any_failed(a, local != 0, &rank0));
  if (!local && rank0)
    err = EF_ERROR(EF_ERR_IO, "restart point '%s' at step %ld: rank %d could not complete it (its message says why)",
                   path, a->step, rank0 - 1);
  if (err) {
    if (!listed) free(r->written.names[--r->written.n]);
    return local ? ef_error_push(err, __FILE__, __LINE__, "writing the restart point at step %ld (t = %.9g)", a->step,
                                 a->time)
                 : err;
  }
  /* 4. Every rank drops its pieces of the points rank 0 dropped (their point files are gone). */
  while (r->max_files > 0 && r->written.n > r->max_files) {
    ef_restart_piece_path(r->written.names[0], rank, piece, sizeof piece);
    if (unlink(piece) != 0 && errno != ENOENT && !a->options.quiet)
      fprintf(stderr, "edgeflow: warning: cannot remove the old restart piece '%s': %s\n", piece, strerror(errno));
    free(r->written.names[0]);
    memmove(r->written.names, r->written.names + 1, (size_t)(--r->written.n) * sizeof *r->written.names);
  }
  ef_output_schedule((ef_output_control)r->control, r->frequency, clock, &r->next);
  snprintf(r->last, sizeof r->last, "%s", path);
  r->saved_step = a->step;
  r->restart_seconds = ef_wtime() - t0;
  if (r->echo_level > 0 && !a->options.quiet && rank == 0)
    printf("restart point %s written (%d pieces, %.3f s)\n", path, ranks, r->restart_seconds);
  if (out) snprintf(out, size, "%s", path);
  return ef_analysis_track_outputs(a); /* rank 0's manifest */
}

/* Collective: open this rank's piece of the restart point a->options.restart_file, after checking on
 * every rank alike the rank count, the global mesh, the partition and every piece's size; a rank that
 * fails alone (its piece damaged) makes every rank fail. */
static int ef_analysis_restart_open_ranks(ef_analysis a) {
  const char *file = a->options.restart_file;
  const int rank = ef_comm_rank(a->comm), ranks = ef_comm_size(a->comm);
  ef_restart_reader *point = NULL, *mine = NULL;
  int64_t *v = NULL, n = 0;
  char *names = NULL;
  ef_file_list pieces = {0};
  int err = ef_restart_reader_open(file, &point);
  if (!err && !ef_restart_reader_section(point, "ranks"))
    err = EF_ERROR(EF_ERR_PARAMETER, "restart file '%s' was written by one process; this run has %d ranks: continue "
                   "it without mpirun (restart points are read with the rank count that wrote them)", file, ranks);
  if (!err) err = ef_restart_read_int64(point, "ranks", &n);
  if (!err && n != ranks)
    err = EF_ERROR(EF_ERR_PARAMETER, "restart point '%s' was written on %lld ranks, this run has %d: continue it with "
                   "mpirun -n %lld (a restart point is read with the rank count that wrote it)", file, (long long)n,
                   ranks, (long long)n);
  if (!err && ef_restart_reader_fingerprint(point) != a->global_fingerprint)
    err = EF_ERROR(EF_ERR_PARAMETER, "restart point '%s' was written for another mesh (fingerprint %016llx; this "
                   "case's mesh after refinement and renumbering has %016llx): restart with the case, refinement level "
                   "and renumbering that wrote it", file, (unsigned long long)ef_restart_reader_fingerprint(point),
                   (unsigned long long)a->global_fingerprint);
  if (!err) err = ef_restart_read_text(point, "pieces", &names);
  if (!err) err = ef_split_names(names, &pieces);
  if (!err && pieces.n != ranks)
    err = EF_ERROR(EF_ERR_PARSE, "restart point '%s' lists %d pieces for %d ranks: it is damaged", file, pieces.n, ranks);
  if (!err) {
    v = malloc((size_t)(3 * ranks) * sizeof *v);
    if (!v) err = EF_ERROR(EF_ERR_MEMORY, "out of memory");
  }
  static const char *keys[3] = {"piece_checksums", "piece_bytes", "piece_partitions"};
  for (int k = 0; !err && k < 3; k++) err = ef_restart_read_int64s(point, keys[k], v + k * ranks, ranks);
  char folder[4200], path[8400];
  snprintf(folder, sizeof folder, "%s", file);
  char *slash = strrchr(folder, '/');
  if (slash)
    slash[1] = '\0';
  else
    folder[0] = '\0';
  if (!err && (uint64_t)v[2 * ranks + rank] != ef_analysis_partition_hash(&a->partition))
    err = EF_ERROR(EF_ERR_PARAMETER, "restart point '%s': rank %d's piece was written for another partition of the "
                   "mesh (its node ownership differs from this run's): restart with the same case, mesh and METIS",
                   file, rank);
  /* Every piece present with its size, checked on every rank (the same decision everywhere). */
  for (int k = 0; !err && k < ranks; k++) {
    struct stat st;
    snprintf(path, sizeof path, "%s%s", folder, pieces.names[k]);
    if (stat(path, &st) != 0)
      err = EF_ERROR(EF_ERR_IO, "restart point '%s': the piece of rank %d, '%s', is missing (%s); expected %lld bytes",
                     file, k, path, strerror(errno), (long long)v[ranks + k]);
    else if ((int64_t)st.st_size != v[ranks + k])
      err = EF_ERROR(EF_ERR_PARSE, "restart point '%s': the piece of rank %d, '%s', has %lld bytes, expected %lld: it "
                     "is damaged or truncated", file, k, path, (long long)st.st_size, (long long)v[ranks + k]);
  }
  if (!err) {
    snprintf(path, sizeof path, "%s%s", folder, pieces.names[rank]);
    err = ef_restart_reader_open(path, &mine);
  }
  if (!err && ef_restart_reader_checksum(mine) != (uint64_t)v[rank])
    err = EF_ERROR(EF_ERR_PARSE, "restart point '%s': the piece of rank %d, '%s', has checksum %016llx, expected "
                   "%016llx: it belongs to another restart point", file, rank, path,
                   (unsigned long long)ef_restart_reader_checksum(mine), (unsigned long long)v[rank]);
  if (!err && ef_restart_reader_fingerprint(mine) != ef_model_part_fingerprint(a->mp))
    err = EF_ERROR(EF_ERR_PARAMETER, "restart point '%s': the piece of rank %d, '%s', holds another piece of the mesh",
                   file, rank, path);
  free(v);
  free(names);
  ef_file_list_free(&pieces);
  ef_restart_reader_close(&point);
  int failed_rank = 0;
  const int gerr = ef_analysis_any_failed(a, err != 0, &failed_rank);
  if (!err && !gerr && failed_rank)
    err = EF_ERROR(EF_ERR_PARSE, "restart point '%s': rank %d of %d could not use its piece (its message names the "
                   "file and the cause)", file, failed_rank - 1, ranks);
  if (!err) err = gerr;
  if (err) {
    ef_restart_reader_close(&mine);
    return err;
  }
  a->run.reader = mine;
  ef_restart_reader *r = mine;
  EF_CHECK(ef_restart_reader_section(r, "analysis"), EF_ERR_PARSE, "restart piece '%s' has no analysis section", path);
  int64_t step;
  EF_CALL(ef_restart_read_int64(r, "step", &step));
  EF_CALL(ef_restart_read_double(r, "time", &a->run.time));
  EF_CALL(ef_restart_read_double(r, "dt", &a->dt));
  EF_CHECK(step >= 0 && isfinite(a->run.time), EF_ERR_PARSE, "restart piece '%s': bad step or time", path);
  a->step = (long)step;
  a->run.first_step = (long)step;
  a->run.restarted = 1;
  return EF_SUCCESS;
}

/* Write the outputs a stop would otherwise lose: the processes that did not write this step. */
static int ef_analysis_force_outputs(ef_analysis a) {
  for (int i = 0; i < a->n_processes; i++) {
    ef_process_entry *e = &a->processes[i];
    if (!e->ops->print_output || e->printed_step == a->step) continue;
    /* The step the processes count (the user's time steps when the solver cut them), as every output. */
    EF_CALL(e->ops->print_output(e->data, a->time, (int)a->process_step));
    e->printed_step = a->step;
  }
  return EF_SUCCESS;
}

/* On several ranks: a signal or the wall clock of any rank stops every rank after the same step (one
 * reduction per step): the restart point, then this step's outputs, as one process does; otherwise a
 * scheduled restart point (every rank decides alike: the clocks are the same). */
static int ef_analysis_end_of_step_ranks(ef_analysis a, int sig, int wall) {
  ef_run_state *r = &a->run;
  double stop[2] = {(double)sig, (double)wall};
  EF_CALL(ef_comm_allreduce(a->comm, stop, 2, EF_COMM_MAX));
  if (stop[0] == 0.0 && stop[1] == 0.0) {
    if (r->configured && a->step != r->saved_step) {
      const double now = ef_output_clock((ef_output_control)r->control, &a->step, a->time, (int)a->process_step);
      if (r->frequency <= 0 || now >= r->next) EF_CALL(ef_analysis_write_restart(a, NULL, 0));
    }
    return EF_SUCCESS;
  }
  EF_CALL(ef_analysis_write_restart(a, NULL, 0));
  EF_CALL(ef_analysis_force_outputs(a));
  r->stopped = 1;
  r->stop_signal = (int)stop[0];
  r->status = "interrupted";
  if (ef_comm_rank(a->comm) == 0)
    fprintf(stderr,
            "edgeflow: %s: all %d ranks stopped after step %ld (t = %.9g); outputs and restart point '%s' written; "
            "continue with: mpirun -n %d edgeflow run %s --restart %s\n",
            r->stop_signal == SIGINT    ? "SIGINT"
            : r->stop_signal == SIGTERM ? "SIGTERM"
            : r->stop_signal            ? "signal"
                                        : "problem_data.max_wall_time reached",
            ef_comm_size(a->comm), a->step, a->time, r->last, ef_comm_size(a->comm), a->parameters_path, r->last);
  return EF_SUCCESS;
}

/* A stop request or the wall-clock limit: restart file, the outputs of this step, then the loop
 * ends; otherwise a scheduled restart file. */
static int ef_analysis_end_of_step(ef_analysis a) {
  ef_run_state *r = &a->run;
  const int sig = ef_stop_requested();
  int wall = 0;
  if (!sig && r->max_wall_time > 0)
    wall = ef_wtime() - a->wall_start >= r->max_wall_time - (r->restart_seconds + r->output_seconds);
  if (a->distributed) return ef_analysis_end_of_step_ranks(a, sig, wall);
  if (sig || wall) {
    /* The restart comes first: a continued run cuts the outputs forced here, so it matches an
     * uninterrupted one. */
    EF_CALL(ef_analysis_write_restart(a, NULL, 0));
    EF_CALL(ef_analysis_force_outputs(a));
    r->stopped = 1;
    r->stop_signal = sig;
    r->status = "interrupted";
    fprintf(stderr,
            "edgeflow: %s: stopped after step %ld (t = %.9g); outputs and restart file '%s' written; continue with: "
            "edgeflow run %s --restart %s\n",
            sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig ? "signal" : "problem_data.max_wall_time reached",
            a->step, a->time, r->last, a->parameters_path, r->last);
    return EF_SUCCESS;
  }
  if (r->configured && a->step != r->saved_step) {
    /* The clock of every step schedule: "step" counts the user's time steps when the solver cuts them. */
    const double now = ef_output_clock((ef_output_control)r->control, &a->step, a->time, (int)a->process_step);
    if (r->frequency <= 0 || now >= r->next) EF_CALL(ef_analysis_write_restart(a, NULL, 0));
  }
  return EF_SUCCESS;
}

const char *ef_analysis_status(ef_analysis a) { return a && a->run.status ? a->run.status : "running"; }
int ef_analysis_stop_signal(ef_analysis a) { return a ? a->run.stop_signal : 0; }

/* finalize's part: the last restart file of a completed run (when asked for), and the status. */
static int ef_analysis_summary_status(ef_analysis a, ef_parameters s) {
  ef_run_state *r = &a->run;
  const int failed = r->status && !strcmp(r->status, "failed");
  if (!failed && !r->stopped) r->status = "completed";
  if (r->status && !strcmp(r->status, "completed") && r->configured && a->strategy && a->step > r->first_step &&
      a->step != r->saved_step)
    EF_CALL(ef_analysis_write_restart(a, NULL, 0));
  EF_CALL(ef_parameters_set_string(s, "status", r->status));
  if (failed) EF_CALL(ef_parameters_set_string(s, "error", r->error));
  if (r->stopped)
    EF_CALL(ef_parameters_set_string(s, "stop_reason", r->stop_signal == SIGINT    ? "SIGINT"
                                                       : r->stop_signal == SIGTERM ? "SIGTERM"
                                                       : r->stop_signal            ? "signal"
                                                                                   : "max_wall_time"));
  EF_CALL(ef_parameters_set_json(s, "restart", "{}"));
  ef_parameters block;
  EF_CALL(ef_parameters_get(s, "restart", &block));
  EF_CALL(ef_parameters_set_string(block, "last_file", r->last));
  EF_CALL(ef_parameters_set_string(block, "restarted_from", a->options.restart_file ? a->options.restart_file : ""));
  EF_CALL(ef_parameters_set_double(block, "first_step", (double)r->first_step));
  EF_CALL(ef_parameters_set_double(block, "seconds_last_write", r->restart_seconds));
  return EF_SUCCESS;
}

/* A run that failed before its loop still leaves a run_summary.json saying why (unless the
 * folder is another run's, or there is none). */
static void ef_analysis_write_failure_summary(ef_analysis a, int err) {
  if (!a || a->options.load_only || ef_comm_rank(a->comm) != 0) return;
  char message[4096], path[4200];
  snprintf(message, sizeof message, "%s", ef_error_message());
  /* Before the folder was claimed: --output's folder, when it is no other run's. */
  const char *folder = a->run.tracking ? a->output_folder : a->options.output_folder;
  ef_file_list old = {0};
  int exists = 1;
  if (folder && !a->run.tracking && !ef_manifest_read(folder, &old, &exists) && !exists && ef_make_folders(folder))
    exists = 1;
  ef_file_list_free(&old);
  if (!folder || (!a->run.tracking && exists)) {
    ef_error_set(err, __FILE__, __LINE__, "%s", message);
    return;
  }
  ef_parameters s = NULL;
  if (!ef_parameters_parse("{}", "run_summary", &s) && !ef_parameters_set_string(s, "status", "failed") &&
      !ef_parameters_set_string(s, "error", message) &&
      !ef_parameters_set_string(s, "error_code", ef_error_name(err)) &&
      !ef_parameters_set_string(s, "parameters_file", a->parameters_path)) {
    char *text = ef_parameters_to_string(s, 1);
    snprintf(path, sizeof path, "%s/run_summary.json", folder);
    if (text && !ef_write_text_file_atomic(path, text)) (void)ef_analysis_track_outputs(a);
    free(text);
  }
  ef_parameters_destroy(&s);
  ef_error_set(err, __FILE__, __LINE__, "%s", message);
}
