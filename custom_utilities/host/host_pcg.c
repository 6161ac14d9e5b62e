/* host_pcg.c -- preconditioned / flexible CG on the host (host_pcg.h). */
#include "host_pcg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"

#include "ef_omp.h"

/* Sum of x_i y_i (y NULL: of x_i) in blocks of rows added in block order (this rank's rows). */
static double pcg_dot_rows(int64_t n, const double *x, const double *y) {
  const int64_t bs = ef_reduction_block_rows(n), nb = (n + bs - 1) / bs;
  double part[1025], s = 0.0;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t b = 0; b < nb; ++b) {
    double a = 0.0;
    const int64_t e = (b + 1) * bs < n ? (b + 1) * bs : n;
    for (int64_t i = b * bs; i < e; ++i) a += y ? x[i] * y[i] : x[i];
    part[b] = a;
  }
  for (int64_t b = 0; b < nb; ++b) s += part[b];
  return s;
}

/* pcg_dot_rows over the ranks of d (one reduction; d NULL: this process). */
static int pcg_dot(ef_host_dist *d, int64_t n, const double *x, const double *y, double *out) {
  *out = pcg_dot_rows(n, x, y);
  return ef_host_dist_sum(d, out, 1);
}

/* v -= mean(v), the mean over every rank's owned rows. */
static int pcg_remove_mean(ef_host_dist *d, int64_t n, double *v) {
  double m = 0.0;
  EF_CALL(pcg_dot(d, n, v, NULL, &m));
  m /= (double)(d ? ef_host_dist_global_rows(d) : n);
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) v[i] -= m;
  return EF_SUCCESS;
}

/* q = A v on the owned rows, after v's ghost rows are exchanged. */
static int pcg_multiply(ef_host_dist *d, const ef_csr *A, double *v, double *q) {
  EF_CALL(ef_host_dist_exchange(d, v));
  ef_csr_multiply(A, v, q);
  return EF_SUCCESS;
}

/* PCG / FCG (host_pcg.h). */
int ef_host_pcg_solve(const ef_csr *A, ef_host_precond_fn precond, void *ctx, const ef_host_pcg_settings *s,
                      const double *b_in, double *x, ef_host_pcg_result *res) {
  EF_CHECK(A && precond && s && b_in && x, EF_ERR_PARAMETER, "ef_host_pcg_solve: NULL argument");
  ef_host_pcg_result local;
  if (!res) res = &local;
  memset(res, 0, sizeof *res);
  const int64_t n = A->n, nt = n + ef_host_dist_ghost_rows(s->dist);
  ef_host_dist *d = s->dist;
  double t0 = ef_wtime();
  double *b = malloc((size_t)n * sizeof *b), *r = malloc((size_t)n * sizeof *r);
  double *z = malloc((size_t)nt * sizeof *z), *p = malloc((size_t)nt * sizeof *p);
  double *q = malloc((size_t)n * sizeof *q), *rold = malloc((size_t)n * sizeof *rold);
  int err = EF_SUCCESS;
  EF_CHECK_GOTO(b && r && z && p && q && rold, EF_ERR_MEMORY, done, "host PCG: out of memory");
  memcpy(b, b_in, (size_t)n * sizeof *b);
  if (A->constant_null_space) EF_CALL_GOTO(pcg_remove_mean(d, n, b), done);
  memcpy(p, x, (size_t)n * sizeof *p); /* x's ghost rows are the caller's: exchanged in a copy */
  EF_CALL_GOTO(pcg_multiply(d, A, p, q), done);
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) r[i] = b[i] - q[i];
  double bb = 0.0, rr = 0.0, rz = 0.0;
  EF_CALL_GOTO(pcg_dot(d, n, b, b, &bb), done);
  EF_CALL_GOTO(pcg_dot(d, n, r, r, &rr), done);
  const double tol2 = s->rtol * s->rtol * bb;
  int k = 0;
  while (rr > tol2 && k < s->max_iterations) {
    EF_CALL_GOTO(precond(ctx, r, z), done);
    if (A->constant_null_space) EF_CALL_GOTO(pcg_remove_mean(d, n, z), done);
    /* r.z and, flexible, r_old.z: one reduction */
    double dz[2] = {pcg_dot_rows(n, r, z), k > 0 && s->flexible ? pcg_dot_rows(n, rold, z) : 0.0};
    EF_CALL_GOTO(ef_host_dist_sum(d, dz, 2), done);
    const double rz_new = dz[0];
    double beta = 0.0;
    if (k > 0) beta = (s->flexible ? rz_new - dz[1] : rz_new) / rz;
    rz = rz_new;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) p[i] = k > 0 ? z[i] + beta * p[i] : z[i];
    EF_CALL_GOTO(pcg_multiply(d, A, p, q), done);
    double pq = 0.0;
    EF_CALL_GOTO(pcg_dot(d, n, p, q, &pq), done);
    EF_CHECK_GOTO(pq > 0.0 && isfinite(pq), EF_ERR_SOLVER, done,
                  "host PCG broke down at iteration %d: p.Ap = %g (matrix or preconditioner not SPD)", k, pq);
    const double alpha = rz / pq;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) {
      rold[i] = r[i];
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    EF_CALL_GOTO(pcg_dot(d, n, r, r, &rr), done);
    ++k;
  }
  res->iterations = k;
  res->converged = rr <= tol2;
  res->relres = bb > 0.0 ? sqrt(rr / bb) : 0.0;
  memcpy(p, x, (size_t)n * sizeof *p);
  EF_CALL_GOTO(pcg_multiply(d, A, p, q), done);
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) r[i] = b_in[i] - q[i];
  double b2 = 0.0, r2 = 0.0;
  EF_CALL_GOTO(pcg_dot(d, n, b_in, b_in, &b2), done);
  EF_CALL_GOTO(pcg_dot(d, n, r, r, &r2), done);
  res->true_relres = b2 > 0.0 ? sqrt(r2 / b2) : 0.0;
  res->seconds = ef_wtime() - t0;
done:
  free(b);
  free(r);
  free(z);
  free(p);
  free(q);
  free(rold);
  return err;
}

/* ef_host_pcg_solve into a registry solver's result (host_pcg.h). */
int ef_host_pcg_solve_registry(const ef_csr *A, ef_host_precond_fn precond, void *ctx, const ef_host_pcg_settings *s,
                               const double *b, double *x, const char *who, ef_solve_result *res) {
  ef_host_pcg_result r;
  EF_CALL(ef_host_pcg_solve(A, precond, ctx, s, b, x, &r));
  res->iterations = r.iterations;
  res->converged = r.converged;
  res->residual = r.relres;
  if (s->dist) res->true_residual = r.true_relres;
  EF_CHECK(r.converged, EF_ERR_SOLVER, "%s: no convergence in %d iterations (relative residual %.3e > %.3e)", who,
           r.iterations, r.relres, s->rtol);
  return EF_SUCCESS;
}
