/* amg.cl -- the aggregation multigrid on the device: values refresh, l1-Jacobi smoothing with
 * fused restriction and prolongation, the K-cycle's two flexible-CG steps, and the dense
 * coarsest inverse (Gauss-Jordan, one launch per pivot) and solve.  Host side:
 * custom_utilities/opencl/opencl_amg.c; the per-row arithmetic is amg_rows.h, shared with the
 * OpenMP apply (host_amg.c).
 *
 * Row kernels run one item per row (rows >= n do nothing).  Reductions (K-cycle) are
 * deterministic: a fixed grid of groups striding over the rows writes one partial per group,
 * and the kernel that needs the total re-adds the partials in the same order in every group.
 *
 * Tunables (-D, with defaults):
 *   AMG_WGS        items per group of the row and reduction kernels
 *   AMG_LANES      items per row of the dense coarsest solve (a power of two)
 *   AMG_ROW_LANES  items sharing one row in the smoothing and residual kernels (a power of two
 *                  dividing AMG_WGS): consecutive items read consecutive entries, and the lane
 *                  sums of a row are added in lane order
 *   EF_ROW_PTR_64  the row offsets of the level's matrix are int64 (fine level, nnz >= 2^31) */
#include "amg_rows.h"

#ifndef AMG_WGS
#define AMG_WGS 128
#endif
#ifndef AMG_LANES
#define AMG_LANES 64
#endif
#ifndef AMG_ROW_LANES
#define AMG_ROW_LANES 4
#endif
#define AMG_ROWS_PER_GROUP (AMG_WGS / AMG_ROW_LANES)

#ifdef EF_ROW_PTR_64
typedef long amg_rp_t;
#else
typedef int amg_rp_t;
#endif

