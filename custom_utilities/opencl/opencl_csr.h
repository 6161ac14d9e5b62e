/* opencl_csr.h -- matrices and vectors in OpenCL device buffers: CSR upload, download and
 * export in the peers' linear-system format (matrix_io.h), device vectors, checked buffers.
 *
 * A device CSR has row_ptr int32 by default and int64 when row_ptr_64 is set (nnz >= 2^31;
 * kernels are then built with -DEF_ROW_PTR_64), col_idx int32 and values double, sorted
 * columns with the diagonal inside each row (ef_linear_solver.h's ef_matrix wraps one as
 * its device handle). */
#ifndef EF_OPENCL_CSR_H
#define EF_OPENCL_CSR_H

#include <stdint.h>

#include "edgeflow/ef_strategy.h" /* ef_csr_matrix */
#include "opencl_context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A CSR matrix in device buffers. */
typedef struct {
  int64_t n;
  int64_t nnz;
  int row_ptr_64;   /* 0: row_ptr holds int32 offsets (needs nnz < 2^31); 1: int64 */
  cl_mem row_ptr;   /* n + 1 offsets */
  cl_mem col_idx;   /* nnz int32 */
  cl_mem values;    /* nnz double */
} ef_cl_csr;

/* Upload a host CSR (int32 row_ptr when nnz < 2^31, else int64). */
int ef_cl_csr_upload(ef_cl_context *ctx, const ef_csr_matrix *A, ef_cl_csr *out);
/* Release the three buffers of an uploaded matrix and zero the struct (NULL ok). */
void ef_cl_csr_release(ef_cl_csr *A);
/* Download a device CSR into new host arrays (row_ptr widened to int64; free() each). */
int ef_cl_csr_download(ef_cl_context *ctx, const ef_cl_csr *A, int64_t **row_ptr, int32_t **col,
                       double **values);
/* Device bytes of a CSR of this size: (n + 1) offsets of 4 or 8 bytes, 12 bytes per nonzero. */
uint64_t ef_cl_csr_bytes(int64_t n, int64_t nnz, int row_ptr_64);

/* Write a device system to a file in the peers' format (matrix_io.h): A, b and,
 * when x is not NULL, x as the trailing solution block.  Blocking. */
int ef_cl_system_export(ef_cl_context *ctx, const ef_cl_csr *A, cl_mem b, cl_mem x,
                        const char *path);

/* A device vector of n doubles, optionally initialised from host (NULL: zeros). */
int ef_cl_vector_create(ef_cl_context *ctx, int64_t n, const double *host, cl_mem *out);
/* Blocking copies between host and device vectors. */
int ef_cl_vector_write(ef_cl_context *ctx, cl_mem v, int64_t n, const double *host);
int ef_cl_vector_read(ef_cl_context *ctx, cl_mem v, int64_t n, double *host);

/* A device buffer of bytes (host: initial contents with CL_MEM_COPY_HOST_PTR, else NULL),
 * refused with EF_ERR_UNSUPPORTED naming `what` when it exceeds the largest allocation. */
int ef_cl_buffer_create(ef_cl_context *ctx, cl_mem_flags flags, size_t bytes, void *host, const char *what,
                        cl_mem *out);
/* Release a buffer and set it to NULL (NULL ok). */
void ef_cl_buffer_release(cl_mem *m);
/* Create the named kernel of a program. */
int ef_cl_kernel_create(cl_program program, const char *name, cl_kernel *out);

#ifdef __cplusplus
}
#endif
#endif
