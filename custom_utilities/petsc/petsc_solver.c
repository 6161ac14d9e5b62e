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
 * measure, whatever the norm PETSc stopped on.
 *
 * Across ranks (a matrix whose layout has a communicator of several ranks: the distributed pressure of
 * fractional_step_mpi_solver.c, docs/mpi.md): PETSc's MPIAIJ on PETSC_COMM_WORLD, which must be the
 * matrix's ranks (edgeflow's MPI communicator is a duplicate of MPI_COMM_WORLD; checked).  This rank's
 * owned rows are its block, numbered by the matrix's global_row; built once, the values copied in at every
 * setup (MatSetValues into the fixed pattern).  b and x are the caller's arrays (their owned entries) under
 * parallel Vecs; the same keys, options and stopping test as on one process, and the same residual,
 * measured with PETSc's vectors over all ranks (as is the true residual). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_comm.h"
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
  /* Across ranks: the MPIAIJ (this rank's rows first_row.., local offsets, global columns) and work
   * vectors for the residuals. */
  Mat mpi;
  PetscInt first_row, *mpi_row_ptr, *mpi_col;
  Vec r, t, w, dinv;
} ef_petsc_solver;

/* The keys "petsc" owns in linear_solver_settings (the shared ones: ef_linear_solver.h). */
#define EF_PETSC_DEFAULTS \
  "{\"ksp_type\": \"cg\", \"pc_type\": \"jacobi\", \"petsc_options\": \"\", \"norm_type\": \"auto\", \"atol\": 1e-50}"

/* Across ranks: A's values into the MPIAIJ, the null space as A says. */
static int ef_petsc_setup_mpi(ef_petsc_solver *o, const ef_matrix *M) {
  EF_CHECK(M->layout.n_owned == o->n && M->nnz == o->mpi_row_ptr[o->n], EF_ERR_PARAMETER,
           "petsc solver: a matrix of %lld rows and %lld entries on this rank, created for %lld and %lld",
           (long long)M->layout.n_owned, (long long)M->nnz, (long long)o->n, (long long)o->mpi_row_ptr[o->n]);
  EF_CALL(ef_petsc_mpiaij_set_rows(o->mpi, o->first_row, (PetscInt)o->n, o->mpi_row_ptr, o->mpi_col, M->values));
  if (o->null_space != (M->constant_null_space != 0)) {
    EF_CALL(ef_petsc_set_constant_null_space(o->mpi, M->constant_null_space));
    o->null_space = M->constant_null_space != 0;
  }
  return EF_SUCCESS;
}

