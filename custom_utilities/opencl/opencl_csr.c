/* opencl_csr.c -- device CSR matrices and vectors: upload, download, export (see opencl_csr.h). */
#include "opencl_csr.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "matrix_io.h"

/* Release a cl_mem and clear it. */
void ef_cl_buffer_release(cl_mem *m) {
  if (*m) clReleaseMemObject(*m);
  *m = NULL;
}

/* A device buffer of bytes (checked against the largest allowed allocation). */
int ef_cl_buffer_create(ef_cl_context *ctx, cl_mem_flags flags, size_t bytes, void *host, const char *what,
                        cl_mem *out) {
  EF_CHECK(bytes <= ctx->max_alloc_bytes, EF_ERR_UNSUPPORTED,
           "%s needs one buffer of %.1f MiB but '%s' allows at most %.1f MiB per buffer", what,
           (double)bytes / 1048576.0, ctx->device_name, (double)ctx->max_alloc_bytes / 1048576.0);
  cl_int st;
  *out = clCreateBuffer(ctx->context, flags, bytes ? bytes : 8, host, &st);
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clCreateBuffer for %s (%zu bytes) failed: %s (%d)",
           what, bytes, ef_cl_error_name(st), (int)st);
  return EF_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Matrices and vectors in device buffers. */

/* Upload a host CSR with int32 offsets when they fit. */
int ef_cl_csr_upload(ef_cl_context *ctx, const ef_csr_matrix *A, ef_cl_csr *out) {
  EF_CHECK(ctx && A && out, EF_ERR_PARAMETER, "ef_cl_csr_upload: NULL argument");
  memset(out, 0, sizeof *out);
  EF_CHECK(A->n >= 1 && A->nnz >= 1 && A->row_ptr && A->col && A->values, EF_ERR_PARAMETER,
           "ef_cl_csr_upload: empty matrix (n = %" PRId64 ", nnz = %" PRId64 ")", A->n, A->nnz);
  int wide = A->nnz > INT32_MAX;
  size_t rp_bytes = (size_t)(A->n + 1) * (wide ? 8 : 4);
  void *rp = malloc(rp_bytes);
  EF_CHECK(rp, EF_ERR_MEMORY, "out of memory for row_ptr");
  for (int64_t i = 0; i <= A->n; ++i) {
    if (wide) ((int64_t *)rp)[i] = A->row_ptr[i];
    else ((int32_t *)rp)[i] = (int32_t)A->row_ptr[i];
  }
  out->n = A->n;
  out->nnz = A->nnz;
  out->row_ptr_64 = wide;
  cl_mem_flags f = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
  int err = ef_cl_buffer_create(ctx, f, rp_bytes, rp, "row_ptr", &out->row_ptr);
  free(rp);
  if (!err) err = ef_cl_buffer_create(ctx, f, (size_t)A->nnz * 4, (void *)A->col, "col_idx", &out->col_idx);
  if (!err) err = ef_cl_buffer_create(ctx, f, (size_t)A->nnz * 8, (void *)A->values, "values", &out->values);
  if (err) ef_cl_csr_release(out);
  return err;
}

/* Release the buffers of an uploaded matrix. */
void ef_cl_csr_release(ef_cl_csr *A) {
  if (!A) return;
  ef_cl_buffer_release(&A->row_ptr);
  ef_cl_buffer_release(&A->col_idx);
  ef_cl_buffer_release(&A->values);
  memset(A, 0, sizeof *A);
}

/* Read a device CSR back (blocking). */
int ef_cl_csr_download(ef_cl_context *ctx, const ef_cl_csr *A, int64_t **row_ptr, int32_t **col,
                       double **values) {
  *row_ptr = NULL;
  *col = NULL;
  *values = NULL;
  int err = EF_SUCCESS;
  size_t n1 = (size_t)A->n + 1;
  int64_t *rp = malloc(n1 * sizeof *rp);
  int32_t *c = malloc((size_t)A->nnz * sizeof *c);
  double *v = malloc((size_t)A->nnz * sizeof *v);
  EF_CHECK_GOTO(rp && c && v, EF_ERR_MEMORY, fail, "out of memory downloading the matrix");
  if (A->row_ptr_64) {
    EF_CL_CALL_GOTO(clEnqueueReadBuffer(ctx->queue, A->row_ptr, CL_TRUE, 0, n1 * 8, rp, 0, NULL,
                                        NULL), fail);
  } else {
    int32_t *rp32 = malloc(n1 * sizeof *rp32);
    EF_CHECK_GOTO(rp32, EF_ERR_MEMORY, fail, "out of memory");
    cl_int st = clEnqueueReadBuffer(ctx->queue, A->row_ptr, CL_TRUE, 0, n1 * 4, rp32, 0, NULL, NULL);
    for (size_t i = 0; st == CL_SUCCESS && i < n1; ++i) rp[i] = rp32[i];
    free(rp32);
    EF_CL_CALL_GOTO(st, fail);
  }
  EF_CL_CALL_GOTO(clEnqueueReadBuffer(ctx->queue, A->col_idx, CL_TRUE, 0, (size_t)A->nnz * 4, c, 0,
                                      NULL, NULL), fail);
  EF_CL_CALL_GOTO(clEnqueueReadBuffer(ctx->queue, A->values, CL_TRUE, 0, (size_t)A->nnz * 8, v, 0,
                                      NULL, NULL), fail);
  *row_ptr = rp;
  *col = c;
  *values = v;
  return EF_SUCCESS;
fail:
  free(rp);
  free(c);
  free(v);
  return err;
}