/* Sum of v over the group (AMG_WGS items) in a fixed tree order; every item gets it. */
double amg_group_sum(double v, __local double *red) {
  const int lid = get_local_id(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = AMG_WGS >> 1; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const double t = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return t;
}

/* Sum of part[0..count) in a fixed order, the same in every group. */
double amg_sum_partials(__global const double *part, const int count, __local double *red) {
  double a = 0.0;
  for (int j = get_local_id(0); j < count; j += AMG_WGS) a += part[j];
  return amg_group_sum(a, red);
}

/* The row of this item in a row kernel (may be >= n) and its lane. */
/* (unsigned masks and shifts: a signed division and remainder pair becomes an LLVM freeze,
 * which oclgrind cannot check) */
#define AMG_ROW() ((int)(get_group_id(0) * AMG_ROWS_PER_GROUP + (get_local_id(0) / AMG_ROW_LANES)))
#define AMG_LANE() ((int)(get_local_id(0) & (AMG_ROW_LANES - 1)))

/* Total of the lane partials of this item's row, added in lane order; every lane gets it. */
double amg_lane_sum(double v, __local double *red) {
  const int lid = get_local_id(0), base = (int)(get_local_id(0) & ~(size_t)(AMG_ROW_LANES - 1));
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  double s = 0.0;
  for (int l = 0; l < AMG_ROW_LANES; ++l) s += red[base + l];
  barrier(CLK_LOCAL_MEM_FENCE);
  return s;
}

/* Coarse row I of P^T A P: the fine entries of its members summed in row order. */
__kernel void amg_refresh(const int nc, __global const int *restrict crp, __global const int *restrict ccol,
                          __global double *restrict cval, __global const int *restrict mp,
                          __global const int *restrict mem, __global const amg_rp_t *restrict frp,
                          __global const int *restrict fcol, __global const double *restrict fval,
                          __global const int *restrict agg) {
  const int I = get_global_id(0);
  if (I >= nc) return;
  const long cb = crp[I], ce = crp[I + 1];
  for (long k = cb; k < ce; ++k) cval[k] = 0.0;
  for (int m = mp[I]; m < mp[I + 1]; ++m) {
    const int i = mem[m];
    for (long j = frp[i]; j < frp[i + 1]; ++j) {
      const int J = agg[fcol[j]];
      if (J >= 0) cval[ef_amg_find(cb, ce, ccol, J)] += fval[j];
    }
  }
}

/* dinv_i = 1 / sum_j |a_ij|. */
__kernel void amg_l1(const int n, __global const amg_rp_t *restrict rp, __global const double *restrict val,
                     __global double *restrict dinv) {
  const int i = get_global_id(0);
  if (i < n) dinv[i] = ef_amg_row_l1_inverse(rp[i], rp[i + 1], val);
}

/* The first sweep from x = 0: x = omega D^-1 r. */
__kernel void amg_smooth0(const int n, const double omega, __global const double *restrict dinv,
                          __global const double *restrict r, __global double *restrict x) {
  const int i = get_global_id(0);
  if (i < n) x[i] = omega * dinv[i] * r[i];
}

/* xout = xin + omega D^-1 (r - A xin). */
__kernel __attribute__((reqd_work_group_size(AMG_WGS, 1, 1)))
void amg_sweep(const int n, __global const amg_rp_t *restrict rp, __global const int *restrict col,
               __global const double *restrict val, __global const double *restrict dinv, const double omega,
               __global const double *restrict r, __global const double *restrict xin,
               __global double *restrict xout) {
  __local double red[AMG_WGS];
  const int i = AMG_ROW(), lane = AMG_LANE();
  const double part = i < n ? ef_amg_row_dot(rp[i] + lane, rp[i + 1], AMG_ROW_LANES, col, val, xin) : 0.0;
  const double ax = amg_lane_sum(part, red);
  if (i < n && lane == 0) xout[i] = xin[i] + omega * dinv[i] * (r[i] - ax);
}

/* res = r - A x. */
__kernel __attribute__((reqd_work_group_size(AMG_WGS, 1, 1)))
void amg_residual(const int n, __global const amg_rp_t *restrict rp, __global const int *restrict col,
                  __global const double *restrict val, __global const double *restrict r,
                  __global const double *restrict x, __global double *restrict res) {
  __local double red[AMG_WGS];
  const int i = AMG_ROW(), lane = AMG_LANE();
  const double part = i < n ? ef_amg_row_dot(rp[i] + lane, rp[i + 1], AMG_ROW_LANES, col, val, x) : 0.0;
  const double ax = amg_lane_sum(part, red);
  if (i < n && lane == 0) res[i] = r[i] - ax;
}

/* rc_I = sum of res_i over the members i of aggregate I (restriction P^T). */
__kernel void amg_restrict(const int nc, __global const int *restrict mp, __global const int *restrict mem,
                           __global const double *restrict res, __global double *restrict rc) {
  const int I = get_global_id(0);
  if (I >= nc) return;
  double s = 0.0;
  for (int m = mp[I]; m < mp[I + 1]; ++m) s += res[mem[m]];
  rc[I] = s;
}

/* xout = y + omega D^-1 (r - A y), y = xin + alpha P xc (prolongation fused). */
__kernel __attribute__((reqd_work_group_size(AMG_WGS, 1, 1)))
void amg_post(const int n, __global const amg_rp_t *restrict rp, __global const int *restrict col,
              __global const double *restrict val, __global const double *restrict dinv, const double omega,
              const double alpha, __global const int *restrict agg, __global const double *restrict xc,
              __global const double *restrict r, __global const double *restrict xin,
              __global double *restrict xout) {
  __local double red[AMG_WGS];
  const int i = AMG_ROW(), lane = AMG_LANE();
  const double part =
      i < n ? ef_amg_row_dot_prolonged(rp[i] + lane, rp[i + 1], AMG_ROW_LANES, col, val, xin, agg, xc, alpha) : 0.0;
  const double ay = amg_lane_sum(part, red);
  if (i < n && lane == 0) xout[i] = ef_amg_post_value(xin, agg, xc, alpha, omega, dinv[i], r[i], ay, i);
}

/* K-cycle, first step: w1 = A v1; partials of v1.w1 and v1.rc (part[g], part[G + g]). */
__kernel __attribute__((reqd_work_group_size(AMG_WGS, 1, 1)))
void amg_k_first(const int n, __global const int *restrict rp, __global const int *restrict col,
                 __global const double *restrict val, __global const double *restrict v1,
                 __global const double *restrict rc, __global double *restrict w1,
                 __global double *restrict part) {
  __local double red[AMG_WGS];
  double a = 0.0, b = 0.0;
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    const double w = -ef_amg_row_residual(rp[i], rp[i + 1], col, val, v1, 0.0);
    w1[i] = w;
    a += v1[i] * w;
    b += v1[i] * rc[i];
  }
  const double sa = amg_group_sum(a, red), sb = amg_group_sum(b, red);
  if (get_local_id(0) == 0) {
    part[get_group_id(0)] = sa;
    part[get_num_groups(0) + get_group_id(0)] = sb;
  }
}

/* a1 = (v1.rc) / (v1.A v1); q = rc - a1 w1. */
__kernel __attribute__((reqd_work_group_size(AMG_WGS, 1, 1)))
void amg_k_second(const int n, __global const double *restrict w1, __global const double *restrict rc,
                  __global const double *restrict part, const int groups, __global double *restrict q) {
  __local double red[AMG_WGS];
  const double rho1 = amg_sum_partials(part, groups, red), vr = amg_sum_partials(part + groups, groups, red);
  const double a1 = rho1 > 0.0 ? vr / rho1 : 0.0;
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) q[i] = rc[i] - a1 * w1[i];
}

