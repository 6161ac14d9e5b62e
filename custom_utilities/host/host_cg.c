/* host_cg.c -- deterministic OpenMP CG on the Jacobi-scaled system. */
#include "host_cg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"

#include "ef_omp.h"
#include "host_pcg.h"
#include "host_vector.h"

struct ef_host_cg_s {
  int64_t n, n_blocks, block;
  double *r, *p, *q, *inv_diag;
  double *part_a, *part_b; /* per-block partial sums of the two alternating reductions */
  int last_iterations;
  double last_seconds;
};

/* Sum of the block partials in block order (every thread gets the same bits). */
static double sum_blocks(const double *part, int64_t nb) {
  double s = 0.0;
  for (int64_t b = 0; b < nb; ++b) s += part[b];
  return s;
}

/* Allocate the CG work vectors and block partials for n unknowns. */
int ef_host_cg_create(int64_t n, ef_host_cg **cg) {
  EF_CHECK(cg, EF_ERR_PARAMETER, "host CG: output handle is NULL");
  *cg = NULL;
  EF_CHECK(n > 0, EF_ERR_PARAMETER, "host CG: system size must be positive, got %lld", (long long)n);
  ef_host_cg *s = calloc(1, sizeof *s);
  EF_CHECK(s, EF_ERR_MEMORY, "host CG: out of memory");
  s->n = n;
  s->block = ef_reduction_block_rows(n);
  s->n_blocks = (n + s->block - 1) / s->block;
  s->r = malloc((size_t)n * sizeof *s->r);
  s->p = malloc((size_t)n * sizeof *s->p);
  s->q = malloc((size_t)n * sizeof *s->q);
  s->inv_diag = malloc((size_t)n * sizeof *s->inv_diag);
  s->part_a = malloc((size_t)s->n_blocks * sizeof *s->part_a);
  s->part_b = malloc((size_t)s->n_blocks * sizeof *s->part_b);
  if (!s->r || !s->p || !s->q || !s->inv_diag || !s->part_a || !s->part_b) {
    ef_host_cg_destroy(&s);
    return EF_ERROR(EF_ERR_MEMORY, "host CG: out of memory for %lld unknowns", (long long)n);
  }
  *cg = s;
  return EF_SUCCESS;
}

/* Free the CG work arrays; accepts NULL. */
void ef_host_cg_destroy(ef_host_cg **cg) {
  if (!cg || !*cg) return;
  ef_host_cg *s = *cg;
  free(s->r);
  free(s->p);
  free(s->q);
  free(s->inv_diag);
  free(s->part_a);
  free(s->part_b);
  free(s);
  *cg = NULL;
}

/* Iterations and seconds of the last solve. */
void ef_host_cg_last(const ef_host_cg *cg, int *iterations, double *seconds) {
  if (iterations) *iterations = cg ? cg->last_iterations : 0;
  if (seconds) *seconds = cg ? cg->last_seconds : 0.0;
}

/* y = A x, one row per loop iteration, each row summed in column order. */
void ef_csr_multiply(const ef_csr *A, const double *x, double *y) {
  const int64_t n = A->n;
  const int64_t *rp = A->row_ptr;
  const int32_t *col = A->col;
  const double *val = A->val;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int64_t k = rp[i]; k < rp[i + 1]; ++k) s += val[k] * x[col[k]];
    y[i] = s;
  }
}

/* Diagonal entry of row i (the stored position or a binary search). */
static double csr_diagonal(const ef_csr *A, int64_t i) {
  if (A->diag) return A->val[A->diag[i]];
  int64_t lo = A->row_ptr[i], hi = A->row_ptr[i + 1] - 1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (A->col[mid] < i)
      lo = mid + 1;
    else if (A->col[mid] > i)
      hi = mid - 1;
    else
      return A->val[mid];
  }
  return 0.0;
}

