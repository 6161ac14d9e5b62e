/* amg_rows.h -- per-row operations of the aggregation multigrid preconditioner, shared word
 * for word by the OpenCL kernels (amg.cl, OpenCL C 1.2 + cl_khr_fp64, included textually by
 * the kernel loader) and the OpenMP host apply (custom_utilities/host/host_amg.c, C11).
 *
 * Notation: level l has the CSR matrix A_l (rows i, offsets b..e of row i given by the caller
 * so that int32 and int64 row offsets share the code), the aggregate map agg_l (row i of level
 * l belongs to row agg[i] of level l+1; -1: not aggregated, its prolongation row is zero),
 * and the member lists of the aggregates (mem[mp[I] .. mp[I+1]) are the rows of aggregate I,
 * in increasing order).  The prolongation P is piecewise constant: P_iI = 1 iff agg[i] = I, so
 *     A_{l+1} = P^T A_l P:  (A_{l+1})_IJ = sum of a_ij over i in I, j in J,
 *     restriction  r_c = P^T r:  (r_c)_I = sum of r_i over i in I,
 *     prolongation x += alpha P x_c:  x_i += alpha x_c[agg[i]].
 * Smoother: damped l1-Jacobi, x <- x + omega D^-1 (r - A x) with d_i = sum_j |a_ij| (Kolev and
 * Vassilevski's l1 smoother: convergent for any symmetric A with omega < 2, also when some
 * off-diagonal entries are positive).
 *
 * Every sum runs in a fixed order (members in order, row entries in order), so the host and
 * the device give the same bits up to the compilers' contraction of a*b+c. */
#ifndef EF_AMG_ROWS_H
#define EF_AMG_ROWS_H

#ifdef __OPENCL_VERSION__
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define EF_AMG_GLOBAL __global
#define EF_AMG_INLINE static inline
typedef long ef_amg_off;
typedef int ef_amg_i32;
#else
#include <math.h>
#include <stdint.h>
#define EF_AMG_GLOBAL
#define EF_AMG_INLINE static inline
typedef int64_t ef_amg_off;
typedef int32_t ef_amg_i32;
#endif

/* d_i^-1 with d_i = sum_j |a_ij| over row i (1 for an empty row). */
EF_AMG_INLINE double ef_amg_row_l1_inverse(ef_amg_off b, ef_amg_off e,
                                           EF_AMG_GLOBAL const double *val) {
  double d = 0.0;
  for (ef_amg_off j = b; j < e; ++j) d += fabs(val[j]);
  return d > 0.0 ? 1.0 / d : 1.0;
}

/* sum of a_ij x_j over the entries j = b, b + step, b + 2 step, ... < e of a row (step > 1:
 * one lane's share when several work-items share a row; the host uses step 1). */
EF_AMG_INLINE double ef_amg_row_dot(ef_amg_off b, ef_amg_off e, int step, EF_AMG_GLOBAL const ef_amg_i32 *col,
                                    EF_AMG_GLOBAL const double *val, EF_AMG_GLOBAL const double *x) {
  double s = 0.0;
  for (ef_amg_off j = b; j < e; j += step) s += val[j] * x[col[j]];
  return s;
}

/* r_i - (A x)_i over row i. */
EF_AMG_INLINE double ef_amg_row_residual(ef_amg_off b, ef_amg_off e, EF_AMG_GLOBAL const ef_amg_i32 *col,
                                         EF_AMG_GLOBAL const double *val, EF_AMG_GLOBAL const double *x,
                                         double ri) {
  return ri - ef_amg_row_dot(b, e, 1, col, val, x);
}

/* y_i = x_i + alpha xc[agg[i]] (agg -1: x_i). */
EF_AMG_INLINE double ef_amg_prolonged(EF_AMG_GLOBAL const double *x, EF_AMG_GLOBAL const ef_amg_i32 *agg,
                                      EF_AMG_GLOBAL const double *xc, double alpha, ef_amg_i32 i) {
  const ef_amg_i32 a = agg[i];
  return a >= 0 ? x[i] + alpha * xc[a] : x[i];
}

/* sum of a_ij y_j, y = x + alpha P xc, over the entries b, b + step, ... < e. */
EF_AMG_INLINE double ef_amg_row_dot_prolonged(ef_amg_off b, ef_amg_off e, int step,
                                              EF_AMG_GLOBAL const ef_amg_i32 *col, EF_AMG_GLOBAL const double *val,
                                              EF_AMG_GLOBAL const double *x, EF_AMG_GLOBAL const ef_amg_i32 *agg,
                                              EF_AMG_GLOBAL const double *xc, double alpha) {
  double s = 0.0;
  for (ef_amg_off j = b; j < e; j += step) s += val[j] * ef_amg_prolonged(x, agg, xc, alpha, col[j]);
  return s;
}

/* One l1-Jacobi sweep on row i applied to y = x + alpha P xc (prolongation fused into the
 * gather): y_i + omega dinv_i (r_i - (A y)_i), given ay = (A y)_i. */
EF_AMG_INLINE double ef_amg_post_value(EF_AMG_GLOBAL const double *x, EF_AMG_GLOBAL const ef_amg_i32 *agg,
                                       EF_AMG_GLOBAL const double *xc, double alpha, double omega, double dinv,
                                       double ri, double ay, ef_amg_i32 i) {
  return ef_amg_prolonged(x, agg, xc, alpha, i) + omega * dinv * (ri - ay);
}

/* The same for the whole row (host). */
EF_AMG_INLINE double ef_amg_row_post(ef_amg_off b, ef_amg_off e, EF_AMG_GLOBAL const ef_amg_i32 *col,
                                     EF_AMG_GLOBAL const double *val, EF_AMG_GLOBAL const double *x,
                                     EF_AMG_GLOBAL const ef_amg_i32 *agg, EF_AMG_GLOBAL const double *xc,
                                     double alpha, double omega, double dinv, double ri, ef_amg_i32 i) {
  return ef_amg_post_value(x, agg, xc, alpha, omega, dinv, ri,
                           ef_amg_row_dot_prolonged(b, e, 1, col, val, x, agg, xc, alpha), i);
}

/* Position of column c in the sorted columns col[b..e) (-1: absent). */
EF_AMG_INLINE ef_amg_off ef_amg_find(ef_amg_off b, ef_amg_off e, EF_AMG_GLOBAL const ef_amg_i32 *col,
                                     ef_amg_i32 c) {
  ef_amg_off lo = b, hi = e;
  while (lo < hi) {
    const ef_amg_off mid = lo + ((hi - lo) >> 1);
    if (col[mid] < c) lo = mid + 1;
    else hi = mid;
  }
  return (lo < e && col[lo] == c) ? lo : -1;
}

#endif
