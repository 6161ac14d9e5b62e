/* fs_mpi.cl -- the distributed step's own kernels (custom_utilities/opencl/opencl_fs_mpi.c): the halo's
 * send-list pack and the pressure system's Jacobi CG in the Chronopoulos-Gear form on the owned rows
 * (fractional_step_mpi.c's pressure_cg; its product FSM_LANES work-items a row over a fixed grid of work-groups,
 * per-group partial sums the host adds in group order; with the overlap the product runs on the interior rows,
 * then the boundary rows), and the update of the implicit viscosity's stage CG (its product is fs_kernels.cl's
 * fs_visc_apply_dots).
 * Options: -D FSM_WGS (work-group size, a power of two), -D FSM_LANES (work-items a row of the CG product, a power
 * of two up to FSM_WGS), -D EF_ROW_PTR_64 (int64 offsets). */
#include "ef_reduce.h"

#ifndef FSM_WGS
#define FSM_WGS 256
#endif
#ifndef FSM_LANES
#define FSM_LANES 4
#endif
#if FSM_LANES < 1 || FSM_LANES > FSM_WGS || (FSM_LANES & (FSM_LANES - 1)) != 0
#error "FSM_LANES must be a power of two from 1 to FSM_WGS"
#endif
#define FSM_ROWS (FSM_WGS / FSM_LANES) /* rows a work-group multiplies at once */

#define FSM_KERNEL __kernel __attribute__((reqd_work_group_size(FSM_WGS, 1, 1)))

/* out[k nc + c] = x[nodes[k] nc + c]: the owned values a neighbour receives as its ghosts. */
FSM_KERNEL void fsm_pack(const int count, const int nc, __global const int *restrict nodes,
                         __global const double *restrict x, __global double *restrict out) {
  const int k = get_global_id(0);
  if (k >= count)
    return;
  const int i = nodes[k];
  for (int c = 0; c < nc; ++c)
    out[k * nc + c] = x[i * nc + c];
}

/* The start: r = (b - bmean) - H x, dinv = 1 / H_II (1 where H_II <= 0, counted), u = dinv r; per group
 * partials[2 g] = sum (b - bmean) dinv (b - bmean), partials[2 g + 1] = the bad diagonals. */
FSM_KERNEL void fsm_cg_start(const int n, __global const ef_rp_t *restrict row_ptr, __global const int *restrict col,
                             __global const double *restrict val, __global const double *restrict b,
                             const double bmean, __global const double *restrict x, __global double *restrict r,
                             __global double *restrict u, __global double *restrict dinv,
                             __global double *restrict partials) {
  __local double2 scratch[FSM_WGS];
  const int i = get_global_id(0);
  double2 v = (double2)(0.0, 0.0);
  if (i < n) {
    double ax = 0.0, d = 0.0;
    for (ef_rp_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const int j = col[k];
      ax += val[k] * x[j];
      d = j == i ? val[k] : d;
    }
    const int bad = !(d > 0.0);
    const double di = 1.0 / (bad ? 1.0 : d), bi = b[i] - bmean, ri = bi - ax;
    dinv[i] = di;
    r[i] = ri;
    u[i] = di * ri;
    v = (double2)(bi * di * bi, bad ? 1.0 : 0.0);
  }
  v = ef_group_sum2(v, scratch, FSM_WGS);
  if (get_local_id(0) == 0)
    vstore2(v, get_group_id(0), partials);
}

/* w_i = (H u)_i for the rows i = rows[k], k < count (rows NULL: i = k), u's entries at their columns current; the
 * partials of r.u and w.u of group g at partials[2 (g0 + g)].  FSM_LANES work-items a row: lane l adds the row's
 * entries l, l + FSM_LANES, ... (neighbouring lanes read neighbouring entries: coalesced), lane 0 adds the lanes'
 * sums in lane order.  The groups stride over blocks of FSM_ROWS rows, so the grid, and with it the number of
 * partials the host reads back and adds, is the caller's (a fixed cap, not one group per block).  Lane sums are
 * double-buffered in lanes (2 FSM_WGS): block t writes half t & 1 of it, so one barrier a block suffices. */
