/* host_amg.c -- the OpenMP refresh and cycle of the aggregation multigrid (amg.h); the per-row
 * arithmetic is custom_kernels/amg_rows.h, shared with the OpenCL kernels (amg.cl). */
#include "amg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"

#include "amg_rows.h"
#include "ef_omp.h"
#include "host_dist.h"

/* Loops over fewer rows than this run on the calling thread (a work-sharing region costs a fork
 * and a barrier, microseconds: more than a small level's loop; the K-cycle visits the small levels
 * many times per application; with OMP_WAIT_POLICY=passive, as the tests run, every region is a futex
 * wake-up).  Every row and every reduction block is computed the same way either way, so the result
 * does not depend on it.  Measured on cavity3d level 1, 2 cores, FCG + AMG (24321 rows, 4 levels,
 * the coarsest of 29 rows): pressure solve 27.0 -> 19.4 ms a step under the passive policy, the
 * same within noise under the default one (benchmarks/results/amg_openmp_VM2core_20261127).
 * Beside two other busy processes one pair of runs gave 8.0 -> 1.1 s a step, but such
 * oversubscribed runs vary several-fold from run to run (the same Jacobi-CG: 0.38 and 2.7 s). */
#ifndef EF_AMG_HOST_PARALLEL_ROWS
#define EF_AMG_HOST_PARALLEL_ROWS 4096
#endif
#define AMG_PARALLEL(rows) ((rows) >= EF_AMG_HOST_PARALLEL_ROWS)

/* Row offsets of level L (int64 on the fine level, int32 below). */
static inline int64_t amg_rp(const ef_amg_level *L, int64_t i) {
  return L->row_ptr64 ? L->row_ptr64[i] : (int64_t)L->row_ptr[i];
}

/* Several ranks: x's ghost rows on level L from their owners (nothing on one process); a
 * failure is kept in h->err (the cycle goes on; ef_amg_apply_host returns it). */
static void amg_halo(ef_amg *h, const ef_amg_level *L, double *x) {
  const int err = ef_host_dist_exchange(L->halo, x);
  if (err && !h->err) h->err = err;
}

/* x.y summed per block of rows, blocks added in order (the same bits for any thread count). */
static double amg_dot_rows(int64_t n, const double *x, const double *y) {
  const int64_t bs = ef_reduction_block_rows(n), nb = (n + bs - 1) / bs;
  double part[1024 + 1], s = 0.0;
  EF_OMP(omp parallel for schedule(static) if (AMG_PARALLEL(n)))
  for (int64_t b = 0; b < nb; ++b) {
    double a = 0.0;
    const int64_t e = (b + 1) * bs < n ? (b + 1) * bs : n;
    for (int64_t i = b * bs; i < e; ++i) a += x[i] * y[i];
    part[b] = a;
  }
  for (int64_t b = 0; b < nb; ++b) s += part[b];
  return s;
}

/* d[k] = x_k.y_k over level L's owned rows for k < m, summed over the ranks in one reduction. */
static void amg_dots(ef_amg *h, const ef_amg_level *L, int m, const double *const *x, const double *const *y,
                     double *d) {
  for (int k = 0; k < m; ++k) d[k] = amg_dot_rows(L->n, x[k], y[k]);
  const int err = ef_host_dist_sum(L->halo, d, m);
  if (err && !h->err) h->err = err;
}

/* y = A x on level L (x's ghost rows exchanged first). */
static void amg_spmv(ef_amg *h, const ef_amg_level *L, double *x, double *y) {
  amg_halo(h, L, x);
  EF_OMP(omp parallel for schedule(static) if (AMG_PARALLEL(L->n)))
  for (int64_t i = 0; i < L->n; ++i) y[i] = -ef_amg_row_residual(amg_rp(L, i), amg_rp(L, i + 1), L->col, L->val, x, 0.0);
}

/* F->cpos: for each entry of a member row of F, its place in C's values (the binary search the
 * refresh would otherwise repeat every time). */
