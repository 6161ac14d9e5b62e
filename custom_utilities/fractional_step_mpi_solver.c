/* fractional_step_mpi_solver.c -- the pressure of a rank's piece through a registry solver that runs
 * across ranks (fractional_step_mpi_solver.h). */
#include "fractional_step_mpi_solver.h"

#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"

struct ef_fs_mpi_solver_s {
  const ef_fs_mpi_system *sys;
  int64_t *global_row; /* n: owned and ghost rows */
};

void ef_fs_mpi_solver_destroy(ef_fs_mpi_solver **sp) {
  if (!sp || !*sp) return;
  free((*sp)->global_row);
  free(*sp);
  *sp = NULL;
}

int ef_fs_mpi_solver_create(const ef_fs_mpi_system *sys, ef_fs_mpi_solver **out) {
  EF_CHECK(out && sys && sys->p && sys->halo, EF_ERR_PARAMETER, "distributed pressure solver: NULL argument");
  *out = NULL;
  const int rank = ef_comm_rank(sys->comm), size = ef_comm_size(sys->comm);
  const int64_t n = sys->n, no = sys->n_owned;
  int err = EF_SUCCESS;
  double *count = calloc((size_t)size, sizeof *count), *g = malloc((size_t)(n > 0 ? n : 1) * sizeof *g);
  ef_fs_mpi_solver *s = calloc(1, sizeof *s);
  if (s) s->global_row = malloc((size_t)(n > 0 ? n : 1) * sizeof *s->global_row);
  EF_CHECK_GOTO(count && g && s && s->global_row, EF_ERR_MEMORY, fail,
                "distributed pressure solver: out of memory for %lld rows", (long long)n);
  s->sys = sys;
  /* Each rank's owned count, summed over the ranks: the first row of rank r is the sum over r' < r. */
  count[rank] = (double)no;
  double t0 = ef_wtime();
  EF_CALL_GOTO(ef_comm_allreduce(sys->comm, count, size, EF_COMM_SUM), fail);
  int64_t first = 0;
  for (int r = 0; r < rank; ++r) first += (int64_t)count[r];
  for (int64_t i = 0; i < no; ++i) g[i] = (double)(first + i);
  EF_CALL_GOTO(ef_halo_exchange(sys->halo, g, 1), fail);
  *sys->seconds_exchange += ef_wtime() - t0;
  for (int64_t i = 0; i < n; ++i) s->global_row[i] = (int64_t)g[i];
  free(count);
  free(g);
  *out = s;
  return EF_SUCCESS;
fail:
  free(count);
  free(g);
  ef_fs_mpi_solver_destroy(&s);
  return err;
}

void ef_fs_mpi_solver_matrix(const ef_fs_mpi_solver *s, int null_space, ef_matrix *A) {
  const ef_fs_mpi_system *y = s->sys;
  memset(A, 0, sizeof *A);
  A->memory = EF_MEMORY_HOST;
  A->layout.n_owned = y->n_owned;
  A->layout.n_ghost = y->n - y->n_owned;
  A->layout.comm = y->comm;
  A->nnz = y->nnz;
  A->constant_null_space = null_space;
  A->row_ptr = y->row_ptr;
  A->col = y->col;
  A->values = y->values;
  A->diag = y->diag;
  A->global_row = s->global_row;
}

int ef_fs_mpi_solver_solve(ef_fs_mpi_solver *s, ef_linear_solver *ls, int null_space, const double *b, double *x,
                           int *iterations, double *residual) {
  const ef_fs_mpi_system *y = s->sys;
  ef_matrix A;
  ef_fs_mpi_solver_matrix(s, null_space, &A);
  /* The solver reads b and writes x's owned entries only (ef_linear_solver_ops.distributed). */
  ef_vector bv = {EF_MEMORY_HOST, A.layout, (double *)b, NULL}, xv = {EF_MEMORY_HOST, A.layout, x, NULL};
  ef_solve_result r;
  memset(&r, 0, sizeof r);
  EF_CALL(ef_linear_solver_setup(ls, &A));
  EF_CALL(ef_linear_solver_solve(ls, &bv, &xv, &r));
  *iterations = r.iterations;
  *residual = r.residual;
  const double t0 = ef_wtime();
  const int err = ef_halo_exchange(y->halo, x, 1);
  *y->seconds_exchange += ef_wtime() - t0;
  return err;
}
