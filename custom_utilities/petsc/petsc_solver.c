/* petsc_solver.c -- PETSc as a host pressure solver: linear solver "petsc" for the
 * OpenMP strategy (the commands "verify" and "pressure-bench" use PETSc too: verify.c, petsc_bench.c).
 *
 * linear_solver_settings of "petsc" (besides the shared keys of ef_linear_solver.h):
 *   ksp_type, pc_type   PETSc names ("cg", "jacobi", "gamg", "hypre", ...)
 *   tolerance           relative tolerance (rtol), max_iteration, atol (absolute)
 *   norm_type           "auto" (default): the natural norm sqrt(r^T B r) when the KSP is
 *                       CG, PETSc's default otherwise; or "natural", "unpreconditioned",
 *                       "preconditioned".  With CG + Jacobi (B = D^-1) the natural norm
 *                       makes PETSc stop on ||D^-1/2 r|| / ||D^-1/2 b|| < rtol, exactly the
 *                       test of our host and device CG, so the same tolerance means the
 *                       same thing (PETSc's own default, the preconditioned norm ||D^-1 r||,
 *                       would not).  With another preconditioner the natural norm is that
 *                       preconditioner's, which is still CG's natural quantity.
 *   petsc_options       a string for PETSc's options database ("-pc_type gamg -ksp_monitor
 *                       -log_view"), inserted before KSPSetFromOptions, so it overrides the
 *                       keys above exactly as on a PETSc command line.
 * Prefix: the pressure KSP has NO options prefix, so petsc_options and PETSC_OPTIONS act
 * as a PETSc user expects (-ksp_type, -pc_type, -ksp_monitor, ...).  The options
 * database is per process: options given to one "petsc" solver stay for the others.
 * The PETSc objects that serve as references (verify, pressure-bench) have prefixes of
 * their own ("ef_verify_", "ef_bench_<pc>_"), so these options never change them.
 *
 * The matrix is wrapped without copying (petsc_bridge.h); a pressure system without
 * a fixed pressure gets the constant null space (and transpose null space), and PETSc's
 * KSPSolve then removes b's mean as the host CG does.  The reported residual is the true scaled
 * residual ||D^-1/2 (b - A x)|| / ||D^-1/2 b|| after the solve (one SpMV), the host CG's
 * measure, whatever the norm PETSc stopped on. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_registry.h"
#include "host_cg.h"
#include "matrix_io.h"
#include "petsc_bridge.h"
#include "petsc_solver.h"

#ifdef EF_HAVE_OPENMP
#include <omp.h>
#endif

/* The object "petsc" creates. */
typedef struct {
  KSP ksp;
  ef_petsc_csr A;
  Vec b, x;      /* placeholders whose arrays are the caller's */
  int64_t n;
  double atol, rtol;
  int max_it;
  ef_csr csr;     /* the matrix of the last create/setup */
  int null_space; /* attached to A: -1 unknown, 0, 1 */
  double *work;   /* n: the residual */
  char description[160];
} ef_petsc_solver;

/* The keys "petsc" owns in linear_solver_settings (the shared ones: ef_linear_solver.h). */
#define EF_PETSC_DEFAULTS \
  "{\"ksp_type\": \"cg\", \"pc_type\": \"jacobi\", \"petsc_options\": \"\", \"norm_type\": \"auto\", \"atol\": 1e-50}"

/* The wrapped matrix follows A (re-wrapped when A's arrays moved, else its values refreshed). */
static int ef_petsc_setup(void *ctx, const ef_matrix *M) {
  ef_petsc_solver *o = ctx;
  const ef_csr A = ef_csr_from_matrix(M);
  EF_CHECK(A.n == o->n, EF_ERR_PARAMETER, "petsc solver: matrix has %lld rows, solver was created for %lld",
           (long long)A.n, (long long)o->n);
  o->csr = A;
  if (!ef_petsc_csr_wraps(&o->A, &A)) {
    ef_petsc_csr_release(&o->A);
    EF_CALL(ef_petsc_csr_wrap(&A, &o->A));
    EF_PETSC_CALL(KSPSetOperators(o->ksp, o->A.mat, o->A.mat));
    o->null_space = -1;
  } else {
    EF_CALL(ef_petsc_csr_values_changed(&o->A));
  }
  if (o->null_space != (A.constant_null_space != 0)) {
    EF_CALL(ef_petsc_csr_set_constant_null_space(&o->A, A.constant_null_space));
    o->null_space = A.constant_null_space != 0;
  }
  return EF_SUCCESS;
}

