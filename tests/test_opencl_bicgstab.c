/* test_opencl_bicgstab.c -- the device linear solvers chosen by name through ef_linear_solver.h:
 *  - the OpenCL strategy runs 3 steps of a 2D cavity (no fixed pressure: a singular, consistent
 *    system) and of a small 3D cavity (one fixed pressure) and exports its last pressure system;
 *  - on each, device "bicgstab" with the device "jacobi" preconditioner and device "cg" solve
 *    from x = 0 to tolerance 1e-9: BiCGStab converges, and its true residual ||b - A x|| / ||b||
 *    (recomputed on the device after the solve) is below 2e-9: its stop test reads the
 *    recurrence residual, which drifts from b - A x by rounding of order eps kappa ~ 1e-12 here,
 *    so twice the tolerance leaves room for nothing but that drift;
 *  - the two solutions agree (after removing their means: on the singular 2D system the answers
 *    may differ by a constant) to 1e-6 relative in the 2-norm: both residuals are about 1e-9
 *    ||b||, so ||x1 - x2|| / ||x|| <= kappa (r1 + r2), and the Jacobi-scaled condition number of
 *    these small meshes' pressure matrices (379 and 469 rows, kappa ~ (pi h)^-2 ~ 1e2) keeps that
 *    near 1e-7 at worst (measured: 1e-8), while a wrong solve is off by O(1);
 *  - reading the state every 4 iterations gives the very same iterate and count as every 1
 *    (the device freezes at the first stop);
 *  - an unknown device solver_type is refused naming the registered device solvers, and the
 *    device cg with a preconditioner other than its own scaling is refused.
 * --tiny: the BiCGStab and Jacobi kernels on a small scaled Laplacian, against a host CG (for
 * oclgrind).
 *   argv: CASE2D.json CASE3D.json WORK_FOLDER | --tiny
 * Skips (77) without an OpenCL device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_analysis.h"
#include "edgeflow/ef_linear_solver.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_registry.h"
#include "edgeflow/ef_util.h"
#include "matrix_io.h"
#include "opencl_solvers.h"
#include "test_opencl_common.h"
#include "ef_test_pressure.h"

/* Solve A x = b from x = 0 with the device solver that settings name; x (host) receives it. */
static int device_solve(ef_cl_context *ctx, const ef_cl_csr *dA, int null_space, cl_mem db, const char *settings,
                        double *x, ef_solve_result *res) {
  ef_parameters p = NULL;
  ef_linear_solver *s = NULL;
  cl_mem dx = NULL;
  ASSERT_OK(ef_parameters_parse(settings, "test linear_solver_settings", &p));
  const ef_matrix A = ef_cl_matrix_wrap(dA, ctx, null_space);
  ASSERT_OK(ef_linear_solver_create(p, EF_MEMORY_DEVICE, &A, &s));
  ASSERT_OK(ef_linear_solver_setup(s, &A));
  /* From host zeros: oclgrind does not count a fill as initialisation. */
  for (int64_t i = 0; i < dA->n; ++i) x[i] = 0.0;
  ASSERT_OK(ef_cl_vector_create(ctx, dA->n, x, &dx));
  const ef_vector vb = ef_cl_vector_wrap(db, dA->n);
  ef_vector vx = ef_cl_vector_wrap(dx, dA->n);
  ASSERT_OK(ef_linear_solver_solve(s, &vb, &vx, res));
  ASSERT_OK(ef_cl_vector_read(ctx, dx, dA->n, x));
  clReleaseMemObject(dx);
  ef_linear_solver_destroy(&s);
  ef_parameters_destroy(&p);
  return 0;
}

/* BiCGStab (check_every 1 and 4) on one host system against x_ref, or against the device CG
 * when x_ref is NULL; the checks of the header. */