static int amg_refresh_positions(ef_amg_level *F, const ef_amg_level *C) {
  F->cpos = malloc((size_t)(F->nnz > 0 ? F->nnz : 1) * sizeof *F->cpos);
  EF_CHECK(F->cpos, EF_ERR_MEMORY, "AMG: out of memory for the refresh map");
  int32_t *cpos = F->cpos;
  EF_OMP(omp parallel for schedule(static) if (AMG_PARALLEL(F->n)))
  for (int64_t I = 0; I < C->n; ++I) {
    const int64_t cb = C->row_ptr[I], ce = C->row_ptr[I + 1];
    for (int32_t m = F->mem_ptr[I]; m < F->mem_ptr[I + 1]; ++m) {
      const int64_t i = F->mem[m];
      for (int64_t j = amg_rp(F, i); j < amg_rp(F, i + 1); ++j) {
        const int32_t J = F->agg[F->col[j]];
        cpos[j] = J >= 0 ? (int32_t)ef_amg_find(cb, ce, C->col, J) : -1;
      }
    }
  }
  return EF_SUCCESS;
}

/* Coarse values of level l + 1 from level l's (segmented sums over the members, in member and
 * entry order). */
static int amg_refresh_level(ef_amg_level *F, ef_amg_level *C) {
  if (!F->cpos) EF_CALL(amg_refresh_positions(F, C));
  double *cv = C->own_val;
  const int32_t *cpos = F->cpos;
  const double *fv = F->val;
  EF_OMP(omp parallel for schedule(static) if (AMG_PARALLEL(F->n)))
  for (int64_t I = 0; I < C->n; ++I) {
    const int64_t cb = C->row_ptr[I], ce = C->row_ptr[I + 1];
    for (int64_t k = cb; k < ce; ++k) cv[k] = 0.0;
    for (int32_t m = F->mem_ptr[I]; m < F->mem_ptr[I + 1]; ++m) {
      const int64_t i = F->mem[m];
      for (int64_t j = amg_rp(F, i); j < amg_rp(F, i + 1); ++j)
        if (cpos[j] >= 0) cv[cpos[j]] += fv[j];
    }
  }
  return EF_SUCCESS;
}

/* Coarse values, l1 diagonals and the coarsest inverse from the fine values. */
int ef_amg_refresh_host(ef_amg *h, const double *fine_val) { return ef_amg_refresh_host_part(h, fine_val, 1); }

int ef_amg_refresh_host_part(ef_amg *h, const double *fine_val, int coarse_values) {
  EF_CHECK(h, EF_ERR_PARAMETER, "ef_amg_refresh_host: no hierarchy");
  double t0 = ef_wtime();
  if (fine_val) h->lev[0].val = fine_val;
  for (int l = 0; coarse_values && l + 1 < h->n_levels; ++l) EF_CALL(amg_refresh_level(&h->lev[l], &h->lev[l + 1]));
  for (int l = 0; l < h->n_levels; ++l) {
    ef_amg_level *L = &h->lev[l];
    EF_OMP(omp parallel for schedule(static) if (AMG_PARALLEL(L->n)))
    for (int64_t i = 0; i < L->n; ++i) L->dinv[i] = ef_amg_row_l1_inverse(amg_rp(L, i), amg_rp(L, i + 1), L->val);
  }
  const ef_amg_level *Lc = &h->lev[h->n_levels - 1];
  if (h->distributed) { /* several ranks: the coarsest values gathered (amg.c), the same inverse on every rank */
    EF_CALL(ef_amg_coarsest_ranks_refresh(h));
    h->refresh_seconds = ef_wtime() - t0;
    return EF_SUCCESS;
  } else if (h->n_levels == 1) { /* a one-level "hierarchy": int64 offsets; copy them to int32 */
    int32_t *rp = malloc((size_t)(Lc->n + 1) * sizeof *rp);
    EF_CHECK(rp, EF_ERR_MEMORY, "AMG: out of memory");
    for (int64_t i = 0; i <= Lc->n; ++i) rp[i] = (int32_t)Lc->row_ptr64[i];
    ef_amg_dense_fill(h->nc, rp, Lc->col, Lc->val, h->constant_null_space, h->coarse_inv);
    free(rp);
  } else {
    ef_amg_dense_fill(h->nc, Lc->row_ptr, Lc->col, Lc->val, h->constant_null_space, h->coarse_inv);
  }
  EF_CALL(ef_amg_dense_invert(h->nc, h->coarse_inv));
  h->refresh_seconds = ef_wtime() - t0;
  return EF_SUCCESS;
}

