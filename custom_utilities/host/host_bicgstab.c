/* host_bicgstab.c -- linear solver "bicgstab" on the host: van der Vorst's BiCGStab with right
 * preconditioning by any registered host preconditioner (OpenMP, deterministic reductions).
 * Stops on ||r||_2 / ||b||_2 < tolerance; for a matrix with the constant null space b's mean is
 * removed first.  Kratos' krylov_type "bicgstab". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_linear_solver.h"
#include "host_cg.h"
#include "host_vector.h"

typedef struct {
  ef_preconditioner *pc;
  ef_linear_solver_common common;
  ef_csr A;
  int64_t n;
  double *r, *rhat, *p, *v, *s, *t, *ph, *sh, *bp;
  ef_host_reduction red;
} ef_host_bicgstab;

static void ef_host_bicgstab_destroy(void **p) {
  if (!p || !*p) return;
  ef_host_bicgstab *o = *p;
  double **v[] = {&o->r, &o->rhat, &o->p, &o->v, &o->s, &o->t, &o->ph, &o->sh, &o->bp};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) free(*v[i]);
  ef_host_reduction_free(&o->red);
  free(o);
  *p = NULL;
}

static int ef_host_bicgstab_create(ef_parameters settings, const ef_linear_solver_common *common, const ef_matrix *A,
                                   ef_preconditioner *pc, void **out) {
  (void)settings;
  *out = NULL;
  ef_host_bicgstab *o = calloc(1, sizeof *o);
  EF_CHECK(o, EF_ERR_MEMORY, "out of memory");
  o->pc = pc;
  o->common = *common;
  o->n = A->layout.n_owned;
  o->A = ef_csr_from_matrix(A);
  double **v[] = {&o->r, &o->rhat, &o->p, &o->v, &o->s, &o->t, &o->ph, &o->sh, &o->bp};
  int ok = ef_host_reduction_init(&o->red, o->n);
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) ok = (*v[i] = malloc((size_t)o->n * sizeof(double))) && ok;
  if (!ok) {
    ef_host_bicgstab_destroy((void **)&o);
    return EF_ERROR(EF_ERR_MEMORY, "host BiCGStab: out of memory for %lld unknowns", (long long)A->layout.n_owned);
  }
  *out = o;
  return EF_SUCCESS;
}

static int ef_host_bicgstab_setup(void *data, const ef_matrix *A) {
  ef_host_bicgstab *o = data;
  o->A = ef_csr_from_matrix(A);
  return EF_SUCCESS;
}

/* z = M^-1 y */
static int ef_host_bicgstab_precondition(ef_host_bicgstab *o, double *y, double *z) {
  ef_vector yv = {EF_MEMORY_HOST, {o->n, 0, NULL}, y, NULL}, zv = {EF_MEMORY_HOST, {o->n, 0, NULL}, z, NULL};
  EF_CALL(ef_preconditioner_apply(o->pc, &yv, &zv));
  if (o->A.constant_null_space) ef_host_remove_mean(&o->red, z);
  return EF_SUCCESS;
}

static int ef_host_bicgstab_solve(void *data, const ef_vector *bv, ef_vector *xv, ef_solve_result *res) {
  ef_host_bicgstab *o = data;
  const int64_t n = o->n;
  double *x = xv->host, *r = o->r, *rhat = o->rhat, *p = o->p, *v = o->v, *s = o->s, *t = o->t, *ph = o->ph,
         *sh = o->sh;
  const double *b = bv->host;
  if (o->A.constant_null_space) {
    memcpy(o->bp, b, (size_t)n * sizeof *b);
    ef_host_remove_mean(&o->red, o->bp);
    b = o->bp;
  }
  ef_csr_multiply(&o->A, x, r);
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    r[i] = b[i] - r[i];
    rhat[i] = r[i];
    p[i] = v[i] = 0.0;
  }
  const double bnorm = sqrt(ef_host_dot(&o->red, b, b)), tol = o->common.tolerance;
  double rnorm = bnorm > 0.0 ? sqrt(ef_host_dot(&o->red, r, r)) / bnorm : 0.0;
  double rho = 1.0, alpha = 1.0, omega = 1.0;
  int it = 0;
  if (bnorm == 0.0)
    for (int64_t i = 0; i < n; ++i) x[i] = 0.0;
  while (bnorm > 0.0 && rnorm >= tol && it < o->common.max_iteration) {
    const double rho_new = ef_host_dot(&o->red, rhat, r);
    EF_CHECK(isfinite(rho_new) && rho_new != 0.0, EF_ERR_SOLVER,
             "host BiCGStab: breakdown (rhat^T r = %g) at iteration %d", rho_new, it + 1);
    const double beta = (rho_new / rho) * (alpha / omega);
    rho = rho_new;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) p[i] = r[i] + beta * (p[i] - omega * v[i]);
    EF_CALL(ef_host_bicgstab_precondition(o, p, ph));
    ef_csr_multiply(&o->A, ph, v);
    const double rv = ef_host_dot(&o->red, rhat, v);
    EF_CHECK(isfinite(rv) && rv != 0.0, EF_ERR_SOLVER, "host BiCGStab: breakdown (rhat^T A p = %g) at iteration %d",
             rv, it + 1);
    alpha = rho / rv;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) s[i] = r[i] - alpha * v[i];
    ++it;
    const double snorm = sqrt(ef_host_dot(&o->red, s, s)) / bnorm;
    if (snorm < tol) { /* half step converged: x += alpha M^-1 p */
      EF_OMP(omp parallel for schedule(static))
      for (int64_t i = 0; i < n; ++i) {
        x[i] += alpha * ph[i];
        r[i] = s[i];
      }
      rnorm = snorm;
      break;
    }
    EF_CALL(ef_host_bicgstab_precondition(o, s, sh));
    ef_csr_multiply(&o->A, sh, t);
    const double tt = ef_host_dot(&o->red, t, t);
    EF_CHECK(isfinite(tt) && tt > 0.0, EF_ERR_SOLVER, "host BiCGStab: breakdown (t^T t = %g) at iteration %d", tt, it);
    omega = ef_host_dot(&o->red, t, s) / tt;
    EF_CHECK(isfinite(omega) && omega != 0.0, EF_ERR_SOLVER, "host BiCGStab: breakdown (omega = %g) at iteration %d",
             omega, it);
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) {
      x[i] += alpha * ph[i] + omega * sh[i];
      r[i] = s[i] - omega * t[i];
    }
    rnorm = sqrt(ef_host_dot(&o->red, r, r)) / bnorm;
  }
  res->iterations = it;
  res->residual = rnorm;
  res->converged = rnorm < tol;
  EF_CHECK(res->converged, EF_ERR_SOLVER,
           "host BiCGStab: no convergence in %d iterations (relative residual %.3e > %.3e)", o->common.max_iteration,
           rnorm, tol);
  return EF_SUCCESS;
}

const ef_linear_solver_ops ef_host_bicgstab_ops = {
    .name = "bicgstab",
    .description = "BiCGStab with right preconditioning (OpenMP, deterministic); stops on ||r|| / ||b||",
    .memory = EF_MEMORY_HOST,
    .defaults = "{}",
    .uses_preconditioner = 1,
    .create = ef_host_bicgstab_create,
    .setup = ef_host_bicgstab_setup,
    .solve = ef_host_bicgstab_solve,
    .destroy = ef_host_bicgstab_destroy,
};
