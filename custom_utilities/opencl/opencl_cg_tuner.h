/* opencl_cg_tuner.h -- the device CG's SpMV tuner and iteration timing (opencl_cg_tuner.c).
 *
 * Candidates: work-groups of 2^6..2^9 items that fit the device, 1..min(32, twice the average
 * row length rounded up to a power of two) lanes per row, and 1, 2, 4, 8, 16 work-groups per
 * compute unit (clamped to the row blocks).  ef_cl_cg_create runs the tuner when asked: every
 * candidate is first checked against a host reference (SpMV row by row, then a few CG steps),
 * then timed by profiling events; the fastest is kept and cached on disk (opencl_cg.h). */
#ifndef EF_OPENCL_CG_TUNER_H
#define EF_OPENCL_CG_TUNER_H

#include "opencl_cg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every SpMV configuration the tuner would try for A on this device (up to max). */
int ef_cl_cg_candidates(const ef_cl_context *ctx, const ef_cl_csr *A, ef_cl_cg_config *list,
                        int max, int *count);

/* What the solver's tuner did when it was created (every field 0 when it did not run: explicit
 * parameters, tuning off, or a cached result).  Each candidate is counted once:
 * timed + skipped + pruned + over_budget == candidates. */
typedef struct {
  int candidates;  /* configurations eligible on this device for this matrix */
  int timed;       /* verified and timed */
  int skipped;     /* did not build or run (with the other group counts of their shape) */
  int pruned;      /* not timed: their shape's first group count took over twice the best time */
  int over_budget; /* not tried: the time budget ran out first (the default shape is timed first) */
  double budget;   /* seconds the tuner was allowed (tune_budget, or its default) */
  double seconds;  /* seconds it took */
} ef_cl_cg_tune_report;
void ef_cl_cg_get_tune_report(const ef_cl_cg *cg, ef_cl_cg_tune_report *report);

/* Timing of a fixed number of iterations from x = 0 (rtol 0), for benchmarks: the
 * wall seconds per iteration (whole solve, setup included, no events) and the
 * summed kernel time per iteration from profiling events (iteration launches
 * only), and of that the matrix kernel's share.  Any output may be NULL; the
 * wall run is skipped without the first, the profiled one without the second. */
int ef_cl_cg_time_iterations(ef_cl_cg *cg, cl_mem b, cl_mem x, int iterations,
                             double *wall_seconds_per_iteration,
                             double *kernel_seconds_per_iteration, double *matrix_seconds_per_iteration);

#ifdef __cplusplus
}
#endif
#endif