/* Download A, b (and x) and write them with matrix_io. */
int ef_cl_system_export(ef_cl_context *ctx, const ef_cl_csr *A, cl_mem b, cl_mem x,
                        const char *path) {
  EF_CHECK(ctx && A && b && path, EF_ERR_PARAMETER, "ef_cl_system_export: NULL argument");
  int64_t *rp = NULL;
  int32_t *col = NULL;
  double *val = NULL, *hb = NULL, *hx = NULL;
  int err = ef_cl_csr_download(ctx, A, &rp, &col, &val);
  if (!err) {
    hb = malloc((size_t)A->n * sizeof *hb);
    hx = x ? malloc((size_t)A->n * sizeof *hx) : NULL;
    if (!hb || (x && !hx)) err = EF_ERROR(EF_ERR_MEMORY, "out of memory exporting '%s'", path);
  }
  if (!err) err = ef_cl_vector_read(ctx, b, A->n, hb);
  if (!err && x) err = ef_cl_vector_read(ctx, x, A->n, hx);
  if (!err) {
    ef_csr_matrix h = {A->n, A->nnz, rp, col, val};
    err = ef_linear_system_write(path, &h, hb, hx);
  }
  free(rp);
  free(col);
  free(val);
  free(hb);
  free(hx);
  return err;
}

/* A new device vector, from host data or zero-filled. */
int ef_cl_vector_create(ef_cl_context *ctx, int64_t n, const double *host, cl_mem *out) {
  EF_CHECK(ctx && out && n >= 0, EF_ERR_PARAMETER, "ef_cl_vector_create: bad argument");
  EF_CALL(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, (size_t)n * 8, NULL, "a vector", out));
  int err = EF_SUCCESS;
  if (host) {
    err = ef_cl_vector_write(ctx, *out, n, host);
  } else if (n > 0) {
    const double zero = 0.0;
    cl_int st = clEnqueueFillBuffer(ctx->queue, *out, &zero, sizeof zero, 0, (size_t)n * 8, 0, NULL,
                                    NULL);
    if (st == CL_SUCCESS) st = clFinish(ctx->queue);
    if (st != CL_SUCCESS)
      err = EF_ERROR(EF_ERR_OPENCL, "clearing a vector failed: %s (%d)", ef_cl_error_name(st),
                     (int)st);
  }
  if (err) ef_cl_buffer_release(out);
  return err;
}

/* Blocking host-to-device copy of n doubles. */
int ef_cl_vector_write(ef_cl_context *ctx, cl_mem v, int64_t n, const double *host) {
  if (n <= 0) return EF_SUCCESS;
  EF_CL_CALL(clEnqueueWriteBuffer(ctx->queue, v, CL_TRUE, 0, (size_t)n * 8, host, 0, NULL, NULL));
  return EF_SUCCESS;
}

/* Blocking device-to-host copy of n doubles. */
int ef_cl_vector_read(ef_cl_context *ctx, cl_mem v, int64_t n, double *host) {
  if (n <= 0) return EF_SUCCESS;
  EF_CL_CALL(clEnqueueReadBuffer(ctx->queue, v, CL_TRUE, 0, (size_t)n * 8, host, 0, NULL, NULL));
  return EF_SUCCESS;
}

/* Create one kernel of the program. */
int ef_cl_kernel_create(cl_program p, const char *name, cl_kernel *out) {
  cl_int st;
  *out = clCreateKernel(p, name, &st);
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clCreateKernel(%s) failed: %s (%d)", name,
           ef_cl_error_name(st), (int)st);
  return EF_SUCCESS;
}

/* (n + 1) offsets + 4 bytes of column and 8 of value per nonzero. */
uint64_t ef_cl_csr_bytes(int64_t n, int64_t nnz, int row_ptr_64) {
  return (uint64_t)(n + 1) * (row_ptr_64 ? 8u : 4u) + (uint64_t)nnz * 12u;
}
