/* cg.cl -- the device conjugate-gradient pressure solver (Rossi, Mossaiby & Idelsohn 2013,
 * section 4): fused CG iterations with deterministic reductions.  This file holds
 * the vector kernels (built once); the matrix kernels are in spmv.cl (built per
 * tuned SpMV configuration).  Host side: custom_utilities/opencl_cg.c.
 *
 * Everything works on the symmetrically scaled system
 *     Ah = D^-1/2 A D^-1/2,  bh = D^-1/2 b,  xh = D^1/2 x,  D = diag(A),
 * whose unit diagonal is left out: the matrix kernels take Ah's off-diagonal part
 * (rp_off, col_off, val_off, built by cg_scale_matrix) and add the own entry.
 *
 * Standard CG, two launches per iteration k (the host passes k; *_spmv in spmv.cl):
 *   cg_std_spmv   beta_k = rho_k / rho_{k-1} (rho_k re-added from the partials of the
 *                 previous update), x += alpha_{k-1} p_{k-1}, p_k = r_k + beta_k p_{k-1},
 *                 q = Ah p_k with p_k formed inside the gather, partials of p_k.q
 *   cg_std_update alpha_k = rho_k / (p_k.q), r -= alpha_k q, partials of r.r
 *   Bytes per iteration (int32 row_ptr, each vector counted once, m = nnz - n
 *   off-diagonal entries):
 *     12 m + 4 n (matrix) + 16 n (r, p_{k-1} gathered) + 16 n (x) + 16 n (p_k, q written)
 *     + 24 n (q read, r read and written) = 12 m + 76 n.
 * Three-term recurrence CG (Saad, Iterative Methods for Sparse Linear Systems, 2nd ed.,
 * three-term form of CG; Rutishauser), two launches, one reduction per iteration:
 *   cg_tt_spmv    s = Ah r_k, partials of r_k.r_k and r_k.s
 *   cg_tt_update  gamma_k = (r_k.r_k)/(r_k.Ah r_k),
 *                 omega_0 = 1, omega_k = 1 / (1 - (gamma_k/gamma_{k-1}) (rr_k/rr_{k-1}) / omega_{k-1}),
 *                 x_{k+1} = omega_k (x_k + gamma_k r_k) + (1 - omega_k) x_{k-1},
 *                 r_{k+1} = omega_k (r_k - gamma_k s) + (1 - omega_k) r_{k-1}
 *   Bytes per iteration: 12 m + 4 n + 8 n (r gathered) + 8 n (s) + 56 n (five vectors
 *     read, two written) = 12 m + 76 n.
 * The recurrence residual of the three-term form drifts from b - A x; the host
 * reports the true residual after every solve.
 *
 * Stopping: the kernel that first sees r.r <= rtol^2 b.b (or p.Ap <= 0) records the
 * iteration in the state, and every later launch does nothing, so the host may
 * read the state only every few iterations and still get exactly the iteration at
 * which a check after every iteration would have stopped.  Kernels never return
 * before a barrier (a stopped launch runs zero row blocks instead): some compilers
 * mishandle barriers after an early return even when it is uniform.
 */
#include "cg_common.h"

/* part[g] = sum over group g's items of x_i y_i (first stage of a dot product). */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void cg_dot(const int n, __global const double *restrict x, __global const double *restrict y,
            __global double *restrict part) {
  __local double red[VWGS];
  double a = 0.0;
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) a += x[i] * y[i];
  const double s = ef_group_sum(a, red, VWGS);
  if (get_local_id(0) == 0) part[get_group_id(0)] = s;
}

/* state[slot] = sum of part[0..count) (second stage, one work-group). */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void cg_reduce(__global const double *restrict part, const int count, __global double *state,
               const int slot) {
  __local double red[VWGS];
  const double s = ef_sum_partials(part, count, red, VWGS);
  if (get_local_id(0) == 0) state[slot] = s;
}

/* d_i = sqrt(a_ii); *bad = the smallest row whose diagonal is missing, <= 0 or not finite. */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void cg_diag(const int n, __global const ef_rp_t *restrict rp, __global const int *restrict col,
             __global const double *restrict val, __global double *restrict d,
             __global int *bad) {
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    double a = 0.0;
    for (ef_rp_t j = rp[i]; j < rp[i + 1]; ++j)
      if (col[j] == i) a = val[j];
    if (!(a > 0.0) || !isfinite(a)) {
      atomic_min(bad, i);
      a = 1.0;
    }
    d[i] = sqrt(a);
  }
}

/* The off-diagonal part of Ah = D^-1/2 A D^-1/2 (whose diagonal is 1 by the choice
 * d_i = sqrt(a_ii)) as CSR: rp_off[i] = rp[i] - i, since every row holds exactly
 * one diagonal entry (cg_diag checks it is there), and Ah_ij = a_ij / (d_i d_j). */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void cg_scale_matrix(const int n, __global const ef_rp_t *restrict rp,
                     __global const int *restrict col, __global const double *restrict val,
                     __global const double *restrict d, __global ef_rp_t *restrict rp_off,
                     __global int *restrict col_off, __global double *restrict val_off) {
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    const double di = d[i];
    const ef_rp_t b = rp[i], e = rp[i + 1];
    ef_rp_t o = b - i;
    rp_off[i] = o;
    if (i == n - 1) rp_off[n] = e - n;
    for (ef_rp_t j = b; j < e; ++j) {
      const int c = col[j];
      if (c == i) continue;
      col_off[o] = c;
      val_off[o++] = val[j] / (di * d[c]);
    }
  }
}

