/* bicgstab.cl -- the device BiCGStab (van der Vorst 1992; Saad, Iterative Methods for Sparse
 * Linear Systems, 2nd ed., Algorithm 7.7) with the preconditioner applied on the right,
 * A M^-1 (M x) = b, so that the residual the stop test reads is the true system's.
 * Host side: custom_utilities/opencl/opencl_bicgstab.c.
 *
 * Iteration k, launched by the host; [z = M^-1 y] are the preconditioner's own launches:
 *   bcg_direction  beta = (rho_k / rho_{k-1}) (alpha / omega), p = r + beta (p - omega v)  (k = 0: p = r)
 *   [ph = M^-1 p]
 *   bcg_spmv_dot   v = A ph, partials of r0.v            -> bcg_reduce: alpha = rho_k / r0.v
 *   bcg_s          s = r - alpha v, partials of s.s       -> bcg_reduce: half step done when s.s <= tol2
 *   [sh = M^-1 s]
 *   bcg_spmv_dot2  t = A sh, partials of t.s and t.t      -> bcg_reduce: omega = t.s / t.t
 *   bcg_update     x += alpha ph + omega sh, r = s - omega t (half step: x += alpha ph, r = s),
 *                  partials of r0.r and r.r               -> bcg_reduce: rho_{k+1}, stop test
 * tol2 = rtol^2 b.b: the stop test is ||r|| / ||b|| <= rtol on the recurrence residual.
 *
 * Scalars live in a small state buffer written only by bcg_reduce (one work-group, its first
 * item), so no launch reads a slot that the same launch writes.  Reductions are deterministic
 * as in cg.cl: a fixed grid strides over the rows, each group writes one partial, and the
 * one-group reduction re-adds them in a fixed order.  Once the state records a stop (or a
 * breakdown), every later launch leaves vectors and state alone, so the host may read the
 * state every few iterations and still get the iterate at which a check after every one would
 * have stopped.  Kernels never return before a barrier (a stopped launch runs no rows).
 *
 * Tunables (-D options, each with a default so that the file builds on its own):
 *   VEC_WGS_BITS  work-group size 2^VEC_WGS_BITS
 *   EF_ROW_PTR_64 row_ptr is int64 (else int32) */
#include "ef_reduce.h"

#ifndef VEC_WGS_BITS
#define VEC_WGS_BITS 8
#endif
#define VWGS (1 << VEC_WGS_BITS)


/* State slots (doubles); mirrored in opencl_bicgstab.c. */
#define BS_BB 0       /* b.b */
#define BS_TOL2 1     /* rtol^2 b.b */
#define BS_RHO 2      /* rho_k = r0.r_k */
#define BS_RHO_OLD 3  /* rho_{k-1} */
#define BS_ALPHA 4
#define BS_OMEGA 5
#define BS_HALF 6     /* 1: s.s <= tol2 in this iteration (x = x + alpha ph ends it) */
#define BS_RR 7       /* r.r of the last iterate */
#define BS_STOP 8     /* iteration count at the stop (x = x_stop), -1: running */
#define BS_BREAK 9    /* iteration of a breakdown (r0.v = 0, omega = 0, rho = 0 or not finite), -1: none */
#define BS_OUT 10     /* ||b - A x||^2 and b.b after the solve (2 slots) */
#define BS_SIZE 12

/* Modes of bcg_reduce. */
#define BM_INIT 0
#define BM_ALPHA 1
#define BM_S 2
#define BM_OMEGA 3
#define BM_RHO 4
#define BM_OUT 5

/* Write one group's two partials: part[g] and part[groups + g]. */
void bcg_write_partials(double2 acc, __local double2 *scratch, __global double *part) {
  const double2 s = ef_group_sum2(acc, scratch, VWGS);
  if (get_local_id(0) == 0) {
    part[get_group_id(0)] = s.x;
    part[get_num_groups(0) + get_group_id(0)] = s.y;
  }
}

/* (A x)_i. */
double bcg_row(const int i, __global const ef_rp_t *restrict rp, __global const int *restrict col,
               __global const double *restrict val, __global const double *restrict x) {
  double s = 0.0;
  for (ef_rp_t j = rp[i]; j < rp[i + 1]; ++j) s += val[j] * x[col[j]];
  return s;
}

