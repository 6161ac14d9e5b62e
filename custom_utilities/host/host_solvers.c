/* host_solvers.c -- the host preconditioner "jacobi" (z = D^-1 r) and the one list that
 * registers every host solver and preconditioner. */
#include <stdlib.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_linear_solver.h"
#include "ef_omp.h"
#include "host_cg.h"

typedef struct {
  int64_t n;
  double *inv_diag;
} ef_host_jacobi;

static void ef_host_jacobi_destroy(void **p) {
  if (!p || !*p) return;
  ef_host_jacobi *j = *p;
  free(j->inv_diag);
  free(j);
  *p = NULL;
}

/* inv_diag = 1 / diag(A); a diagonal that is not positive is an error naming the row. */
static int ef_host_jacobi_setup(void *data, const ef_matrix *A) {
  ef_host_jacobi *j = data;
  for (int64_t i = 0; i < j->n; ++i) {
    double d = 0.0;
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k)
      if (A->col[k] == i) d = A->values[k];
    EF_CHECK(d > 0.0, EF_ERR_SOLVER, "jacobi: diagonal entry of row %lld is not positive (%g)", (long long)i, d);
    j->inv_diag[i] = 1.0 / d;
  }
  return EF_SUCCESS;
}

static int ef_host_jacobi_create(ef_parameters settings, const ef_matrix *A, void **out) {
  (void)settings;
  *out = NULL;
  ef_host_jacobi *j = calloc(1, sizeof *j);
  EF_CHECK(j, EF_ERR_MEMORY, "out of memory");
  j->n = A->layout.n_owned;
  j->inv_diag = malloc((size_t)(j->n > 0 ? j->n : 1) * sizeof *j->inv_diag);
  if (!j->inv_diag) {
    ef_host_jacobi_destroy((void **)&j);
    return EF_ERROR(EF_ERR_MEMORY, "jacobi: out of memory for %lld rows", (long long)A->layout.n_owned);
  }
  /* The values may not be assembled yet: setup computes the diagonal before each solve. */
  *out = j;
  return EF_SUCCESS;
}

static int ef_host_jacobi_apply(void *data, const ef_vector *r, ef_vector *z) {
  const ef_host_jacobi *j = data;
  const double *rv = r->host, *d = j->inv_diag;
  double *zv = z->host;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < j->n; ++i) zv[i] = d[i] * rv[i];
  return EF_SUCCESS;
}

const ef_preconditioner_ops ef_host_jacobi_ops = {
    .name = "jacobi",
    .description = "diagonal (Jacobi) scaling, z = D^-1 r",
    .memory = EF_MEMORY_HOST,
    .defaults = "{}",
    .create = ef_host_jacobi_create,
    .setup = ef_host_jacobi_setup,
    .apply = ef_host_jacobi_apply,
    .destroy = ef_host_jacobi_destroy,
};

int ef_register_host_solvers(void) {
  EF_CALL(ef_registry_add_preconditioner(&ef_host_jacobi_ops));
  EF_CALL(ef_registry_add_linear_solver(&ef_host_cg_ops));
  EF_CALL(ef_registry_add_linear_solver(&ef_host_bicgstab_ops));
  return EF_SUCCESS;
}