/* Jacobi-preconditioned CG = CG on D^-1/2 A D^-1/2 (see host_cg.h). */
int ef_host_cg_solve(void *ctx, const ef_csr *A, const double *b, double *x, double rtol, int max_it,
                     int *iterations, double *final_residual) {
  ef_host_cg *s = ctx;
  EF_CHECK(s && A && b && x, EF_ERR_PARAMETER, "host CG: NULL argument");
  EF_CHECK(A->n == s->n, EF_ERR_PARAMETER, "host CG: matrix has %lld rows, solver was created for %lld",
           (long long)A->n, (long long)s->n);
  EF_CHECK(rtol > 0.0 && max_it > 0, EF_ERR_PARAMETER, "host CG: need rtol > 0 and max_it > 0 (got %g, %d)",
           rtol, max_it);
  const double t0 = ef_wtime();
  const int64_t n = s->n, nb = s->n_blocks, B = s->block;
  const int64_t *rp = A->row_ptr;
  const int32_t *col = A->col;
  const double *val = A->val;
  double *r = s->r, *p = s->p, *q = s->q, *dinv = s->inv_diag, *pa = s->part_a, *pb = s->part_b;
  int64_t bad_diag = INT64_MAX;

  /* Shared results, written identically by every thread (no race on differing values
   * matters: all threads compute the same bits from the same partial arrays). */
  int status = 0; /* 0 converged, 1 breakdown (p^T A p <= 0), 2 max_it, 3 non-finite */
  int its = 0;
  double res = 0.0, breakdown_pap = 0.0;
  double bmean = 0.0;

  if (A->constant_null_space) {
    /* Work in 1-perp: remove the mean of b (sum in fixed blocks). */
    EF_OMP(omp parallel for schedule(static))
    for (int64_t blk = 0; blk < nb; ++blk) {
      const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
      double sb = 0.0;
      for (int64_t i = blk * B; i < i1; ++i) sb += b[i];
      pa[blk] = sb;
    }
    bmean = sum_blocks(pa, nb) / (double)n;
  }

  EF_OMP(omp parallel reduction(min : bad_diag))
  {
    /* r = b - A x, z = D^-1 r, p = z; partials of r.z and b.D^-1 b. */
    EF_OMP(omp for schedule(static))
    for (int64_t blk = 0; blk < nb; ++blk) {
      const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
      double srz = 0.0, sbb = 0.0;
      for (int64_t i = blk * B; i < i1; ++i) {
        double ax = 0.0, d = 0.0;
        for (int64_t k = rp[i]; k < rp[i + 1]; ++k) {
          ax += val[k] * x[col[k]];
          if (col[k] == i) d = val[k];
        }
        if (!(d > 0.0)) {
          if (i < bad_diag) bad_diag = i;
          d = 1.0;
        }
        const double di = 1.0 / d, bi = b[i] - bmean, ri = bi - ax;
        dinv[i] = di;
        r[i] = ri;
        p[i] = di * ri;
        srz += ri * di * ri;
        sbb += bi * di * bi;
      }
      pa[blk] = srz;
      pb[blk] = sbb;
    }
    double rz = sum_blocks(pa, nb);
    const double bnorm = sqrt(sum_blocks(pb, nb));
    /* The next loop overwrites pa: every thread must have read it first. */
    EF_OMP(omp barrier)
    int it = 0;
    int st = 0;
    double rnorm = bnorm > 0.0 ? sqrt(rz) / bnorm : 0.0;
    double pap = 0.0;
    if (bnorm > 0.0 && rnorm >= rtol) {
      for (;;) {
        /* q = A p and partials of p.q. */
        EF_OMP(omp for schedule(static))
        for (int64_t blk = 0; blk < nb; ++blk) {
          const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
          double sp = 0.0;
          for (int64_t i = blk * B; i < i1; ++i) {
            double aq = 0.0;
            for (int64_t k = rp[i]; k < rp[i + 1]; ++k) aq += val[k] * p[col[k]];
            q[i] = aq;
            sp += p[i] * aq;
          }
          pa[blk] = sp;
        }
        pap = sum_blocks(pa, nb);
        if (!(pap > 0.0)) {
          st = isfinite(pap) ? 1 : 3;
          break;
        }
        const double alpha = rz / pap;
        /* x += alpha p, r -= alpha q, partials of r.D^-1 r. */
        EF_OMP(omp for schedule(static))
        for (int64_t blk = 0; blk < nb; ++blk) {
          const int64_t i1 = (blk + 1) * B < n ? (blk + 1) * B : n;
          double srz = 0.0;
          for (int64_t i = blk * B; i < i1; ++i) {
            x[i] += alpha * p[i];
            const double ri = r[i] - alpha * q[i];
            r[i] = ri;
            srz += ri * dinv[i] * ri;
          }
          pb[blk] = srz;
        }
        const double rz_new = sum_blocks(pb, nb);
        ++it;
        if (!isfinite(rz_new)) {
          st = 3;
          break;
        }
        rnorm = sqrt(rz_new) / bnorm;
        if (rnorm < rtol) break;
        if (it >= max_it) {
          st = 2;
          break;
        }
        const double beta = rz_new / rz;
        rz = rz_new;
        EF_OMP(omp for schedule(static))
        for (int64_t i = 0; i < n; ++i) p[i] = dinv[i] * r[i] + beta * p[i];
      }
    } else if (bnorm == 0.0) {
      /* b = 0: the solution is 0 (in 1-perp for a singular matrix). */
      EF_OMP(omp for schedule(static))
      for (int64_t i = 0; i < n; ++i) x[i] = 0.0;
    }
    EF_OMP(omp master)
    {
      status = st;
      its = it;
      res = rnorm;
      breakdown_pap = pap;
    }
  }
  s->last_iterations = its;
  s->last_seconds = ef_wtime() - t0;
  if (iterations) *iterations = its;
  if (final_residual) *final_residual = res;
  if (bad_diag != INT64_MAX)
    return EF_ERROR(EF_ERR_SOLVER, "host CG: diagonal entry of row %lld is not positive (%g)",
                    (long long)bad_diag, csr_diagonal(A, bad_diag));
  if (status == 1)
    return EF_ERROR(EF_ERR_SOLVER,
                    "host CG: p^T A p = %g <= 0 at iteration %d: the matrix is not positive definite "
                    "(the pressure matrix can lose definiteness on meshes with obtuse elements)",
                    breakdown_pap, its + 1);
  if (status == 3)
    return EF_ERROR(EF_ERR_SOLVER, "host CG: non-finite value at iteration %d (NaN or Inf in the system)",
                    its + 1);
  if (status == 2)
    return EF_ERROR(EF_ERR_SOLVER, "host CG: no convergence in %d iterations (relative residual %.3e > %.3e)",
                    max_it, res, rtol);
  return EF_SUCCESS;
}

