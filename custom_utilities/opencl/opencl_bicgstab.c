/* opencl_bicgstab.c -- the device linear solver "bicgstab": BiCGStab right-preconditioned by
 * any device preconditioner (ef_preconditioner_apply), scalars kept on the device, the state
 * read back every check_every iterations (kernels and the method in custom_kernels/bicgstab.cl).
 *
 * Settings: the shared keys (tolerance: ||r|| / ||b|| of the recurrence residual,
 * max_iteration) and check_every (read the state back every this many iterations; the
 * device CG's key of the same name and meaning).  Result: residual = the recurrence residual ||r|| / ||b||, true_residual =
 * ||b - A x|| / ||b|| recomputed after the solve. */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_solvers.h"

#define EF_BCG_SOURCE "bicgstab.cl"
#define EF_BCG_MAX_GROUPS 1024 /* partial sums per reduction: bounds the grid */

/* Mirrors bicgstab.cl. */
enum { BS_BB = 0, BS_RR = 7, BS_STOP = 8, BS_BREAK = 9, BS_OUT = 10, BS_SIZE = 12 };
enum { BM_INIT = 0, BM_ALPHA = 1, BM_S = 2, BM_OMEGA = 3, BM_RHO = 4, BM_OUT = 5 };

typedef struct {
  ef_cl_context *ctx;
  ef_cl_csr A; /* the caller's buffers, not owned */
  int n, bits, groups;
  ef_preconditioner *pc;
  double rtol;
  int max_iterations, check_every;
  cl_program program;
  cl_kernel init, direction, spmv_dot, s_kernel, spmv_dot2, update, residual, reduce;
  cl_mem r, r0, p, v, s, t, ph, sh, part, state;
} ef_cl_bicgstab;

/* Release kernels and buffers (NULL ok); the preconditioner is the caller's. */
static void ef_cl_bicgstab_destroy(void **pdata) {
  if (!pdata || !*pdata) return;
  ef_cl_bicgstab *b = *pdata;
  if (b->ctx && b->ctx->queue) clFinish(b->ctx->queue);
  cl_kernel ks[] = {b->init, b->direction, b->spmv_dot, b->s_kernel, b->spmv_dot2, b->update, b->residual, b->reduce};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i)
    if (ks[i]) clReleaseKernel(ks[i]);
  if (b->program) clReleaseProgram(b->program);
  cl_mem *ms[] = {&b->r, &b->r0, &b->p, &b->v, &b->s, &b->t, &b->ph, &b->sh, &b->part, &b->state};
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; ++i) ef_cl_buffer_release(ms[i]);
  free(b);
  *pdata = NULL;
}

