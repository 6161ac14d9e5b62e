/* test_petsc_solver.c -- linear solver "petsc" and the PETSc bridge: zero-copy wrapping,
 * the same stopping test as the host CG, values changed in place, the constant null
 * space, the options database, and PETSc errors turned into ours. */
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_linear_solver.h"
#include "edgeflow/ef_registry.h"
#include "petsc_bridge.h"
#include "test_petsc_common.h"

/* The ef_matrix (ef_linear_solver.h) of a test CSR. */
static ef_matrix matrix_of(const ef_csr *A) {
  ef_matrix M = {.memory = EF_MEMORY_HOST, .layout = {A->n, 0, NULL}, .nnz = A->nnz,
                 .constant_null_space = A->constant_null_space, .row_ptr = A->row_ptr, .row_ptr32 = A->row_ptr32,
                 .col = A->col, .values = A->val, .diag = A->diag};
  return M;
}

/* Create "petsc" from a JSON text through the registry, as the OpenMP strategy does. */
static int make_solver(const char *json, const ef_csr *A, ef_linear_solver **solver, ef_parameters *p) {
  EF_CALL(ef_parameters_parse(json, "<test settings>", p));
  const ef_matrix M = matrix_of(A);
  return ef_linear_solver_create(*p, EF_MEMORY_HOST, &M, solver);
}

static void free_solver(ef_linear_solver **solver, ef_parameters *p) {
  ef_linear_solver_destroy(solver);
  ef_parameters_destroy(p);
}

/* x = solve(A, b) from x0 = 0 (the solver's tolerance and iteration limit). */
static int solve(ef_linear_solver *ls, const ef_csr *A, const double *b, double *x, int *its, double *res) {
  memset(x, 0, (size_t)A->n * sizeof *x);
  const ef_matrix M = matrix_of(A);
  ef_vector bv = {EF_MEMORY_HOST, M.layout, (double *)b, NULL}, xv = {EF_MEMORY_HOST, M.layout, x, NULL};
  ef_solve_result r;
  EF_CALL(ef_linear_solver_setup(ls, &M));
  int err = ef_linear_solver_solve(ls, &bv, &xv, &r);
  if (its) *its = r.iterations;
  if (res) *res = r.residual;
  return err;
}

/* The host CG on the same system (its own stopping test at rtol). */
static int solve_host_cg(ef_host_cg *cg, const ef_csr *A, const double *b, double *x, double rtol, int *its,
                         double *res) {
  memset(x, 0, (size_t)A->n * sizeof *x);
  return ef_host_cg_solve(cg, A, b, x, rtol, 10000, its, res);
}

static double rel_diff(const double *a, const double *b, int64_t n) {
  double d = 0.0, s = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    d += (a[i] - b[i]) * (a[i] - b[i]);
    s += b[i] * b[i];
  }
  return sqrt(d / s);
}

