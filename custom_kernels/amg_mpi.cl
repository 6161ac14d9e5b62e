/* amg_mpi.cl -- what the device AMG and its (F)CG need beyond amg.cl and pcg.cl on several ranks
 * (custom_utilities/opencl/opencl_amg_mpi.c): the halo's pack and unpack, and the vector updates
 * of the outer (F)CG and the K-cycle with scalars reduced over the ranks on the host.
 *
 * Tunables (-D, with defaults):
 *   AMGM_WGS  items per group (a power of two; the reductions' tree) */
#include "ef_reduce.h"

#ifndef AMGM_WGS
#define AMGM_WGS 256
#endif

/* out[k] = x[idx[k]]: the rows a halo sends, packed. */
__kernel void amgm_pack(const int count, __global const int *restrict idx, __global const double *restrict x,
                        __global double *restrict out) {
  const int k = get_global_id(0);
  if (k < count) out[k] = x[idx[k]];
}

/* x[idx[k]] = in[k]: the received rows where they are not one block. */
__kernel void amgm_unpack(const int count, __global const int *restrict idx, __global const double *restrict in,
                          __global double *restrict x) {
  const int k = get_global_id(0);
  if (k < count) x[idx[k]] = in[k];
}

/* out = a x + b y on n rows. */
__kernel void amgm_combine(const int n, const double a, __global const double *restrict x, const double b,
                           __global const double *restrict y, __global double *restrict out) {
  const int i = get_global_id(0);
  if (i < n) out[i] = a * x[i] + b * y[i];
}

/* The (F)CG's direction: p = (z - m) + beta p (first: p = z - m), m the mean of z over the ranks
 * when A has the constant null space (pcg.cl's pcg_direction with the scalars given). */
__kernel void amgm_direction(const int n, __global const double *restrict z, __global double *restrict p,
                             const double m, const double beta, const int first) {
  const int i = get_global_id(0);
  if (i < n) p[i] = first ? z[i] - m : (z[i] - m) + beta * p[i];
}

/* The (F)CG's update with alpha given: x += alpha p, r_old = r (flexible), r -= alpha q, and the
 * partials of r.r, one per group (the groups striding over the rows, as pcg.cl's pcg_update). */
__kernel __attribute__((reqd_work_group_size(AMGM_WGS, 1, 1)))
void amgm_update(const int n, const double alpha, __global const double *restrict p,
                 __global const double *restrict q, __global double *restrict x, __global double *restrict r,
                 __global double *restrict rold, const int flexible, __global double *restrict part_rr) {
  __local double red[AMGM_WGS];
  double a = 0.0;
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    x[i] += alpha * p[i];
    const double ri = r[i];
    if (flexible) rold[i] = ri;
    const double rn = ri - alpha * q[i];
    r[i] = rn;
    a += rn * rn;
  }
  const double t = ef_group_sum(a, red, AMGM_WGS);
  if (get_local_id(0) == 0) part_rr[get_group_id(0)] = t;
}