ef_csr ef_csr_from_matrix(const ef_matrix *A) {
  ef_csr c = {A->layout.n_owned, A->nnz, A->row_ptr, A->row_ptr32, A->col, A->values, A->diag, A->constant_null_space};
  return c;
}

/* ---------------------------------------------------------------------------
 * Linear solver "cg" (host).  With preconditioner "jacobi" it is the CG above (the scaled
 * residual ||D^-1/2 r|| / ||D^-1/2 b|| is its stopping test); with any other registered host
 * preconditioner M it is preconditioned CG stopping on ||r||_2 / ||b||_2 (M must be symmetric
 * positive definite; the constant is projected out of b and of every M^-1 r when A has the
 * constant null space). */

typedef struct {
  ef_host_cg *cg;
  ef_preconditioner *pc; /* NULL: the built-in Jacobi path */
  ef_linear_solver_common common;
  ef_csr A;
  double *z, *bp;        /* preconditioned path: M^-1 r, b in 1-perp */
  ef_host_reduction red;
  int64_t n;
  ef_host_dist *dist; /* several ranks: the matrix's rows; the solve is host_pcg.c's (flexible off) */
} ef_host_cg_object;

#define CG_DIST_TAG 691 /* message tag of the distributed solve's halo exchanges */

static void ef_host_cg_object_destroy(void **p) {
  if (!p || !*p) return;
  ef_host_cg_object *o = *p;
  ef_host_cg_destroy(&o->cg);
  free(o->z);
  free(o->bp);
  ef_host_reduction_free(&o->red);
  ef_host_dist_destroy(&o->dist);
  free(o);
  *p = NULL;
}