static int check_system(ef_cl_context *ctx, const ef_csr_matrix *A, const double *b, int null_space,
                        const double *x_ref, const char *name) {
  const int64_t n = A->n;
  ef_cl_csr dA;
  cl_mem db = NULL;
  ASSERT_OK(ef_cl_csr_upload(ctx, A, &dA));
  ASSERT_OK(ef_cl_vector_create(ctx, n, b, &db));
  double *xb = malloc((size_t)n * sizeof *xb), *xb4 = malloc((size_t)n * sizeof *xb4);
  double *xc = malloc((size_t)n * sizeof *xc);
  ASSERT(xb && xb4 && xc, "out of memory");
  ef_solve_result rb, rb4, rc = {0, 1, 0.0, 0.0, 0.0};
  ASSERT_OK(device_solve(ctx, &dA, null_space, db,
                         "{\"solver_type\": \"bicgstab\", \"preconditioner_type\": \"jacobi\", \"tolerance\": 1e-9,"
                         " \"max_iteration\": 5000, \"check_every\": 1}",
                         xb, &rb));
  ASSERT_OK(device_solve(ctx, &dA, null_space, db,
                         "{\"solver_type\": \"bicgstab\", \"tolerance\": 1e-9, \"max_iteration\": 5000,"
                         " \"check_every\": 4}",
                         xb4, &rb4));
  if (x_ref)
    memcpy(xc, x_ref, (size_t)n * sizeof *xc);
  else
    ASSERT_OK(device_solve(ctx, &dA, null_space, db,
                           "{\"solver_type\": \"cg\", \"tolerance\": 1e-9, \"max_iteration\": 5000,"
                           " \"autotune\": false, \"check_every\": 8, \"verbosity\": 0}",
                           xc, &rc));
  ASSERT(rb.converged && rb.residual <= 1e-9, "%s: bicgstab did not converge (%d iterations, residual %.3e)", name,
         rb.iterations, rb.residual);
  ASSERT(rb.true_residual >= 0.0 && rb.true_residual <= 2e-9, "%s: bicgstab true residual %.3e > 2e-9", name,
         rb.true_residual);
  ASSERT(rc.converged, "%s: cg did not converge (%d iterations)", name, rc.iterations);
  ASSERT(rb4.iterations == rb.iterations && !memcmp(xb, xb4, (size_t)n * sizeof *xb),
         "%s: check_every 4 changed bicgstab's result (%d vs %d iterations)", name, rb4.iterations, rb.iterations);
  const double d = ef_test_rel_diff(xb, xc, n, 1);
  ASSERT(d <= 1e-6, "%s: bicgstab and cg solutions differ by %.3e (relative, means removed)", name, d);
  if (getenv("EF_TEST_VERBOSE"))
    printf("%s: n %lld, bicgstab %d iterations (true residual %.2e), cg %d (%.2e), difference %.2e\n", name,
           (long long)n, rb.iterations, rb.true_residual, rc.iterations, rc.true_residual, d);
  free(xb);
  free(xb4);
  free(xc);
  clReleaseMemObject(db);
  ef_cl_csr_release(&dA);
  return 0;
}

/* The case's linear solver at tolerance 1e-10, exporting its pressure systems to path; the
 * device quiet. */
static int edit_case(ef_parameters parameters, void *path) {
  ef_parameters ss, ls, dev;
  ASSERT_OK(ef_parameters_get(parameters, "solver_settings", &ss));
  ASSERT_OK(ef_parameters_get(ss, "linear_solver_settings", &ls));
  ASSERT_OK(ef_parameters_set_double(ls, "tolerance", 1e-10));
  ASSERT_OK(ef_parameters_set_string(ls, "export_pressure_system", (const char *)path));
  if (!ef_parameters_has(ss, "device")) ASSERT_OK(ef_parameters_set_json(ss, "device", "{}"));
  ASSERT_OK(ef_parameters_get(ss, "device", &dev));
  ASSERT_OK(ef_parameters_set_double(dev, "verbose", 0));
  return 0;
}