/* Solve A x = b with the configured KSP (x: initial guess in, solution out). */
static int ef_petsc_solve(void *ctx, const ef_vector *bv, ef_vector *xv, ef_solve_result *result) {
  ef_petsc_solver *o = ctx;
  const double *b = bv->host;
  double *x = xv->host;
  EF_CHECK(o->A.mat, EF_ERR_INTERNAL, "petsc solver: solve before setup");
  EF_PETSC_CALL(KSPSetTolerances(o->ksp, o->rtol, o->atol, PETSC_DEFAULT, o->max_it));
  /* KSPSolve reads b (projecting a copy for a singular A) and writes x only. */
  EF_PETSC_CALL(VecPlaceArray(o->b, (PetscScalar *)b));
  PetscErrorCode code = VecPlaceArray(o->x, x);
  if (!code) code = KSPSolve(o->ksp, o->b, o->x);
  (void)VecResetArray(o->x);
  (void)VecResetArray(o->b);
  if (code) return ef_petsc_error(code, __FILE__, __LINE__, "KSPSolve(ksp, b, x)");
  PetscInt its = 0;
  KSPConvergedReason reason;
  EF_PETSC_CALL(KSPGetIterationNumber(o->ksp, &its));
  EF_PETSC_CALL(KSPGetConvergedReason(o->ksp, &reason));
  const double res = ef_scaled_residual(&o->csr, b, x, o->work);
  result->iterations = (int)its;
  result->residual = res;
  result->converged = reason > 0;
  EF_CHECK(reason > 0, EF_ERR_SOLVER,
           "petsc solver (%s) did not converge: %s after %d iterations (scaled relative residual %.3e, "
           "tolerance %.1e)",
           o->description, KSPConvergedReasons[reason], (int)its, res, o->rtol);
  return EF_SUCCESS;
}

/* Free the KSP, the vectors and the wrapper; *p = NULL. */
static void ef_petsc_solver_destroy(void **p) {
  if (!p || !*p) return;
  ef_petsc_solver *o = *p;
  if (o->ksp) (void)KSPDestroy(&o->ksp);
  if (o->b) (void)VecDestroy(&o->b);
  if (o->x) (void)VecDestroy(&o->x);
  ef_petsc_csr_release(&o->A);
  free(o->work);
  free(o);
  *p = NULL;
}

