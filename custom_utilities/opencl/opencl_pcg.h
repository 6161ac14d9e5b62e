/* opencl_pcg.h -- preconditioned / flexible conjugate gradients on an OpenCL device with any
 * preconditioner that works on device vectors (kernels in custom_kernels/pcg.cl).
 *
 * Solves A x = b (A: an ef_cl_csr, SPD or semidefinite with the constant null space) from the
 * x given; stops when ||b - A x_k||_2 / ||b||_2 <= rtol by the recurrence residual (the
 * residual of the system given, not of a scaled one), checked after every iteration on the
 * device; the host reads the state every check_every iterations without stalling the queue
 * (the device freezes the iterate at the first iteration that meets the test, so the count
 * and the answer do not depend on check_every).  flexible: Polak-Ribiere beta, for variable
 * preconditioners (the AMG K-cycle); otherwise plain PCG, which needs a fixed SPD M.
 * null_space: the preconditioned vector's mean is removed (b must have zero sum).  The true
 * relative residual is recomputed after the solve.  Device memory: 6 n doubles + partials. */
#ifndef EF_OPENCL_PCG_H
#define EF_OPENCL_PCG_H

#include "opencl_cg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* z = M^-1 r on device vectors (enqueued on the context's queue, r and z distinct). */
typedef int (*ef_cl_precond_fn)(void *ctx, cl_mem r, cl_mem z);

typedef struct {
  double rtol;
  int max_iterations;
  int check_every; /* >= 1 */
  int flexible;
  int null_space;
} ef_cl_pcg_settings;

/* rtol EF_DEFAULT_TOLERANCE, EF_DEFAULT_MAX_ITERATION iterations (the shared defaults of
 * edgeflow/ef_linear_solver.h), check every 2, flexible, no null space. */
void ef_cl_pcg_settings_default(ef_cl_pcg_settings *s);

typedef struct {
  int iterations, converged, breakdown;
  double relres;      /* recurrence ||r|| / ||b|| at the stop */
  double true_relres; /* ||b - A x|| / ||b||, recomputed */
  double seconds;     /* wall time of the solve (true residual included) */
} ef_cl_pcg_result;

typedef struct ef_cl_pcg_s ef_cl_pcg;

int ef_cl_pcg_create(ef_cl_context *ctx, const ef_cl_csr *A, const ef_cl_pcg_settings *s, ef_cl_precond_fn precond,
                     void *precond_ctx, ef_cl_pcg **out);
void ef_cl_pcg_destroy(ef_cl_pcg **pcg);
int ef_cl_pcg_set_settings(ef_cl_pcg *pcg, const ef_cl_pcg_settings *s);
int ef_cl_pcg_get_settings(const ef_cl_pcg *pcg, ef_cl_pcg_settings *s);
/* Fails with EF_ERR_SOLVER on a breakdown; not converging is reported in res only. */
int ef_cl_pcg_solve(ef_cl_pcg *pcg, cl_mem b, cl_mem x, ef_cl_pcg_result *res);

#ifdef __cplusplus
}
#endif
#endif