/* Several ranks: the coarsest level's values (its owned rows' Lc->val) gathered on every rank by one
 * reduction of a zero-padded array, then the same dense inverse everywhere (amg.h). */
int ef_amg_coarsest_ranks_refresh(ef_amg *h) {
  EF_CHECK(h && h->distributed, EF_ERR_PARAMETER, "ef_amg_coarsest_ranks_refresh: not a hierarchy of several ranks");
  const ef_amg_level *Lc = &h->lev[h->n_levels - 1];
  const int64_t first = ef_host_dist_first_row(Lc->halo), nnz = h->g_rp[h->nc];
  const int64_t b = h->g_rp[first], e = h->g_rp[first + Lc->n];
  for (int64_t k = 0; k < nnz; ++k) h->g_val[k] = 0.0;
  for (int64_t k = b; k < e; ++k) h->g_val[k] = Lc->val[k - b];
  EF_CALL(ef_host_dist_sum(Lc->halo, h->g_val, (int)nnz));
  ef_amg_dense_fill(h->nc, h->g_rp, h->g_col, h->g_val, h->constant_null_space, h->coarse_inv);
  return ef_amg_dense_invert(h->nc, h->coarse_inv);
}

/* Several ranks: the gathered coarsest solve, every rank its owned and ghost rows of W r (amg.h). */
int ef_amg_coarsest_ranks_solve(ef_amg *h, const double *rc, double *xc) {
  const ef_amg_level *C = &h->lev[h->n_levels - 1];
  const int64_t n = C->n, first = ef_host_dist_first_row(C->halo), ng = h->nc;
  const double *W = h->coarse_inv;
  for (int64_t j = 0; j < ng; ++j) h->g_r[j] = 0.0;
  for (int64_t i = 0; i < n; ++i) h->g_r[first + i] = rc[i];
  const int err = ef_host_dist_sum(C->halo, h->g_r, (int)ng);
  EF_OMP(omp parallel for schedule(static) if (AMG_PARALLEL(n * ng / 16)))
  for (int64_t i = 0; i < n + C->n_ghost; ++i) {
    const int64_t gi = i < n ? first + i : C->ghost_global[i - n];
    double s = 0.0;
    for (int64_t j = 0; j < ng; ++j) s += W[j * ng + gi] * h->g_r[j];
    xc[i] = s;
  }
  return err;
}

/* x = (sweep of level L) from x_in: x_out = x_in + omega D^-1 (r - A x_in). */
static void amg_sweep(ef_amg *h, const ef_amg_level *L, const double *r, double *xin, double *xout) {
  const double omega = h->s.omega;
  amg_halo(h, L, xin);
  EF_OMP(omp parallel for schedule(static) if (AMG_PARALLEL(L->n)))
  for (int64_t i = 0; i < L->n; ++i)
    xout[i] = xin[i] + omega * L->dinv[i] *
                           ef_amg_row_residual(amg_rp(L, i), amg_rp(L, i + 1), L->col, L->val, xin, r[i]);
}

static void amg_cycle(ef_amg *h, int l, const double *r, double *x);

/* x_c = the coarse correction for right-hand side rc on level c (= l + 1): the dense inverse,
 * one cycle, or two flexible-CG steps preconditioned by the cycle (K-cycle). */
