/* test_mpi_run.c -- a case run under mpirun against the same case on one process (docs/mpi.md).
 *
 *   mpirun -n P test_mpi_run CASE.json STEPS OUTPUT_FOLDER [REFERENCE.json]
 *
 * Every rank runs the analysis of CASE.json (problem_data.parallel_type "MPI": its piece of the mesh,
 * the OpenMP strategy's distributed step) for STEPS steps; the owned velocities and pressures are
 * gathered onto every rank by their global node index (one reduction of a global array: the test's
 * meshes are small); rank 0 runs the same case on one process (ef_analysis_options.comm =
 * ef_comm_serial()) and compares: velocity and pressure to 1e-8 relative in the max norm, and the CG
 * iterations of every step within 2 (or, with EF_TEST_MPI_ITERATION_RATIO, the total iterations at most that
 * many times the reference's: the AMG, whose aggregates follow the partition).  Prints the figures and "test_mpi_run: PASSED" on rank 0; a failing
 * rank stops them all (ef_comm_abort).  With REFERENCE.json the reference is that case on the same P ranks
 * (gathered the same way) instead of CASE on one process: two settings of the distributed step compared, e.g.
 * the OpenCL strategy's device.mpi_overlap on and off.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_analysis.h"
#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_partition.h"

#define MAX_STEPS 1000

/* Run the case for steps steps on comm; the CG iterations of each step into its. */
static int run(const char *path, long steps, const char *output, ef_comm comm, int *its, ef_analysis *out) {
  ef_analysis_options o;
  ef_analysis_options_default(&o);
  o.quiet = 1;
  o.max_steps = steps;
  o.output_folder = output;
  o.applications = EF_DEFAULT_APPLICATIONS;
  o.comm = comm;
  EF_CALL(ef_analysis_create(path, &o, out));
  ef_analysis a = *out;
  EF_CALL(ef_analysis_initialize(a));
  long k = 0;
  while (ef_analysis_keep_advancing(a)) {
    EF_CALL(ef_analysis_initialize_solution_step(a));
    EF_CALL(ef_analysis_solve_solution_step(a));
    EF_CALL(ef_analysis_finalize_solution_step(a));
    EF_CALL(ef_analysis_output_solution_step(a));
    if (k < MAX_STEPS) its[k] = ef_analysis_last_iterations(a);
    ++k;
  }
  EF_CHECK(k == steps, EF_ERR_INTERNAL, "ran %ld steps, expected %ld", k, steps);
  return ef_analysis_finalize(a);
}

static int values(ef_model_part mp, double **u, double **p) {
  ef_variable *vu, *vp;
  EF_CALL(ef_model_part_sync_to_host(mp)); /* the OpenCL strategy's values live on the device */
  EF_CALL(ef_model_part_get_variable(mp, "VELOCITY", &vu));
  EF_CALL(ef_model_part_get_variable(mp, "PRESSURE", &vp));
  *u = vu->values;
  *p = vp->values;
  return EF_SUCCESS;
}

/* The owned velocities and pressures of a run on world, by global node (4 doubles a node), on every rank. */
static int gather(ef_analysis a, ef_comm world, int64_t *n_global, double **out) {
  const ef_partition *pt = ef_analysis_partition(a);
  EF_CHECK(pt, EF_ERR_INTERNAL, "no partition on %d ranks", ef_comm_size(world));
  const int64_t n = pt->n_global_nodes;
  double *global = calloc(4 * (size_t)n, sizeof *global), *u = NULL, *p = NULL;
  EF_CHECK(global, EF_ERR_MEMORY, "out of memory");
  int err = values(ef_analysis_model_part(a), &u, &p);
  if (!err) {
    for (int64_t i = 0; i < pt->n_owned; ++i) {
      const int64_t g = pt->global_node[i];
      for (int c = 0; c < 3; ++c) global[4 * g + c] = u[3 * i + c];
      global[4 * g + 3] = p[i];
    }
    err = ef_comm_allreduce(world, global, (int)(4 * n), EF_COMM_SUM);
  }
  if (err) {
    free(global);
    return err;
  }
  *n_global = n;
  *out = global;
  return EF_SUCCESS;
}

/* The value after "key": inside "section" of run_summary.json in folder (NUL-terminated into text), or NULL. */
static const char *summary_value(const char *folder, const char *section, const char *key, char *text, size_t size) {
  char path[4200], quoted[128];
  snprintf(path, sizeof path, "%s/run_summary.json", folder);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  const size_t len = fread(text, 1, size - 1, f);
  fclose(f);
  text[len] = 0;
  snprintf(quoted, sizeof quoted, "\"%s\"", section);
  const char *o = strstr(text, quoted);
  snprintf(quoted, sizeof quoted, "\"%s\":", key);
  const char *v = o ? strstr(o, quoted) : NULL;
  if (!v) return NULL;
  v += strlen(quoted);
  while (*v == ' ' || *v == '\t') ++v;
  return v;
}

