/* analysis.c -- the analysis loop (Kratos AnalysisStage) over processes and a strategy. */
#include "edgeflow/ef_analysis.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_log.h"
#include "edgeflow/ef_mesh_check.h"
#include "edgeflow/ef_mesh_io.h"
#include "edgeflow/ef_mesh_tools.h"
#include "edgeflow/ef_registry.h"
#include "edgeflow/ef_util.h"
#include "output_check.h"

#include <errno.h>
#include <math.h>
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
    " \"progress_interval\": 10, \"skip_unsupported_processes\": false, \"applications\": [],"
    " \"steady_state\": {\"velocity_rate_tolerance\": 0.0, \"check_interval\": 10, \"minimum_time\": 0.0}}";

/* The solver_settings keys the core reads itself; the strategy adds its own (ef_strategy_ops). */
static const char ef_solver_defaults[] =
    "{\"solver_type\": \"\", \"model_part_name\": \"" EF_DEFAULT_MODEL_PART_NAME "\", \"domain_size\": -1,"
    " \"echo_level\": 0,"
    " \"model_import_settings\": {\"input_type\": \"mdpa\", \"input_filename\": \"\","
    "     \"refinement_levels\": 0, \"renumbering\": \"rcm\"}}";

static const char ef_process_block_defaults[] =
    "{\"python_module\": \"\", \"kratos_module\": \"\", \"process_name\": \"\", \"help\": null,"
    " \"Parameters\": {}}";

typedef struct {
  const ef_process_ops *ops;
  void *data;
  int is_output;
  char module[128];
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
  int ev_initialize, ev_read, ev_refine, ev_strategy_init, ev_step, ev_processes, ev_output;
};

void ef_analysis_options_default(ef_analysis_options *o) {
  memset(o, 0, sizeof *o);
  o->refinement_levels = -1;
  o->skip_unsupported_processes = -1;
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
  ef_parameters_destroy(&a->summary);
  ef_parameters_destroy(&a->project);
  free(a->parameters_path);
  free(a->steady_u);
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
  EF_CHECK(!strcmp(renumbering, "rcm") || !strcmp(renumbering, "none"), EF_ERR_PARAMETER,
           "%s: solver_settings.model_import_settings.renumbering is '%s', expected \"rcm\" or \"none\"",
           a->parameters_path, renumbering);
  if (!strcmp(renumbering, "rcm")) EF_CALL(ef_mesh_renumber(a->mp, "rcm"));
  return EF_SUCCESS;
}

