/* ef_reduce.h -- what every sparse/vector kernel file shares: the row-offset type and the
 * deterministic work-group sums (a fixed tree order, barriers only, nothing assumes
 * warp-synchronous execution).  OpenCL C 1.2 with cl_khr_fp64. */
#ifndef EF_REDUCE_H
#define EF_REDUCE_H

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

/* EF_ROW_PTR_64: row offsets are int64 (else int32, enough while nnz < 2^31). */
#ifdef EF_ROW_PTR_64
typedef long ef_rp_t;
#else
typedef int ef_rp_t;
#endif

/* Sum of v over a work-group of n (a power of two) items, in a fixed tree order;
 * every item receives the total.  scratch holds n doubles. */
double ef_group_sum(double v, __local double *scratch, const int n) {
  const int lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = n >> 1; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const double total = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE); /* scratch may be reused after this */
  return total;
}

/* Two sums at once (one set of barriers for both). */
double2 ef_group_sum2(double2 v, __local double2 *scratch, const int n) {
  const int lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = n >> 1; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const double2 total = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return total;
}

#endif
