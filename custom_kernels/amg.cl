/* amg.cl -- the aggregation multigrid on the device: values refresh, l1-Jacobi smoothing with
 * fused restriction and prolongation, the K-cycle's two flexible-CG steps, and the dense
 * coarsest inverse (Gauss-Jordan, one group, one launch) and solve; the levels below a few
 * thousand rows (refresh and cycle) in one launch of one group each.  Launches are what a cycle
 * on the small levels costs (several microseconds each on a GPU, more than their work), so
 * neighbours are fused where no grid-wide sum separates them: the K-cycle's second right-hand
 * side into the next first sweep (amg_down_q), its combination into the post-smoothing above
 * (amg_post_k), and the restriction into the small levels' launch (amg_small_cycle).  Host side:
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
 *   AMG_SMALL_WGS  items of the one-group kernels (dense inverse, small levels; a power of two)
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
#ifndef AMG_SMALL_WGS
#define AMG_SMALL_WGS 256
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

/* Coarse row I of P^T A P (the fine entries of its members summed in row order), then its l1
 * inverse diagonal (a macro: the fine offsets are amg_rp_t here, int in the small kernel). */
#define AMG_REFRESH_ROW(I, crp, ccol, cval, cdinv, mp, mem, frp, fcol, fval, agg)                        \
  do {                                                                                                 \
    const long cb_ = (crp)[I], ce_ = (crp)[(I) + 1];                                                   \
    for (long k_ = cb_; k_ < ce_; ++k_) (cval)[k_] = 0.0;                                              \
    for (int m_ = (mp)[I]; m_ < (mp)[(I) + 1]; ++m_) {                                                 \
      const int i_ = (mem)[m_];                                                                        \
      for (long j_ = (frp)[i_]; j_ < (frp)[i_ + 1]; ++j_) {                                            \
        const int J_ = (agg)[(fcol)[j_]];                                                              \
        if (J_ >= 0) (cval)[ef_amg_find(cb_, ce_, (ccol), J_)] += (fval)[j_];                          \
      }                                                                                                \
    }                                                                                                  \
    (cdinv)[I] = ef_amg_row_l1_inverse(cb_, ce_, (cval));                                              \
  } while (0)

/* Coarse row I of P^T A P and the coarse l1 inverse diagonal (refresh and amg_l1 fused). */
__kernel void amg_refresh(const int nc, __global const int *restrict crp, __global const int *restrict ccol,
                          __global double *restrict cval, __global double *restrict cdinv,
                          __global const int *restrict mp, __global const int *restrict mem,
                          __global const amg_rp_t *restrict frp, __global const int *restrict fcol,
                          __global const double *restrict fval, __global const int *restrict agg) {
  const int I = get_global_id(0);
  if (I < nc) AMG_REFRESH_ROW(I, crp, ccol, cval, cdinv, mp, mem, frp, fcol, fval, agg);
}

/* Where each fine entry of the members of coarse row I lands in that row (issue 12: the refresh
 * without a search).  off[j] is the place of the entry's coarse column in row I, below `direct`
 * (at most AMG_OFF_DROP); AMG_OFF_DROP for a column outside every aggregate; AMG_OFF_SEARCH for a
 * place from `direct` on (a byte holds 254 places), which amg_refresh_mapped finds by the search
 * of AMG_REFRESH_ROW.  Written once per hierarchy, by that search. */
#define AMG_OFF_DROP 254
#define AMG_OFF_SEARCH 255
__kernel void amg_refresh_offsets(const int nc, __global const int *restrict crp, __global const int *restrict ccol,
                                  __global const int *restrict mp, __global const int *restrict mem,
                                  __global const amg_rp_t *restrict frp, __global const int *restrict fcol,
                                  __global const int *restrict agg, const int direct, __global uchar *restrict off) {
  const int I = get_global_id(0);
  if (I >= nc) return;
  const long cb = crp[I], ce = crp[I + 1];
  for (int m = mp[I]; m < mp[I + 1]; ++m) {
    const int i = mem[m];
    for (long j = frp[i]; j < frp[i + 1]; ++j) {
      const int J = agg[fcol[j]];
      const long k = J >= 0 ? ef_amg_find(cb, ce, ccol, J) : -1;
      off[j] = (uchar)(k < 0 ? AMG_OFF_DROP : k - cb < direct ? k - cb : AMG_OFF_SEARCH);
    }
  }
}

