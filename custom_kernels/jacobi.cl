/* jacobi.cl -- the device Jacobi preconditioner z = D^-1 r, D = diag(A).
 * Host side: custom_utilities/opencl/opencl_jacobi.c.
 *
 * Tunables (-D options, each with a default so that the file builds on its own):
 *   VEC_WGS_BITS  work-group size 2^VEC_WGS_BITS
 *   EF_ROW_PTR_64 row_ptr is int64 (else int32) */
#include "ef_reduce.h"

#ifndef VEC_WGS_BITS
#define VEC_WGS_BITS 8
#endif
#define VWGS (1 << VEC_WGS_BITS)


/* inv_diag_i = 1 / a_ii; *bad = the smallest row whose diagonal is missing, <= 0 or not finite. */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void jacobi_setup(const int n, __global const ef_rp_t *restrict rp, __global const int *restrict col,
                  __global const double *restrict val, __global double *restrict inv_diag,
                  __global int *bad) {
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    double a = 0.0;
    for (ef_rp_t j = rp[i]; j < rp[i + 1]; ++j)
      if (col[j] == i) a = val[j];
    if (!(a > 0.0) || !isfinite(a)) atomic_min(bad, i);
    inv_diag[i] = 1.0 / a;
  }
}

/* z = D^-1 r. */
__kernel __attribute__((reqd_work_group_size(VWGS, 1, 1)))
void jacobi_apply(const int n, __global const double *restrict inv_diag, __global const double *restrict r,
                  __global double *restrict z) {
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) z[i] = inv_diag[i] * r[i];
}
