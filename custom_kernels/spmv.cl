/* spmv.cl -- the matrix kernels of the device CG: the multi-row vector CSR product
 * (Rossi, Mossaiby & Idelsohn 2013, section 4.2) alone and fused with what each CG
 * step does around it.  The vector kernels and the algorithm are described in cg.cl;
 * this file is built once per tuned (WGS_BITS, ROWS_BITS) pair, cg.cl only once. */
#include "cg_common.h"

/* The row loop of every matrix kernel.  EF_FOR_ROWS(n, ENTRY, OWN, stmts) runs stmts
 * once for every row owned by this work-group, by one item, with row_total = the sum
 * over the row's entries j of ENTRY(j) (an expression in j, e.g. val[j] * x[col[j]]).
 * OWN(row, own) declares the row's own vector entries, loaded (when own) before the
 * barrier so that their latency overlaps the gather.  Trip counts depend on the
 * group only, so every barrier is reached by all items.
 *
 * Lanes (LANES > 1, paper section 4.2): each row gets LANES items that stride over its
 * entries; the lane sums meet in __local memory, double-buffered so that one barrier
 * per row block suffices (block t writes buffer t&1 while lane 0 of block t-1 may
 * still read the other), and lane 0 adds them in lane order.
 *
 * One lane (LANES == 1): each item adds its own row's entries in order. */
#if LANES > 1
#define EF_LANES_DECL __local double ef_lanes_[2][WGS]
#define EF_FOR_ROWS(n, ENTRY, OWN, ...)                                                  \
  {                                                                                      \
    const int ef_lid_ = get_local_id(0), ef_lane_ = ef_lid_ & (LANES - 1);               \
    const int ef_blocks_ = ((n) + ROWS_PER_WG - 1) >> ROWS_BITS;                         \
    int ef_buf_ = 0;                                                                     \
    for (int ef_b_ = get_group_id(0); ef_b_ < ef_blocks_; ef_b_ += get_num_groups(0)) {  \
      const int row = (ef_b_ << ROWS_BITS) + (ef_lid_ >> LANE_BITS);                     \
      const int ef_own_ = ef_lane_ == 0 && row < (n);                                    \
      OWN(row, ef_own_)                                                                  \
      double ef_ls_ = 0.0;                                                               \
      if (row < (n)) {                                                                   \
        const ef_rp_t ef_e_ = rp[row + 1];                                               \
        for (ef_rp_t j = rp[row] + ef_lane_; j < ef_e_; j += LANES) ef_ls_ += ENTRY(j);  \
      }                                                                                  \
      ef_lanes_[ef_buf_][ef_lid_] = ef_ls_;                                              \
      barrier(CLK_LOCAL_MEM_FENCE);                                                      \
      if (ef_own_) {                                                                     \
        const double row_total = ef_row_total(ef_lanes_[ef_buf_], ef_lid_);              \
        __VA_ARGS__                                                                      \
      }                                                                                  \
      ef_buf_ ^= 1;                                                                      \
    }                                                                                    \
  }
#else
#define EF_LANES_DECL
#define EF_FOR_ROWS(n, ENTRY, OWN, ...)                                                  \
  {                                                                                      \
    for (int row = get_global_id(0); row < (n); row += get_global_size(0)) {             \
      OWN(row, 1)                                                                        \
      double row_total = 0.0;                                                            \
      const ef_rp_t ef_e_ = rp[row + 1];                                                 \
      for (ef_rp_t j = rp[row]; j < ef_e_; ++j) row_total += ENTRY(j);                   \
      __VA_ARGS__                                                                        \
    }                                                                                    \
  }
#endif
#define EF_NO_OWN(row, own)

/* y = A x (the plain product: tests and the tuner's check). */
__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
void cg_spmv(const int n, __global const ef_rp_t *restrict rp, __global const int *restrict col,
             __global const double *restrict val, __global const double *restrict x,
             __global double *restrict y) {
  EF_LANES_DECL;
#define EF_LS(j) (val[j] * x[col[j]])
  EF_FOR_ROWS(n, EF_LS, EF_NO_OWN, y[row] = row_total;)
#undef EF_LS
}

