/* host_pcg.c -- preconditioned / flexible CG on the host (host_pcg.h). */
#include "host_pcg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"

#include "ef_omp.h"

/* Sum of x_i y_i (y NULL: of x_i) in blocks of rows added in block order. */
static double pcg_dot(int64_t n, const double *x, const double *y) {
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

/* v -= mean(v). */
static void pcg_remove_mean(int64_t n, double *v) {
  const double m = pcg_dot(n, v, NULL) / (double)n;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) v[i] -= m;
}

/* PCG / FCG (host_pcg.h). */
int ef_host_pcg_solve(const ef_csr *A, ef_host_precond_fn precond, void *ctx, const ef_host_pcg_settings *s,
                      const double *b_in, double *x, ef_host_pcg_result *res) {
  EF_CHECK(A && precond && s && b_in && x, EF_ERR_PARAMETER, "ef_host_pcg_solve: NULL argument");
  ef_host_pcg_result local;
  if (!res) res = &local;
  memset(res, 0, sizeof *res);
  const int64_t n = A->n;
  double t0 = ef_wtime();
  double *b = malloc((size_t)n * sizeof *b), *r = malloc((size_t)n * sizeof *r);
  double *z = malloc((size_t)n * sizeof *z), *p = malloc((size_t)n * sizeof *p);
  double *q = malloc((size_t)n * sizeof *q), *rold = malloc((size_t)n * sizeof *rold);
  int err = EF_SUCCESS;
  EF_CHECK_GOTO(b && r && z && p && q && rold, EF_ERR_MEMORY, done, "host PCG: out of memory");
  memcpy(b, b_in, (size_t)n * sizeof *b);
  if (A->constant_null_space) pcg_remove_mean(n, b);
  ef_csr_multiply(A, x, q);
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) r[i] = b[i] - q[i];
  const double bb = pcg_dot(n, b, b);
  double rr = pcg_dot(n, r, r), rz = 0.0;
  const double tol2 = s->rtol * s->rtol * bb;
  int k = 0;
  while (rr > tol2 && k < s->max_iterations) {
    EF_CALL_GOTO(precond(ctx, r, z), done);
    if (A->constant_null_space) pcg_remove_mean(n, z);
    const double rz_new = pcg_dot(n, r, z);
    double beta = 0.0;
    if (k > 0) beta = (s->flexible ? rz_new - pcg_dot(n, rold, z) : rz_new) / rz;
    rz = rz_new;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) p[i] = k > 0 ? z[i] + beta * p[i] : z[i];
    ef_csr_multiply(A, p, q);
    const double pq = pcg_dot(n, p, q);
    EF_CHECK_GOTO(pq > 0.0 && isfinite(pq), EF_ERR_SOLVER, done,
                  "host PCG broke down at iteration %d: p.Ap = %g (matrix or preconditioner not SPD)", k, pq);
    const double alpha = rz / pq;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) {
      rold[i] = r[i];
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    rr = pcg_dot(n, r, r);
    ++k;
  }
  res->iterations = k;
  res->converged = rr <= tol2;
  res->relres = bb > 0.0 ? sqrt(rr / bb) : 0.0;
  ef_csr_multiply(A, x, q);
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) r[i] = b_in[i] - q[i];
  const double b2 = pcg_dot(n, b_in, b_in);
  res->true_relres = b2 > 0.0 ? sqrt(pcg_dot(n, r, r) / b2) : 0.0;
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