static int ef_host_cg_object_create(ef_parameters settings, const ef_linear_solver_common *common, const ef_matrix *A,
                                    ef_preconditioner *pc, void **out) {
  (void)settings;
  *out = NULL;
  ef_host_cg_object *o = calloc(1, sizeof *o);
  EF_CHECK(o, EF_ERR_MEMORY, "out of memory");
  int err = EF_SUCCESS;
  o->common = *common;
  o->n = A->layout.n_owned;
  o->A = ef_csr_from_matrix(A);
  EF_CALL_GOTO(ef_host_cg_create(o->n, &o->cg), fail);
  if (ef_comm_size(A->layout.comm) > 1) { /* several ranks: a preconditioner that runs across them */
    EF_CHECK_GOTO(pc && ef_preconditioner_get_ops(pc) != &ef_host_jacobi_ops, EF_ERR_UNSUPPORTED, fail,
                  "host CG across ranks: preconditioner_type \"jacobi\" is the distributed fractional step's "
                  "built-in CG; the registry \"cg\" runs across ranks with \"amg\"");
    EF_CALL_GOTO(ef_host_dist_from_matrix(A, CG_DIST_TAG, &o->dist), fail);
  }
  if (pc && ef_preconditioner_get_ops(pc) != &ef_host_jacobi_ops) {
    o->pc = pc;
    o->z = malloc((size_t)(o->n + ef_host_dist_ghost_rows(o->dist) > 0 ? o->n + ef_host_dist_ghost_rows(o->dist) : 1) *
                  sizeof *o->z);
    o->bp = malloc((size_t)o->n * sizeof *o->bp);
    EF_CHECK_GOTO(o->z && o->bp && ef_host_reduction_init(&o->red, o->n), EF_ERR_MEMORY, fail,
                  "host CG: out of memory for %lld unknowns", (long long)o->n);
  }
  *out = o;
  return EF_SUCCESS;
fail:
  ef_host_cg_object_destroy((void **)&o);
  return err;
}

static int ef_host_cg_object_setup(void *data, const ef_matrix *A) {
  ef_host_cg_object *o = data;
  o->A = ef_csr_from_matrix(A);
  return EF_SUCCESS;
}