/* The bridge: PETSc multiplies with our arrays in place. */
static int test_wrap(void) {
  tp_matrix m;
  ASSERT(!tp_laplacian(13, 11, 1, 7, &m), "matrix");
  ef_csr A = tp_view(&m);
  ef_petsc_csr w;
  memset(&w, 0, sizeof w);
  ASSERT_OK(ef_petsc_csr_wrap(&A, &w));
  ASSERT(!w.copied_indices, "32-bit PetscInt with row_ptr32 must wrap the indices in place too");
  PetscScalar *a = NULL;
  ASSERT(MatSeqAIJGetArray(w.mat, &a) == 0 && a == m.val, "PETSc holds a copy of the values (%p vs %p)",
         (void *)a, (void *)m.val);
  MatSeqAIJRestoreArray(w.mat, &a);
  ASSERT(ef_petsc_csr_wraps(&w, &A), "wrapper does not recognise its CSR");
  /* MatMult against ef_csr_multiply on a random vector: the same sums in the same
   * order, so agreement to a few ulps (1e-14 relative) is expected. */
  double *x = malloc((size_t)m.n * sizeof *x), *y = malloc((size_t)m.n * sizeof *y),
         *z = malloc((size_t)m.n * sizeof *z);
  uint64_t st = 3;
  for (int64_t i = 0; i < m.n; ++i) x[i] = ef_test_uniform(&st);
  Vec vx, vz;
  ASSERT_OK(ef_petsc_vec_wrap(m.n, x, &vx));
  ASSERT_OK(ef_petsc_vec_wrap(m.n, z, &vz));
  ASSERT(MatMult(w.mat, vx, vz) == 0, "MatMult");
  ef_csr_multiply(&A, x, y);
  ASSERT(rel_diff(z, y, m.n) <= 1e-14, "MatMult differs from ef_csr_multiply: %.3e", rel_diff(z, y, m.n));
  /* A CSR without row_ptr32 gets converted offsets, the values still in place. */
  ef_csr B = A;
  B.row_ptr32 = NULL;
  ef_petsc_csr w2;
  memset(&w2, 0, sizeof w2);
  ASSERT_OK(ef_petsc_csr_wrap(&B, &w2));
  ASSERT(w2.copied_indices && w2.row_ptr, "offsets should have been converted");
  ASSERT(MatSeqAIJGetArray(w2.mat, &a) == 0 && a == m.val, "values copied");
  MatSeqAIJRestoreArray(w2.mat, &a);
  VecDestroy(&vx);
  VecDestroy(&vz);
  ef_petsc_csr_release(&w);
  ef_petsc_csr_release(&w2);
  ef_petsc_csr_release(&w2); /* twice: harmless */
  ASSERT(w.mat == NULL && w.row_ptr == NULL, "release must empty the wrapper");
  free(x);
  free(y);
  free(z);
  tp_matrix_free(&m);
  return 0;
}

/* Defaults (CG + Jacobi, natural norm) stop where the host CG stops. */
static int test_same_as_host_cg(int null_space) {
  tp_matrix m;
  ASSERT(!tp_laplacian(40, 30, !null_space, 11, &m), "matrix");
  ef_csr A = tp_view(&m);
  const int64_t n = m.n;
  double *b = malloc((size_t)n * sizeof *b), *b0 = malloc((size_t)n * sizeof *b0);
  double *xp = malloc((size_t)n * sizeof *xp), *xh = malloc((size_t)n * sizeof *xh);
  uint64_t st = 5;
  for (int64_t i = 0; i < n; ++i) b0[i] = b[i] = ef_test_uniform(&st) + (null_space ? 0.3 : 0.0);
  ef_linear_solver *obj = NULL;
  ef_parameters p = NULL;
  ASSERT_OK(make_solver("{\"solver_type\": \"petsc\", \"cg_variant\": \"standard\", \"autotune\": true}", &A, &obj, &p));
  /* The defaults were filled in (tolerance is what the strategy reads next). */
  double tol = 0.0;
  ASSERT_OK(ef_parameters_get_double(p, "tolerance", &tol));
  ASSERT(tol == 1e-8, "default tolerance %g", tol);
  ef_host_cg *cg = NULL;
  ASSERT_OK(ef_host_cg_create(n, &cg));
  int its_p = 0, its_h = 0;
  double res_p = 0.0, res_h = 0.0;
  const double rtol = 1e-8;
  ASSERT_OK(solve(obj, &A, b, xp, &its_p, &res_p));
  ASSERT_OK(solve_host_cg(cg, &A, b, xh, rtol, &its_h, &res_h));
  ASSERT(!memcmp(b, b0, (size_t)n * sizeof *b), "the solver wrote to b");
  /* The same test on the same iterates: rounding differences of the two implementations
   * can move the crossing of rtol by one iteration at most. */
  ASSERT(abs(its_p - its_h) <= 1, "iterations: petsc %d, host CG %d", its_p, its_h);
  /* The reported residual is the true scaled one: below rtol up to the recurrence drift
   * (a factor 1.5 is far above it at 1e-8 on this small, well-conditioned system). */
  double res_true = tp_scaled_residual(&A, b, xp);
  ASSERT(fabs(res_p - res_true) <= 1e-3 * res_true, "reported %.3e, true %.3e", res_p, res_true);
  ASSERT(res_p <= 1.5 * rtol, "petsc residual %.3e > 1.5 x %.1e", res_p, rtol);
  if (its_p == its_h) {
    /* Same iterations: the iterates agree to rounding (observed ~1e-13; 1e-8 leaves room
     * for growth through the recurrences without letting a different algorithm pass). */
    double ma = 0.0, mb = 0.0;
    if (null_space) {
      for (int64_t i = 0; i < n; ++i) {
        ma += xp[i];
        mb += xh[i];
      }
      for (int64_t i = 0; i < n; ++i) {
        xp[i] -= ma / (double)n;
        xh[i] -= mb / (double)n;
      }
    }
    double d = rel_diff(xp, xh, n);
    ASSERT(d <= 1e-8, "petsc and host CG solutions differ by %.3e", d);
  }
  free_solver(&obj, &p);
  ASSERT(obj == NULL, "destroy must clear the handle");
  ef_host_cg_destroy(&cg);
  free(b);
  free(b0);
  free(xp);
  free(xh);
  tp_matrix_free(&m);
  return 0;
}

