/* opencl_solvers.h -- the OpenCL linear solvers and preconditioners (EF_MEMORY_DEVICE) as
 * ef_linear_solver.h's tables of operations, and the one list that registers them.
 *
 * A device ef_matrix carries device = ef_cl_csr * (opencl_csr.h) and device_context =
 * ef_cl_context *; a device ef_vector carries device = cl_mem of layout.n_owned doubles.
 * The matrix's buffers stay the caller's and keep their pattern; setup re-reads the values. */
#ifndef EF_OPENCL_SOLVERS_H
#define EF_OPENCL_SOLVERS_H

#include "edgeflow/ef_linear_solver.h"
#include "opencl_csr.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const ef_linear_solver_ops ef_cl_cg_ops;       /* "cg" (opencl_cg.c) */
extern const ef_linear_solver_ops ef_cl_bicgstab_ops; /* "bicgstab" (opencl_bicgstab.c) */
extern const ef_preconditioner_ops ef_cl_jacobi_ops;  /* "jacobi" (opencl_jacobi.c) */

/* Register every device solver and preconditioner above. */
int ef_register_opencl_solvers(void);

/* The backend's handles inside an ef_matrix / ef_vector (NULL when absent or not device). */
static inline const ef_cl_csr *ef_cl_matrix_csr(const ef_matrix *A) {
  return A && A->memory == EF_MEMORY_DEVICE ? (const ef_cl_csr *)A->device : NULL;
}
static inline ef_cl_context *ef_cl_matrix_context(const ef_matrix *A) {
  return A && A->memory == EF_MEMORY_DEVICE ? (ef_cl_context *)A->device_context : NULL;
}
static inline cl_mem ef_cl_vector_mem(const ef_vector *v) {
  return v && v->memory == EF_MEMORY_DEVICE ? (cl_mem)v->device : NULL;
}
/* An ef_vector wrapping a device buffer of n doubles. */
static inline ef_vector ef_cl_vector_wrap(cl_mem m, int64_t n) {
  ef_vector v = {EF_MEMORY_DEVICE, {n, 0, NULL}, NULL, (void *)m};
  return v;
}
/* An ef_matrix wrapping a device CSR of ctx. */
static inline ef_matrix ef_cl_matrix_wrap(const ef_cl_csr *A, ef_cl_context *ctx, int constant_null_space) {
  ef_matrix m = {.memory = EF_MEMORY_DEVICE, .layout = {A->n, 0, NULL}, .nnz = A->nnz,
                 .constant_null_space = constant_null_space, .device = (void *)A, .device_context = (void *)ctx};
  return m;
}

#ifdef __cplusplus
}
#endif
#endif