/* Preconditioned CG with z = M^-1 r from the registered preconditioner. */
static int ef_host_pcg(ef_host_cg_object *o, const double *b_in, double *x, ef_solve_result *res) {
  const int64_t n = o->n;
  ef_host_cg *w = o->cg;
  double *r = w->r, *p = w->p, *q = w->q, *z = o->z;
  const ef_csr *A = &o->A;
  ef_vector rv = {EF_MEMORY_HOST, {n, 0, NULL}, r, NULL}, zv = {EF_MEMORY_HOST, {n, 0, NULL}, z, NULL};
  /* r = b - A x, with b's mean removed for a singular A. */
  const double *b = b_in;
  if (A->constant_null_space) {
    memcpy(o->bp, b_in, (size_t)n * sizeof *b_in);
    ef_host_remove_mean(&o->red, o->bp);
    b = o->bp;
  }
  ef_csr_multiply(A, x, r);
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) r[i] = b[i] - r[i];
  const double bnorm = sqrt(ef_host_dot(&o->red, b, b));
  double rnorm = bnorm > 0.0 ? sqrt(ef_host_dot(&o->red, r, r)) / bnorm : 0.0;
  int it = 0;
  if (bnorm == 0.0) {
    for (int64_t i = 0; i < n; ++i) x[i] = 0.0;
  }
  double rz = 0.0;
  while (bnorm > 0.0 && rnorm >= o->common.tolerance && it < o->common.max_iteration) {
    EF_CALL(ef_preconditioner_apply(o->pc, &rv, &zv));
    if (A->constant_null_space) ef_host_remove_mean(&o->red, z);
    const double rz_new = ef_host_dot(&o->red, r, z);
    EF_CHECK(isfinite(rz_new) && rz_new > 0.0, EF_ERR_SOLVER,
             "host CG: r^T M^-1 r = %g at iteration %d: the preconditioner is not positive definite", rz_new, it + 1);
    const double beta = it ? rz_new / rz : 0.0;
    rz = rz_new;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
    ef_csr_multiply(A, p, q);
    const double pap = ef_host_dot(&o->red, p, q);
    EF_CHECK(isfinite(pap) && pap > 0.0, EF_ERR_SOLVER,
             "host CG: p^T A p = %g <= 0 at iteration %d: the matrix is not positive definite", pap, it + 1);
    const double alpha = rz / pap;
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    ++it;
    rnorm = sqrt(ef_host_dot(&o->red, r, r)) / bnorm;
  }
  res->iterations = it;
  res->residual = rnorm;
  res->converged = rnorm < o->common.tolerance;
  EF_CHECK(res->converged, EF_ERR_SOLVER, "host CG: no convergence in %d iterations (relative residual %.3e > %.3e)",
           o->common.max_iteration, rnorm, o->common.tolerance);
  return EF_SUCCESS;
}

/* z = M^-1 r for host_pcg.c (several ranks). */
static int ef_host_cg_precond(void *ctx, const double *r, double *z) {
  ef_host_cg_object *o = ctx;
  ef_vector rv = {EF_MEMORY_HOST, {o->n, 0, NULL}, (double *)r, NULL}, zv = {EF_MEMORY_HOST, {o->n, 0, NULL}, z, NULL};
  return ef_preconditioner_apply(o->pc, &rv, &zv);
}

static int ef_host_cg_object_solve(void *data, const ef_vector *b, ef_vector *x, ef_solve_result *res) {
  ef_host_cg_object *o = data;
  if (o->dist) { /* several ranks: host_pcg.c's CG (its stopping test ||r|| / ||b||, as ef_host_pcg's) */
    ef_host_pcg_settings ps = {o->common.tolerance, o->common.max_iteration, 0, o->dist};
    return ef_host_pcg_solve_registry(&o->A, ef_host_cg_precond, o, &ps, b->host, x->host, "host CG", res);
  }
  if (o->pc) return ef_host_pcg(o, b->host, x->host, res);
  int its = 0;
  double r = 0.0;
  int err = ef_host_cg_solve(o->cg, &o->A, b->host, x->host, o->common.tolerance, o->common.max_iteration, &its, &r);
  res->iterations = its;
  res->residual = r;
  res->converged = !err;
  return err;
}

const ef_linear_solver_ops ef_host_cg_ops = {
    .name = "cg",
    .description = "conjugate gradient (OpenMP, deterministic); with \"jacobi\": CG on the diagonally scaled system",
    .memory = EF_MEMORY_HOST,
    .defaults = "{}",
    .uses_preconditioner = 1,
    .create = ef_host_cg_object_create,
    .setup = ef_host_cg_object_setup,
    .solve = ef_host_cg_object_solve,
    .destroy = ef_host_cg_object_destroy,
    .distributed = 1, /* several ranks: with a preconditioner other than "jacobi" ("amg"), host_pcg.c's CG */
};