void fsm_rows_product(const int count, __global const int *restrict rows, const int g0,
                      __global const ef_rp_t *restrict row_ptr, __global const int *restrict col,
                      __global const double *restrict val, __global const double *restrict r,
                      __global const double *restrict u, __global double *restrict w,
                      __global double *restrict partials, __local double *lanes, __local double2 *scratch) {
  const int lid = get_local_id(0), lane = lid & (FSM_LANES - 1);
  const int blocks = (count + FSM_ROWS - 1) / FSM_ROWS;
  double2 v = (double2)(0.0, 0.0);
  int buf = 0;
  for (int blk = get_group_id(0); blk < blocks; blk += get_num_groups(0)) {
    const int k = blk * FSM_ROWS + lid / FSM_LANES, own = k < count;
    const int i = !own ? 0 : rows ? rows[k] : k;
    double s = 0.0;
    if (own) {
      const ef_rp_t end = row_ptr[i + 1];
      for (ef_rp_t e = row_ptr[i] + lane; e < end; e += FSM_LANES)
        s += val[e] * u[col[e]];
    }
#if FSM_LANES > 1
    lanes[buf * FSM_WGS + lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (own && lane == 0)
      for (int l = 1; l < FSM_LANES; ++l)
        s += lanes[buf * FSM_WGS + lid + l];
    buf ^= 1;
#endif
    if (own && lane == 0) {
      w[i] = s;
      v += (double2)(r[i] * u[i], s * u[i]);
    }
  }
  (void)lanes;
  (void)buf;
  v = ef_group_sum2(v, scratch, FSM_WGS);
  if (lid == 0)
    vstore2(v, g0 + get_group_id(0), partials);
}

/* w = H u on the owned rows 0 .. n-1 (u's ghosts current); per group partials of r.u and w.u. */
FSM_KERNEL void fsm_cg_spmv_dots(const int n, __global const ef_rp_t *restrict row_ptr,
                                 __global const int *restrict col, __global const double *restrict val,
                                 __global const double *restrict r, __global const double *restrict u,
                                 __global double *restrict w, __global double *restrict partials) {
  __local double2 scratch[FSM_WGS];
  __local double lanes[FSM_LANES > 1 ? 2 * FSM_WGS : 1];
  fsm_rows_product(n, (__global const int *)0, 0, row_ptr, col, val, r, u, w, partials, lanes, scratch);
}

/* The same product on the rows of a list (the overlap, opencl_fs_mpi.c: the interior rows, which read no
 * ghost, while the halo is in flight, then the boundary rows); the partials of group g at g0 + g. */
FSM_KERNEL void fsm_cg_spmv_dots_rows(const int count, __global const int *restrict rows, const int g0,
                                      __global const ef_rp_t *restrict row_ptr, __global const int *restrict col,
                                      __global const double *restrict val, __global const double *restrict r,
                                      __global const double *restrict u, __global double *restrict w,
                                      __global double *restrict partials) {
  __local double2 scratch[FSM_WGS];
  __local double lanes[FSM_LANES > 1 ? 2 * FSM_WGS : 1];
  fsm_rows_product(count, rows, g0, row_ptr, col, val, r, u, w, partials, lanes, scratch);
}

/* p = u + beta p, s = w + beta s, x += alpha p, r -= alpha s, u = dinv r. */
FSM_KERNEL void fsm_cg_update(const int n, const double alpha, const double beta, __global double *restrict p,
                              __global double *restrict s, __global double *restrict x, __global double *restrict r,
                              __global double *restrict u, __global const double *restrict w,
                              __global const double *restrict dinv) {
  const int i = get_global_id(0);
  if (i >= n)
    return;
  const double pi = u[i] + beta * p[i], si = w[i] + beta * s[i], ri = r[i] - alpha * si;
  p[i] = pi;
  s[i] = si;
  x[i] += alpha * pi;
  r[i] = ri;
  u[i] = dinv[i] * ri;
}

/* The implicit viscosity's stage CG update on the owned rows (3 doubles a node, diag one a node; fractional_step_mpi.c's
 * stage_solve): p = u + beta p, s = w + beta s, x += alpha p, r -= alpha s, u = r / diag.  beta = 0 (the first
 * update) reads neither p nor s. */
FSM_KERNEL void fsm_visc_update(const int n, const double alpha, const double beta, __global double *restrict p,
                                __global double *restrict s, __global double *restrict x, __global double *restrict r,
                                __global double *restrict u, __global const double *restrict w,
                                __global const double *restrict diag) {
  const int i = get_global_id(0);
  if (i >= n)
    return;
  const double dg = diag[i];
  for (int c = 0; c < 3; ++c) {
    const int k = 3 * i + c;
    const double pk = beta != 0.0 ? u[k] + beta * p[k] : u[k], sk = beta != 0.0 ? w[k] + beta * s[k] : w[k];
    const double rk = r[k] - alpha * sk;
    p[k] = pk;
    s[k] = sk;
    x[k] += alpha * pk;
    r[k] = rk;
    u[k] = rk / dg;
  }
}

/* x = 0 on the owned rows (b = 0). */
FSM_KERNEL void fsm_zero(const int n, __global double *restrict x) {
  const int i = get_global_id(0);
  if (i < n)
    x[i] = 0.0;
}