/* Refusals: an unknown device solver names the registered ones; device cg with another
 * preconditioner. */
static int check_errors(void) {
  ef_parameters p = NULL;
  ASSERT_OK(ef_parameters_parse("{\"solver_type\": \"no_such_solver\"}", "test", &p));
  int err = ef_linear_solver_validate(p, EF_MEMORY_DEVICE);
  const char *m = ef_error_message();
  ASSERT(err == EF_ERR_NOT_FOUND && strstr(m, "no_such_solver") && strstr(m, "cg") && strstr(m, "bicgstab"),
         "unknown device solver: %d '%s'", err, m);
  ef_error_clear();
  ef_parameters_destroy(&p);
  ASSERT_OK(ef_parameters_parse("{\"solver_type\": \"cg\", \"preconditioner_type\": \"none\"}", "test", &p));
  err = ef_linear_solver_validate(p, EF_MEMORY_DEVICE);
  ASSERT(err == EF_ERR_PARAMETER && strstr(ef_error_message(), "preconditioner_type"),
         "device cg with preconditioner 'none': %d '%s'", err, ef_error_message());
  ef_error_clear();
  ef_parameters_destroy(&p);
  return 0;
}

/* The small system of --tiny: a scaled 5 x 4 Laplacian with one fixed face, against the host
 * CG of test_opencl_common.h (1e-12 on the scaled system) rather than the device CG, so that
 * oclgrind sees the BiCGStab and Jacobi kernels only. */
static int run_tiny(ef_cl_context *ctx) {
  test_csr m;
  ASSERT_OK(test_laplacian(5, 4, 1, 7, &m));
  double *b = malloc((size_t)m.n * sizeof *b);
  ASSERT(b, "out of memory");
  uint64_t seed = 3;
  for (int64_t i = 0; i < m.n; ++i) b[i] = ef_test_uniform(&seed);
  double *x = calloc((size_t)m.n, sizeof *x);
  ASSERT(x, "out of memory");
  ASSERT(test_host_cg(&m, b, x, 1e-12, 1000) >= 0, "host CG failed");
  const ef_csr_matrix A = test_view(&m);
  int rc = check_system(ctx, &A, b, 0, x, "tiny");
  free(x);
  free(b);
  test_csr_free(&m);
  return rc;
}

int main(int argc, char **argv) {
  const int tiny = argc > 1 && !strcmp(argv[1], "--tiny");
  ASSERT(tiny || argc == 4, "usage: test_opencl_bicgstab CASE2D.json CASE3D.json WORK | --tiny");
  ASSERT_OK(ef_registry_load_application("fluid"));
  if (check_errors()) return 1;
  ef_cl_context *ctx = NULL;
  int rc = test_context(&ctx, tiny ? "" : argv[3]);
  if (rc) return rc;
  if (tiny) {
    rc = run_tiny(ctx);
  } else {
    for (int c = 0; c < 2 && !rc; ++c) {
      char work[1024], path[1100];
      snprintf(work, sizeof work, "%s/case%d", argv[3], c + 2);
      snprintf(path, sizeof path, "%s/pressure.bin", work);
      ef_linear_system *sys = NULL;
      /* 3 steps of the OpenCL strategy, the last pressure system exported to path. */
      rc = ef_test_run_case(argv[1 + c], "opencl_edge_based", NULL, work, 3, edit_case, path, NULL);
      if (!rc && ef_linear_system_read(path, &sys)) rc = 1;
      if (!rc) {
        const ef_csr_matrix A = ef_linear_system_matrix(sys);
        rc = check_system(ctx, &A, sys->rhs, c == 0, NULL, c == 0 ? "2D cavity" : "3D cavity");
      }
      ef_linear_system_destroy(&sys);
    }
  }
  ef_cl_context_destroy(&ctx);
  if (rc && rc != EF_TEST_SKIP) fprintf(stderr, "%s\n", ef_error_message());
  return rc;
}