/* Values changed in place (as every time step does): the Jacobi preconditioner must follow.
 * Compared with a fresh solver on the new values: same iterations, same solution. */
static int test_values_changed(void) {
  tp_matrix m;
  ASSERT(!tp_laplacian(30, 30, 1, 21, &m), "matrix");
  ef_csr A = tp_view(&m);
  const int64_t n = m.n;
  double *b = malloc((size_t)n * sizeof *b), *x1 = malloc((size_t)n * sizeof *x1), *x2 = malloc((size_t)n * sizeof *x2);
  double *s = malloc((size_t)n * sizeof *s);
  uint64_t st = 9;
  for (int64_t i = 0; i < n; ++i) b[i] = ef_test_uniform(&st);
  ef_linear_solver *o1 = NULL, *o2 = NULL;
  ef_parameters p1 = NULL, p2 = NULL;
  ASSERT_OK(make_solver("{\"solver_type\": \"petsc\"}", &A, &o1, &p1));
  int its1, its2;
  double r1, r2;
  ASSERT_OK(solve(o1, &A, b, x1, &its1, &r1));
  /* S A S with scales in [1/4, 4]: the diagonal changes non-uniformly, so a stale Jacobi
   * preconditioner would change the iterates. */
  for (int64_t i = 0; i < n; ++i) s[i] = exp(log(4.0) * ef_test_uniform(&st));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = m.rp[i]; k < m.rp[i + 1]; ++k)
      if (!m.fixed[i]) m.val[k] *= s[i] * s[m.col[k]];
  ASSERT_OK(solve(o1, &A, b, x1, &its1, &r1));
  ASSERT_OK(make_solver("{\"solver_type\": \"petsc\"}", &A, &o2, &p2));
  ASSERT_OK(solve(o2, &A, b, x2, &its2, &r2));
  ASSERT(its1 == its2, "after a change of values: %d iterations, a fresh solver %d", its1, its2);
  /* The same computation on the same data: bitwise, so 1e-15 is generous. */
  ASSERT(rel_diff(x1, x2, n) <= 1e-15, "solutions differ by %.3e", rel_diff(x1, x2, n));
  free_solver(&o1, &p1);
  free_solver(&o2, &p2);
  free(b);
  free(x1);
  free(x2);
  free(s);
  tp_matrix_free(&m);
  return 0;
}

