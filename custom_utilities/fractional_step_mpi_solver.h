/* fractional_step_mpi_solver.h -- (private to fractional_step_mpi.c) the pressure system of a rank's
 * piece handed to a registry linear solver that runs across ranks ("petsc": PETSc's MPIAIJ), instead of
 * the executor's built-in Jacobi CG (docs/mpi.md).
 *
 * The global numbering: each rank's owned rows are one contiguous block, the blocks in rank order (the
 * offsets are an exclusive sum of the owned counts, one reduction), the owned rows in local order inside
 * a block; a ghost gets its owner's number through one halo exchange (as doubles: exact below 2^53).
 * Built once; the matrix's pattern never changes, its values do every step. */
#ifndef EF_FRACTIONAL_STEP_MPI_SOLVER_H
#define EF_FRACTIONAL_STEP_MPI_SOLVER_H

#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_linear_solver.h"
#include "edgeflow/ef_partition.h"

/* What the solver sees of the executor: the owned rows of H (columns local: owned and ghosts), the
 * piece, its halo, and the executor's exchange clock. */
typedef struct {
  ef_comm comm;
  const ef_partition *p;
  ef_halo halo;
  int64_t n_owned, n, nnz;
  const int64_t *row_ptr, *diag;
  const int32_t *col;
  const double *values;
  double *seconds_exchange;
} ef_fs_mpi_system;

typedef struct ef_fs_mpi_solver_s ef_fs_mpi_solver;

/* The global rows of sys (collective); sys must outlive the result. */
int ef_fs_mpi_solver_create(const ef_fs_mpi_system *sys, ef_fs_mpi_solver **out);
void ef_fs_mpi_solver_destroy(ef_fs_mpi_solver **s);
/* The distributed matrix (layout n_owned + n_ghost on sys->comm, global_row) for ef_linear_solver_create
 * and ef_linear_solver_setup. */
void ef_fs_mpi_solver_matrix(const ef_fs_mpi_solver *s, int null_space, ef_matrix *A);
/* Solve H x = b with ls (collective): H's values refreshed, x's owned entries the warm start and the
 * result, then x's ghosts from their owners; its iterations and the solver's residual. */
int ef_fs_mpi_solver_solve(ef_fs_mpi_solver *s, ef_linear_solver *ls, int null_space, const double *b, double *x,
                           int *iterations, double *residual);

#endif