/* Second step: w2 = A v2; partials of v2.w1, v2.w2, v2.q (part2[g], [G + g], [2G + g]). */
__kernel __attribute__((reqd_work_group_size(AMG_WGS, 1, 1)))
void amg_k_third(const int n, __global const int *restrict rp, __global const int *restrict col,
                 __global const double *restrict val, __global const double *restrict v2,
                 __global const double *restrict w1, __global const double *restrict q,
                 __global double *restrict w2, __global double *restrict part2) {
  __local double red[AMG_WGS];
  double a = 0.0, b = 0.0, c = 0.0;
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    const double w = -ef_amg_row_residual(rp[i], rp[i + 1], col, val, v2, 0.0);
    w2[i] = w;
    a += v2[i] * w1[i];
    b += v2[i] * w;
    c += v2[i] * q[i];
  }
  const double sa = amg_group_sum(a, red), sb = amg_group_sum(b, red), sc = amg_group_sum(c, red);
  if (get_local_id(0) == 0) {
    const int g = get_group_id(0), G = get_num_groups(0);
    part2[g] = sa;
    part2[G + g] = sb;
    part2[2 * G + g] = sc;
  }
}

/* xc = (a1 - gamma a2 / rho1) v1 + a2 v2, the minimiser of the A-norm error over span(v1, v2). */
__kernel __attribute__((reqd_work_group_size(AMG_WGS, 1, 1)))
void amg_k_combine(const int n, __global const double *restrict v1, __global const double *restrict v2,
                   __global const double *restrict part, __global const double *restrict part2, const int groups,
                   __global double *restrict xc) {
  __local double red[AMG_WGS];
  const double rho1 = amg_sum_partials(part, groups, red), vr = amg_sum_partials(part + groups, groups, red);
  const double gam = amg_sum_partials(part2, groups, red), vw = amg_sum_partials(part2 + groups, groups, red);
  const double vq = amg_sum_partials(part2 + 2 * groups, groups, red);
  const double a1 = rho1 > 0.0 ? vr / rho1 : 0.0;
  const double beta = rho1 > 0.0 ? vw - gam * gam / rho1 : 0.0;
  const double a2 = beta > 0.0 ? vq / beta : 0.0, c1 = rho1 > 0.0 ? a1 - gam * a2 / rho1 : 0.0;
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) xc[i] = c1 * v1[i] + a2 * v2[i];
}

/* W = A_c (+ beta 1 1^T with beta = trace / nc^2 when null_space); one group. */
__kernel __attribute__((reqd_work_group_size(AMG_WGS, 1, 1)))
void amg_dense_fill(const int nc, __global const int *restrict rp, __global const int *restrict col,
                    __global const double *restrict val, const int null_space, __global double *restrict W) {
  __local double red[AMG_WGS];
  const int lid = get_local_id(0);
  const long nn = (long)nc * nc;
  for (long k = lid; k < nn; k += AMG_WGS) W[k] = 0.0;
  barrier(CLK_GLOBAL_MEM_FENCE);
  double tr = 0.0;
  for (int i = lid; i < nc; i += AMG_WGS)
    for (int j = rp[i]; j < rp[i + 1]; ++j) {
      W[(long)i * nc + col[j]] = val[j];
      if (col[j] == i) tr += val[j];
    }
  tr = amg_group_sum(tr, red);
  barrier(CLK_GLOBAL_MEM_FENCE);
  if (null_space) {
    const double beta = tr / ((double)nc * (double)nc);
    for (long k = lid; k < nn; k += AMG_WGS) W[k] += beta;
  }
}

/* Gauss-Jordan step k (no pivoting, SPD): Wout = Win with row k divided by the pivot and
 * column k eliminated from the other rows, the inverse built in place (as ef_amg_dense_invert). */
__kernel void amg_gj_step(const int nc, const int k, __global const double *restrict Win,
                          __global double *restrict Wout) {
  const int j = get_global_id(0), i = get_global_id(1); /* an nc x nc grid */
  const long idx = (long)i * nc + j;
  const double ip = 1.0 / Win[(long)k * nc + k];
  const double wk = (j == k ? 1.0 : Win[(long)k * nc + j]) * ip;
  if (i == k) Wout[idx] = wk;
  else Wout[idx] = (j == k ? 0.0 : Win[idx]) - Win[(long)i * nc + k] * wk;
}

/* Wout = (Win + Win^T) / 2. */
__kernel void amg_dense_sym(const int nc, __global const double *restrict Win, __global double *restrict Wout) {
  const int j = get_global_id(0), i = get_global_id(1); /* an nc x nc grid */
  const long idx = (long)i * nc + j;
  Wout[idx] = i == j ? Win[idx] : 0.5 * (Win[idx] + Win[(long)j * nc + i]);
}

/* x = W r, one group of AMG_LANES items per row (W symmetric: row i is contiguous). */
__kernel __attribute__((reqd_work_group_size(AMG_LANES, 1, 1)))
void amg_dense_solve(const int nc, __global const double *restrict W, __global const double *restrict r,
                     __global double *restrict x) {
  __local double red[AMG_LANES];
  const int i = get_group_id(0), lid = get_local_id(0);
  double s = 0.0;
  for (int j = lid; j < nc; j += AMG_LANES) s += W[(long)i * nc + j] * r[j];
  red[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = AMG_LANES >> 1; h > 0; h >>= 1) {
    if (lid < h) red[lid] += red[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) x[i] = red[0];
}