/* Enqueue a kernel on groups work-groups. */
static int ef_cl_bicgstab_launch(ef_cl_bicgstab *b, cl_kernel k, int groups) {
  size_t local = (size_t)1 << b->bits, global = (size_t)groups * local;
  EF_CL_CALL(clEnqueueNDRangeKernel(b->ctx->queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
  return EF_SUCCESS;
}

/* The one-group reduction of the last partials into the state (mode as in bicgstab.cl). */
static int ef_cl_bicgstab_reduce(ef_cl_bicgstab *b, int mode, int k) {
  EF_CL_SET_ARGS(b->reduce, EF_CL_ARG(b->part), EF_CL_ARG(b->groups), EF_CL_ARG(mode), EF_CL_ARG(k),
                 EF_CL_ARG(b->rtol), EF_CL_ARG(b->state));
  return ef_cl_bicgstab_launch(b, b->reduce, 1);
}

/* z = M^-1 y by the preconditioner, on device vectors. */
static int ef_cl_bicgstab_precondition(ef_cl_bicgstab *b, cl_mem y, cl_mem z) {
  ef_vector vy = ef_cl_vector_wrap(y, b->n), vz = ef_cl_vector_wrap(z, b->n);
  return ef_preconditioner_apply(b->pc, &vy, &vz);
}

/* Read the state (blocking). */
static int ef_cl_bicgstab_read_state(ef_cl_bicgstab *b, double *st) {
  EF_CL_CALL(clEnqueueReadBuffer(b->ctx->queue, b->state, CL_TRUE, 0, BS_SIZE * sizeof(double), st, 0, NULL,
                                 NULL));
  return EF_SUCCESS;
}

/* Enqueue iteration k (see bicgstab.cl). */
static int ef_cl_bicgstab_iteration(ef_cl_bicgstab *b, cl_mem x, int k) {
  const ef_cl_csr *A = &b->A;
  EF_CL_SET_ARGS(b->direction, EF_CL_ARG(b->n), EF_CL_ARG(b->r), EF_CL_ARG(b->p), EF_CL_ARG(b->v),
                 EF_CL_ARG(b->state), EF_CL_ARG(k));
  EF_CALL(ef_cl_bicgstab_launch(b, b->direction, b->groups));
  EF_CALL(ef_cl_bicgstab_precondition(b, b->p, b->ph));
  EF_CL_SET_ARGS(b->spmv_dot, EF_CL_ARG(b->n), EF_CL_ARG(A->row_ptr), EF_CL_ARG(A->col_idx), EF_CL_ARG(A->values),
                 EF_CL_ARG(b->ph), EF_CL_ARG(b->v), EF_CL_ARG(b->r0), EF_CL_ARG(b->part), EF_CL_ARG(b->state));
  EF_CALL(ef_cl_bicgstab_launch(b, b->spmv_dot, b->groups));
  EF_CALL(ef_cl_bicgstab_reduce(b, BM_ALPHA, k));
  EF_CL_SET_ARGS(b->s_kernel, EF_CL_ARG(b->n), EF_CL_ARG(b->r), EF_CL_ARG(b->v), EF_CL_ARG(b->s), EF_CL_ARG(b->part),
                 EF_CL_ARG(b->state));
  EF_CALL(ef_cl_bicgstab_launch(b, b->s_kernel, b->groups));
  EF_CALL(ef_cl_bicgstab_reduce(b, BM_S, k));
  EF_CALL(ef_cl_bicgstab_precondition(b, b->s, b->sh));
  EF_CL_SET_ARGS(b->spmv_dot2, EF_CL_ARG(b->n), EF_CL_ARG(A->row_ptr), EF_CL_ARG(A->col_idx), EF_CL_ARG(A->values),
                 EF_CL_ARG(b->sh), EF_CL_ARG(b->t), EF_CL_ARG(b->s), EF_CL_ARG(b->part), EF_CL_ARG(b->state));
  EF_CALL(ef_cl_bicgstab_launch(b, b->spmv_dot2, b->groups));
  EF_CALL(ef_cl_bicgstab_reduce(b, BM_OMEGA, k));
  EF_CL_SET_ARGS(b->update, EF_CL_ARG(b->n), EF_CL_ARG(x), EF_CL_ARG(b->r), EF_CL_ARG(b->ph), EF_CL_ARG(b->sh),
                 EF_CL_ARG(b->s), EF_CL_ARG(b->t), EF_CL_ARG(b->r0), EF_CL_ARG(b->part), EF_CL_ARG(b->state));
  EF_CALL(ef_cl_bicgstab_launch(b, b->update, b->groups));
  return ef_cl_bicgstab_reduce(b, BM_RHO, k);
}

/* r0 = r = b - A x, iterate until the state records a stop, then ||b - A x|| / ||b||. */
static int ef_cl_bicgstab_solve(void *data, const ef_vector *vb, ef_vector *vx, ef_solve_result *result) {
  ef_cl_bicgstab *b = data;
  cl_mem rhs = ef_cl_vector_mem(vb), x = ef_cl_vector_mem(vx);
  EF_CHECK(rhs && x && rhs != x, EF_ERR_PARAMETER, "device bicgstab: needs two distinct device vectors");
  const ef_cl_csr *A = &b->A;
  double st[BS_SIZE];
  EF_CL_SET_ARGS(b->init, EF_CL_ARG(b->n), EF_CL_ARG(A->row_ptr), EF_CL_ARG(A->col_idx), EF_CL_ARG(A->values),
                 EF_CL_ARG(rhs), EF_CL_ARG(x), EF_CL_ARG(b->r), EF_CL_ARG(b->r0), EF_CL_ARG(b->part));
  EF_CALL(ef_cl_bicgstab_launch(b, b->init, b->groups));
  EF_CALL(ef_cl_bicgstab_reduce(b, BM_INIT, 0));
  EF_CALL(ef_cl_bicgstab_read_state(b, st));
  int k = 0;
  while (st[BS_STOP] < 0.0 && k < b->max_iterations) {
    const int end = b->max_iterations - k < b->check_every ? b->max_iterations : k + b->check_every;
    for (; k < end; ++k) EF_CALL(ef_cl_bicgstab_iteration(b, x, k));
    EF_CALL(ef_cl_bicgstab_read_state(b, st));
  }
  EF_CL_SET_ARGS(b->residual, EF_CL_ARG(b->n), EF_CL_ARG(A->row_ptr), EF_CL_ARG(A->col_idx), EF_CL_ARG(A->values),
                 EF_CL_ARG(rhs), EF_CL_ARG(x), EF_CL_ARG(b->part));
  EF_CALL(ef_cl_bicgstab_launch(b, b->residual, b->groups));
  EF_CALL(ef_cl_bicgstab_reduce(b, BM_OUT, 0));
  EF_CALL(ef_cl_bicgstab_read_state(b, st));
  const int stop = st[BS_STOP] >= 0.0 ? (int)st[BS_STOP] : -1, broken = st[BS_BREAK] >= 0.0;
  const double bb = st[BS_BB];
  result->iterations = stop >= 0 ? stop : b->max_iterations;
  result->converged = stop >= 0 && !broken;
  result->residual = bb > 0.0 ? sqrt(st[BS_RR] / bb) : sqrt(st[BS_RR]);
  result->true_residual = st[BS_OUT + 1] > 0.0 ? sqrt(st[BS_OUT] / st[BS_OUT + 1]) : sqrt(st[BS_OUT]);
  EF_CHECK(!broken, EF_ERR_SOLVER,
           "device bicgstab broke down at iteration %d (r0.v, omega or rho became 0 or not finite; relative "
           "residual there %.3e)", (int)st[BS_BREAK], result->residual);
  return EF_SUCCESS;
}

/* Nothing depends on A's values here (the preconditioner's setup runs before this). */
static int ef_cl_bicgstab_setup(void *data, const ef_matrix *A) {
  ef_cl_bicgstab *b = data;
  const ef_cl_csr *H = ef_cl_matrix_csr(A);
  EF_CHECK(H && H->n == b->A.n && H->nnz == b->A.nnz, EF_ERR_PARAMETER,
           "device bicgstab: not the device matrix it was created for");
  b->A = *H;
  return EF_SUCCESS;
}

/* Settings, kernels and ten work buffers (zeroed once: no launch reads an unwritten value). */
static int ef_cl_bicgstab_create(ef_parameters settings, const ef_linear_solver_common *common, const ef_matrix *M,
                                 ef_preconditioner *pc, void **out) {
  *out = NULL;
  const ef_cl_csr *A = ef_cl_matrix_csr(M);
  ef_cl_context *ctx = ef_cl_matrix_context(M);
  EF_CHECK(A && ctx && A->row_ptr && A->col_idx && A->values, EF_ERR_PARAMETER,
           "device bicgstab: needs a device matrix and its OpenCL context");
  EF_CHECK(pc, EF_ERR_PARAMETER, "device bicgstab: no preconditioner");
  EF_CHECK(A->n >= 1 && A->n <= INT32_MAX - (1 << 26), EF_ERR_PARAMETER,
           "device bicgstab: unsupported size n = %" PRId64, A->n);
  long check = 1;
  EF_CALL(ef_parameters_get_int(settings, "check_every", &check));
  EF_CHECK(check >= 1 && check <= 1000, EF_ERR_PARAMETER, "%s.check_every must be 1..1000",
           ef_parameters_path(settings));
  const uint64_t bytes = 8u * 8u * (uint64_t)A->n + 16u * EF_BCG_MAX_GROUPS + 8u * BS_SIZE;
  EF_CALL(ef_cl_context_check_memory(ctx, bytes, "the device BiCGStab (8 vectors)"));
  ef_cl_bicgstab *b = calloc(1, sizeof *b);
  EF_CHECK(b, EF_ERR_MEMORY, "out of memory");
  int err = EF_SUCCESS;
  void *zero = NULL;
  b->ctx = ctx;
  b->A = *A;
  b->n = (int)A->n;
  b->pc = pc;
  b->rtol = common->tolerance;
  b->max_iterations = common->max_iteration;
  b->check_every = (int)check;
  b->bits = 8;
  while (b->bits > 0 && ((size_t)1 << b->bits) > ctx->max_work_group_size) --b->bits;
  const int64_t groups = (A->n + ((int64_t)1 << b->bits) - 1) >> b->bits;
  b->groups = (int)(groups < EF_BCG_MAX_GROUPS ? groups : EF_BCG_MAX_GROUPS);
  char options[96];
  snprintf(options, sizeof options, "-D VEC_WGS_BITS=%d%s", b->bits, A->row_ptr_64 ? " -D EF_ROW_PTR_64" : "");
  EF_CALL_GOTO(ef_cl_program_get(ctx, EF_BCG_SOURCE, options, &b->program), fail);
  struct {
    const char *name;
    cl_kernel *kernel;
  } list[] = {{"bcg_init", &b->init},   {"bcg_direction", &b->direction}, {"bcg_spmv_dot", &b->spmv_dot},
              {"bcg_s", &b->s_kernel},  {"bcg_spmv_dot2", &b->spmv_dot2}, {"bcg_update", &b->update},
              {"bcg_residual", &b->residual}, {"bcg_reduce", &b->reduce}};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; ++i)
    EF_CALL_GOTO(ef_cl_kernel_create(b->program, list[i].name, list[i].kernel), fail);
  const size_t n8 = (size_t)A->n * 8;
  zero = calloc(n8, 1);
  EF_CHECK_GOTO(zero, EF_ERR_MEMORY, fail, "out of memory");
  cl_mem *vecs[] = {&b->r, &b->r0, &b->p, &b->v, &b->s, &b->t, &b->ph, &b->sh};
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; ++i) {
    EF_CALL_GOTO(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, n8, NULL, "a BiCGStab vector", vecs[i]), fail);
    EF_CL_CALL_GOTO(clEnqueueWriteBuffer(ctx->queue, *vecs[i], CL_TRUE, 0, n8, zero, 0, NULL, NULL), fail);
  }
  EF_CALL_GOTO(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, 16u * EF_BCG_MAX_GROUPS, NULL, "partial sums", &b->part),
               fail);
  EF_CALL_GOTO(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, 8u * BS_SIZE, NULL, "the BiCGStab state", &b->state),
               fail);
  EF_CL_CALL_GOTO(clEnqueueWriteBuffer(ctx->queue, b->state, CL_TRUE, 0, 8u * BS_SIZE, zero, 0, NULL, NULL), fail);
  free(zero);
  *out = b;
  return EF_SUCCESS;