/* run_summary.json's strategy.mpi_overlap.on in folder: 1, 0, or -1 when absent (the OpenMP strategy). */
static int overlap_on(const char *folder) {
  static char text[1 << 16];
  const char *on = summary_value(folder, "mpi_overlap", "on", text, sizeof text);
  return on ? !strncmp(on, "true", 4) : -1;
}

/* run_summary.json's strategy.viscous_solver.<key> in folder (an integer), or -1 when absent (explicit). */
static long viscous_figure(const char *folder, const char *key) {
  static char text[1 << 16];
  const char *v = summary_value(folder, "viscous_solver", key, text, sizeof text);
  return v ? strtol(v, NULL, 10) : -1;
}

/* x against the reference y (4 doubles a node: velocity, pressure) over n nodes, and the runs' CG iterations:
 * the velocity's and the pressure's largest difference relative to the reference's largest value, the
 * largest difference of iterations in a step and both totals. */
typedef struct {
  double ru, rp;
  int dits, total, total_ref;
} comparison;

static comparison compare(int64_t n, const double *x, const double *y, long steps, const int *its,
                          const int *its_ref) {
  double du = 0.0, dp = 0.0, mu = 0.0, mpr = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c) {
      du = fmax(du, fabs(x[4 * i + c] - y[4 * i + c]));
      mu = fmax(mu, fabs(y[4 * i + c]));
    }
    dp = fmax(dp, fabs(x[4 * i + 3] - y[4 * i + 3]));
    mpr = fmax(mpr, fabs(y[4 * i + 3]));
  }
  comparison r = {mu > 0.0 ? du / mu : du, mpr > 0.0 ? dp / mpr : dp, 0, 0, 0};
  for (long k = 0; k < steps; ++k) {
    const int d = abs(its[k] - its_ref[k]);
    if (d > r.dits) r.dits = d;
    r.total += its[k];
    r.total_ref += its_ref[k];
  }
  return r;
}

/* CASE against REFERENCE, both on the ranks of world (the optional fourth argument). */
static int check_reference(char **argv, long steps, ef_comm world, int *passed) {
  const int rank = ef_comm_rank(world), size = ef_comm_size(world);
  char folder[4096];
  int its[MAX_STEPS] = {0}, its_ref[MAX_STEPS] = {0};
  ef_analysis a = NULL, r = NULL;
  double *x = NULL, *y = NULL;
  int64_t n = 0, n_ref = 0;
  snprintf(folder, sizeof folder, "%s/np%d", argv[3], size);
  int err = run(argv[1], steps, folder, world, its, &a);
  if (!err) err = gather(a, world, &n, &x);
  snprintf(folder, sizeof folder, "%s/np%d_reference", argv[3], size);
  if (!err) err = run(argv[4], steps, folder, world, its_ref, &r);
  if (!err) err = gather(r, world, &n_ref, &y);
  ef_analysis_destroy(&r); /* the run summaries are written here */
  ef_analysis_destroy(&a);
  const int on_ref = overlap_on(folder);
  snprintf(folder, sizeof folder, "%s/np%d", argv[3], size);
  const int on = overlap_on(folder);
  if (!err && n != n_ref) err = EF_ERROR(EF_ERR_INTERNAL, "%lld nodes against %lld", (long long)n, (long long)n_ref);
  if (!err && rank == 0) {
    const comparison c = compare(n, x, y, steps, its, its_ref);
    const double ru = c.ru, rp = c.rp;
    const int dits = c.dits, total = c.total, total_ref = c.total_ref;
    printf("test_mpi_run: %s against %s, both on %d ranks, %ld steps, %lld nodes: velocity %.3e, pressure %.3e "
           "relative (max norm); CG iterations %d vs %d (largest difference in a step %d); mpi_overlap %d vs %d "
           "(1 on, 0 off, -1 not reported)\n",
           argv[1], argv[4], size, steps, (long long)n, ru, rp, total, total_ref, dits, on, on_ref);
    /* Where both runs report the overlap, the two must differ in it (else a setting is compared with itself). */
    *passed = ru <= 1e-8 && rp <= 1e-8 && dits <= 2 && isfinite(ru) && isfinite(rp) && total > 0 &&
              (on < 0 || on_ref < 0 || on != on_ref);
  }
  free(x);
  free(y);
  return err;
}