/* r = b - A x, r0 = r; partials of r.r and b.b. */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void bcg_init(const int n, __global const ef_rp_t *restrict rp, __global const int *restrict col,
              __global const double *restrict val, __global const double *restrict b,
              __global const double *restrict x, __global double *restrict r, __global double *restrict r0,
              __global double *restrict part) {
  __local double2 red[VWGS];
  double2 acc = (double2)(0.0, 0.0);
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    const double ri = b[i] - bcg_row(i, rp, col, val, x);
    r[i] = ri;
    r0[i] = ri;
    acc += (double2)(ri * ri, b[i] * b[i]);
  }
  bcg_write_partials(acc, red, part);
}

/* p = r + beta (p - omega v) (k = 0: p = r). */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void bcg_direction(const int n, __global const double *restrict r, __global double *restrict p,
                   __global const double *restrict v, __global const double *state, const int k) {
  if (state[BS_STOP] >= 0.0) return; /* no barrier in this kernel */
  if (k == 0) {
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) p[i] = r[i];
    return;
  }
  const double omega = state[BS_OMEGA];
  const double beta = (state[BS_RHO] / state[BS_RHO_OLD]) * (state[BS_ALPHA] / omega);
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) p[i] = r[i] + beta * (p[i] - omega * v[i]);
}

/* y = A x; partials of r0.y (second partial 0). */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void bcg_spmv_dot(const int n, __global const ef_rp_t *restrict rp, __global const int *restrict col,
                  __global const double *restrict val, __global const double *restrict x,
                  __global double *restrict y, __global const double *restrict r0, __global double *restrict part,
                  __global const double *state) {
  __local double2 red[VWGS];
  const int rows = state[BS_STOP] >= 0.0 ? 0 : n;
  double2 acc = (double2)(0.0, 0.0);
  for (int i = get_global_id(0); i < rows; i += get_global_size(0)) {
    const double yi = bcg_row(i, rp, col, val, x);
    y[i] = yi;
    acc += (double2)(r0[i] * yi, 0.0);
  }
  bcg_write_partials(acc, red, part);
}

/* s = r - alpha v; partials of s.s. */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void bcg_s(const int n, __global const double *restrict r, __global const double *restrict v,
           __global double *restrict s, __global double *restrict part, __global const double *state) {
  __local double2 red[VWGS];
  const int rows = state[BS_STOP] >= 0.0 ? 0 : n;
  const double alpha = state[BS_ALPHA];
  double2 acc = (double2)(0.0, 0.0);
  for (int i = get_global_id(0); i < rows; i += get_global_size(0)) {
    const double si = r[i] - alpha * v[i];
    s[i] = si;
    acc += (double2)(si * si, 0.0);
  }
  bcg_write_partials(acc, red, part);
}

/* t = A x; partials of t.s and t.t (skipped after a half step). */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void bcg_spmv_dot2(const int n, __global const ef_rp_t *restrict rp, __global const int *restrict col,
                   __global const double *restrict val, __global const double *restrict x,
                   __global double *restrict t, __global const double *restrict s, __global double *restrict part,
                   __global const double *state) {
  __local double2 red[VWGS];
  const int rows = (state[BS_STOP] >= 0.0 || state[BS_HALF] > 0.0) ? 0 : n;
  double2 acc = (double2)(0.0, 0.0);
  for (int i = get_global_id(0); i < rows; i += get_global_size(0)) {
    const double ti = bcg_row(i, rp, col, val, x);
    t[i] = ti;
    acc += (double2)(ti * s[i], ti * ti);
  }
  bcg_write_partials(acc, red, part);
}

