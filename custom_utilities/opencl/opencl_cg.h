/* opencl_cg.h -- the device conjugate-gradient pressure solver and its SpMV autotuner.
 *
 * Input: a CSR matrix already in device buffers (ef_cl_csr: row_ptr int32 by
 * default, int64 when row_ptr_64 is set -- the kernels are then built with
 * -DEF_ROW_PTR_64; col_idx int32; values double), the right-hand side and the
 * initial guess in device buffers.  The solver keeps its own copy of the
 * symmetrically scaled values D^-1/2 A D^-1/2 and works on the scaled system;
 * scaling and unscaling happen on the device.  Fixed (Dirichlet) rows must be
 * identity rows with their columns eliminated (the caller's job), so A stays SPD.
 *
 * Algorithms (custom_kernels/cg.cl, spmv.cl): standard CG or the three-term recurrence
 * form, two fused launches per iteration, scalars (alpha, beta, ...) computed and
 * kept on the device, deterministic two-stage reductions, the stop criterion
 * ||r||_2 / ||b||_2 < rtol of the scaled system read back every check_every
 * iterations (k = 1 stops exactly where a host CG on the scaled system would;
 * larger k gives the same iterate and count, because the device freezes the
 * solve at the first iteration that meets the criterion).  A warm start uses the
 * given x.  Device memory owned by the solver: 8 nnz + 40 n bytes plus small
 * reduction buffers (ef_cl_cg_memory_bytes).
 *
 * Bytes moved per iteration (either variant, int32 row_ptr, vectors counted once):
 * 12 nnz + 76 n, e.g. 252 bytes per row at 14.7 nonzeros per row.
 *
 * Tunables of the multi-row vector SpMV: wgs_bits (work-group 2^wgs_bits items),
 * rows_bits (2^rows_bits rows per work-group, so 2^(wgs_bits-rows_bits) lanes per
 * row) and groups (work-groups of the persistent grid).  Set them explicitly, or
 * let the tuner time every eligible set on the actual matrix (profiling events,
 * each candidate first checked against a host reference) and keep the fastest;
 * its result is cached in the context's cache folder, keyed by device, driver,
 * kernel source, variant and (n, nnz).  The tuner and the timing of iterations live in
 * opencl_cg_tuner.h; device matrices and vectors in opencl_csr.h.
 */
#ifndef EF_OPENCL_CG_H
#define EF_OPENCL_CG_H

#include <stdint.h>

#include "opencl_csr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { EF_CG_STANDARD = 0, EF_CG_THREE_TERM = 1 } ef_cg_variant;

typedef struct {
  ef_cg_variant variant;
  double rtol;          /* stop when ||r|| / ||b|| < rtol (scaled system) */
  int max_iterations;
  int check_every;      /* read the state back every this many iterations (>= 1) */
  int wgs_bits;         /* explicit SpMV parameters; 0: tuned (tune = 1) or default */
  int rows_bits;        /* used only with wgs_bits > 0 */
  int groups;           /* work-groups of the matrix kernels; 0: automatic */
  int tune;             /* 1: run the tuner when no explicit parameters are given */
  int force_retune;     /* 1: ignore a cached tuning result */
  int verbose;          /* 0 quiet, 1 winner and tuning cost, 2 every candidate */
} ef_cl_cg_settings;

/* Standard CG, rtol 1e-8, 5000 iterations (the shared default), check every 8, tuner on. */
void ef_cl_cg_settings_default(ef_cl_cg_settings *s);

/* One SpMV configuration. */
typedef struct {
  int wgs_bits, rows_bits, groups;
  double seconds_per_iteration; /* tuner's median fused-iteration time, 0 if not timed */
} ef_cl_cg_config;

typedef struct {
  int iterations;              /* iterations performed (x = x_iterations) */
  int converged;               /* ||r||/||b|| < rtol reached */
  int breakdown;               /* p.Ap <= 0 (or not finite) was met */
  double relres;               /* recurrence residual ||r_k|| / ||b|| at the end (scaled) */
  double true_relres;          /* ||bh - Ah xh|| / ||bh||, recomputed after the solve */
  double true_relres_unscaled; /* ||b - A x|| / ||b|| of the original system */
  double seconds;              /* wall time of the solve (setup kernels included) */
} ef_cl_cg_result;

typedef struct ef_cl_cg_s ef_cl_cg;

/* Set up the solver for A (which must stay alive and unchanged in shape): build
 * the kernels (tuning if asked), allocate the work vectors, scale the matrix. */
int ef_cl_cg_create(ef_cl_context *ctx, const ef_cl_csr *A, const ef_cl_cg_settings *settings,
                    ef_cl_cg **out);
/* Release the solver (not the matrix); accepts NULL and *cg == NULL, sets it to NULL. */
void ef_cl_cg_destroy(ef_cl_cg **cg);

/* Recompute the scaled values after A's values changed on the device.  Fails with
 * EF_ERR_SOLVER naming the first row whose diagonal is missing, <= 0 or not finite. */
int ef_cl_cg_update_matrix(ef_cl_cg *cg);

/* Solve A x = b on the device from the x given (b and x: n doubles each; x is
 * overwritten with the answer).  Fails with EF_ERR_SOLVER on a breakdown; not
 * converging within max_iterations is not an error (res->converged = 0).  res may
 * be NULL. */
int ef_cl_cg_solve(ef_cl_cg *cg, cl_mem b, cl_mem x, ef_cl_cg_result *res);

/* Change rtol / max_iterations / check_every / variant between solves. */
int ef_cl_cg_set_stopping(ef_cl_cg *cg, double rtol, int max_iterations, int check_every);

/* y = A x with the original (unscaled) values and this solver's SpMV configuration. */
int ef_cl_cg_spmv(ef_cl_cg *cg, cl_mem x, cl_mem y);
/* x.y reduced on the device in two deterministic stages; the result is read back. */
int ef_cl_cg_dot(ef_cl_cg *cg, cl_mem x, cl_mem y, double *result);

/* The configuration in use (and how long tuning took, 0 when it did not run or was cached). */
void ef_cl_cg_get_config(const ef_cl_cg *cg, ef_cl_cg_config *config, double *tuning_seconds);

/* Device bytes the solver needs for a matrix of this size, the matrix itself included. */
uint64_t ef_cl_cg_memory_bytes(int64_t n, int64_t nnz, int row_ptr_64);

/* Bytes moved per iteration by the fused kernels (12 (nnz - n) + 76 n with int32
 * row_ptr: the scaled matrix's unit diagonal is not stored). */
double ef_cl_cg_bytes_per_iteration(int64_t n, int64_t nnz, int row_ptr_64);

#ifdef __cplusplus
}
#endif
#endif
