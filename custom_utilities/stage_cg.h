/* stage_cg.h -- the scalar side of the distributed stage CG (the implicit viscosity's projected Jacobi CG in
 * the Chronopoulos-Gear form, one reduction of {r.u, (A u).u, r.r} a iteration), shared by the host executor
 * (fractional_step_mpi.c) and the device one (opencl/opencl_fs_mpi.c), which differ only in where the vectors
 * live.  The caller's loop:
 *
 *   ef_stage_cg c;  ef_stage_cg_start(&c, s0, rtol);            s0 = {r.u, w.u, r.r, |P rhs|^2}, reduced
 *   while (ef_stage_cg_running(&c, max_it)) {
 *     EF_CALL(ef_stage_cg_alpha(&c));                             p = u + beta p, s = w + beta s,
 *     ... vectors with c.alpha, c.beta; w = A u; g reduced ...    x += alpha p, r -= alpha s, u = r / diag
 *     EF_CALL(ef_stage_cg_next(&c, g, &done)); if (done) break;
 *   }
 *   EF_CALL(ef_stage_cg_finish(&c, rtol, its, res)); */
#ifndef EF_STAGE_CG_H
#define EF_STAGE_CG_H

#include <math.h>

#include "edgeflow/ef_error.h"

typedef struct {
  double gamma, delta, alpha, beta, rnorm, bnorm, target;
  int it;
} ef_stage_cg;

/* From the start's reduced sums; |P rhs| = 0 stops on the residual's own norm (or 1). */
static inline void ef_stage_cg_start(ef_stage_cg *c, const double s0[4], double rtol) {
  c->gamma = s0[0];
  c->delta = s0[1];
  c->rnorm = sqrt(s0[2]);
  c->bnorm = sqrt(s0[3]);
  if (c->bnorm == 0.0) c->bnorm = c->rnorm > 0.0 ? c->rnorm : 1.0;
  c->target = rtol * c->bnorm;
  c->it = 0;
  c->alpha = c->beta = 0.0;
}

static inline int ef_stage_cg_running(const ef_stage_cg *c, int max_iterations) {
  return c->rnorm > c->target && c->it < max_iterations;
}

/* alpha = gamma / p.Ap, p.Ap from the recurrence; a breakdown is an error. */
static inline int ef_stage_cg_alpha(ef_stage_cg *c) {
  const double denom = c->it == 0 ? c->delta : c->delta - c->beta * c->gamma / c->alpha;
  EF_CHECK(denom > 0.0 && isfinite(denom), EF_ERR_SOLVER,
           "implicit viscous stage: CG broke down (p.Ap = %g at iteration %d)", denom, c->it);
  c->alpha = c->gamma / denom;
  return EF_SUCCESS;
}

/* The iteration's reduced g = {r.u, w.u, r.r}: *done when converged, else beta and the new sums. */
static inline int ef_stage_cg_next(ef_stage_cg *c, const double g[3], int *done) {
  ++c->it;
  EF_CHECK(isfinite(g[0]) && isfinite(g[1]) && isfinite(g[2]), EF_ERR_SOLVER,
           "implicit viscous stage: non-finite value in the CG at iteration %d", c->it);
  c->rnorm = sqrt(g[2]);
  *done = c->rnorm <= c->target;
  if (*done) return EF_SUCCESS;
  c->beta = g[0] / c->gamma;
  c->gamma = g[0];
  c->delta = g[1];
  return EF_SUCCESS;
}

/* Iterations and scaled residual out; not converged is an error. */
static inline int ef_stage_cg_finish(const ef_stage_cg *c, double rtol, int *its_out, double *res_out) {
  *its_out = c->it;
  *res_out = c->rnorm / c->bnorm;
  EF_CHECK(c->rnorm <= c->target, EF_ERR_SOLVER,
           "implicit viscous stage: CG did not converge in %d iterations (scaled residual %.3e > %.3e)", c->it,
           c->rnorm / c->bnorm, rtol);
  return EF_SUCCESS;
}

#endif
