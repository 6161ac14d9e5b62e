/* petsc_bridge.c -- PETSc initialisation, error translation and zero-copy CSR wrapping. */
#include "petsc_bridge.h"

#include <math.h>
#include <string.h>

#include <stdlib.h>
#include <string.h>

static int ef_petsc_ours = 0;   /* we called PetscInitialize */
static int ef_petsc_ready = 0;  /* initialised (by us or by the host program) */

/* atexit hook: PetscFinalize when we started PETSc (it prints -log_view then). */
static void ef_petsc_finalize_at_exit(void) {
  PetscBool finalized = PETSC_TRUE;
  if (!ef_petsc_ours) return;
  if (PetscFinalized(&finalized) == 0 && !finalized) (void)PetscFinalize();
  ef_petsc_ours = 0;
  ef_petsc_ready = 0;
}

/* PetscInitialize once per process (unless the host program did), PetscFinalize at exit. */
int ef_petsc_initialize(void) {
  if (ef_petsc_ready) return EF_SUCCESS;
  PetscBool already = PETSC_FALSE;
  EF_CHECK(PetscInitialized(&already) == 0, EF_ERR_PETSC, "PetscInitialized failed");
  if (!already) {
    /* A library must not take over the process's signals: PETSc's handler would
     * print its own message for a crash (and hides it from sanitizers). */
    EF_CHECK(PetscOptionsSetValue(NULL, "-no_signal_handler", NULL) == 0, EF_ERR_PETSC,
             "PetscOptionsSetValue(-no_signal_handler) failed before PetscInitialize");
    PetscErrorCode code = PetscInitializeNoArguments();
    EF_CHECK(code == 0, EF_ERR_PETSC, "PetscInitialize failed with PETSc error %d (MPI could not start?)",
             (int)code);
    ef_petsc_ours = 1;
    EF_CHECK(atexit(ef_petsc_finalize_at_exit) == 0, EF_ERR_INTERNAL, "atexit refused the PETSc finalizer");
    /* Errors come back as codes; we report them with our own context.  A host program
     * that initialised PETSc keeps its own handler. */
    EF_PETSC_CALL(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  }
  ef_petsc_ready = 1;
  return EF_SUCCESS;
}

/* Whether ef_petsc_initialize started PETSc. */
int ef_petsc_initialized_by_us(void) { return ef_petsc_ours; }

/* EF_ERR_PETSC with the call, PETSc's code, its generic text and its specific message. */
int ef_petsc_error(PetscErrorCode code, const char *file, int line, const char *call) {
  const char *text = NULL;
  char *specific = NULL;
  if (PetscErrorMessage((int)code, &text, &specific)) {
    text = NULL;
    specific = NULL;
  }
  return ef_error_set(EF_ERR_PETSC, file, line, "%s failed: PETSc error %d (%s)%s%s", call, (int)code,
                      text ? text : "unknown error", specific && specific[0] ? ": " : "",
                      specific ? specific : "");
}

/* MATSEQAIJ over A's arrays: values in place, indices too when PetscInt is 32-bit. */
int ef_petsc_csr_wrap(const ef_csr *A, ef_petsc_csr *m) {
  EF_CHECK(A && m && A->row_ptr && A->col && A->val, EF_ERR_PARAMETER, "PETSc matrix: NULL argument");
  EF_CHECK(!m->mat, EF_ERR_INTERNAL, "PETSc matrix: the wrapper is in use (release it first)");
  EF_CHECK(A->n > 0 && A->n <= PETSC_MAX_INT && A->nnz <= PETSC_MAX_INT, EF_ERR_UNSUPPORTED,
           "PETSc matrix: %lld rows / %lld nonzeros do not fit PetscInt (%d bytes)", (long long)A->n,
           (long long)A->nnz, (int)sizeof(PetscInt));
  EF_CALL(ef_petsc_initialize());
  memset(m, 0, sizeof *m);
  const int64_t n = A->n, nnz = A->nnz;
  PetscInt *rp = NULL, *col = NULL;
  int err = EF_SUCCESS;
  if (sizeof(PetscInt) == sizeof(int32_t) && A->row_ptr32) {
    rp = (PetscInt *)A->row_ptr32;
  } else {
    EF_MALLOC(m->row_ptr, n + 1);
    for (int64_t i = 0; i <= n; ++i) m->row_ptr[i] = (PetscInt)A->row_ptr[i];
    rp = m->row_ptr;
  }
  if (sizeof(PetscInt) == sizeof(int32_t)) {
    col = (PetscInt *)A->col;
  } else {
    m->col = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *m->col);
    EF_CHECK_GOTO(m->col, EF_ERR_MEMORY, fail, "PETSc matrix: out of memory for %lld column indices",
                  (long long)nnz);
    for (int64_t k = 0; k < nnz; ++k) m->col[k] = (PetscInt)A->col[k];
    col = m->col;
  }
  m->copied_indices = m->row_ptr || m->col;
  /* PETSc reads, never writes, the values of an assembled AIJ matrix we only multiply
   * with and precondition from; its API just has no const variant. */
  EF_PETSC_CALL_GOTO(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, (PetscInt)n, (PetscInt)n, rp, col,
                                               (PetscScalar *)A->val, &m->mat),
                     fail);
  m->n = n;
  m->nnz = nnz;
  m->src_row_ptr = A->row_ptr;
  m->src_col = A->col;
  m->src_val = A->val;
  return EF_SUCCESS;