/* Bad settings and PETSc failures come back as our codes with PETSc's message. */
static int test_errors(void) {
  tp_matrix m;
  ASSERT(!tp_laplacian(20, 20, 1, 3, &m), "matrix");
  ef_csr A = tp_view(&m);
  ef_linear_solver *o = NULL;
  ef_parameters p = NULL;
  ASSERT_FAIL(make_solver("{\"solver_type\": \"petsc\", \"ksp_type\": \"no_such_ksp\"}", &A, &o, &p), EF_ERR_PETSC,
              "no_such_ksp");
  ASSERT(o == NULL, "a failed create must leave no object");
  ef_parameters_destroy(&p);
  ASSERT_FAIL(make_solver("{\"solver_type\": \"petsc\", \"preconditioner\": \"jacobi\"}", &A, &o, &p),
              EF_ERR_PARAMETER, "preconditioner");
  ef_parameters_destroy(&p);
  ASSERT_FAIL(make_solver("{\"solver_type\": \"petsc\", \"norm_type\": \"energy\"}", &A, &o, &p), EF_ERR_PARAMETER,
              "norm_type");
  ef_parameters_destroy(&p);
  ASSERT_FAIL(make_solver("{\"solver_type\": \"petsc\", \"tolerance\": 2}", &A, &o, &p), EF_ERR_PARAMETER,
              "tolerance");
  ef_parameters_destroy(&p);
  /* Too few iterations: EF_ERR_SOLVER naming PETSc's reason. */
  ASSERT_OK(make_solver("{\"solver_type\": \"petsc\", \"tolerance\": 1e-10, \"max_iteration\": 3}", &A, &o, &p));
  double *b = calloc((size_t)m.n, sizeof *b), *x = calloc((size_t)m.n, sizeof *x);
  for (int64_t i = 0; i < m.n; ++i) b[i] = 1.0;
  ASSERT_FAIL(solve(o, &A, b, x, NULL, NULL), EF_ERR_SOLVER, "DIVERGED_ITS");
  /* A system of another size. */
  tp_matrix small;
  ASSERT(!tp_laplacian(5, 5, 1, 3, &small), "matrix");
  ef_csr S = tp_view(&small);
  ASSERT_FAIL(solve(o, &S, b, x, NULL, NULL), EF_ERR_PARAMETER, "created for");
  free_solver(&o, &p);
  free(b);
  free(x);
  tp_matrix_free(&m);
  tp_matrix_free(&small);
  return 0;
}

/* petsc_options reach the options database before KSPSetFromOptions: "-pc_type none"
 * overrides the key pc_type = jacobi (run last: the database is per process). */
static int test_options(void) {
  tp_matrix m;
  ASSERT(!tp_laplacian(30, 20, 1, 17, &m), "matrix");
  ef_csr A = tp_view(&m);
  double *b = malloc((size_t)m.n * sizeof *b), *x = malloc((size_t)m.n * sizeof *x);
  uint64_t st = 1;
  for (int64_t i = 0; i < m.n; ++i) b[i] = ef_test_uniform(&st);
  ef_linear_solver *o = NULL;
  ef_parameters p = NULL;
  int its_j, its_none;
  double r;
  ASSERT_OK(make_solver("{\"solver_type\": \"petsc\"}", &A, &o, &p));
  ASSERT_OK(solve(o, &A, b, x, &its_j, &r));
  free_solver(&o, &p);
  ASSERT_OK(make_solver("{\"solver_type\": \"petsc\", \"petsc_options\": \"-pc_type none\"}", &A, &o, &p));
  ASSERT_OK(solve(o, &A, b, x, &its_none, &r));
  /* Row scales in [1/3, 3] make unpreconditioned CG slower than Jacobi. */
  ASSERT(its_none > its_j, "no preconditioner: %d iterations, Jacobi %d", its_none, its_j);
  free_solver(&o, &p);
  PetscOptionsClearValue(NULL, "-pc_type");
  free(b);
  free(x);
  tp_matrix_free(&m);
  return 0;
}

int main(void) {
  ASSERT_OK(ef_registry_load_application("fluid"));
  ASSERT_OK(ef_petsc_initialize());
  ASSERT_OK(ef_petsc_initialize()); /* once per process: the second call is a no-op */
  if (test_wrap()) return 1;
  if (test_same_as_host_cg(0)) return 1;
  if (test_same_as_host_cg(1)) return 1;
  if (test_values_changed()) return 1;
  if (test_errors()) return 1;
  if (test_options()) return 1;
  return 0;
}
