/* edgeflow.c -- the command-line program: run a case, load-check a case, and
 * the sub-commands the applications register (devices, verify, ...).  The
 * applications loaded by default come from the build (EF_DEFAULT_APPLICATIONS). */
#include "edgeflow/ef_analysis.h"
#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_check.h"
#include "edgeflow/ef_registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef EF_DEFAULT_APPLICATIONS
#define EF_DEFAULT_APPLICATIONS "fluid"
#endif

/* Load every application of the default list (comma-separated); 0 or the first error. */
static int load_default_applications(void) {
  for (const char *p = EF_DEFAULT_APPLICATIONS; *p;) {
    char name[64];
    size_t n = strcspn(p, ", ");
    snprintf(name, sizeof name, "%.*s", (int)n, p);
    int err = n ? ef_registry_load_application(name) : 0;
    if (err) return err;
    p += n;
    p += strspn(p, ", ");
  }
  return 0;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: edgeflow run ProjectParameters.json [options]   run the analysis\n"
          "       edgeflow load ProjectParameters.json [options]  read parameters, mesh and processes; print a summary\n"
          "       edgeflow check ProjectParameters.json [options] load, then the mesh checks: quality statistics, tangled\n"
          "                                                       or duplicate elements, slivers, faces without a condition\n"
          "       edgeflow COMMAND [args]                         a command of an application (" EF_DEFAULT_APPLICATIONS ")\n"
          "options:\n"
          "  --solver-type NAME     override solver_settings.solver_type\n"
          "  --refine K             override model_import_settings.refinement_levels\n"
          "  --steps N              stop after N time steps\n"
          "  --output DIR           output folder (run_summary.json, VTK files)\n"
          "  --skip-unsupported     skip process modules edgeflow cannot honour (remeshing, GiD output)\n"
          "  --stop-when-steady     stop once velocity and pressure change by less than\n"
          "                         problem_data.steady_state.relative_tolerance (default 1e-3) per unit time\n"
          "  --restart FILE         continue the run that wrote this restart file (docs/restart.md)\n"
          "  --overwrite            remove the files of the run whose manifest is in the output folder first\n"
          "  --quiet                no progress lines\n");
  if (load_default_applications() == 0) {
    char list[1024];
    ef_registry_list("command", list, sizeof list);
    fprintf(out, "application commands: %s\n", list[0] ? list : "none");
    for (const char *p = list; *p;) {
      char name[64];
      size_t n = strcspn(p, ",");
      snprintf(name, sizeof name, "%.*s", (int)n, p);
      const ef_command_ops *c = ef_registry_lookup_command(name);
      if (c) fprintf(out, "  %-22s %s\n", c->name, c->help);
      p += n;
      while (*p == ',' || *p == ' ') p++;
    }
  }
}

/* Parse options after the parameters file; returns 0 or 2 on bad usage. */
static int parse_options(int argc, char **argv, ef_analysis_options *o) {
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (!strcmp(a, "--solver-type") && has_value) {
      o->solver_type = argv[++i];
    } else if (!strcmp(a, "--refine") && has_value) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 0 || v > 8) {
        fprintf(stderr, "edgeflow: --refine expects an integer 0..8, got '%s'\n", argv[i]);
        return 2;
      }
      o->refinement_levels = (int)v;
    } else if (!strcmp(a, "--steps") && has_value) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v <= 0) {
        fprintf(stderr, "edgeflow: --steps expects a positive integer, got '%s'\n", argv[i]);
        return 2;
      }
      o->max_steps = v;
    } else if (!strcmp(a, "--output") && has_value) {
      o->output_folder = argv[++i];
    } else if (!strcmp(a, "--restart") && has_value) {
      o->restart_file = argv[++i];
    } else if (!strcmp(a, "--overwrite")) {
      o->overwrite = 1;
    } else if (!strcmp(a, "--skip-unsupported")) {
      o->skip_unsupported_processes = 1;
    } else if (!strcmp(a, "--stop-when-steady")) {
      o->stop_when_steady = 1;
    } else if (!strcmp(a, "--quiet")) {
      o->quiet = 1;
    } else {
      fprintf(stderr, "edgeflow: unknown or incomplete option '%s'\n", a);
      return 2;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const char *command = argv[1];
  if (!strcmp(command, "run") || !strcmp(command, "load") || !strcmp(command, "check")) {
    if (argc < 3) {
      usage(stderr);
      return 2;
    }
    ef_analysis_options options;
    ef_analysis_options_default(&options);
    int check = !strcmp(command, "check");
    options.load_only = check || !strcmp(command, "load");
    options.applications = EF_DEFAULT_APPLICATIONS;
    options.overwrite = 0; /* refuse another run's output folder unless --overwrite */
    if (parse_options(argc - 3, argv + 3, &options)) return 2;
    ef_analysis a = NULL;
    int err = ef_analysis_create(argv[2], &options, &a);
    /* SIGINT/SIGTERM finish the step, write outputs, a restart file and the summary. */
    if (!err && !options.load_only) err = ef_install_stop_handlers();
    if (!err) err = ef_analysis_run(a);
    /* The load ran the checks (errors stop it, warnings went to stderr); now the statistics. */
    if (!err && check) err = ef_mesh_check_case(ef_analysis_model_part(a), ef_analysis_parameters(a), argv[2], stdout, NULL);
    /* On several ranks (parallel_type "MPI" under mpirun) a rank that fails alone cannot tell the others,
     * which may wait in a collective: print its message and stop them all (docs/mpi.md). */
    if (err && ef_comm_size(ef_analysis_comm(a)) > 1)
      ef_comm_abort(ef_analysis_comm(a), 1, "error (%s): %s", ef_error_name(err), ef_error_message());
    if (err) fprintf(stderr, "edgeflow: error (%s): %s\n", ef_error_name(err), ef_error_message());
    /* Interrupted: 128 + the signal as a shell reports it, 75 (EX_TEMPFAIL) for max_wall_time. */
    int code = err ? 1 : 0;
    if (!err && a && !strcmp(ef_analysis_status(a), "interrupted"))
      code = ef_analysis_stop_signal(a) ? 128 + ef_analysis_stop_signal(a) : 75;
    ef_analysis_destroy(&a);
    return code;
  }
  int err = load_default_applications();
  if (err) {
    fprintf(stderr, "edgeflow: error (%s): %s\n", ef_error_name(err), ef_error_message());
    return 1;
  }
  const ef_command_ops *c = ef_registry_lookup_command(command);
  if (!c) {
    fprintf(stderr, "edgeflow: unknown command '%s'\n", command);
    usage(stderr);
    return 2;
  }
  err = c->run(argc - 1, argv + 1);
  if (err) fprintf(stderr, "edgeflow %s: error (%s): %s\n", command, ef_error_name(err), ef_error_message());
  return err ? 1 : 0;
}
