/* host_cg.h -- sparse matrix view, pluggable linear solver interface, and a
 * deterministic OpenMP conjugate gradient on the symmetrically scaled system.
 *
 * ef_csr is a standard CSR with the diagonal stored inside each row and the
 * columns sorted, so PETSc (MatCreateSeqAIJWithArrays with row_ptr32 when
 * PetscInt is 32-bit) or a device solver can wrap it without copying.  Its
 * first members match ef_csr_matrix of edgeflow/ef_strategy.h; it adds the
 * int32 offsets, the diagonal positions and the null-space flag.
 */
#ifndef EF_HOST_CG_H
#define EF_HOST_CG_H

#include <stdint.h>

#include "edgeflow/ef_linear_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int64_t n;                 /* rows = columns */
  int64_t nnz;               /* row_ptr[n] */
  const int64_t *row_ptr;    /* n + 1 offsets */
  const int32_t *row_ptr32;  /* the same offsets as int32, or NULL when nnz >= 2^31 */
  const int32_t *col;        /* nnz column indices, sorted in each row, diagonal included */
  const double *val;         /* nnz values */
  const int64_t *diag;       /* position of each row's diagonal entry, or NULL (searched) */
  int constant_null_space;   /* 1: A 1 = 0 (no Dirichlet row); b must satisfy sum b = 0 */
} ef_csr;

/* Deterministic host CG.  It is CG on D^-1/2 A D^-1/2 y = D^-1/2 b (D = diag A, x = D^-1/2 y),
 * carried out as Jacobi-preconditioned CG on A, which generates the same iterates:
 *  - stopping test ||r_s||_2 / ||b_s||_2 < rtol on the scaled system, i.e.
 *    sqrt(r^T D^-1 r) / sqrt(b^T D^-1 b) < rtol;
 *  - p^T A p <= 0 stops with EF_ERR_SOLVER (the pressure matrix is not positive definite,
 *    possible on meshes with obtuse elements);
 *  - a constant_null_space matrix is solved in 1-perp (b's mean is removed first);
 *  - reductions are summed in blocks of rows (about 1024 blocks, the size depending on n
 *    only) in a fixed order, so the result is bitwise the same for any number of threads;
 *  - every work array is allocated by ef_host_cg_create, none in the solve;
 *  - one OpenMP parallel region per solve, three loops (and barriers) per iteration:
 *    q = A p with p.q, then x, r and r.D^-1 r, then p = D^-1 r + beta p. */
typedef struct ef_host_cg_s ef_host_cg;

/* Work arrays for systems of n unknowns. */
int ef_host_cg_create(int64_t n, ef_host_cg **cg);
/* Free; accepts NULL and sets *cg to NULL. */
void ef_host_cg_destroy(ef_host_cg **cg);
/* Solve A x = b (see above); ctx is the ef_host_cg.  A->n must equal the created size. */
int ef_host_cg_solve(void *ctx, const ef_csr *A, const double *b, double *x, double rtol, int max_it,
                     int *iterations, double *final_residual);
/* Iterations and wall seconds of the last solve (either pointer may be NULL). */
void ef_host_cg_last(const ef_host_cg *cg, int *iterations, double *seconds);

/* y = A x (OpenMP over rows; deterministic). */
void ef_csr_multiply(const ef_csr *A, const double *x, double *y);

/* The CSR view of a host ef_matrix (ef_linear_solver.h). */
ef_csr ef_csr_from_matrix(const ef_matrix *A);

/* The registered host solvers and preconditioners (host_solvers.c registers them). */
extern const ef_linear_solver_ops ef_host_cg_ops;       /* "cg" */
extern const ef_linear_solver_ops ef_host_bicgstab_ops; /* "bicgstab" */
extern const ef_preconditioner_ops ef_host_jacobi_ops;  /* "jacobi" */
int ef_register_host_solvers(void);

#ifdef __cplusplus
}
#endif
#endif