/* xh = D^1/2 x in place; partials of bh.bh with bh = D^-1/2 b. */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void cg_scale_in(const int n, __global const double *restrict d, __global const double *restrict b,
                 __global double *restrict x, __global double *restrict bb_part) {
  __local double red[VWGS];
  double a = 0.0;
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    const double bh = b[i] / d[i];
    x[i] *= d[i];
    a += bh * bh;
  }
  const double s = ef_group_sum(a, red, VWGS);
  if (get_local_id(0) == 0) bb_part[get_group_id(0)] = s;
}

/* x = D^-1/2 xh (src and dst may be the same buffer). */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void cg_scale_out(const int n, __global const double *restrict d, __global const double *src,
                  __global double *dst) {
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = src[i] / d[i];
}

/* Standard CG, second launch of iteration k. */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void cg_std_update(const int n, __global double *restrict r, __global const double *restrict q,
                   __global const double *restrict sig_part, const int n_sig,
                   __global double *restrict rho_part, __global double *state, const int k) {
  __local double red[VWGS];
  const double stop_a = state[ST_STOP_A];
  const double sigma = ef_sum_partials(sig_part, n_sig, red, VWGS);
  const double rho = state[ST_RHO_CUR];
  const double alpha = rho / sigma;
  const int stopped = stop_a >= 0.0;
  const int broken = !stopped && (!(sigma > 0.0) || !isfinite(alpha)); /* p.Ap <= 0: not SPD */
  if (EF_LEAD && stopped) state[ST_STOP_B] = stop_a;
  if (EF_LEAD && broken) {
    state[ST_BREAK] = k;
    state[ST_STOP_B] = k;
    state[ST_FINAL] = rho;
  }
  const int rows = stopped || broken ? 0 : n; /* barriers follow: no early return */
  double acc = 0.0;
  for (int i = get_global_id(0); i < rows; i += get_global_size(0)) {
    const double ri = fma(-alpha, q[i], r[i]);
    r[i] = ri;
    acc += ri * ri;
  }
  const double s = ef_group_sum(acc, red, VWGS);
  if (rows == 0) return;
  if (get_local_id(0) == 0) rho_part[get_group_id(0)] = s;
  if (EF_LEAD) {
    state[ST_RHO_PREV] = rho;
    state[ST_ALPHA] = alpha;
  }
}

/* Standard CG after the last allowed iteration k-1 without a stop: apply the
 * pending x += alpha_{k-1} p_{k-1} and judge rho_k. */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void cg_std_finish(const int n, __global double *restrict x, __global const double *restrict pold,
                   __global const double *restrict rho_part, const int n_rho,
                   __global double *state, const int k) {
  __local double red[VWGS];
  const double rho = ef_sum_partials(rho_part, n_rho, red, VWGS);
  if (state[ST_STOP_A] >= 0.0 || state[ST_STOP_B] >= 0.0) return; /* after the last barrier */
  const double alpha_prev = state[ST_ALPHA];
  for (int i = get_global_id(0); i < n; i += get_global_size(0))
    x[i] = fma(alpha_prev, pold[i], x[i]);
  if (EF_LEAD) {
    state[ST_FINAL] = rho;
    if (rho <= state[ST_TOL2]) state[ST_STOP_F] = k;
  }
}

/* Three-term CG, second launch of iteration k: x_{k+1}, r_{k+1} overwrite x_{k-1}, r_{k-1}. */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void cg_tt_update(const int n, __global const double *restrict x_cur, __global double *restrict x_prev,
                  __global const double *restrict r_cur, __global double *restrict r_prev,
                  __global const double *restrict s, __global const double *restrict rr_part,
                  __global const double *restrict rs_part, const int n_part,
                  __global double *state, const int k) {
  __local double2 red[VWGS];
  const double2 t = ef_sum_partials2(rr_part, rs_part, n_part, red, VWGS);
  /* No barrier below: early returns are safe from here on. */
  const double stop_a = state[ST_STOP_A];
  if (stop_a >= 0.0) {
    if (EF_LEAD) state[ST_STOP_B] = stop_a;
    return;
  }
  const double rr = t.x, rs = t.y;
  if (rr <= state[ST_TOL2]) { /* converged: x_k is the answer */
    if (EF_LEAD) {
      state[ST_STOP_B] = k;
      state[ST_FINAL] = rr;
    }
    return;
  }
  const double gamma = rr / rs;
  double omega = 1.0;
  if (k > 0) {
    const int p = (k - 1) & 1;
    omega = 1.0 / (1.0 - (gamma / state[ST_TT_GAMMA + p]) * (rr / state[ST_TT_RR + p]) /
                             state[ST_TT_OMEGA + p]);
  }
  if (!(rs > 0.0) || !isfinite(gamma) || !isfinite(omega)) { /* r.Ar <= 0: not SPD */
    if (EF_LEAD) {
      state[ST_BREAK] = k;
      state[ST_STOP_B] = k;
      state[ST_FINAL] = rr;
    }
    return;
  }
  const double w1 = 1.0 - omega;
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    const double ri = r_cur[i];
    x_prev[i] = omega * fma(gamma, ri, x_cur[i]) + w1 * x_prev[i];
    r_prev[i] = omega * fma(-gamma, s[i], ri) + w1 * r_prev[i];
  }
  if (EF_LEAD) {
    state[ST_TT_GAMMA + (k & 1)] = gamma;
    state[ST_TT_OMEGA + (k & 1)] = omega;
    state[ST_TT_RR + (k & 1)] = rr;
  }
}