/* amg_refresh with the positions of amg_refresh_offsets: the same sums in the same order (bit for
 * bit the host's), one byte read per fine entry instead of its column, its aggregate and a search. */
__kernel void amg_refresh_mapped(const int nc, __global const int *restrict crp, __global const int *restrict ccol,
                                 __global double *restrict cval, __global double *restrict cdinv,
                                 __global const int *restrict mp, __global const int *restrict mem,
                                 __global const amg_rp_t *restrict frp, __global const int *restrict fcol,
                                 __global const double *restrict fval, __global const int *restrict agg,
                                 __global const uchar *restrict off) {
  const int I = get_global_id(0);
  if (I >= nc) return;
  const long cb = crp[I], ce = crp[I + 1];
  for (long k = cb; k < ce; ++k) cval[k] = 0.0;
  for (int m = mp[I]; m < mp[I + 1]; ++m) {
    const int i = mem[m];
    for (long j = frp[i]; j < frp[i + 1]; ++j) {
      const int o = off[j];
      if (o < AMG_OFF_DROP) cval[cb + o] += fval[j];
      else if (o == AMG_OFF_SEARCH) cval[ef_amg_find(cb, ce, ccol, agg[fcol[j]])] += fval[j];
    }
  }
  cdinv[I] = ef_amg_row_l1_inverse(cb, ce, cval);
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

/* The first sweep and the residual in one pass (one sweep per side): x = omega D^-1 r and
 * res = r - A x, with A x gathered from r (the same products in the same order as
 * amg_smooth0 followed by amg_residual). */
__kernel __attribute__((reqd_work_group_size(AMG_WGS, 1, 1)))
void amg_down(const int n, __global const amg_rp_t *restrict rp, __global const int *restrict col,
              __global const double *restrict val, __global const double *restrict dinv, const double omega,
              __global const double *restrict r, __global double *restrict x, __global double *restrict res) {
  __local double red[AMG_WGS];
  const int i = AMG_ROW(), lane = AMG_LANE();
  double part = 0.0;
  if (i < n)
    for (amg_rp_t j = rp[i] + lane; j < rp[i + 1]; j += AMG_ROW_LANES) {
      const int c = col[j];
      part += val[j] * (omega * dinv[c] * r[c]);
    }
  const double ax = amg_lane_sum(part, red);
  if (i < n && lane == 0) {
    x[i] = omega * dinv[i] * r[i];
    res[i] = r[i] - ax;
  }
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

/* a1 = (v1.rc) / (v1.A v1) from amg_k_first's partials (every group adds them alike). */
double amg_k_a1(__global const double *part, const int groups, __local double *red) {
  const double rho1 = amg_sum_partials(part, groups, red), vr = amg_sum_partials(part + groups, groups, red);
  return rho1 > 0.0 ? vr / rho1 : 0.0;
}

/* q_i = rc_i - a1 w1_i, the K-cycle's second right-hand side. */
double amg_k_q(__global const double *rc, __global const double *w1, const double a1, const int i) {
  return rc[i] - a1 * w1[i];
}

/* q = rc - a1 w1 (with more than one sweep; one sweep forms q in amg_down_q). */
__kernel __attribute__((reqd_work_group_size(AMG_WGS, 1, 1)))
void amg_k_second(const int n, __global const double *restrict w1, __global const double *restrict rc,
                  __global const double *restrict part, const int groups, __global double *restrict q) {
  __local double red[AMG_WGS];
  const double a1 = amg_k_a1(part, groups, red);
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) q[i] = amg_k_q(rc, w1, a1, i);
}

/* amg_down on the K-cycle's second right-hand side, amg_k_second fused: q = rc - a1 w1 formed
 * where it is read (the same arithmetic as amg_k_second) and written for the rest of the cycle. */
__kernel __attribute__((reqd_work_group_size(AMG_WGS, 1, 1)))
void amg_down_q(const int n, __global const amg_rp_t *restrict rp, __global const int *restrict col,
                __global const double *restrict val, __global const double *restrict dinv, const double omega,
                __global const double *restrict rc, __global const double *restrict w1,
                __global const double *restrict part, const int groups, __global double *restrict q,
                __global double *restrict x, __global double *restrict res) {
  __local double red[AMG_WGS];
  const double a1 = amg_k_a1(part, groups, red);
  const int i = AMG_ROW(), lane = AMG_LANE();
  double ax = 0.0;
  if (i < n)
    for (amg_rp_t j = rp[i] + lane; j < rp[i + 1]; j += AMG_ROW_LANES) {
      const int c = col[j];
      ax += val[j] * (omega * dinv[c] * amg_k_q(rc, w1, a1, c));
    }
  ax = amg_lane_sum(ax, red);
  if (i < n && lane == 0) {
    const double qi = amg_k_q(rc, w1, a1, i);
    q[i] = qi;
    x[i] = omega * dinv[i] * qi;
    res[i] = qi - ax;
  }
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

/* The K-cycle's combination coefficients (c1, a2) of xc = c1 v1 + a2 v2, the minimiser of the
 * A-norm error over span(v1, v2), from amg_k_first's and amg_k_third's partials. */
double2 amg_k_coefficients(__global const double *part, __global const double *part2, const int groups,
                           __local double *red) {
  const double rho1 = amg_sum_partials(part, groups, red), vr = amg_sum_partials(part + groups, groups, red);
  const double gam = amg_sum_partials(part2, groups, red), vw = amg_sum_partials(part2 + groups, groups, red);
  const double vq = amg_sum_partials(part2 + 2 * groups, groups, red);
  const double a1 = rho1 > 0.0 ? vr / rho1 : 0.0;
  const double beta = rho1 > 0.0 ? vw - gam * gam / rho1 : 0.0;
  const double a2 = beta > 0.0 ? vq / beta : 0.0, c1 = rho1 > 0.0 ? a1 - gam * a2 / rho1 : 0.0;
  return (double2)(c1, a2);
}

/* xc_I = c1 v1_I + a2 v2_I. */
double amg_k_xc(__global const double *v1, __global const double *v2, const double2 k, const int I) {
  return k.x * v1[I] + k.y * v2[I];
}

/* xc = c1 v1 + a2 v2 (when the post-smoothing above does not form it: amg_post_k). */
__kernel __attribute__((reqd_work_group_size(AMG_WGS, 1, 1)))
void amg_k_combine(const int n, __global const double *restrict v1, __global const double *restrict v2,
                   __global const double *restrict part, __global const double *restrict part2, const int groups,
                   __global double *restrict xc) {
  __local double red[AMG_WGS];
  const double2 k = amg_k_coefficients(part, part2, groups, red);
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) xc[i] = amg_k_xc(v1, v2, k, i);
}

/* y_i = x_i + alpha xc[agg[i]] with xc = c1 v1 + a2 v2 formed here (ef_amg_prolonged's arithmetic). */
double amg_prolonged_k(__global const double *x, __global const int *agg, __global const double *v1,
                       __global const double *v2, const double2 k, const double alpha, const int i) {
  const int a = agg[i];
  return a >= 0 ? x[i] + alpha * amg_k_xc(v1, v2, k, a) : x[i];
}

/* amg_post after a K-cycle correction, amg_k_combine fused: xout = y + omega D^-1 (r - A y),
 * y = xin + alpha P (c1 v1 + a2 v2). */
__kernel __attribute__((reqd_work_group_size(AMG_WGS, 1, 1)))
void amg_post_k(const int n, __global const amg_rp_t *restrict rp, __global const int *restrict col,
                __global const double *restrict val, __global const double *restrict dinv, const double omega,
                const double alpha, __global const int *restrict agg, __global const double *restrict v1,
                __global const double *restrict v2, __global const double *restrict part,
                __global const double *restrict part2, const int groups, __global const double *restrict r,
                __global const double *restrict xin, __global double *restrict xout) {
  __local double red[AMG_WGS];
  const double2 k = amg_k_coefficients(part, part2, groups, red);
  const int i = AMG_ROW(), lane = AMG_LANE();
  double ay = 0.0;
  if (i < n)
    for (amg_rp_t j = rp[i] + lane; j < rp[i + 1]; j += AMG_ROW_LANES)
      ay += val[j] * amg_prolonged_k(xin, agg, v1, v2, k, alpha, col[j]);
  ay = amg_lane_sum(ay, red);
  if (i < n && lane == 0) xout[i] = amg_prolonged_k(xin, agg, v1, v2, k, alpha, i) + omega * dinv[i] * (r[i] - ay);
}

/* Sum of v over a group of AMG_SMALL_WGS items in a fixed tree order; every item gets it. */
double amg_small_sum(double v, __local double *red) {
  const int lid = get_local_id(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = AMG_SMALL_WGS >> 1; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const double t = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return t;
}

/* The dense coarsest inverse by one group: W = A_c (+ beta 1 1^T, beta = trace / nc^2 when
 * null_space), then Gauss-Jordan in place over all pivots (no pivoting: SPD; the same products
 * as ef_amg_dense_invert), then W = (W + W^T) / 2.  Per pivot k: the entries outside row and
 * column k first (they read only row k, column k and the pivot), then row and column k. */
void amg_dense_inverse_group(const int nc, __global const int *rp, __global const int *col,
                             __global const double *val, const int null_space, __global double *W,
                             __local double *red) {
  const uint lid = get_local_id(0), un = (uint)nc, nn = un * un;
  for (uint k = lid; k < nn; k += AMG_SMALL_WGS) W[k] = 0.0;
  barrier(CLK_GLOBAL_MEM_FENCE);
  double tr = 0.0;
  for (int i = (int)lid; i < nc; i += AMG_SMALL_WGS)
    for (int j = rp[i]; j < rp[i + 1]; ++j) {
      W[(long)i * nc + col[j]] = val[j];
      if (col[j] == i) tr += val[j];
    }
  tr = amg_small_sum(tr, red);
  barrier(CLK_GLOBAL_MEM_FENCE);
  if (null_space) {
    const double beta = tr / ((double)nc * (double)nc);
    for (uint k = lid; k < nn; k += AMG_SMALL_WGS) W[k] += beta;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (uint k = 0; k < un; ++k) {
    const double ip = 1.0 / W[k * un + k];
    for (uint idx = lid; idx < nn; idx += AMG_SMALL_WGS) {
      const uint i = idx / un, j = idx - i * un;
      if (i != k && j != k) W[idx] -= W[i * un + k] * (W[k * un + j] * ip);
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (uint t = lid; t < 2 * un; t += AMG_SMALL_WGS) {
      if (t < un) W[k * un + t] = (t == k ? 1.0 : W[k * un + t]) * ip; /* row k (pivot included) */
      else if (t - un != k) W[(t - un) * un + k] = 0.0 - W[(t - un) * un + k] * ip; /* column k */
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  for (uint idx = lid; idx < nn; idx += AMG_SMALL_WGS) {
    const uint i = idx / un, j = idx - i * un;
    if (i < j) {
      const double a = 0.5 * (W[idx] + W[j * un + i]);
      W[idx] = a;
      W[j * un + i] = a;
    }
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
}

/* The whole dense coarsest inverse in one launch of one group (int32 offsets). */
__kernel __attribute__((reqd_work_group_size(AMG_SMALL_WGS, 1, 1)))
void amg_dense_inverse(const int nc, __global const int *restrict rp, __global const int *restrict col,
                       __global const double *restrict val, const int null_space, __global double *W) {
  __local double red[AMG_SMALL_WGS];
  amg_dense_inverse_group(nc, rp, col, val, null_space, W, &red[0]);
}

/* ---------------------------------------------------------------------------------------------
 * The small levels in one group.  Levels first..n_levels-1 (all at most a few thousand rows)
 * live in two buffers: ibuf (ints: row offsets, columns, aggregate maps, member offsets and
 * members) and dbuf (doubles: values, l1 diagonals, level vectors), located by the level table
 * (AMG_LT ints per level, below); when they start at level 0, its values are the caller's (val0).  amg_small_refresh recomputes their values, diagonals and the
 * dense inverse; amg_small_cycle runs a list of operations that the host wrote once by walking
 * the same recursion as the multi-group cycle (opencl_amg.c), one barrier after each. */
#define AMG_LT 8 /* level table: n, rp, col, val, dinv, agg, mp, mem (offsets into ibuf/dbuf) */
#define AMG_OPW 8 /* operation: code, level, up to 6 vector operands */
enum { AMG_OP_SMOOTH0 = 0, AMG_OP_SWEEP = 1, AMG_OP_RESID = 2, AMG_OP_RESTRICT = 3, AMG_OP_POST = 4,
       AMG_OP_DENSE = 5, AMG_OP_K1 = 6, AMG_OP_K3 = 7 };

/* Values, l1 diagonals (of level `first` too when l1_first) and the dense inverse of the small
 * levels, the coarse values from the level above summed as amg_refresh does. */
__kernel __attribute__((reqd_work_group_size(AMG_SMALL_WGS, 1, 1)))
void amg_small_refresh(const int first, const int n_levels, const int l1_first, __global const int *restrict lt,
                       __global const int *restrict ibuf, __global double *dbuf,
                       __global const double *restrict val0, const int null_space, __global double *W) {
  __local double red[AMG_SMALL_WGS];
  const int lid = get_local_id(0);
  if (l1_first) {
    __global const int *L = lt + first * AMG_LT;
    for (int i = lid; i < L[0]; i += AMG_SMALL_WGS)
      dbuf[L[4] + i] = ef_amg_row_l1_inverse(ibuf[L[1] + i], ibuf[L[1] + i + 1], first == 0 ? val0 : dbuf + L[3]);
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (int l = first; l + 1 < n_levels; ++l) {
    __global const int *F = lt + l * AMG_LT, *C = lt + (l + 1) * AMG_LT;
    for (int I = lid; I < C[0]; I += AMG_SMALL_WGS)
      AMG_REFRESH_ROW(I, ibuf + C[1], ibuf + C[2], dbuf + C[3], dbuf + C[4], ibuf + F[6], ibuf + F[7],
                      ibuf + F[1], ibuf + F[2], l == 0 ? val0 : dbuf + F[3], ibuf + F[5]);
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  __global const int *Lc = lt + (n_levels - 1) * AMG_LT;
  amg_dense_inverse_group(Lc[0], ibuf + Lc[1], ibuf + Lc[2], n_levels == 1 ? val0 : dbuf + Lc[3], null_space, W,
                          &red[0]);
}

/* Operand v: -1 the input vector, -2 the output vector, else an offset into dbuf. */
#define AMG_V(v) ((v) == -1 ? vin : (v) == -2 ? vout : dbuf + (v))

/* The one group's sums (amg_small_cycle) in two stages, each in a fixed order: AMG_SMALL_SEGS
 * items add AMG_SMALL_SEGLEN consecutive items' values, then every item adds the segment sums
 * in order.  Two barriers for up to three sums, where a tree takes one per halving. */
#define AMG_SMALL_SEGS (AMG_SMALL_WGS >= 32 ? AMG_SMALL_WGS / 32 : 1)
#define AMG_SMALL_SEGLEN (AMG_SMALL_WGS / AMG_SMALL_SEGS)

/* The first stage: item lid adds segment lid & (SEGS - 1) of sum lid / SEGS (the third sum again
 * for the items past the three sums, into seg slots nobody reads).  No branch on the item: a
 * loop-invariant test of the local id is unswitched with a `freeze`, which oclgrind cannot run. */
void amg_small_segment(__local const double *red, __local double *seg) {
  const uint lid = get_local_id(0), v = min(lid / AMG_SMALL_SEGS, 2u), s = lid & (AMG_SMALL_SEGS - 1);
  double t = 0.0;
  for (int m = 0; m < AMG_SMALL_SEGLEN; ++m) t += red[v * AMG_SMALL_WGS + s * AMG_SMALL_SEGLEN + m];
  seg[lid] = t;
}

/* The second stage: the three totals from the segment sums, in order (every item). */
double3 amg_small_totals(__local const double *seg) {
  double3 t = (double3)(0.0, 0.0, 0.0);
  for (int s = 0; s < AMG_SMALL_SEGS; ++s) {
    t.x += seg[s];
    t.y += seg[AMG_SMALL_SEGS + s];
    t.z += seg[2 * AMG_SMALL_SEGS + s];
  }
  return t;
}

/* Sums of a, b, c over the group, every item gets them: the two stages above, then a barrier
 * (global memory too: callers rely on it as the end of a step). */
double3 amg_small_sum3(double a, double b, double c, __local double *red, __local double *seg) {
  const int lid = get_local_id(0);
  red[lid] = a;
  red[AMG_SMALL_WGS + lid] = b;
  red[2 * AMG_SMALL_WGS + lid] = c;
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  amg_small_segment(red, seg);
  barrier(CLK_LOCAL_MEM_FENCE);
  const double3 t = amg_small_totals(seg);
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  return t;
}

/* The coarse correction of the first small level (or the whole cycle when it is level 0):
 * the operations of `ops` in order, one item per row, sums in row order (amg_rows.h).  Every
 * operation ends in the same three barriers (every item takes part in every barrier): the
 * K-cycle's dot products and the dense solve's partial sums are added between the first two. */
void amg_small_ops(const int nops, __global const int *restrict ops, __global const int *restrict lt,
                   __global const int *restrict ibuf, __global double *dbuf, __global const double *restrict W,
                   const double omega, const double alpha, __global const double *restrict val0,
                   __global double *vin, __global double *vout, __local double *red, __local double *seg) {
  const int lid = get_local_id(0);
  double krho[32], ka1[32]; /* K-cycle scalars of each level, kept between its two steps */
  for (int o = 0; o < nops; ++o) {
    __global const int *op = ops + o * AMG_OPW;
    const int code = op[0], l = op[1];
    __global const int *L = lt + l * AMG_LT;
    const int n = L[0];
    __global const int *rp = ibuf + L[1], *col = ibuf + L[2];
    __global const double *val = l == 0 ? val0 : dbuf + L[3], *dinv = dbuf + L[4];
    const int k1 = code == AMG_OP_K1, k3 = code == AMG_OP_K3;
    /* The dense solve with fewer rows than items: `parts` items per row (rows padded to np, a
     * power of two: masks and one division, no division-remainder pair, see AMG_ROW), each a
     * strided share. */
    uint np = 1;
    while (code == AMG_OP_DENSE && np < (uint)n) np <<= 1;
    const uint parts = code == AMG_OP_DENSE && np <= AMG_SMALL_WGS / 2 ? AMG_SMALL_WGS / np : 0;
    double a = 0.0, b = 0.0, c = 0.0;
    if (code == AMG_OP_SMOOTH0) {
      __global double *r = AMG_V(op[2]), *x = AMG_V(op[3]);
      for (int i = lid; i < n; i += AMG_SMALL_WGS) x[i] = omega * dinv[i] * r[i];
    } else if (code == AMG_OP_SWEEP) {
      __global double *r = AMG_V(op[2]), *xi = AMG_V(op[3]), *xo = AMG_V(op[4]);
      for (int i = lid; i < n; i += AMG_SMALL_WGS)
        xo[i] = xi[i] + omega * dinv[i] * ef_amg_row_residual(rp[i], rp[i + 1], col, val, xi, r[i]);
    } else if (code == AMG_OP_RESID) {
      __global double *r = AMG_V(op[2]), *x = AMG_V(op[3]), *res = AMG_V(op[4]);
      for (int i = lid; i < n; i += AMG_SMALL_WGS) res[i] = ef_amg_row_residual(rp[i], rp[i + 1], col, val, x, r[i]);
    } else if (code == AMG_OP_RESTRICT) {
      __global const int *C = L + AMG_LT, *mp = ibuf + L[6], *mem = ibuf + L[7];
      __global double *res = AMG_V(op[2]), *rc = AMG_V(op[3]);
      for (int I = lid; I < C[0]; I += AMG_SMALL_WGS) {
        double s = 0.0;
        for (int m = mp[I]; m < mp[I + 1]; ++m) s += res[mem[m]];
        rc[I] = s;
      }
    } else if (code == AMG_OP_POST) {
      __global const int *agg = ibuf + L[5];
      __global double *xc = AMG_V(op[2]), *r = AMG_V(op[3]), *xi = AMG_V(op[4]), *xo = AMG_V(op[5]);
      for (int i = lid; i < n; i += AMG_SMALL_WGS)
        xo[i] = ef_amg_row_post(rp[i], rp[i + 1], col, val, xi, agg, xc, alpha, omega, dinv[i], r[i], i);
    } else if (code == AMG_OP_DENSE) {
      __global double *rc = AMG_V(op[2]), *xc = AMG_V(op[3]);
      if (parts) { /* item lid: row lid & (np - 1), columns lid / np + k parts (added up below) */
        const int i = (int)((uint)lid & (np - 1)), p = (int)((uint)lid / np);
        if (i < n)
          for (int j = p; j < n; j += (int)parts) a += W[(long)j * n + i] * rc[j];
      } else {
        for (int i = lid; i < n; i += AMG_SMALL_WGS) {
          double s = 0.0;
          for (int j = 0; j < n; ++j) s += W[(long)j * n + i] * rc[j];
          xc[i] = s;
        }
      }
    } else if (k1) { /* w1 = A v1; partials of v1.w1, v1.rc */
      __global double *rc = AMG_V(op[2]), *v1 = AMG_V(op[3]), *w1 = AMG_V(op[4]);
      for (int i = lid; i < n; i += AMG_SMALL_WGS) {
        const double w = -ef_amg_row_residual(rp[i], rp[i + 1], col, val, v1, 0.0);
        w1[i] = w;
        a += v1[i] * w;
        b += v1[i] * rc[i];
      }
    } else if (k3) { /* w2 = A v2; partials of v2.w1, v2.w2, v2.q */
      __global double *v2 = AMG_V(op[3]), *w1 = AMG_V(op[4]), *w2 = AMG_V(op[5]), *q = AMG_V(op[6]);
      for (int i = lid; i < n; i += AMG_SMALL_WGS) {
        const double w = -ef_amg_row_residual(rp[i], rp[i + 1], col, val, v2, 0.0);
        w2[i] = w;
        a += v2[i] * w1[i];
        b += v2[i] * w;
        c += v2[i] * q[i];
      }
    }
    red[lid] = a;
    red[AMG_SMALL_WGS + lid] = b;
    red[2 * AMG_SMALL_WGS + lid] = c;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (k1 || k3) amg_small_segment(red, seg);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (k1 || k3) {
      const double3 t = amg_small_totals(seg);
      a = t.x, b = t.y, c = t.z;
    }
    if (k1) { /* a1 = v1.rc / v1.A v1; q = rc - a1 w1 (own rows: no barrier needed) */
      __global double *rc = AMG_V(op[2]), *w1 = AMG_V(op[4]), *q = AMG_V(op[5]);
      krho[l] = a;
      ka1[l] = a > 0.0 ? b / a : 0.0;
      for (int i = lid; i < n; i += AMG_SMALL_WGS) q[i] = rc[i] - ka1[l] * w1[i];
    } else if (k3) { /* xc = (a1 - gamma a2 / rho1) v1 + a2 v2 */
      __global double *v1 = AMG_V(op[2]), *v2 = AMG_V(op[3]), *xc = AMG_V(op[7]);
      const double rho1 = krho[l], a1 = ka1[l];
      const double beta = rho1 > 0.0 ? b - a * a / rho1 : 0.0;
      const double a2 = beta > 0.0 ? c / beta : 0.0, c1 = rho1 > 0.0 ? a1 - a * a2 / rho1 : 0.0;
      for (int i = lid; i < n; i += AMG_SMALL_WGS) xc[i] = c1 * v1[i] + a2 * v2[i];
    } else if (parts && lid < n) { /* the dense solve's row sums, parts in order */
      __global double *xc = AMG_V(op[3]);
      double s = 0.0;
      for (uint p = 0; p < parts; ++p) s += red[p * np + (uint)lid];
      xc[lid] = s;
    }
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  }
}

/* One launch of amg_small_ops: the small levels' correction, or the whole cycle. */
__kernel __attribute__((reqd_work_group_size(AMG_SMALL_WGS, 1, 1)))
void amg_small_cycle(const int nops, __global const int *restrict ops, __global const int *restrict lt,
                     __global const int *restrict ibuf, __global double *dbuf, __global const double *restrict W,
                     const double omega, const double alpha, __global const double *restrict val0,
                     __global double *vin, __global double *vout, const int pre_nc, __global const int *restrict pmp,
                     __global const int *restrict pmem, __global const double *restrict pres, const int pre_off) {
  __local double red[3 * AMG_SMALL_WGS], seg[AMG_SMALL_WGS]; /* seg: amg_small_segment */
  /* The restriction from the level above into the first small level's right-hand side (amg_restrict
   * fused; pre_nc 0: none). */
  for (int I = get_local_id(0); I < pre_nc; I += AMG_SMALL_WGS) {
    double s = 0.0;
    for (int m = pmp[I]; m < pmp[I + 1]; ++m) s += pres[pmem[m]];
    dbuf[pre_off + I] = s;
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  amg_small_ops(nops, ops, lt, ibuf, dbuf, W, omega, alpha, val0, vin, vout, red, seg);
}

/* The whole preconditioned (flexible when `flexible`) CG in one launch of one group, when every
 * level is small (level 0 included, its values val0): the iteration of pcg.cl (the same stop
 * test, null-space projection and breakdown test), the preconditioner amg_small_ops on r into z.
 * work: 5 n doubles (r, z, p, q, r_old).  out: iterations (the count at which the test held,
 * max_it when it never did), ||r||^2 at the last test, ||b||^2, breakdown (1: p.Ap <= 0 or not
 * finite), ||b - A x||^2 after the solve. */
__kernel __attribute__((reqd_work_group_size(AMG_SMALL_WGS, 1, 1)))
void amg_small_pcg(const int nops, __global const int *restrict ops, __global const int *restrict lt,
                   __global const int *restrict ibuf, __global double *dbuf, __global const double *restrict W,
                   const double omega, const double alpha, __global const double *restrict val0,
                   __global const double *restrict b, __global double *x, __global double *work, const int max_it,
                   const double rtol, const int flexible, const int null_space, __global double *out) {
  __local double red[3 * AMG_SMALL_WGS], seg[AMG_SMALL_WGS]; /* seg: amg_small_segment */
  const int lid = get_local_id(0), n = lt[0];
  __global const int *rp = ibuf + lt[1], *col = ibuf + lt[2];
  __global double *r = work, *z = work + n, *p = work + 2 * n, *q = work + 3 * n, *ro = work + 4 * n;
  double bb = 0.0, rr = 0.0;
  for (int i = lid; i < n; i += AMG_SMALL_WGS) {
    const double s = ef_amg_row_residual(rp[i], rp[i + 1], col, val0, x, b[i]);
    r[i] = s;
    ro[i] = s;
    bb += b[i] * b[i];
    rr += s * s;
  }
  double3 t = amg_small_sum3(bb, rr, 0.0, red, seg);
  bb = t.x, rr = t.y;
  const double tol2 = rtol * rtol * bb;
  int stop = -1, broken = 0;
  double rho_prev = 0.0;
  for (int k = 0; k <= max_it; ++k) {
    if (rr <= tol2) { /* uniform: every item holds the same sums */
      stop = k;
      break;
    }
    if (k == max_it) break;
    amg_small_ops(nops, ops, lt, ibuf, dbuf, W, omega, alpha, val0, r, z, red, seg);
    double rz = 0.0, oz = 0.0, sz = 0.0, sr = 0.0, so = 0.0;
    for (int i = lid; i < n; i += AMG_SMALL_WGS) {
      const double zi = z[i];
      rz += r[i] * zi;
      oz += flexible ? ro[i] * zi : 0.0;
      sz += zi;
      sr += r[i];
      so += flexible ? ro[i] : 0.0;
    }
    t = amg_small_sum3(rz, oz, sz, red, seg);
    rz = t.x, oz = t.y, sz = t.z;
    t = amg_small_sum3(sr, so, 0.0, red, seg);
    sr = t.x, so = t.y;
    const double m = null_space ? sz / (double)n : 0.0;
    const double rho = rz - m * sr, rho_old_term = flexible ? oz - m * so : 0.0;
    const double beta = k == 0 ? 0.0 : (rho - rho_old_term) / rho_prev;
    for (int i = lid; i < n; i += AMG_SMALL_WGS) p[i] = k == 0 ? z[i] - m : (z[i] - m) + beta * p[i];
    barrier(CLK_GLOBAL_MEM_FENCE);
    double pq = 0.0;
    for (int i = lid; i < n; i += AMG_SMALL_WGS) {
      const double qi = -ef_amg_row_residual(rp[i], rp[i + 1], col, val0, p, 0.0);
      q[i] = qi;
      pq += p[i] * qi;
    }
    pq = amg_small_sum3(pq, 0.0, 0.0, red, seg).x;
    if (!(pq > 0.0 && isfinite(pq))) {
      stop = k;
      broken = 1;
      break;
    }
    const double a = rho / pq;
    rr = 0.0;
    for (int i = lid; i < n; i += AMG_SMALL_WGS) {
      x[i] += a * p[i];
      const double ri = r[i];
      if (flexible) ro[i] = ri;
      const double rn = ri - a * q[i];
      r[i] = rn;
      rr += rn * rn;
    }
    rr = amg_small_sum3(rr, 0.0, 0.0, red, seg).x;
    rho_prev = rho;
  }
  double ta = 0.0;
  for (int i = lid; i < n; i += AMG_SMALL_WGS) {
    const double s = ef_amg_row_residual(rp[i], rp[i + 1], col, val0, x, b[i]);
    ta += s * s;
  }
  ta = amg_small_sum3(ta, 0.0, 0.0, red, seg).x;
  if (lid == 0) {
    out[0] = (double)(stop >= 0 ? stop : max_it);
    out[1] = rr;
    out[2] = bb;
    out[3] = (double)broken;
    out[4] = ta;
  }
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
