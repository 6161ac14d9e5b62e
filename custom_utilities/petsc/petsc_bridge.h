/* petsc_bridge.h -- PETSc as a library inside edgeflow: one initialisation per
 * process, PETSc errors turned into ours, and CSR matrices handed to PETSc
 * without copying their values.
 *
 * Initialisation.  ef_petsc_initialize() calls PetscInitialize (which starts MPI
 * when nobody has) the first time it runs and registers PetscFinalize with
 * atexit(); when the host program initialised PETSc itself, it is left alone.
 * When we initialise PETSc we also install PetscReturnErrorHandler, so PETSc never
 * prints a traceback or aborts, and -no_signal_handler, so it leaves the process's
 * signals alone: every failing call comes back as a code that EF_PETSC_CALL turns
 * into EF_ERR_PETSC with PETSc's own message.  The options
 * database reads PETSC_OPTIONS from the environment, as in any PETSc program.
 *
 * Matrices.  ef_petsc_csr wraps an ef_csr (host_cg.h) with
 * MatCreateSeqAIJWithArrays: PETSc reads the caller's values in place (PetscScalar
 * is double in the real builds we accept), and the index arrays too when PetscInt
 * is 32-bit and the CSR carries row_ptr32; otherwise only the indices are
 * converted once.  After the caller changes the values in place,
 * ef_petsc_csr_values_changed() tells PETSc, so preconditioners are set up again.
 * The arrays must outlive the wrapper.
 *
 * Only this file and the petsc_*.c / verify.c sources include PETSc headers.
 */
#ifndef EF_PETSC_BRIDGE_H
#define EF_PETSC_BRIDGE_H

#include <petscksp.h>
#include <stdint.h>

#include "edgeflow/ef_error.h"
#include "host_cg.h"

#if defined(PETSC_USE_COMPLEX) || !defined(PETSC_USE_REAL_DOUBLE)
#error "edgeflow needs a real, double-precision PETSc build"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Initialise PETSc (and MPI) once per process; later calls return at once. */
int ef_petsc_initialize(void);

/* 1 when this process called PetscInitialize through ef_petsc_initialize. */
int ef_petsc_initialized_by_us(void);

/* Record EF_ERR_PETSC for a failed PETSc call: the call's text, PETSc's code, its
 * generic text and the specific message of the failing routine. */
int ef_petsc_error(PetscErrorCode code, const char *file, int line, const char *call);

/* Fail with EF_ERR_PETSC carrying PETSc's message. */
#define EF_PETSC_CALL(call)                                                     \
  do {                                                                          \
    PetscErrorCode ef_petsc_code_ = (call);                                     \
    if (ef_petsc_code_) return ef_petsc_error(ef_petsc_code_, __FILE__, __LINE__, #call); \
  } while (0)
/* As EF_PETSC_CALL, but jump to label with `int err` set. */
#define EF_PETSC_CALL_GOTO(call, label)                                         \
  do {                                                                          \
    PetscErrorCode ef_petsc_code_ = (call);                                     \
    if (ef_petsc_code_) {                                                       \
      err = ef_petsc_error(ef_petsc_code_, __FILE__, __LINE__, #call);          \
      goto label;                                                               \
    }                                                                           \
  } while (0)

/* A sequential PETSc matrix over the arrays of an ef_csr. */
typedef struct {
  Mat mat;                 /* NULL when empty */
  int64_t n, nnz;
  const void *src_row_ptr; /* the wrapped arrays, to recognise the same CSR later */
  const void *src_col;
  const void *src_val;
  PetscInt *row_ptr;       /* converted offsets, or NULL when the CSR's are used in place */
  PetscInt *col;           /* converted columns, or NULL when used in place */
  int copied_indices;      /* 1 when row_ptr/col had to be converted */
} ef_petsc_csr;

/* Wrap A (square, sorted columns, diagonal present) as a MATSEQAIJ without copying
 * its values.  *m must be zeroed or released before. */
int ef_petsc_csr_wrap(const ef_csr *A, ef_petsc_csr *m);
/* 1 when m already wraps exactly A's arrays. */
int ef_petsc_csr_wraps(const ef_petsc_csr *m, const ef_csr *A);
/* The values behind m changed in place: invalidate what PETSc derived from them. */
int ef_petsc_csr_values_changed(ef_petsc_csr *m);
/* Attach (on = 1) or remove (on = 0) the constant null space of a singular
 * pressure matrix (A 1 = 0, no fixed pressure). */
int ef_petsc_csr_set_constant_null_space(ef_petsc_csr *m, int on);
/* The same for any Mat (sequential or parallel): null space and transpose null space, so
 * that KSPSolve removes b's mean (constant component) before solving. */
int ef_petsc_set_constant_null_space(Mat A, int on);
/* Destroy the Mat and the converted arrays, zero *m (accepts NULL and an empty one). */
void ef_petsc_csr_release(ef_petsc_csr *m);

/* A parallel AIJ matrix (MPIAIJ) on PETSC_COMM_WORLD from this rank's block of m contiguous rows: the
 * rows' offsets from 0 (m + 1), their global column numbers (any order in a row) and values, copied; the
 * global size is the sum of the blocks, the blocks in rank order.  Collective.  The values may change later
 * (same pattern) with ef_petsc_mpiaij_set_rows. */
int ef_petsc_mpiaij_create(PetscInt m, const PetscInt *row_ptr, const PetscInt *col, const double *values, Mat *out);
/* New values for the m rows first_row.. of a matrix of ef_petsc_mpiaij_create (the same row offsets and
 * columns, values in the same order), then the assembly (collective). */
int ef_petsc_mpiaij_set_rows(Mat A, PetscInt first_row, PetscInt m, const PetscInt *row_ptr, const PetscInt *col,
                             const double *values);

/* Wrap a host array of n doubles as a sequential Vec without copying (the array must
 * outlive the Vec).  PETSc's API has no const vectors: read-only callers cast. */
int ef_petsc_vec_wrap(int64_t n, double *array, Vec *v);

/* ||D^-1/2 (b - A x)|| / ||D^-1/2 b|| with b's mean removed for a singular A (the host CG's
 * measure); r: n of workspace. */
double ef_scaled_residual(const ef_csr *A, const double *b, const double *x, double *r);
/* Insert a user's options string into PETSc's database (-log_view starts logging too). */
int ef_petsc_insert_options(const char *options);

#ifdef __cplusplus
}
#endif
#endif