fail:
  free(zero);
  ef_cl_bicgstab_destroy((void **)&b);
  return err;
}

/* Memory traffic of one iteration without the preconditioner: two SpMVs (12 nnz + offsets + 8 n
 * gathered each) and 168 n bytes of vectors. */
static int ef_cl_bicgstab_view(void *data, ef_parameters report) {
  const ef_cl_bicgstab *b = data;
  const double n = (double)b->A.n, nnz = (double)b->A.nnz, off = b->A.row_ptr_64 ? 8.0 : 4.0;
  EF_CALL(ef_parameters_set_double(report, "check_every", b->check_every));
  EF_CALL(ef_parameters_set_double(report, "work_group_size", (double)(1 << b->bits)));
  EF_CALL(ef_parameters_set_double(report, "groups", b->groups));
  EF_CALL(ef_parameters_set_double(report, "bytes_per_iteration", 2.0 * (12.0 * nnz + off * (n + 1.0)) + 168.0 * n));
  return EF_SUCCESS;
}

const ef_linear_solver_ops ef_cl_bicgstab_ops = {
    .name = "bicgstab",
    .description = "BiCGStab on the device, right-preconditioned by a device preconditioner",
    .memory = EF_MEMORY_DEVICE,
    .defaults = "{\"check_every\": 1}", /* the same key and default as the device CG's */
    .uses_preconditioner = 1,
    .create = ef_cl_bicgstab_create,
    .setup = ef_cl_bicgstab_setup,
    .solve = ef_cl_bicgstab_solve,
    .view = ef_cl_bicgstab_view,
    .destroy = ef_cl_bicgstab_destroy,
};