/* The CG kernels below (cg_init, cg_std_spmv, cg_tt_spmv, and cg_residual with
 * scaled = 1) take the scaled matrix Ah without its diagonal, which the scaling
 * makes exactly 1 (cg_scale_matrix): rp/col/val are the off-diagonal rows and each
 * product adds the row's own vector entry.  That saves a value, a column index and
 * a gather per row (12 of about 250 bytes per row and iteration). */

/* r_0 = bh - Ah xh with partials of r_0.r_0, the state reset, and the auxiliary
 * vectors: mode 0 (standard) p_{-1} = 0 in aux1; mode 1 (three-term) r_{-1} = r_0
 * in aux1 and x_{-1} = x_0 in aux2, so that omega_0 = 1 multiplies finite values.
 * A zero right-hand side gives x = 0, r = 0 (converged at once). */
__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
void cg_init(const int n, __global const ef_rp_t *restrict rp, __global const int *restrict col,
             __global const double *restrict val, __global const double *restrict d,
             __global const double *restrict b, __global double *restrict x,
             __global double *restrict r, __global double *restrict aux1,
             __global double *restrict aux2, const int mode, __global const double *restrict bb_part,
             const int n_bb, __global double *restrict rr_part, __global double *state,
             const double rtol) {
  __local double red[WGS];
  EF_LANES_DECL;
  const double bb = ef_sum_partials(bb_part, n_bb, red, WGS);
  double acc = 0.0;
  const int rows = bb == 0.0 ? 0 : n; /* no product for a zero right-hand side */
#define EF_LS(j) (val[j] * x[col[j]])
#define EF_OWN(row, own) const double bh = own ? b[row] / d[row] : 0.0, xi = own ? x[row] : 0.0;
  EF_FOR_ROWS(rows, EF_LS, EF_OWN,
              const double ri = bh - (xi + row_total);
              r[row] = ri;
              acc += ri * ri;
              if (mode == 1) {
                aux1[row] = ri;
                aux2[row] = xi;
              } else {
                aux1[row] = 0.0;
              })
#undef EF_OWN
#undef EF_LS
  if (bb == 0.0)
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
      x[i] = 0.0;
      r[i] = 0.0;
      aux1[i] = 0.0;
      if (mode == 1) aux2[i] = 0.0;
    }
  const double s = ef_group_sum(acc, red, WGS);
  if (get_local_id(0) == 0) rr_part[get_group_id(0)] = s;
  if (EF_LEAD) {
    state[ST_BB] = bb;
    state[ST_TOL2] = rtol * rtol * bb;
    state[ST_RHO_CUR] = 0.0;
    state[ST_RHO_PREV] = INFINITY; /* beta_0 = rho_0 / inf = 0 */
    state[ST_ALPHA] = 0.0;         /* x += 0 * p_{-1} in iteration 0 */
    state[ST_STOP_A] = -1.0;
    state[ST_STOP_B] = -1.0;
    state[ST_STOP_F] = -1.0;
    state[ST_BREAK] = -1.0;
    state[ST_FINAL] = -1.0;
  }
}