/* Create one process from a block of a process list. */
static int ef_analysis_add_process(ef_analysis a, ef_parameters block, int is_output,
                                   const ef_process_context *context, int skip_unsupported) {
  EF_CALL(ef_parameters_validate_defaults(block, ef_process_block_defaults));
  const char *module;
  EF_CALL(ef_parameters_get_string(block, "python_module", &module));
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

/* Every list inside "processes" and "output_processes", in file order. */
static int ef_analysis_create_processes(ef_analysis a, int skip_unsupported) {
  static ef_process_context context;
  context.model_part = a->mp;
  context.project = a->project;
  context.output_folder = a->output_folder;
  context.case_folder = a->case_folder;
  context.echo_level = a->echo_level;
  const char *groups[2] = {"processes", "output_processes"};
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
        EF_CALL(ef_analysis_add_process(a, block, g == 1, &context, skip_unsupported));
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
  a->ev_strategy_init = ef_log_event("setup", "strategy initialize");
  a->ev_step = ef_log_event("loop", "solve step");
  a->ev_processes = ef_log_event("loop", "processes");
  a->ev_output = ef_log_event("loop", "output");
  ef_log_event_begin(a->ev_initialize);

  EF_CALL(ef_parameters_validate_defaults(a->project, ef_project_defaults));
  EF_CALL(ef_parameters_get(a->project, "problem_data", &a->problem_data));
  EF_CALL(ef_parameters_validate_defaults(a->problem_data, ef_problem_data_defaults));
  EF_CALL(ef_parameters_get(a->project, "solver_settings", &a->solver_settings));
  if (a->options.solver_type) EF_CALL(ef_parameters_set_string(a->solver_settings, "solver_type", a->options.solver_type));
  EF_CALL(ef_register_core_processes());
  EF_CALL(ef_analysis_load_applications(a));
  char tolerated[2048];
  EF_CALL(ef_analysis_validate_solver_settings(a, tolerated, sizeof tolerated));
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
  EF_CALL(ef_output_destinations_check(a->project, a->output_folder));
  if (tolerated[0] && !a->options.quiet)
    fprintf(stderr, "edgeflow: warning: %s: solver_settings keys used only by Kratos' own solvers are ignored: %s\n",
            a->parameters_path, tolerated);

  EF_CALL(ef_analysis_read_mesh(a));
  if (a->strategy_ops->add_variables) EF_CALL(a->strategy_ops->add_variables(a->mp));
  if (!a->options.quiet) ef_model_part_print_summary(a->mp, stdout);
  if (a->strategy_ops->prepare) {
    const ef_strategy_setup setup = {a->mp, a->solver_settings, a->parameters_path, a->case_folder, a->summary,
                                     a->options.quiet};
    EF_CALL(a->strategy_ops->prepare(&setup, &a->config));
  }

  EF_CALL(ef_analysis_create_processes(a, skip));
  a->time = a->start_time;
  a->initialized = 1;
  const char *solver_type = a->strategy_ops->name;
  if (a->options.load_only) {
    if (!a->options.quiet) printf("strategy: %s; %d processes created\n", solver_type, a->n_processes);
    ef_log_event_end(a->ev_initialize);
    return EF_SUCCESS;
  }

  for (int i = 0; i < a->n_processes; i++)
    if (a->processes[i].ops->execute_initialize) EF_CALL(a->processes[i].ops->execute_initialize(a->processes[i].data));
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
  EF_CALL(ef_parameters_set_json(a->summary, "strategy", "{}"));
  EF_CALL(ef_parameters_get(a->summary, "strategy", &a->config.summary));
  EF_CALL(ef_parameters_set_string(a->config.summary, "name", solver_type));
  EF_CALL(a->strategy_ops->create(&a->config, &a->strategy));

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
  ef_log_event_end(a->ev_initialize);
  return EF_SUCCESS;
}

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
  if (a->options.max_steps > 0 && a->step >= a->options.max_steps) return 0;
  if (a->steady_reached) return 0;
  return a->time < a->end_time - 1e-12 * fmax(1.0, fabs(a->end_time));
}

