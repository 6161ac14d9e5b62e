/* test_linear_solvers.c -- the host linear solvers through the registry (ef_linear_solver.h) on
 * real pressure systems: the 2D cavity (no fixed pressure: singular) and the small 3D cavity (one
 * fixed pressure), 3 steps of the OpenMP strategy each.  BiCGStab and CG with "jacobi" both
 * reach the true residual asked for and agree; settings errors name the key or the registered
 * names.
 *   argv: CAVITY2D.json CAVITY3D.json WORK_FOLDER */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_analysis.h"
#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_linear_solver.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_registry.h"
#include "ef_test.h"
#include "ef_test_pressure.h"

/* Solve s with the settings in json from x = 0; the solution into x, the result into r. */
static int solve(const char *json, const ef_pressure_system *s, double *x, ef_solve_result *r) {
  int singular = 1;
  for (int64_t i = 0; i < s->n; ++i) singular = singular && !s->fixed[i];
  ef_matrix A = {.memory = EF_MEMORY_HOST, .layout = {s->n, 0, NULL}, .nnz = s->nnz, .constant_null_space = singular,
                 .row_ptr = s->row_ptr, .col = s->col, .values = s->values};
  ef_parameters p = NULL;
  ef_linear_solver *ls = NULL;
  ASSERT_OK(ef_parameters_parse(json, "<test settings>", &p));
  ASSERT_OK(ef_linear_solver_create(p, EF_MEMORY_HOST, &A, &ls));
  memset(x, 0, (size_t)s->n * sizeof *x);
  ef_vector b = {EF_MEMORY_HOST, A.layout, s->rhs, NULL}, xv = {EF_MEMORY_HOST, A.layout, x, NULL};
  ASSERT_OK(ef_linear_solver_setup(ls, &A));
  ASSERT_OK(ef_linear_solver_solve(ls, &b, &xv, r));
  ef_linear_solver_destroy(&ls);
  ASSERT(ls == NULL, "destroy must clear the handle");
  ef_parameters_destroy(&p);
  return 0;
}

static int check_case(const char *case_file, const char *out) {
  ef_pressure_system s;
  /* The last pressure system of 3 OpenMP steps of the case. */
  if (ef_test_run_case(case_file, "openmp_edge_based", EF_DEFAULT_APPLICATIONS, out, 3, NULL, NULL, &s)) return 1;
  int singular = 1;
  for (int64_t i = 0; i < s.n; ++i) singular = singular && !s.fixed[i];
  double *xc = malloc((size_t)s.n * sizeof *xc), *xb = malloc((size_t)s.n * sizeof *xb);
  ASSERT(xc && xb, "out of memory");
  ef_solve_result rc, rb;
  /* 1e-10: tight enough that two different Krylov methods must agree to about 1e-7. */
  ASSERT(!solve("{\"solver_type\": \"cg\", \"tolerance\": 1e-10}", &s, xc, &rc));
  ASSERT(!solve("{\"solver_type\": \"bicgstab\", \"preconditioner_type\": \"jacobi\", \"tolerance\": 1e-10}", &s, xb,
                &rb));
  printf("%s: n %lld, cg %d iterations (true residual %.2e), bicgstab %d (%.2e)\n", case_file, (long long)s.n,
         rc.iterations, rc.true_residual, rb.iterations, rb.true_residual);
  EXPECT(rc.converged && rb.converged, "converged: cg %d, bicgstab %d", rc.converged, rb.converged);
  /* BiCGStab stops on ||r|| / ||b||, which the true residual matches up to the recurrence drift. */
  EXPECT(rb.true_residual >= 0.0 && rb.true_residual <= 2e-10, "bicgstab true residual %.3e", rb.true_residual);
  /* CG stops on the Jacobi-scaled residual: the 2-norm may exceed it by sqrt(cond(D)). */
  EXPECT(rc.true_residual >= 0.0 && rc.true_residual <= 1e-8, "cg true residual %.3e", rc.true_residual);
  /* BiCGStab does about two products per iteration: it must not need more than twice CG's count. */
  EXPECT(rb.iterations <= 2 * rc.iterations, "bicgstab %d iterations, cg %d", rb.iterations, rc.iterations);
  const double d = ef_test_rel_diff(xb, xc, s.n, singular);
  EXPECT(d <= 1e-7, "bicgstab and cg solutions differ by %.3e", d);
  free(xc);
  free(xb);
  ef_pressure_system_free(&s);
  return 0;
}

/* Unknown names list the registered ones; an unknown key is named; a key of another solver is
 * accepted (so switching solver_type needs no other edit). */
