/* opencl_amg.h -- the aggregation multigrid preconditioner on an OpenCL device (amg.h holds
 * the algorithm; kernels in custom_kernels/amg.cl with the per-row code of amg_rows.h).
 *
 * The hierarchy's structure (aggregate maps, member lists, coarse patterns) is built once on
 * the host from the matrix and uploaded; during the time loop everything runs on the device:
 * ef_cl_amg_refresh recomputes coarse values, l1 diagonals and the dense coarsest inverse from
 * the fine matrix's current device values, and ef_cl_amg_apply runs one cycle on device
 * vectors, enqueued without any host synchronisation. */
#ifndef EF_OPENCL_AMG_H
#define EF_OPENCL_AMG_H

#include "amg.h"
#include "opencl_cg.h"
#include "opencl_pcg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ef_cl_amg_s ef_cl_amg;

/* Device seconds by phase, summed over the launches profiled since the last reset. */
typedef struct {
  double setup_seconds;   /* host set-up and upload (wall), the first refresh included */
  double refresh_seconds; /* device: coarse values, l1 diagonals, coarsest inverse */
  double smooth_seconds;  /* first sweeps and additional sweeps */
  double restrict_seconds;/* residual + restriction */
  double post_seconds;    /* prolongation + post-smoothing sweep (fused) */
  double krylov_seconds;  /* K-cycle products, dot products and updates */
  double coarse_seconds;  /* dense coarsest solve */
  int applies, launches;
} ef_cl_amg_timing;

/* Build the hierarchy for the device matrix A (which must stay alive, pattern fixed).  host_A
 * gives the same matrix on the host (pattern and values) for the set-up; NULL: downloaded
 * from the device once.  constant_null_space: A 1 = 0 (host_A's flag wins when given). */
int ef_cl_amg_create(ef_cl_context *ctx, const ef_cl_csr *A, const ef_amg_matrix *host_A,
                     int constant_null_space, const ef_amg_settings *settings, ef_cl_amg **out);
/* The same with saved aggregate maps (ef_amg_create_from_maps; restart files). */
int ef_cl_amg_create_from_maps(ef_cl_context *ctx, const ef_cl_csr *A, const ef_amg_matrix *host_A,
                               int constant_null_space, const ef_amg_settings *settings, int n_maps,
                               int32_t *const *maps, ef_cl_amg **out);
/* Release; accepts NULL and *amg == NULL, sets it to NULL. */
void ef_cl_amg_destroy(ef_cl_amg **amg);

/* A's device values changed (pattern fixed): refresh the hierarchy on the device (enqueued). */
int ef_cl_amg_refresh(ef_cl_amg *amg);
/* z = M^-1 r on device vectors of n doubles (r and z distinct; enqueued, no host wait). */
int ef_cl_amg_apply(ef_cl_amg *amg, cl_mem r, cl_mem z);

/* The whole solve in one launch of one work-group, when every level is small (the fine level
 * has at most settings.small_rows rows): ef_cl_amg_solves_whole says so.  ef_cl_amg_solve runs
 * ef_cl_pcg_solve's iteration (opencl_pcg.h: the same settings, stop test, result and
 * EF_ERR_SOLVER on a breakdown; check_every is moot) with this preconditioner, without a
 * launch or a host round trip per iteration.  Blocking (it reads the result). */
int ef_cl_amg_solves_whole(const ef_cl_amg *amg);
int ef_cl_amg_solve(ef_cl_amg *amg, const ef_cl_pcg_settings *s, cl_mem b, cl_mem x, ef_cl_pcg_result *res);

/* Profiling: 1 keeps an event per launch (costs host time); ef_cl_amg_timing_get waits for
 * them and adds them into the phases; reset clears the sums. */
void ef_cl_amg_set_profiling(ef_cl_amg *amg, int on);
int ef_cl_amg_timing_get(ef_cl_amg *amg, ef_cl_amg_timing *t);
void ef_cl_amg_timing_reset(ef_cl_amg *amg);

/* The host hierarchy (structure, and the host values of the set-up). */
const ef_amg *ef_cl_amg_host(const ef_cl_amg *amg);
/* Read level l's device values (nnz doubles) or the coarsest inverse (nc^2, l = -1). */
int ef_cl_amg_read_values(ef_cl_amg *amg, int level, double *out);
/* One level's refresh places (amg.cl's amg_refresh_offsets, kernel k of the fine level's program): *off, nnz bytes
 * (one a fine entry), made and filled for the members of the nc coarse rows; refresh_direct: ef_amg_settings'. */
int ef_cl_amg_offsets(ef_cl_context *ctx, cl_kernel k, int refresh_direct, int64_t nnz, cl_int nc, cl_mem crp,
                      cl_mem ccol, cl_mem mp, cl_mem mem, cl_mem frp, cl_mem fcol, cl_mem agg, cl_mem *off);

/* Device bytes of the hierarchy (as ef_amg_memory counts them, plus the second dense buffer)
 * and of the work vectors. */
void ef_cl_amg_memory(const ef_cl_amg *amg, double *hierarchy_bytes, double *work_bytes);

#ifdef __cplusplus
}
#endif
#endif