fail:
  ef_petsc_csr_release(m);
  return err;
}

/* 1 when m wraps exactly the arrays of A. */
int ef_petsc_csr_wraps(const ef_petsc_csr *m, const ef_csr *A) {
  return m && A && m->mat && m->n == A->n && m->nnz == A->nnz && m->src_row_ptr == (const void *)A->row_ptr &&
         m->src_col == (const void *)A->col && m->src_val == (const void *)A->val;
}

/* Bump the matrix state after in-place value changes. */
int ef_petsc_csr_values_changed(ef_petsc_csr *m) {
  EF_CHECK(m && m->mat, EF_ERR_PARAMETER, "PETSc matrix: nothing wrapped");
  /* Get/Restore is PETSc's public way to bump the object state: a preconditioner set up
   * for the old values notices and is rebuilt at the next KSPSolve. */
  PetscScalar *a = NULL;
  EF_PETSC_CALL(MatSeqAIJGetArray(m->mat, &a));
  EF_PETSC_CALL(MatSeqAIJRestoreArray(m->mat, &a));
  return EF_SUCCESS;
}

/* Attach or remove span{1} as null space and transpose null space of A. */
int ef_petsc_set_constant_null_space(Mat A, int on) {
  if (!on) {
    EF_PETSC_CALL(MatSetNullSpace(A, NULL));
    EF_PETSC_CALL(MatSetTransposeNullSpace(A, NULL));
    return EF_SUCCESS;
  }
  MatNullSpace ns = NULL;
  EF_PETSC_CALL(MatNullSpaceCreate(PetscObjectComm((PetscObject)A), PETSC_TRUE, 0, NULL, &ns));
  /* KSPSolve projects b with the TRANSPOSE null space (consistency is b orthogonal to
   * null(A^T)); H is symmetric, so it is the same space.  Without it an inconsistent b
   * makes CG diverge instead of solving in 1-perp as the host CG does. */
  PetscErrorCode code = MatSetNullSpace(A, ns);
  if (!code) code = MatSetTransposeNullSpace(A, ns);
  (void)MatNullSpaceDestroy(&ns); /* the matrix holds its own references */
  if (code) return ef_petsc_error(code, __FILE__, __LINE__, "MatSet(Transpose)NullSpace(A, constant)");
  return EF_SUCCESS;
}

/* The same on a wrapped CSR. */
int ef_petsc_csr_set_constant_null_space(ef_petsc_csr *m, int on) {
  EF_CHECK(m && m->mat, EF_ERR_PARAMETER, "PETSc matrix: nothing wrapped");
  return ef_petsc_set_constant_null_space(m->mat, on);
}