static int check_errors(void) {
  int64_t rp[3] = {0, 1, 2};
  int32_t col[2] = {0, 1};
  double val[2] = {2.0, 3.0};
  ef_matrix A = {.memory = EF_MEMORY_HOST, .layout = {2, 0, NULL}, .nnz = 2, .row_ptr = rp, .col = col, .values = val};
  const char *bad[][3] = {
      {"{\"solver_type\": \"gmres_of_my_dreams\"}", "registered host linear solvers", "bicgstab"},
      {"{\"solver_type\": \"cg\", \"preconditioner_type\": \"ilu99\"}", "registered host preconditioners", "jacobi"},
      {"{\"solver_type\": \"cg\", \"tolerence\": 1e-8}", "tolerence", "tolerance"},
      {"{\"solver_type\": \"cg\", \"max_iteration\": 0}", "max_iteration", "positive"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    ef_parameters p = NULL;
    ef_linear_solver *ls = NULL;
    ASSERT_OK(ef_parameters_parse(bad[k][0], "<test>", &p));
    const int err = ef_linear_solver_create(p, EF_MEMORY_HOST, &A, &ls);
    const char *msg = ef_error_message();
    EXPECT(err && ls == NULL, "%s was accepted", bad[k][0]);
    EXPECT(err && strstr(msg, bad[k][1]) && strstr(msg, bad[k][2]), "%s: message '%s' lacks '%s' / '%s'", bad[k][0],
           msg, bad[k][1], bad[k][2]);
    ef_error_clear();
    ef_parameters_destroy(&p);
  }
  ef_parameters p = NULL;
  ef_linear_solver *ls = NULL;
  ASSERT_OK(ef_parameters_parse("{\"solver_type\": \"bicgstab\", \"ksp_type\": \"cg\"}", "<test>", &p));
  EXPECT_OK(ef_linear_solver_create(p, EF_MEMORY_HOST, &A, &ls));
  double b[2] = {2.0, 6.0}, x[2] = {0.0, 0.0};
  ef_vector bv = {EF_MEMORY_HOST, A.layout, b, NULL}, xv = {EF_MEMORY_HOST, A.layout, x, NULL};
  ef_solve_result r;
  EXPECT_OK(ef_linear_solver_setup(ls, &A));
  EXPECT_OK(ef_linear_solver_solve(ls, &bv, &xv, &r));
  EXPECT(fabs(x[0] - 1.0) <= 1e-14 && fabs(x[1] - 2.0) <= 1e-14, "diagonal system: x = (%g, %g)", x[0], x[1]);
  ef_linear_solver_destroy(&ls);
  ef_parameters_destroy(&p);
  return 0;
}

/* A communicator of two ranks that never communicates: the registry must refuse a matrix spread over it
 * before any solver runs (docs/mpi.md: only tables that set distributed take one, and with global rows). */
static int no_allreduce(void *c, double *v, int n, ef_comm_op op) {
  (void)c, (void)v, (void)n, (void)op;
  return EF_ERROR(EF_ERR_COMM, "test communicator: no messages");
}
static int no_barrier(void *c) {
  (void)c;
  return EF_ERROR(EF_ERR_COMM, "test communicator: no messages");
}
static void no_abort(void *c, int code) {
  (void)c;
  exit(code);
}
static int no_begin(void *c, int np, const int *peers, double *const *send, const int64_t *sc, double *const *recv,
                    const int64_t *rc, int tag, void **pending) {
  (void)c, (void)np, (void)peers, (void)send, (void)sc, (void)recv, (void)rc, (void)tag, (void)pending;
  return EF_ERROR(EF_ERR_COMM, "test communicator: no messages");
}
static int no_end(void *c, void *pending) {
  (void)c, (void)pending;
  return EF_ERROR(EF_ERR_COMM, "test communicator: no messages");
}

static int check_distributed_refused(void) {
  static const ef_comm_ops ops = {.name = "two ranks, no messages", .allreduce = no_allreduce,
                                  .barrier = no_barrier, .abort = no_abort, .exchange_begin = no_begin,
                                  .exchange_end = no_end};
  ef_comm two = NULL;
  ASSERT_OK(ef_comm_create(&ops, NULL, 0, 2, &two));
  int64_t rp[3] = {0, 1, 2};
  int32_t col[2] = {0, 1};
  double val[2] = {2.0, 3.0};
  ef_matrix A = {.memory = EF_MEMORY_HOST, .layout = {2, 0, two}, .nnz = 2, .row_ptr = rp, .col = col, .values = val};
  /* cg and bicgstab never run across ranks; petsc does, but not without the global rows. */
  const char *cases[][2] = {{"{\"solver_type\": \"cg\"}", "linear solver 'cg' does not run across ranks"},
                            {"{\"solver_type\": \"bicgstab\"}", "linear solver 'bicgstab' does not run across ranks"},
                            {"{\"solver_type\": \"petsc\"}", "without global rows"}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    ef_parameters p = NULL;
    ef_linear_solver *ls = NULL;
    ASSERT_OK(ef_parameters_parse(cases[k][0], "<test>", &p));
    const int err = ef_linear_solver_create(p, EF_MEMORY_HOST, &A, &ls);
    const char *msg = ef_error_message();
    EXPECT(err == EF_ERR_UNSUPPORTED && ls == NULL, "%s on 2 ranks: error %d", cases[k][0], err);
    EXPECT(err && strstr(msg, cases[k][1]), "%s on 2 ranks: message '%s' lacks '%s'", cases[k][0], msg, cases[k][1]);
    ef_error_clear();
    ef_linear_solver_destroy(&ls);
    ef_parameters_destroy(&p);
  }
  ef_comm_destroy(&two);
  return 0;
}

int main(int argc, char **argv) {
  ASSERT(argc == 4, "usage: test_linear_solvers CAVITY2D.json CAVITY3D.json WORK");
  ASSERT_OK(ef_registry_load_application(EF_DEFAULT_APPLICATIONS));
  char out[4096];
  snprintf(out, sizeof out, "%s/cavity2d", argv[3]);
  if (check_case(argv[1], out)) return 1;
  snprintf(out, sizeof out, "%s/cavity3d", argv[3]);
  if (check_case(argv[2], out)) return 1;
  if (check_errors()) return 1;
  if (check_distributed_refused()) return 1;
  return failures ? 1 : 0;
}
