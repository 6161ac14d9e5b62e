/* verify.h -- checks of a strategy's pressure system against PETSc (verify.c).
 *
 * `edgeflow verify ProjectParameters.json --steps N` runs N steps (the OpenCL
 * strategy by default when the build has OpenCL, else the OpenMP one), copies the
 * last pressure system H p = f to the host (ef_analysis_copy_pressure_system) and
 * checks it, each check printing its measured value and bound:
 *
 *   graph          the pattern of H is the mesh graph plus the diagonal (rows that differ: 0);
 *   symmetry       max|H - H^T| / max|H| <= 1e-12, for H as solved and before elimination,
 *                  with PETSc's MatIsSymmetric at the absolute tolerance 1e-12 max|H|;
 *   row_sums       |sum_j H_ij| <= 1e-12 sum_j |H_ij| on every row before elimination
 *                  (H is a weighted graph Laplacian: exact zero sums, rounding leaves
 *                  ~ nnz_row * eps);
 *   elimination    H as solved = H before elimination with the fixed rows and columns
 *                  replaced by identity rows (deviation / max|H| <= 1e-14);
 *   diagonal       min_i H_ii > 0 (as solved and before elimination);
 *   spmv           the device SpMV (custom_utilities/opencl_cg.h, the matrix uploaded
 *                  again) equals PETSc's MatMult on random vectors:
 *                  ||y_dev - y_petsc|| / ||y_petsc|| <= 1e-13 (host SpMV without a device);
 *   residual       the strategy's solution x: the scaled residual
 *                  ||D^-1/2 (b - H x)|| / ||D^-1/2 b|| (D = diag H, the quantity the device
 *                  and host CG stop on), computed with MatMult, <= F tol; and the plain
 *                  ||b - H x|| / ||b|| <= F tol sqrt(max_free D / min D), the bound the scaled
 *                  test implies (||r|| <= sqrt(max D) ||D^-1/2 r|| on the free rows, where
 *                  alone r can be non-zero, and ||D^-1/2 b|| <= ||b|| / sqrt(min D));
 *   petsc_cg       KSPCG + PCJACOBI from the same initial guess with the natural norm
 *                  (sqrt(r^T D^-1 r): the same stopping test) converges, and its solution
 *                  meets the same scaled-residual bound; both iteration counts printed.
 *
 * F = 2 (residual_factor): the CG solvers stop when their recurrence residual is below
 * tol; the true residual differs from the recurrence one by rounding that grows like
 * iterations * eps * cond, orders of magnitude below tol for tol >= 1e-12 on these
 * systems, so a factor 2 separates a correct solve from a wrong one with room to spare.
 *
 * A report (text, and JSON in the output folder: verify_report.json) lists every check;
 * the command fails (non-zero exit) when any check fails.
 */
#ifndef EF_VERIFY_H
#define EF_VERIFY_H

#include <stdint.h>
#include <stdio.h>

#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_strategy.h"

#define EF_VERIFY_MAX_CHECKS 24

typedef struct {
  uint64_t seed;          /* random SpMV vectors (default 12345) */
  int spmv_vectors;       /* default 3 */
  double residual_factor; /* F above (default 2) */
  int use_device;         /* 0: host SpMV; 1: device when one is found (default); 2: device required */
  int tune;               /* 1: the device SpMV takes the tuner's (cached) parameters; 0: defaults */
} ef_verify_options;

void ef_verify_options_default(ef_verify_options *o);

typedef struct {
  char name[40];
  char description[200];
  double measured;
  double bound;
  int lower_bound; /* 1: passes when measured > bound; 0: when measured <= bound */
  int skipped;     /* not applicable (the note says why); neither passed nor failed */
  int passed;
  char note[240];
} ef_verify_check;

typedef struct {
  int64_t n, nnz, n_fixed;
  double tolerance;
  int solver_iterations;       /* the strategy's CG */
  double solver_residual;      /* as it reported it */
  int petsc_iterations;        /* KSPCG + PCJACOBI */
  double petsc_seconds;
  char spmv_device[256];       /* the OpenCL device of the SpMV check, or "host" */
  char strategy[64];           /* filled by the command */
  int n_checks, n_failed, n_skipped;
  ef_verify_check checks[EF_VERIFY_MAX_CHECKS];
} ef_verify_report;

/* Run every check on system s; mp (may be NULL: the graph check is skipped) is the
 * mesh whose graph H must have.  Fails only when a check cannot be carried out
 * (PETSc or OpenCL errors, memory); failed checks are counted in r->n_failed. */
int ef_verify_pressure_system(const ef_pressure_system *s, ef_model_part mp, const ef_verify_options *o,
                              ef_verify_report *r);

/* The report as a table (one line per check: name, measured, bound, PASS/FAIL/SKIP). */
void ef_verify_report_print(const ef_verify_report *r, FILE *out);
/* The report as JSON, written atomically. */
int ef_verify_report_write_json(const ef_verify_report *r, const char *path);

/* `edgeflow verify` (argv[0] is "verify"). */
int ef_command_verify(int argc, char **argv);

#endif
