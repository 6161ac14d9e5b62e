/* host_pcg.h -- preconditioned (and flexible) conjugate gradients on the host with any
 * preconditioner z = M^-1 r given as a function; OpenMP, deterministic block reductions.
 *
 * Stops when ||r||_2 / ||b||_2 <= rtol (the residual of the system given, not of a scaled
 * one).  Flexible (Notay's flexible CG with one kept direction, i.e. the Polak-Ribiere beta
 * z_k.(r_k - r_{k-1}) / z_{k-1}.r_{k-1}) when the preconditioner is not a fixed symmetric
 * operator (K-cycle).  constant_null_space: b's mean is removed first and z's mean after
 * every application. */
#ifndef EF_HOST_PCG_H
#define EF_HOST_PCG_H

#include <stdint.h>

#include "host_cg.h"   /* ef_csr */
#include "host_dist.h" /* ef_host_dist */

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*ef_host_precond_fn)(void *ctx, const double *r, double *z);

typedef struct {
  double rtol;
  int max_iterations;
  int flexible;
  /* Several ranks (NULL: one process): A holds the owned rows, its columns owned and ghost rows of
   * dist; every inner product is one reduction over the ranks, every product with A follows one halo
   * exchange; b and x are read and x written on the owned rows only; precond gets r on the owned
   * rows and may use z's ghost rows as work space (z has the owned and ghost rows). */
  ef_host_dist *dist;
} ef_host_pcg_settings;

typedef struct {
  int iterations, converged;
  double relres;      /* ||r_k|| / ||b|| of the recurrence */
  double true_relres; /* ||b - A x|| / ||b||, recomputed */
  double seconds;
} ef_host_pcg_result;

/* Solve A x = b from the x given; res may be NULL.  Fails with EF_ERR_SOLVER on a breakdown
 * (p.Ap <= 0); not converging is reported in res, not as an error. */
int ef_host_pcg_solve(const ef_csr *A, ef_host_precond_fn precond, void *ctx, const ef_host_pcg_settings *s,
                      const double *b, double *x, ef_host_pcg_result *res);

/* ef_host_pcg_solve for a registry solver (ef_linear_solver.h): res gets the iterations, converged and
 * the recurrence's relative residual (and, on several ranks, where the registry does not compute it,
 * the true one); not converging is EF_ERR_SOLVER, its message starting with who. */
int ef_host_pcg_solve_registry(const ef_csr *A, ef_host_precond_fn precond, void *ctx, const ef_host_pcg_settings *s,
                               const double *b, double *x, const char *who, ef_solve_result *res);

#ifdef __cplusplus
}
#endif
#endif