static void amg_correction(ef_amg *h, int c, const double *rc, double *xc) {
  ef_amg_level *C = &h->lev[c];
  const int64_t n = C->n;
  if (c == h->n_levels - 1 && h->distributed) { /* gathered: every rank its owned and ghost rows of W r */
    const int err = ef_amg_coarsest_ranks_solve(h, rc, xc);
    if (err && !h->err) h->err = err;
    return;
  }
  if (c == h->n_levels - 1) {
    const double *W = h->coarse_inv;
    EF_OMP(omp parallel for schedule(static) if (AMG_PARALLEL(n * n / 16)))
    for (int64_t i = 0; i < n; ++i) {
      double s = 0.0;
      for (int64_t j = 0; j < n; ++j) s += W[j * n + i] * rc[j];
      xc[i] = s;
    }
    return;
  }
  if (h->s.cycle != EF_AMG_CYCLE_K || c > h->s.kcycle_levels) {
    amg_cycle(h, c, rc, xc);
    return;
  }
  amg_cycle(h, c, rc, C->v1);
  amg_spmv(h, C, C->v1, C->w1);
  double d1[2];
  amg_dots(h, C, 2, (const double *const[]){C->v1, C->v1}, (const double *const[]){C->w1, rc}, d1);
  const double rho1 = d1[0], a1 = rho1 > 0.0 ? d1[1] / rho1 : 0.0;
  EF_OMP(omp parallel for schedule(static) if (AMG_PARALLEL(n)))
  for (int64_t i = 0; i < n; ++i) C->q[i] = rc[i] - a1 * C->w1[i];
  amg_cycle(h, c, C->q, C->v2);
  amg_spmv(h, C, C->v2, C->w2);
  double d2[3];
  amg_dots(h, C, 3, (const double *const[]){C->v2, C->v2, C->v2}, (const double *const[]){C->w1, C->w2, C->q}, d2);
  const double gam = d2[0], vw = d2[1], vq = d2[2];
  const double beta = rho1 > 0.0 ? vw - gam * gam / rho1 : 0.0;
  const double a2 = beta > 0.0 ? vq / beta : 0.0, c1 = rho1 > 0.0 ? a1 - gam * a2 / rho1 : 0.0;
  EF_OMP(omp parallel for schedule(static) if (AMG_PARALLEL(n)))
  for (int64_t i = 0; i < n; ++i) xc[i] = c1 * C->v1[i] + a2 * C->v2[i];
}

/* x = cycle of level l for right-hand side r (amg.h); level l's t is the scratch vector. */
static void amg_cycle(ef_amg *h, int l, const double *r, double *x) {
  ef_amg_level *L = &h->lev[l], *C = &h->lev[l + 1];
  const int nu = h->s.sweeps;
  const double omega = h->s.omega, alpha = h->s.alpha;
  /* Writes alternate between x and t so that the last of the 2 nu writes lands in x. */
  double *buf[2] = {x, L->t};
  double *cur = buf[(2 * nu - 1) & 1];
  EF_OMP(omp parallel for schedule(static) if (AMG_PARALLEL(L->n)))
  for (int64_t i = 0; i < L->n; ++i) cur[i] = omega * L->dinv[i] * r[i];
  for (int k = 2; k <= nu; ++k) {
    double *next = buf[(2 * nu - k) & 1];
    amg_sweep(h, L, r, cur, next);
    cur = next;
  }
  double *xs = cur;
  amg_halo(h, L, xs); /* the residual's and the post-smoothing's ghost columns */
  EF_OMP(omp parallel for schedule(static) if (AMG_PARALLEL(L->n)))
  for (int64_t I = 0; I < C->n; ++I) {
    double s = 0.0;
    for (int32_t m = L->mem_ptr[I]; m < L->mem_ptr[I + 1]; ++m) {
      const int64_t i = L->mem[m];
      s += ef_amg_row_residual(amg_rp(L, i), amg_rp(L, i + 1), L->col, L->val, xs, r[i]);
    }
    C->r[I] = s;
  }
  amg_correction(h, l + 1, C->r, C->x);
  if (l + 2 < h->n_levels) amg_halo(h, C, C->x); /* the gathered coarsest solve fills its ghosts itself */
  double *next = buf[(nu - 1) & 1];
  EF_OMP(omp parallel for schedule(static) if (AMG_PARALLEL(L->n)))
  for (int64_t i = 0; i < L->n; ++i)
    next[i] = ef_amg_row_post(amg_rp(L, i), amg_rp(L, i + 1), L->col, L->val, xs, L->agg, C->x, alpha, omega,
                              L->dinv[i], r[i], (int32_t)i);
  cur = next;
  for (int k = nu + 2; k <= 2 * nu; ++k) {
    next = buf[(2 * nu - k) & 1];
    amg_sweep(h, L, r, cur, next);
    cur = next;
  }
}

/* z = M^-1 r (amg.h). */
int ef_amg_apply_host(ef_amg *h, const double *r, double *z) {
  EF_CHECK(h && r && z && r != z, EF_ERR_PARAMETER, "ef_amg_apply_host: bad arguments");
  h->err = EF_SUCCESS;
  if (h->n_levels == 1) amg_correction(h, 0, r, z);
  else amg_cycle(h, 0, r, z);
  return h->err;
}