/* Standard CG, first launch of iteration k (the algorithm is described in cg.cl). */
__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
void cg_std_spmv(const int n, __global const ef_rp_t *restrict rp, __global const int *restrict col,
                 __global const double *restrict val, __global const double *restrict r,
                 __global const double *restrict pold, __global double *restrict pnew,
                 __global double *restrict q, __global double *restrict x,
                 __global const double *restrict rho_part, const int n_rho,
                 __global double *restrict sig_part, __global double *state, const int k) {
  __local double red[WGS];
  EF_LANES_DECL;
  const double stop_b = state[ST_STOP_B];
  const double rho = ef_sum_partials(rho_part, n_rho, red, WGS);
  const double alpha_prev = state[ST_ALPHA];
  const int stopped = stop_b >= 0.0, converged = !stopped && rho <= state[ST_TOL2];
  if (stopped && EF_LEAD) state[ST_STOP_A] = stop_b;
  if (converged) { /* converged at k: only the pending update of x remains */
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
      x[i] = fma(alpha_prev, pold[i], x[i]);
    if (EF_LEAD) {
      state[ST_STOP_A] = k;
      state[ST_FINAL] = rho;
    }
  }
  /* Barriers follow: leave by running no row blocks rather than by returning. */
  const int rows = stopped || converged ? 0 : n;
  const double beta = rho / state[ST_RHO_PREV];
  double sig = 0.0;
#define EF_LS(j) (val[j] * fma(beta, pold[col[j]], r[col[j]]))
#define EF_OWN(row, own) \
  const double po = own ? pold[row] : 0.0, ri = own ? r[row] : 0.0, xi = own ? x[row] : 0.0;
  EF_FOR_ROWS(rows, EF_LS, EF_OWN,
              const double pn = fma(beta, po, ri);
              x[row] = fma(alpha_prev, po, xi);
              pnew[row] = pn;
              const double qi = pn + row_total;
              q[row] = qi;
              sig += pn * qi;)
#undef EF_OWN
#undef EF_LS
  const double s = ef_group_sum(sig, red, WGS);
  if (rows == 0) return;
  if (get_local_id(0) == 0) sig_part[get_group_id(0)] = s;
  if (EF_LEAD) state[ST_RHO_CUR] = rho;
}

/* Three-term CG, first launch of iteration k: s = Ah r_k and the partials of
 * r_k.r_k and r_k.s in one pass. */
__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
void cg_tt_spmv(const int n, __global const ef_rp_t *restrict rp, __global const int *restrict col,
                __global const double *restrict val, __global const double *restrict r,
                __global double *restrict s, __global double *restrict rr_part,
                __global double *restrict rs_part, __global double *state) {
  __local double2 red[WGS];
  EF_LANES_DECL;
  const double stop_b = state[ST_STOP_B];
  if (stop_b >= 0.0 && EF_LEAD) state[ST_STOP_A] = stop_b;
  const int rows = stop_b >= 0.0 ? 0 : n; /* barriers follow: no early return */
  double2 acc = (double2)(0.0, 0.0);
#define EF_LS(j) (val[j] * r[col[j]])
#define EF_OWN(row, own) const double ri = own ? r[row] : 0.0;
  EF_FOR_ROWS(rows, EF_LS, EF_OWN,
              const double si = ri + row_total;
              s[row] = si;
              acc += (double2)(ri * ri, ri * si);)
#undef EF_OWN
#undef EF_LS
  const double2 t = ef_group_sum2(acc, red, WGS);
  if (rows == 0) return;
  if (get_local_id(0) == 0) {
    rr_part[get_group_id(0)] = t.x;
    rs_part[get_group_id(0)] = t.y;
  }
}

/* Partials of (res.res, rhs.rhs) with res = rhs - A x, rhs = b (scaled = 0: A is
 * the whole matrix) or D^-1/2 b (scaled = 1: A is Ah's off-diagonal part, the unit
 * diagonal added): the true residual after a solve. */
__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
void cg_residual(const int n, __global const ef_rp_t *restrict rp, __global const int *restrict col,
                 __global const double *restrict val, __global const double *restrict x,
                 __global const double *restrict b, __global const double *restrict d,
                 const int scaled, __global double *restrict part_rr,
                 __global double *restrict part_bb) {
  __local double2 red[WGS];
  EF_LANES_DECL;
  double2 acc = (double2)(0.0, 0.0);
#define EF_LS(j) (val[j] * x[col[j]])
#define EF_OWN(row, own) \
  const double rhs = !own ? 0.0 : scaled ? b[row] / d[row] : b[row], xd = own && scaled ? x[row] : 0.0;
  EF_FOR_ROWS(n, EF_LS, EF_OWN,
              const double res = rhs - (xd + row_total);
              acc += (double2)(res * res, rhs * rhs);)
#undef EF_OWN
#undef EF_LS
  const double2 t = ef_group_sum2(acc, red, WGS);
  if (get_local_id(0) == 0) {
    part_rr[get_group_id(0)] = t.x;
    part_bb[get_group_id(0)] = t.y;
  }
}