/* Build the KSP from the validated settings (keys first, then the options database). */
static int ef_petsc_solver_create(ef_parameters settings, const ef_linear_solver_common *common, const ef_matrix *M,
                                  ef_preconditioner *unused, void **out) {
  (void)unused;
  *out = NULL;
  const int64_t n = M->layout.n_owned;
  const char *ksp_type, *pc_type, *options, *norm;
  double rtol = common->tolerance, atol;
  long max_it = common->max_iteration;
  EF_CALL(ef_parameters_get_string(settings, "ksp_type", &ksp_type));
  EF_CALL(ef_parameters_get_string(settings, "pc_type", &pc_type));
  EF_CALL(ef_parameters_get_string(settings, "petsc_options", &options));
  EF_CALL(ef_parameters_get_string(settings, "norm_type", &norm));
  EF_CALL(ef_parameters_get_double(settings, "atol", &atol));
  int err = EF_SUCCESS;
  const char *path = ef_parameters_path(settings);
  EF_CHECK(atol >= 0.0, EF_ERR_PARAMETER, "%s.atol must be >= 0, got %g", path, atol);
  KSPNormType norm_type = KSP_NORM_DEFAULT;
  int norm_auto = 0;
  if (!strcmp(norm, "auto"))
    norm_auto = 1;
  else if (!strcmp(norm, "natural"))
    norm_type = KSP_NORM_NATURAL;
  else if (!strcmp(norm, "unpreconditioned"))
    norm_type = KSP_NORM_UNPRECONDITIONED;
  else if (!strcmp(norm, "preconditioned"))
    norm_type = KSP_NORM_PRECONDITIONED;
  else
    return EF_ERROR(EF_ERR_PARAMETER,
                    "%s.norm_type is '%s', expected \"auto\", \"natural\", \"unpreconditioned\" or \"preconditioned\"",
                    path, norm);
  EF_CHECK(n > 0, EF_ERR_PARAMETER, "petsc solver: system size must be positive");
  EF_CALL(ef_petsc_initialize());
  EF_CALL(ef_petsc_insert_options(options));

  ef_petsc_solver *o = calloc(1, sizeof *o);
  EF_CHECK(o, EF_ERR_MEMORY, "out of memory");
  o->n = n;
  o->atol = atol;
  o->rtol = rtol;
  o->max_it = (int)max_it;
  o->null_space = -1;
  o->work = malloc((size_t)n * sizeof *o->work);
  EF_CHECK_GOTO(o->work, EF_ERR_MEMORY, fail, "out of memory for the petsc solver (%lld rows)", (long long)n);
  PC pc;
  EF_PETSC_CALL_GOTO(KSPCreate(PETSC_COMM_SELF, &o->ksp), fail);
  EF_PETSC_CALL_GOTO(KSPSetType(o->ksp, ksp_type), fail);
  EF_PETSC_CALL_GOTO(KSPGetPC(o->ksp, &pc), fail);
  EF_PETSC_CALL_GOTO(PCSetType(pc, pc_type), fail);
  EF_PETSC_CALL_GOTO(KSPSetTolerances(o->ksp, rtol, atol, PETSC_DEFAULT, (PetscInt)max_it), fail);
  EF_PETSC_CALL_GOTO(KSPSetInitialGuessNonzero(o->ksp, PETSC_TRUE), fail); /* x is the warm start */
  EF_PETSC_CALL_GOTO(KSPSetFromOptions(o->ksp), fail);
  /* -ksp_norm_type on the options wins over the key, as any option does. */
  PetscBool norm_option = PETSC_FALSE;
  EF_PETSC_CALL_GOTO(PetscOptionsHasName(NULL, NULL, "-ksp_norm_type", &norm_option), fail);
  KSPType type;
  EF_PETSC_CALL_GOTO(KSPGetType(o->ksp, &type), fail);
  if (!norm_option) {
    if (norm_auto && !strcmp(type, KSPCG)) norm_type = KSP_NORM_NATURAL;
    if (norm_type != KSP_NORM_DEFAULT) EF_PETSC_CALL_GOTO(KSPSetNormType(o->ksp, norm_type), fail);
  }
  PCType ptype;
  EF_PETSC_CALL_GOTO(PCGetType(pc, &ptype), fail);
  snprintf(o->description, sizeof o->description, "KSP %s, PC %s", type, ptype ? ptype : "none");
  EF_PETSC_CALL_GOTO(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, (PetscInt)n, NULL, &o->b), fail);
  EF_PETSC_CALL_GOTO(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, (PetscInt)n, NULL, &o->x), fail);
  *out = o;
  return EF_SUCCESS;
fail:
  ef_petsc_solver_destroy((void **)&o);
  return ef_error_push(err, __FILE__, __LINE__, "while setting up linear solver \"petsc\" (%s)", path);
}

static const ef_linear_solver_ops ef_petsc_solver_ops = {
    .name = "petsc",
    .description = "PETSc KSP (default CG + Jacobi with the natural norm = the host CG's stopping test)",
    .memory = EF_MEMORY_HOST,
    .defaults = EF_PETSC_DEFAULTS,
    .uses_preconditioner = 0,
    .create = ef_petsc_solver_create,
    .setup = ef_petsc_setup,
    .solve = ef_petsc_solve,
    .destroy = ef_petsc_solver_destroy,
};

int ef_register_petsc_solver(void) { return ef_registry_add_linear_solver(&ef_petsc_solver_ops); }