/* Destroy the Mat and the converted indices; zero the wrapper. */
void ef_petsc_csr_release(ef_petsc_csr *m) {
  if (!m) return;
  if (m->mat) (void)MatDestroy(&m->mat);
  free(m->row_ptr);
  free(m->col);
  memset(m, 0, sizeof *m);
}

/* MPIAIJ from this rank's row block (MatCreateMPIAIJWithArrays copies it); later values only in place. */
int ef_petsc_mpiaij_create(PetscInt m, const PetscInt *row_ptr, const PetscInt *col, const double *values, Mat *out) {
  EF_CHECK(out && row_ptr && col && values && m >= 0, EF_ERR_PARAMETER, "PETSc parallel matrix: NULL argument");
  *out = NULL;
  EF_CALL(ef_petsc_initialize());
  Mat A = NULL;
  PetscErrorCode code = MatCreateMPIAIJWithArrays(PETSC_COMM_WORLD, m, m, PETSC_DETERMINE, PETSC_DETERMINE, row_ptr,
                                                  col, values, &A);
  if (code) return ef_petsc_error(code, __FILE__, __LINE__, "MatCreateMPIAIJWithArrays");
  /* The pattern is fixed from now on (a new entry is a bug) and every rank sets only its own rows. */
  code = MatSetOption(A, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE);
  if (!code) code = MatSetOption(A, MAT_NO_OFF_PROC_ENTRIES, PETSC_TRUE);
  if (code) {
    (void)MatDestroy(&A);
    return ef_petsc_error(code, __FILE__, __LINE__, "MatSetOption(parallel matrix)");
  }
  *out = A;
  return EF_SUCCESS;
}

/* Row by row into the existing pattern, then the assembly (which bumps the state: preconditioners rebuild). */
int ef_petsc_mpiaij_set_rows(Mat A, PetscInt first_row, PetscInt m, const PetscInt *row_ptr, const PetscInt *col,
                             const double *values) {
  for (PetscInt i = 0; i < m; ++i) {
    const PetscInt row = first_row + i;
    EF_PETSC_CALL(MatSetValues(A, 1, &row, row_ptr[i + 1] - row_ptr[i], col + row_ptr[i], values + row_ptr[i],
                               INSERT_VALUES));
  }
  EF_PETSC_CALL(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  EF_PETSC_CALL(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  return EF_SUCCESS;
}

/* A sequential Vec over a caller's array (no copy). */
int ef_petsc_vec_wrap(int64_t n, double *array, Vec *v) {
  EF_CHECK(v && n > 0 && n <= PETSC_MAX_INT, EF_ERR_PARAMETER, "PETSc vector: bad size %lld", (long long)n);
  *v = NULL;
  EF_CALL(ef_petsc_initialize());
  EF_PETSC_CALL(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, (PetscInt)n, array, v));
  return EF_SUCCESS;
}

/* ||D^-1/2 (b - A x)|| / ||D^-1/2 b|| with b's mean removed for a singular A (the host CG's measure). */
double ef_scaled_residual(const ef_csr *A, const double *b, const double *x, double *r) {
  const int64_t n = A->n;
  double mean = 0.0, rr = 0.0, bb = 0.0;
  if (A->constant_null_space) {
    for (int64_t i = 0; i < n; ++i) mean += b[i];
    mean /= (double)n;
  }
  ef_csr_multiply(A, x, r);
  for (int64_t i = 0; i < n; ++i) {
    double d = 0.0;
    if (A->diag) {
      d = A->val[A->diag[i]];
    } else {
      for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
        if (A->col[k] == i) d = A->val[k];
    }
    const double bi = b[i] - mean, ri = bi - r[i];
    if (d > 0.0) {
      rr += ri * ri / d;
      bb += bi * bi / d;
    }
  }
  return bb > 0.0 ? sqrt(rr / bb) : sqrt(rr);
}

/* Insert a user's options string; -log_view needs PETSc's logging started as well. */
int ef_petsc_insert_options(const char *options) {
  if (!options || !options[0]) return EF_SUCCESS;
  EF_PETSC_CALL(PetscOptionsInsertString(NULL, options));
  if (strstr(options, "-log_view")) EF_PETSC_CALL(PetscLogDefaultBegin());
  return EF_SUCCESS;
}