static int check(int argc, char **argv, ef_comm world, int *passed) {
  EF_CHECK(argc == 4 || argc == 5, EF_ERR_PARAMETER,
           "usage: mpirun -n P test_mpi_run CASE.json STEPS OUTPUT_FOLDER [REFERENCE.json]");
  const long steps = strtol(argv[2], NULL, 10);
  EF_CHECK(steps > 0 && steps <= MAX_STEPS, EF_ERR_PARAMETER, "STEPS is '%s', expected 1..%d", argv[2], MAX_STEPS);
  const int rank = ef_comm_rank(world), size = ef_comm_size(world);
  char folder[4096];
  snprintf(folder, sizeof folder, "%s/np%d", argv[3], size);
  if (argc == 5) return check_reference(argv, steps, world, passed);
  int its[MAX_STEPS] = {0}, its_serial[MAX_STEPS] = {0};
  ef_analysis a = NULL, s = NULL;
  int fields_passed = 0;
  int err = run(argv[1], steps, folder, world, its, &a);
  double *global = NULL, *serial = NULL, *u = NULL, *p = NULL;
  int64_t n = 0;
  if (!err) err = gather(a, world, &n, &global);
  if (!err && rank == 0) {
    snprintf(folder, sizeof folder, "%s/serial", argv[3]);
    err = run(argv[1], steps, folder, ef_comm_serial(), its_serial, &s);
    ef_model_part mp = err ? NULL : ef_analysis_model_part(s);
    if (!err) err = mp->n_nodes == n ? values(mp, &u, &p) : EF_ERROR(EF_ERR_INTERNAL, "serial mesh of %lld nodes, %lld", (long long)mp->n_nodes, (long long)n);
    if (!err) err = (serial = malloc(4 * (size_t)n * sizeof *serial)) ? EF_SUCCESS : EF_ERROR(EF_ERR_MEMORY, "out of memory");
    if (!err) {
      for (int64_t i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) serial[4 * i + c] = u[3 * i + c];
        serial[4 * i + 3] = p[i];
      }
      const comparison c = compare(n, global, serial, steps, its, its_serial);
      const double ru = c.ru, rp = c.rp;
      const int dits = c.dits, total = c.total, total_serial = c.total_ref;
      printf("test_mpi_run: %s on %d ranks, %ld steps, %lld nodes: velocity %.3e, pressure %.3e relative (max norm); "
             "CG iterations %d vs %d on one process (largest difference in a step %d)\n",
             argv[1], size, steps, (long long)n, ru, rp, total, total_serial, dits);
      /* EF_TEST_MPI_ITERATION_DIFFERENCE: the largest difference a step may show (default 2; -1: reported,
       * not checked: PETSc's GAMG, whose aggregates follow the partition). */
      const char *allowed_text = getenv("EF_TEST_MPI_ITERATION_DIFFERENCE");
      const int allowed = allowed_text && *allowed_text ? atoi(allowed_text) : 2;
      /* EF_TEST_MPI_ITERATION_RATIO: the total iterations at most this times the reference's (issue 15's gate
       * for the AMG across ranks: 1.3); unset: not checked. */
      const char *ratio_text = getenv("EF_TEST_MPI_ITERATION_RATIO");
      const double ratio = ratio_text && *ratio_text ? atof(ratio_text) : 0.0;
      if (ratio > 0.0)
        printf("test_mpi_run: total CG iterations %.3f times the reference's (at most %.2f)\n",
               total_serial > 0 ? (double)total / total_serial : 0.0, ratio);
      fields_passed = ru <= 1e-8 && rp <= 1e-8 && (allowed < 0 || dits <= allowed) && isfinite(ru) &&
                      isfinite(rp) && (ratio <= 0.0 || (double)total <= ratio * (double)total_serial);
    }
  }
  free(global);
  free(serial);
  ef_analysis_destroy(&s); /* the run summaries are written here */
  ef_analysis_destroy(&a);
  *passed = fields_passed;
  if (!err && rank == 0) {
    /* The implicit viscosity: run_summary.json's viscous_solver as on one process -- the same stage solves, the
     * stage CG iterations within 2 a solve. */
    char serial_folder[4096];
    snprintf(folder, sizeof folder, "%s/np%d", argv[3], size);
    snprintf(serial_folder, sizeof serial_folder, "%s/serial", argv[3]);
    const long solves = viscous_figure(folder, "stage_solves"), solves_serial = viscous_figure(serial_folder, "stage_solves");
    const long vits = viscous_figure(folder, "cg_iterations"), vits_serial = viscous_figure(serial_folder, "cg_iterations");
    if (solves_serial >= 0 || solves >= 0) {
      printf("test_mpi_run: viscous_solver: %ld stage solves, %ld CG iterations vs %ld, %ld on one process\n", solves,
             vits, solves_serial, vits_serial);
      *passed = *passed && solves == solves_serial && solves > 0 && vits >= 0 &&
                labs(vits - vits_serial) <= 2 * solves;
    }
  }
  return err;
}

int main(int argc, char **argv) {
  ef_comm world = NULL;
  int err = ef_comm_world(&world);
  if (err) {
    fprintf(stderr, "test_mpi_run: %s\n", ef_error_message());
    return 1;
  }
  int passed = 0;
  err = check(argc, argv, world, &passed);
  if (err) ef_comm_abort(world, 1, "test_mpi_run: error (%s): %s", ef_error_name(err), ef_error_message());
  double ok = passed;
  if (ef_comm_allreduce(world, &ok, 1, EF_COMM_MAX)) ef_comm_abort(world, 1, "test_mpi_run: %s", ef_error_message());
  if (ef_comm_rank(world) == 0) printf("test_mpi_run: %s\n", ok > 0.0 ? "PASSED" : "FAILED");
  return ok > 0.0 ? 0 : 1;
}