int ef_analysis_initialize_solution_step(ef_analysis a) {
  EF_CALL(ef_analysis_require(a, "ef_analysis_initialize_solution_step", 1));
  EF_CHECK(a->strategy, EF_ERR_INTERNAL, "the analysis has no strategy (not initialized, or load_only)");
  /* A caller driving the steps itself (the Python binding) never enters run_solution_loop. */
  if (a->wall_loop_start <= 0) a->wall_loop_start = ef_wtime();
  EF_CALL(a->strategy_ops->compute_time_step(a->strategy, &a->dt));
  /* The last step ends on end_time exactly. */
  if (a->time + a->dt > a->end_time) a->dt = a->end_time - a->time;
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
    a->steady_rate = du / (a->time - a->steady_t_check);
    if (a->steady_rate < a->steady_tolerance && a->time >= a->steady_min_time) {
      a->steady_reached = 1;
      if (!a->options.quiet)
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
      EF_CALL(a->processes[i].ops->execute_finalize_solution_step(a->processes[i].data, a->time, (int)a->step));
  ef_log_event_end(a->ev_processes);
  if (!a->options.quiet && (a->step % a->progress_interval == 0 || !ef_analysis_keep_advancing(a))) {
    double wall = ef_wtime() - a->wall_loop_start;
    double done = (a->time - a->start_time) / fmax(a->end_time - a->start_time, 1e-300);
    double eta = done > 0 ? wall * (1.0 - done) / done : 0.0;
    if (a->options.max_steps > 0) eta = wall * (double)(a->options.max_steps - a->step) / (double)a->step;
    printf("step %7ld  t = %-12.6g  dt = %-10.4g  pressure iterations %4d (res %.2e)  wall %8.2f s  left %8.1f s\n",
           a->step, a->time, a->dt, a->last_iterations, a->last_residual, wall, eta);
    fflush(stdout);
  }
  return EF_SUCCESS;
}

int ef_analysis_output_solution_step(ef_analysis a) {
  EF_CALL(ef_analysis_require(a, "ef_analysis_output_solution_step", 1));
  ef_log_event_begin(a->ev_output);
  /* The step that reached the steady state is the last one: every output process writes it,
   * on schedule or not, so the converged state is on disk. */
  const int last_steady = a->steady_reached && a->step > 0;
  for (int i = 0; i < a->n_processes; i++) {
    ef_process_entry *e = &a->processes[i];
    if (!e->ops->print_output) continue;
    if (!last_steady && e->ops->is_output_step && !e->ops->is_output_step(e->data, a->time, (int)a->step))
      continue;
    EF_CALL(e->ops->print_output(e->data, a->time, (int)a->step));
  }
  ef_log_event_end(a->ev_output);
  return EF_SUCCESS;
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
           "{\"dimension\": %d, \"nodes\": %lld, \"elements\": %lld, \"conditions\": %lld, \"source\": \"%s\"}",
           a->mp ? a->mp->dim : 0, a->mp ? (long long)a->mp->n_nodes : 0LL,
           a->mp ? (long long)a->mp->n_elements : 0LL, a->mp ? (long long)a->mp->n_conditions : 0LL,
           a->mp && a->mp->source_file ? a->mp->source_file : "");
  EF_CALL(ef_parameters_set_json(s, "mesh", json));
  double loop_wall = a->wall_loop_start > 0 ? ef_wtime() - a->wall_loop_start : 0.0;
  snprintf(json, sizeof json,
           "{\"steps\": %ld, \"start_time\": %.17g, \"end_time\": %.17g, \"simulated_time\": %.17g,"
           " \"wall_seconds_total\": %.6f, \"wall_seconds_loop\": %.6f, \"seconds_per_step\": %.9g}",
           a->step, a->start_time, a->time, a->time - a->start_time, ef_wtime() - a->wall_start, loop_wall,
           a->step ? loop_wall / (double)a->step : 0.0);
  EF_CALL(ef_parameters_set_json(s, "run", json));
  if (a->steady_tolerance > 0) {
    snprintf(json, sizeof json,
             "{\"velocity_rate_tolerance\": %.6g, \"reached\": %s, \"last_velocity_rate\": %.6g}",
             a->steady_tolerance, a->steady_reached ? "true" : "false", a->steady_rate);
    EF_CALL(ef_parameters_set_json(s, "steady_state", json));
  }
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
  if (!a->options.quiet) ef_log_print_table(stdout);

  char path[4200];
  snprintf(path, sizeof path, "%s/run_summary.json", a->output_folder);
  char *text = ef_parameters_to_string(s, 1);
  EF_CHECK(text, EF_ERR_MEMORY, "out of memory writing the run summary");
  int err = ef_write_text_file_atomic(path, text);
  free(text);
  return err;
}

int ef_analysis_run(ef_analysis a) {
  EF_CALL(ef_analysis_initialize(a));
  if (!a->options.load_only) {
    EF_CALL(ef_analysis_output_solution_step(a));
    int err = ef_analysis_run_solution_loop(a);
    if (err) {
      /* Keep what we know: the summary of the steps that completed. */
      char saved[4096];
      snprintf(saved, sizeof saved, "%s", ef_error_message());
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
