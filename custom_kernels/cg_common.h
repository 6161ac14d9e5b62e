/* cg_common.h -- tunables, state layout and helpers of the device CG (cg.cl, spmv.cl).
 *
 * Tunables (given as -D options by opencl_cg.c, each with a default so that the
 * kernel file builds on its own):
 *   WGS_BITS      work-group size 2^WGS_BITS of the matrix kernels (spmv.cl)
 *   ROWS_BITS     rows per work-group 2^ROWS_BITS: each row gets 2^(WGS_BITS-ROWS_BITS)
 *                 lanes that stride over its nonzeros (paper section 4.2)
 *   VEC_WGS_BITS  work-group size of the vector kernels (cg.cl)
 *   EF_ROW_PTR_64 row_ptr is int64 (else int32, enough while nnz < 2^31)
 *
 * Reductions are deterministic: every kernel runs a fixed grid of work-groups
 * that stride over the rows, so which item adds which term never changes; each
 * group writes one partial, and the kernel that needs the total re-adds the
 * partials in the same fixed order in every group (no atomics, no host trip).
 * Local-memory reductions use barriers only: nothing assumes warp-synchronous
 * execution.
 */
#ifndef EF_CG_COMMON_H
#define EF_CG_COMMON_H

#include "ef_reduce.h"

#ifndef WGS_BITS
#define WGS_BITS 8
#endif
#ifndef ROWS_BITS
#define ROWS_BITS 5
#endif
#ifndef VEC_WGS_BITS
#define VEC_WGS_BITS 8
#endif
#if ROWS_BITS > WGS_BITS || ROWS_BITS < 0
#error "ROWS_BITS must lie in [0, WGS_BITS]"
#endif

#define WGS (1 << WGS_BITS)
#define ROWS_PER_WG (1 << ROWS_BITS)
#define LANE_BITS (WGS_BITS - ROWS_BITS)
#define LANES (1 << LANE_BITS)
#define VWGS (1 << VEC_WGS_BITS)


/* Slots of the solver's small state buffer (doubles).  Each slot is written by
 * one kernel kind (group 0, item 0) and read by others in later launches only,
 * so no launch reads a slot that one of its own groups writes. */
#define ST_BB 0        /* ||b||^2 of the scaled system */
#define ST_TOL2 1      /* rtol^2 ||b||^2 */
#define ST_RHO_CUR 2   /* standard: r_k.r_k, written by cg_std_spmv */
#define ST_RHO_PREV 3  /* standard: r_k.r_k, written by cg_std_update (read as rho_{k-1}) */
#define ST_ALPHA 4     /* standard: alpha_k, written by cg_std_update */
#define ST_STOP_A 5    /* iteration the solve stopped at, seen by the matrix kernels (-1: running) */
#define ST_STOP_B 6    /* the same, written by the update kernels */
#define ST_STOP_F 7    /* the same, written by cg_std_finish */
#define ST_BREAK 8     /* iteration of a breakdown (p.Ap <= 0 or not finite), -1: none */
#define ST_FINAL 9     /* r.r where the solve stopped */
#define ST_TT_GAMMA 10 /* three-term: gamma_k by parity of k (2 slots) */
#define ST_TT_OMEGA 12 /* three-term: omega_k by parity (2 slots) */
#define ST_TT_RR 14    /* three-term: r_k.r_k by parity (2 slots) */
#define ST_OUT 16      /* results of the reduction kernel (4 slots) */
#define ST_SIZE 20

/* The one item that writes a kernel's scalars into the state. */
#define EF_LEAD (get_group_id(0) == 0 && get_local_id(0) == 0)

/* Second stage of a reduction: sum part[0..count) in a fixed order (item i adds
 * i, i+n, i+2n, ... then the tree), identical in every group that calls it. */
double ef_sum_partials(__global const double *part, const int count,
                              __local double *scratch, const int n) {
  double a = 0.0;
  for (int j = get_local_id(0); j < count; j += n) a += part[j];
  return ef_group_sum(a, scratch, n);
}

/* The same for two partial arrays. */
double2 ef_sum_partials2(__global const double *part_x, __global const double *part_y,
                                const int count, __local double2 *scratch, const int n) {
  double2 a = (double2)(0.0, 0.0);
  for (int j = get_local_id(0); j < count; j += n) a += (double2)(part_x[j], part_y[j]);
  return ef_group_sum2(a, scratch, n);
}

/* Combine the LANES lane sums of the row owned by this item's lane group (called
 * by lane 0 only).  lanes points at this block's buffer; summing in lane order
 * keeps it deterministic. */
double ef_row_total(__local const double *lanes, const int lid) {
  double y = 0.0;
  for (int l = 0; l < LANES; ++l) y += lanes[lid + l];
  return y;
}

#endif
