/* opencl_cg_private.h -- the device CG's data, shared by the solver (opencl_cg.c) and its
 * SpMV tuner (opencl_cg_tuner.c); nothing outside these two files includes it. */
#ifndef EF_OPENCL_CG_PRIVATE_H
#define EF_OPENCL_CG_PRIVATE_H

#include "opencl_cg.h"
#include "opencl_cg_tuner.h"

#define EF_CG_VECTOR_SOURCE "cg.cl"   /* vector kernels: built once */
#define EF_CG_MATRIX_SOURCE "spmv.cl" /* matrix kernels: built per SpMV configuration */
#define EF_CG_MAX_PARTIALS 4096 /* partial sums per reduction: bounds the grid */

/* Mirrors cg_common.h. */
enum { ST_BB = 0, ST_TOL2 = 1, ST_STOP_A = 5, ST_STOP_B = 6, ST_STOP_F = 7, ST_BREAK = 8,
       ST_FINAL = 9, ST_OUT = 16, ST_SIZE = 20 };

typedef struct {
  cl_program vector_program, matrix_program;
  cl_kernel spmv, dot, reduce, diag, scale_matrix, scale_in, scale_out, init;
  cl_kernel std_spmv, std_update, std_finish, tt_spmv, tt_update, residual;
  /* The iteration's kernels keep their arguments between launches (EF_CL_BIND_ARGS); a rebuilt
   * set starts empty (ef_cl_cg_kernels_build clears it). */
  ef_cl_bound_args b_std_spmv, b_std_update, b_tt_spmv, b_tt_update;
} ef_cl_cg_kernels;

struct ef_cl_cg_s {
  ef_cl_context *ctx;
  ef_cl_csr A;          /* the caller's buffers, not owned */
  int n;
  ef_cl_cg_settings s;
  ef_cl_cg_config cfg;
  int vec_wgs_bits;
  int groups_v;         /* work-groups of the vector kernels */
  double tuning_seconds;
  ef_cl_cg_tune_report tune_report; /* what the tuner did (opencl_cg_tuner.h) */
  uint64_t source_hash;
  ef_cl_cg_kernels k;
  /* Ah's off-diagonal part (its diagonal is 1): offsets, columns, values. */
  cl_mem rp_off, col_off, val_off;
  cl_mem d, v[4], part_a, part_b, state, bad;
  /* Profiling of the iteration launches (ef_cl_cg_time_iterations). */
  cl_event *prof;
  int n_prof, cap_prof;
};

/* opencl_cg.c: install a configuration (build its kernels); size the vector-kernel grid. */
int ef_cl_cg_use_config(ef_cl_cg *cg, const ef_cl_cg_config *c);
void ef_cl_cg_set_groups(ef_cl_cg *cg);

/* opencl_cg_tuner.c: configurations, the tuner and the profiling events. */
int ef_cl_cg_clamp_groups(int64_t n, int rows_bits, int64_t groups);
int ef_cl_cg_wgs_fits(const ef_cl_context *ctx, int wgs_bits);
void ef_cl_cg_default_config(const ef_cl_cg *cg, ef_cl_cg_config *c);
int ef_cl_cg_tune(ef_cl_cg *cg);
void ef_cl_cg_drop_profile(ef_cl_cg *cg);

#endif