/* x += alpha ph + omega sh, r = s - omega t (after a half step: x += alpha ph, r = s);
 * partials of r0.r and r.r. */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void bcg_update(const int n, __global double *restrict x, __global double *restrict r,
                __global const double *restrict ph, __global const double *restrict sh,
                __global const double *restrict s, __global const double *restrict t,
                __global const double *restrict r0, __global double *restrict part, __global const double *state) {
  __local double2 red[VWGS];
  const int rows = state[BS_STOP] >= 0.0 ? 0 : n;
  const int half_step = state[BS_HALF] > 0.0;
  const double alpha = state[BS_ALPHA], omega = state[BS_OMEGA];
  double2 acc = (double2)(0.0, 0.0);
  for (int i = get_global_id(0); i < rows; i += get_global_size(0)) {
    double ri;
    if (half_step) {
      x[i] += alpha * ph[i];
      ri = s[i];
    } else {
      x[i] += alpha * ph[i] + omega * sh[i];
      ri = s[i] - omega * t[i];
    }
    r[i] = ri;
    acc += (double2)(r0[i] * ri, ri * ri);
  }
  bcg_write_partials(acc, red, part);
}

/* Partials of ||b - A x||^2 and b.b. */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void bcg_residual(const int n, __global const ef_rp_t *restrict rp, __global const int *restrict col,
                  __global const double *restrict val, __global const double *restrict b,
                  __global const double *restrict x, __global double *restrict part) {
  __local double2 red[VWGS];
  double2 acc = (double2)(0.0, 0.0);
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    const double ri = b[i] - bcg_row(i, rp, col, val, x);
    acc += (double2)(ri * ri, b[i] * b[i]);
  }
  bcg_write_partials(acc, red, part);
}

/* One work-group: sum the count pairs of partials in a fixed order, then its first item turns
 * them into the scalars of `mode` (iteration k; rtol read by BM_INIT only). */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void bcg_reduce(__global const double *restrict part, const int count, const int mode, const int k,
                const double rtol, __global double *state) {
  __local double red[VWGS];
  double ax = 0.0, ay = 0.0;
  for (int g = get_local_id(0); g < count; g += VWGS) {
    ax += part[g];
    ay += part[count + g];
  }
  const double sx = ef_group_sum(ax, red, VWGS), sy = ef_group_sum(ay, red, VWGS);
  if (get_local_id(0) != 0) return; /* after the last barrier */
  if (mode == BM_OUT) {
    state[BS_OUT] = sx;
    state[BS_OUT + 1] = sy;
    return;
  }
  if (mode == BM_INIT) {
    const double tol2 = rtol * rtol * sy;
    state[BS_BB] = sy;
    state[BS_TOL2] = tol2;
    state[BS_RHO] = sx; /* r0 = r */
    state[BS_RHO_OLD] = 1.0;
    state[BS_ALPHA] = 1.0;
    state[BS_OMEGA] = 1.0;
    state[BS_HALF] = 0.0;
    state[BS_RR] = sx;
    state[BS_BREAK] = isfinite(sx) ? -1.0 : 0.0;
    state[BS_STOP] = (sx <= tol2 || !isfinite(sx)) ? 0.0 : -1.0;
    return;
  }
  if (state[BS_STOP] >= 0.0) return;
  if (mode == BM_ALPHA) {
    const double alpha = state[BS_RHO] / sx;
    if (!(sx != 0.0) || !isfinite(alpha)) {
      state[BS_BREAK] = k;
      state[BS_STOP] = k;
    } else {
      state[BS_ALPHA] = alpha;
    }
  } else if (mode == BM_S) {
    state[BS_HALF] = sx <= state[BS_TOL2] ? 1.0 : 0.0;
  } else if (mode == BM_OMEGA) {
    if (state[BS_HALF] > 0.0) return;
    const double omega = sx / sy;
    if (!(omega != 0.0) || !isfinite(omega)) {
      state[BS_BREAK] = k;
      state[BS_STOP] = k;
    } else {
      state[BS_OMEGA] = omega;
    }
  } else if (mode == BM_RHO) {
    state[BS_RHO_OLD] = state[BS_RHO];
    state[BS_RHO] = sx;
    state[BS_RR] = sy;
    if (state[BS_HALF] > 0.0 || sy <= state[BS_TOL2]) {
      state[BS_STOP] = k + 1;
    } else if (!(sx != 0.0) || !isfinite(sx) || !isfinite(sy)) {
      state[BS_BREAK] = k + 1;
      state[BS_STOP] = k + 1;
    }
  }
}