/* The wrapped matrix follows A (re-wrapped when A's arrays moved, else its values refreshed). */
static int ef_petsc_setup(void *ctx, const ef_matrix *M) {
  ef_petsc_solver *o = ctx;
  if (o->mpi) return ef_petsc_setup_mpi(o, M);
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

/* Across ranks, after the solve: the host CG's measure ||D^-1/2 (b - A x)|| / ||D^-1/2 b|| and
 * ||b - A x|| / ||b||, b's mean removed for a singular A (as KSPSolve does), over all ranks. */
static int ef_petsc_residuals_mpi(ef_petsc_solver *o, double *scaled, double *true_residual) {
  MatNullSpace ns = NULL;
  PetscScalar rr, bb;
  PetscReal rn, bn;
  EF_PETSC_CALL(VecCopy(o->b, o->t));
  EF_PETSC_CALL(MatGetNullSpace(o->mpi, &ns));
  if (ns) EF_PETSC_CALL(MatNullSpaceRemove(ns, o->t));
  EF_PETSC_CALL(MatMult(o->mpi, o->x, o->r));
  EF_PETSC_CALL(VecAYPX(o->r, -1.0, o->t)); /* r = t - A x */
  EF_PETSC_CALL(MatGetDiagonal(o->mpi, o->dinv));
  PetscScalar *d;
  PetscInt m;
  EF_PETSC_CALL(VecGetLocalSize(o->dinv, &m));
  EF_PETSC_CALL(VecGetArray(o->dinv, &d));
  for (PetscInt i = 0; i < m; ++i) d[i] = d[i] > 0.0 ? 1.0 / d[i] : 0.0; /* ef_scaled_residual skips d <= 0 */
  EF_PETSC_CALL(VecRestoreArray(o->dinv, &d));
  EF_PETSC_CALL(VecPointwiseMult(o->w, o->r, o->dinv));
  EF_PETSC_CALL(VecDot(o->w, o->r, &rr));
  EF_PETSC_CALL(VecPointwiseMult(o->w, o->t, o->dinv));
  EF_PETSC_CALL(VecDot(o->w, o->t, &bb));
  EF_PETSC_CALL(VecNorm(o->r, NORM_2, &rn));
  EF_PETSC_CALL(VecNorm(o->t, NORM_2, &bn));
  *scaled = bb > 0.0 ? sqrt(rr / bb) : sqrt(rr);
  *true_residual = bn > 0.0 ? rn / bn : rn;
  return EF_SUCCESS;
}

/* Solve A x = b with the configured KSP (x: initial guess in, solution out). */
static int ef_petsc_solve(void *ctx, const ef_vector *bv, ef_vector *xv, ef_solve_result *result) {
  ef_petsc_solver *o = ctx;
  const double *b = bv->host;
  double *x = xv->host;
  EF_CHECK(o->A.mat || o->mpi, EF_ERR_INTERNAL, "petsc solver: solve before setup");
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
  double res = 0.0;
  if (o->mpi) { /* b and x placed again for the residuals */
    EF_PETSC_CALL(VecPlaceArray(o->b, (PetscScalar *)b));
    code = VecPlaceArray(o->x, x);
    int err = code ? ef_petsc_error(code, __FILE__, __LINE__, "VecPlaceArray(x)")
                   : ef_petsc_residuals_mpi(o, &res, &result->true_residual);
    if (!code) (void)VecResetArray(o->x);
    (void)VecResetArray(o->b);
    EF_CALL(err);
  } else {
    res = ef_scaled_residual(&o->csr, b, x, o->work);
  }
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
  Vec *work[] = {&o->r, &o->t, &o->w, &o->dinv};
  for (size_t k = 0; k < sizeof work / sizeof work[0]; ++k)
    if (*work[k]) (void)VecDestroy(work[k]);
  if (o->mpi) (void)MatDestroy(&o->mpi);
  free(o->mpi_row_ptr);
  free(o->mpi_col);
  ef_petsc_csr_release(&o->A);
  free(o->work);
  free(o);
  *p = NULL;
}

/* Across ranks: check the ranks are PETSc's, number the columns globally and build the MPIAIJ once (its
 * values come at every setup). */
static int ef_petsc_create_mpi(ef_petsc_solver *o, const ef_matrix *M) {
  const int64_t n = M->layout.n_owned, *g = M->global_row;
  const int64_t n_local = n + M->layout.n_ghost;
  PetscMPIInt rank = 0, size = 1;
  EF_CHECK(MPI_Comm_rank(PETSC_COMM_WORLD, &rank) == MPI_SUCCESS &&
               MPI_Comm_size(PETSC_COMM_WORLD, &size) == MPI_SUCCESS,
           EF_ERR_PETSC, "petsc solver: MPI_Comm_rank/size of PETSC_COMM_WORLD failed");
  EF_CHECK(size == ef_comm_size(M->layout.comm) && rank == ef_comm_rank(M->layout.comm), EF_ERR_UNSUPPORTED,
           "petsc solver: the matrix is spread over %d ranks (this is rank %d), but PETSc's world has %d (rank %d): "
           "across ranks the solver runs on MPI_COMM_WORLD only",
           ef_comm_size(M->layout.comm), ef_comm_rank(M->layout.comm), (int)size, (int)rank);
  EF_CHECK(g && M->row_ptr && M->col && M->values, EF_ERR_PARAMETER,
           "petsc solver: a matrix across ranks needs its global rows and its arrays");
  const int64_t nnz = M->row_ptr[n];
  EF_CHECK(g[n - 1] < PETSC_MAX_INT && nnz <= PETSC_MAX_INT, EF_ERR_UNSUPPORTED,
           "petsc solver: %lld global rows / %lld entries on this rank do not fit PetscInt (%d bytes)",
           (long long)(g[n - 1] + 1), (long long)nnz, (int)sizeof(PetscInt));
  o->first_row = (PetscInt)g[0];
  for (int64_t i = 0; i < n; ++i)
    EF_CHECK(g[i] == g[0] + i, EF_ERR_PARAMETER,
             "petsc solver: the owned rows are not one contiguous block of global rows (row %lld is %lld, not %lld)",
             (long long)i, (long long)g[i], (long long)(g[0] + i));
  EF_MALLOC(o->mpi_row_ptr, n + 1);
  EF_MALLOC(o->mpi_col, nnz > 0 ? nnz : 1);
  for (int64_t i = 0; i <= n; ++i) o->mpi_row_ptr[i] = (PetscInt)M->row_ptr[i];
  for (int64_t k = 0; k < nnz; ++k) {
    const int32_t c = M->col[k];
    EF_CHECK(c >= 0 && c < n_local && g[c] >= 0 && g[c] < PETSC_MAX_INT, EF_ERR_PARAMETER,
             "petsc solver: column %d of entry %lld is not a local row with a global number", (int)c, (long long)k);
    o->mpi_col[k] = (PetscInt)g[c];
  }
  EF_CALL(ef_petsc_mpiaij_create((PetscInt)n, o->mpi_row_ptr, o->mpi_col, M->values, &o->mpi));
  PetscInt r0 = 0, r1 = 0;
  EF_PETSC_CALL(MatGetOwnershipRange(o->mpi, &r0, &r1));
  EF_CHECK(r0 == o->first_row && r1 == o->first_row + (PetscInt)n, EF_ERR_PARAMETER,
           "petsc solver: this rank's rows are %lld..%lld globally, PETSc's block is %lld..%lld (the blocks must "
           "follow the rank order)",
           (long long)o->first_row, (long long)(o->first_row + n - 1), (long long)r0, (long long)(r1 - 1));
  return EF_SUCCESS;
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
  const int ranks = ef_comm_size(M->layout.comm);
  EF_CALL(ef_petsc_initialize());
  EF_CALL(ef_petsc_insert_options(options));

  ef_petsc_solver *o = calloc(1, sizeof *o);
  EF_CHECK(o, EF_ERR_MEMORY, "out of memory");
  o->n = n;
  o->atol = atol;
  o->rtol = rtol;
  o->max_it = (int)max_it;
  o->null_space = -1;
  if (ranks > 1) {
    EF_CALL_GOTO(ef_petsc_create_mpi(o, M), fail);
  } else {
    o->work = malloc((size_t)n * sizeof *o->work);
    EF_CHECK_GOTO(o->work, EF_ERR_MEMORY, fail, "out of memory for the petsc solver (%lld rows)", (long long)n);
  }
  PC pc;
  EF_PETSC_CALL_GOTO(KSPCreate(o->mpi ? PETSC_COMM_WORLD : PETSC_COMM_SELF, &o->ksp), fail);
  if (o->mpi) EF_PETSC_CALL_GOTO(KSPSetOperators(o->ksp, o->mpi, o->mpi), fail);
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
  snprintf(o->description, sizeof o->description, "KSP %s, PC %s%s", type, ptype ? ptype : "none",
           o->mpi ? ", MPIAIJ across ranks" : "");
  if (o->mpi) { /* over the caller's owned entries; the residuals' work vectors */
    EF_PETSC_CALL_GOTO(VecCreateMPIWithArray(PETSC_COMM_WORLD, 1, (PetscInt)n, PETSC_DECIDE, NULL, &o->b), fail);
    EF_PETSC_CALL_GOTO(VecCreateMPIWithArray(PETSC_COMM_WORLD, 1, (PetscInt)n, PETSC_DECIDE, NULL, &o->x), fail);
    EF_PETSC_CALL_GOTO(MatCreateVecs(o->mpi, &o->r, &o->t), fail);
    EF_PETSC_CALL_GOTO(VecDuplicate(o->r, &o->w), fail);
    EF_PETSC_CALL_GOTO(VecDuplicate(o->r, &o->dinv), fail);
  } else {
    EF_PETSC_CALL_GOTO(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, (PetscInt)n, NULL, &o->b), fail);
    EF_PETSC_CALL_GOTO(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, (PetscInt)n, NULL, &o->x), fail);
  }
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
    .distributed = 1,
};

int ef_register_petsc_solver(void) { return ef_registry_add_linear_solver(&ef_petsc_solver_ops); }
