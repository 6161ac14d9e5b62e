/* opencl_jacobi.c -- the device preconditioner "jacobi": z = D^-1 r, D = diag(A)
 * (kernels in custom_kernels/jacobi.cl). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_solvers.h"

#define EF_JACOBI_SOURCE "jacobi.cl"
#define EF_JACOBI_MAX_GROUPS 1024

typedef struct {
  ef_cl_context *ctx;
  int n, bits, groups;
  cl_program program;
  cl_kernel setup, apply;
  cl_mem inv_diag, bad;
} ef_cl_jacobi;

/* Release kernels and buffers (NULL ok). */
static void ef_cl_jacobi_destroy(void **p) {
  if (!p || !*p) return;
  ef_cl_jacobi *j = *p;
  if (j->ctx && j->ctx->queue) clFinish(j->ctx->queue);
  if (j->setup) clReleaseKernel(j->setup);
  if (j->apply) clReleaseKernel(j->apply);
  if (j->program) clReleaseProgram(j->program);
  ef_cl_buffer_release(&j->inv_diag);
  ef_cl_buffer_release(&j->bad);
  free(j);
  *p = NULL;
}

/* Enqueue a kernel on the fixed grid. */
static int ef_cl_jacobi_launch(ef_cl_jacobi *j, cl_kernel k) {
  size_t local = (size_t)1 << j->bits, global = (size_t)j->groups * local;
  EF_CL_CALL(clEnqueueNDRangeKernel(j->ctx->queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
  return EF_SUCCESS;
}

/* inv_diag = 1 / diag(A) on the device; a missing, non-positive or non-finite diagonal is an
 * error naming the first such row (one blocking read). */
static int ef_cl_jacobi_setup(void *data, const ef_matrix *A) {
  ef_cl_jacobi *j = data;
  const ef_cl_csr *H = ef_cl_matrix_csr(A);
  EF_CHECK(H && H->n == j->n, EF_ERR_PARAMETER, "device jacobi: not the device matrix it was created for");
  const int big = INT_MAX;
  EF_CL_CALL(clEnqueueWriteBuffer(j->ctx->queue, j->bad, CL_FALSE, 0, sizeof big, &big, 0, NULL, NULL));
  EF_CL_SET_ARGS(j->setup, EF_CL_ARG(j->n), EF_CL_ARG(H->row_ptr), EF_CL_ARG(H->col_idx), EF_CL_ARG(H->values),
                 EF_CL_ARG(j->inv_diag), EF_CL_ARG(j->bad));
  EF_CALL(ef_cl_jacobi_launch(j, j->setup));
  int bad = 0;
  EF_CL_CALL(clEnqueueReadBuffer(j->ctx->queue, j->bad, CL_TRUE, 0, sizeof bad, &bad, 0, NULL, NULL));
  EF_CHECK(bad == INT_MAX, EF_ERR_SOLVER, "device jacobi: row %d has a missing, non-positive or non-finite diagonal",
           bad);
  return EF_SUCCESS;
}

/* Build the kernels and allocate D^-1; the values are read by setup (they may not be
 * assembled yet). */
static int ef_cl_jacobi_create(ef_parameters settings, const ef_matrix *A, void **out) {
  (void)settings;
  *out = NULL;
  const ef_cl_csr *H = ef_cl_matrix_csr(A);
  ef_cl_context *ctx = ef_cl_matrix_context(A);
  EF_CHECK(H && ctx && H->n >= 1 && H->n <= INT_MAX / 2, EF_ERR_PARAMETER,
           "device jacobi: needs a device matrix and its OpenCL context");
  ef_cl_jacobi *j = calloc(1, sizeof *j);
  EF_CHECK(j, EF_ERR_MEMORY, "out of memory");
  int err = EF_SUCCESS;
  j->ctx = ctx;
  j->n = (int)H->n;
  j->bits = 8;
  while (j->bits > 0 && ((size_t)1 << j->bits) > ctx->max_work_group_size) --j->bits;
  int64_t groups = (H->n + ((int64_t)1 << j->bits) - 1) >> j->bits;
  j->groups = (int)(groups < EF_JACOBI_MAX_GROUPS ? groups : EF_JACOBI_MAX_GROUPS);
  char options[96];
  snprintf(options, sizeof options, "-D VEC_WGS_BITS=%d%s", j->bits, H->row_ptr_64 ? " -D EF_ROW_PTR_64" : "");
  EF_CALL_GOTO(ef_cl_program_get(ctx, EF_JACOBI_SOURCE, options, &j->program), fail);
  EF_CALL_GOTO(ef_cl_kernel_create(j->program, "jacobi_setup", &j->setup), fail);
  EF_CALL_GOTO(ef_cl_kernel_create(j->program, "jacobi_apply", &j->apply), fail);
  EF_CALL_GOTO(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, (size_t)H->n * 8, NULL, "the inverse diagonal",
                                   &j->inv_diag), fail);
  EF_CALL_GOTO(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, sizeof(cl_int), NULL, "a flag", &j->bad), fail);
  *out = j;
  return EF_SUCCESS;
fail:
  ef_cl_jacobi_destroy((void **)&j);
  return err;
}

/* z = D^-1 r (enqueued, not waited for). */
static int ef_cl_jacobi_apply(void *data, const ef_vector *r, ef_vector *z) {
  ef_cl_jacobi *j = data;
  cl_mem rm = ef_cl_vector_mem(r), zm = ef_cl_vector_mem(z);
  EF_CHECK(rm && zm && rm != zm, EF_ERR_PARAMETER, "device jacobi: needs two distinct device vectors");
  EF_CL_SET_ARGS(j->apply, EF_CL_ARG(j->n), EF_CL_ARG(j->inv_diag), EF_CL_ARG(rm), EF_CL_ARG(zm));
  return ef_cl_jacobi_launch(j, j->apply);
}

const ef_preconditioner_ops ef_cl_jacobi_ops = {
    .name = "jacobi",
    .description = "diagonal (Jacobi) scaling on the device, z = D^-1 r",
    .memory = EF_MEMORY_DEVICE,
    .defaults = "{}",
    .create = ef_cl_jacobi_create,
    .setup = ef_cl_jacobi_setup,
    .apply = ef_cl_jacobi_apply,
    .destroy = ef_cl_jacobi_destroy,
};
