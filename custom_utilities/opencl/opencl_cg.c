/* opencl_cg.c -- host side of the device CG (kernels in custom_kernels/cg.cl, spmv.cl). */
#include "opencl_cg.h"

#include "edgeflow/ef_util.h"

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "matrix_io.h"

#define EF_CG_VECTOR_SOURCE "cg.cl"   /* vector kernels: built once */
#define EF_CG_MATRIX_SOURCE "spmv.cl" /* matrix kernels: built per SpMV configuration */
#define EF_CG_MAX_PARTIALS 4096 /* partial sums per reduction: bounds the grid */
#define EF_CG_MAX_CANDIDATES 256
#define EF_CG_VERIFY_ITERATIONS 5
/* Mirrors cg_common.h. */
enum { ST_BB = 0, ST_TOL2 = 1, ST_STOP_A = 5, ST_STOP_B = 6, ST_STOP_F = 7, ST_BREAK = 8,
       ST_FINAL = 9, ST_OUT = 16, ST_SIZE = 20 };

typedef struct {
  cl_program vector_program, matrix_program;
  cl_kernel spmv, dot, reduce, diag, scale_matrix, scale_in, scale_out, init;
  cl_kernel std_spmv, std_update, std_finish, tt_spmv, tt_update, residual;
} ef_cg_kernels;

struct ef_cl_cg_s {
  ef_cl_context *ctx;
  ef_cl_csr A;          /* the caller's buffers, not owned */
  int n;
  ef_cl_cg_settings s;
  ef_cl_cg_config cfg;
  int vec_wgs_bits;
  int groups_v;         /* work-groups of the vector kernels */
  double tuning_seconds;
  uint64_t source_hash;
  ef_cg_kernels k;
  /* Ah's off-diagonal part (its diagonal is 1): offsets, columns, values. */
  cl_mem rp_off, col_off, val_off;
  cl_mem d, v[4], part_a, part_b, state, bad;
  /* Profiling of the iteration launches (ef_cl_cg_time_iterations). */
  cl_event *prof;
  int n_prof, cap_prof;
};

/* ------------------------------------------------------------------------- */
/* Small helpers. */

/* Smallest power of two >= v (v >= 1). */
static int64_t ef_pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

/* Release a cl_mem and clear it. */
static void ef_release_mem(cl_mem *m) {
  if (*m) clReleaseMemObject(*m);
  *m = NULL;
}

/* A device buffer of bytes (checked against the largest allowed allocation). */
static int ef_buffer(ef_cl_context *ctx, cl_mem_flags flags, size_t bytes, void *host,
                     const char *what, cl_mem *out) {
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
  int err = ef_buffer(ctx, f, rp_bytes, rp, "row_ptr", &out->row_ptr);
  free(rp);
  if (!err) err = ef_buffer(ctx, f, (size_t)A->nnz * 4, (void *)A->col, "col_idx", &out->col_idx);
  if (!err) err = ef_buffer(ctx, f, (size_t)A->nnz * 8, (void *)A->values, "values", &out->values);
  if (err) ef_cl_csr_release(out);
  return err;
}

/* Release the buffers of an uploaded matrix. */
void ef_cl_csr_release(ef_cl_csr *A) {
  if (!A) return;
  ef_release_mem(&A->row_ptr);
  ef_release_mem(&A->col_idx);
  ef_release_mem(&A->values);
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
  EF_CALL(ef_buffer(ctx, CL_MEM_READ_WRITE, (size_t)n * 8, NULL, "a vector", out));
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
  if (err) ef_release_mem(out);
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

/* ------------------------------------------------------------------------- */
/* Sizes. */

/* Device bytes: matrix (4|8 (n+1) + 12 nnz), solver (the scaled off-diagonal copy,
 * 4|8 (n+1) + 12 (nnz - n), and 40 n + partials), b and x (16 n). */
uint64_t ef_cl_cg_memory_bytes(int64_t n, int64_t nnz, int row_ptr_64) {
  const uint64_t offsets = (uint64_t)(n + 1) * (row_ptr_64 ? 8u : 4u);
  uint64_t matrix = offsets + (uint64_t)nnz * 12u;
  uint64_t solver = offsets + (uint64_t)(nnz > n ? nnz - n : 0) * 12u + (uint64_t)n * 40u + 2u * EF_CG_MAX_PARTIALS * 8u + 4096u;
  uint64_t rhs_and_x = (uint64_t)n * 16u;
  return matrix + solver + rhs_and_x;
}

/* Memory traffic of one fused iteration: 12 (nnz - n) + 4 (n + 1) + 72 n bytes (int32
 * offsets): the off-diagonal matrix once, the vectors as counted in cg.cl. */
double ef_cl_cg_bytes_per_iteration(int64_t n, int64_t nnz, int row_ptr_64) {
  return 12.0 * (double)(nnz - n) + (row_ptr_64 ? 8.0 : 4.0) * (double)(n + 1) + 72.0 * (double)n;
}

/* ------------------------------------------------------------------------- */
/* Kernels. */

/* Release a kernel set. */
static void ef_cg_kernels_release(ef_cg_kernels *k) {
  cl_kernel *all[] = {&k->spmv,     &k->dot,        &k->reduce,     &k->diag,     &k->scale_matrix,
                      &k->scale_in, &k->scale_out,  &k->init,       &k->std_spmv, &k->std_update,
                      &k->std_finish, &k->tt_spmv,  &k->tt_update,  &k->residual};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    if (*all[i]) {
      clReleaseKernel(*all[i]);
      *all[i] = NULL;
    }
  if (k->vector_program) clReleaseProgram(k->vector_program);
  if (k->matrix_program) clReleaseProgram(k->matrix_program);
  k->vector_program = k->matrix_program = NULL;
}

/* Create one kernel of the program. */
static int ef_cg_kernel(cl_program p, const char *name, cl_kernel *out) {
  cl_int st;
  *out = clCreateKernel(p, name, &st);
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clCreateKernel(%s) failed: %s (%d)", name,
           ef_cl_error_name(st), (int)st);
  return EF_SUCCESS;
}

/* Build spmv.cl for (wgs_bits, rows_bits) and cg.cl (or take them from the program
 * cache) and create every kernel; fails with EF_ERR_UNSUPPORTED when the device
 * cannot run the matrix kernels at that size. */
static int ef_cg_kernels_build(ef_cl_cg *cg, int wgs_bits, int rows_bits, ef_cg_kernels *k) {
  memset(k, 0, sizeof *k);
  const char *wide = cg->A.row_ptr_64 ? " -D EF_ROW_PTR_64" : "";
  char vec_options[128], options[128];
  snprintf(vec_options, sizeof vec_options, "-D VEC_WGS_BITS=%d%s", cg->vec_wgs_bits, wide);
  snprintf(options, sizeof options, "-D WGS_BITS=%d -D ROWS_BITS=%d%s", wgs_bits, rows_bits, wide);
  int err = ef_cl_program_get(cg->ctx, EF_CG_VECTOR_SOURCE, vec_options, &k->vector_program);
  if (!err) err = ef_cl_program_get(cg->ctx, EF_CG_MATRIX_SOURCE, options, &k->matrix_program);
  if (err) {
    ef_cg_kernels_release(k);
    return err;
  }
  struct {
    const char *name;
    cl_kernel *kernel;
    int matrix; /* uses the 2^wgs_bits work-group */
  } list[] = {{"cg_spmv", &k->spmv, 1},          {"cg_dot", &k->dot, 0},
              {"cg_reduce", &k->reduce, 0},      {"cg_diag", &k->diag, 0},
              {"cg_scale_matrix", &k->scale_matrix, 0}, {"cg_scale_in", &k->scale_in, 0},
              {"cg_scale_out", &k->scale_out, 0}, {"cg_init", &k->init, 1},
              {"cg_std_spmv", &k->std_spmv, 1},  {"cg_std_update", &k->std_update, 0},
              {"cg_std_finish", &k->std_finish, 0}, {"cg_tt_spmv", &k->tt_spmv, 1},
              {"cg_tt_update", &k->tt_update, 0}, {"cg_residual", &k->residual, 1}};
  for (size_t i = 0; !err && i < sizeof list / sizeof list[0]; ++i) {
    err = ef_cg_kernel(list[i].matrix ? k->matrix_program : k->vector_program, list[i].name,
                       list[i].kernel);
    size_t limit = 0, need = (size_t)1 << (list[i].matrix ? wgs_bits : cg->vec_wgs_bits);
    if (!err && clGetKernelWorkGroupInfo(*list[i].kernel, cg->ctx->device, CL_KERNEL_WORK_GROUP_SIZE,
                                         sizeof limit, &limit, NULL) == CL_SUCCESS &&
        limit < need)
      err = EF_ERROR(EF_ERR_UNSUPPORTED, "kernel %s with %s runs at most %zu items per group on "
                     "'%s', it needs %zu", list[i].name, options, limit, cg->ctx->device_name, need);
  }
  if (err) ef_cg_kernels_release(k);
  return err;
}

/* Set one kernel argument. */
#define EF_ARG(kernel, index, value) \
  EF_CL_CALL(clSetKernelArg((kernel), (index), sizeof(value), &(value)))

/* Enqueue kernel on groups work-groups of 2^bits items; with profiling on, keep the event. */
static int ef_cg_launch(ef_cl_cg *cg, cl_kernel kernel, int groups, int bits, int profiled) {
  size_t local = (size_t)1 << bits, global = (size_t)groups * local;
  cl_event ev = NULL, *pev = NULL;
  if (profiled && cg->prof && cg->n_prof < cg->cap_prof) pev = &ev;
  EF_CL_CALL(clEnqueueNDRangeKernel(cg->ctx->queue, kernel, 1, NULL, &global, &local, 0, NULL, pev));
  if (pev) cg->prof[cg->n_prof++] = ev;
  return EF_SUCCESS;
}

/* Launch the matrix-kernel grid / the vector-kernel grid. */
static int ef_cg_launch_a(ef_cl_cg *cg, cl_kernel kernel, int profiled) {
  return ef_cg_launch(cg, kernel, cg->cfg.groups, cg->cfg.wgs_bits, profiled);
}
/* Launch on the vector-kernel grid. */
static int ef_cg_launch_v(ef_cl_cg *cg, cl_kernel kernel, int profiled) {
  return ef_cg_launch(cg, kernel, cg->groups_v, cg->vec_wgs_bits, profiled);
}

/* Reduce count partials into state[slot] with the one-group kernel. */
static int ef_cg_reduce_to(ef_cl_cg *cg, cl_mem part, int count, int slot) {
  cl_kernel k = cg->k.reduce;
  EF_ARG(k, 0, part);
  EF_ARG(k, 1, count);
  EF_ARG(k, 2, cg->state);
  EF_ARG(k, 3, slot);
  return ef_cg_launch(cg, k, 1, cg->vec_wgs_bits, 0);
}

/* Read the state buffer (blocking). */
static int ef_cg_read_state(ef_cl_cg *cg, double *st) {
  EF_CL_CALL(clEnqueueReadBuffer(cg->ctx->queue, cg->state, CL_TRUE, 0, ST_SIZE * sizeof(double), st,
                                 0, NULL, NULL));
  return EF_SUCCESS;
}

/* Groups of the vector kernels: as many items as the matrix grid, within bounds. */
static void ef_cg_set_groups(ef_cl_cg *cg) {
  int64_t items = (int64_t)cg->cfg.groups << cg->cfg.wgs_bits;
  int64_t g = items >> cg->vec_wgs_bits;
  int64_t useful = (cg->n + ((int64_t)1 << cg->vec_wgs_bits) - 1) >> cg->vec_wgs_bits;
  if (g > useful) g = useful;
  if (g > EF_CG_MAX_PARTIALS) g = EF_CG_MAX_PARTIALS;
  cg->groups_v = g < 1 ? 1 : (int)g;
}

/* ------------------------------------------------------------------------- */
/* Configurations. */

/* Matrix-kernel groups: a multiple of the compute units, no more than there are row blocks. */
static int ef_cg_clamp_groups(int64_t n, int rows_bits, int64_t groups) {
  int64_t blocks = (n + ((int64_t)1 << rows_bits) - 1) >> rows_bits;
  if (groups > blocks) groups = blocks;
  if (groups > EF_CG_MAX_PARTIALS) groups = EF_CG_MAX_PARTIALS;
  return groups < 1 ? 1 : (int)groups;
}

/* Largest lanes-per-row worth trying: twice the average row length, rounded up to a power of two. */
static int ef_cg_max_lanes(const ef_cl_csr *A) {
  int64_t avg = (A->nnz + A->n - 1) / (A->n > 0 ? A->n : 1);
  int64_t lanes = 2 * ef_pow2_ceil(avg < 1 ? 1 : avg);
  return lanes > 32 ? 32 : (int)lanes;
}

/* Whether a work-group of 2^wgs_bits fits the device (items and local memory). */
static int ef_cg_wgs_fits(const ef_cl_context *ctx, int wgs_bits) {
  size_t wgs = (size_t)1 << wgs_bits;
  /* Matrix kernels hold a double2 reduction buffer and two double lane buffers. */
  return wgs <= ctx->max_work_group_size && 32 * wgs <= ctx->local_mem_bytes;
}

/* The tuner's grid: wgs_bits 6..9, lanes per row 1..min(32, 2 pow2(avg row)), groups CU x 1..16. */
int ef_cl_cg_candidates(const ef_cl_context *ctx, const ef_cl_csr *A, ef_cl_cg_config *list,
                        int max, int *count) {
  EF_CHECK(ctx && A && list && count, EF_ERR_PARAMETER, "ef_cl_cg_candidates: NULL argument");
  *count = 0;
  int max_lanes = ef_cg_max_lanes(A);
  int64_t cu = ctx->compute_units ? ctx->compute_units : 1;
  for (int w = 6; w <= 9; ++w) {
    if (!ef_cg_wgs_fits(ctx, w)) continue;
    for (int lane_bits = 0; lane_bits <= 5 && lane_bits <= w; ++lane_bits) {
      if ((1 << lane_bits) > max_lanes) break;
      int r = w - lane_bits, last = -1;
      for (int j = 0; j <= 4; ++j) {
        int g = ef_cg_clamp_groups(A->n, r, cu << j);
        if (g == last) continue;
        last = g;
        EF_CHECK(*count < max, EF_ERR_PARAMETER, "more than %d tuner candidates", max);
        ef_cl_cg_config c = {w, r, g, 0.0};
        list[(*count)++] = c;
      }
    }
  }
  EF_CHECK(*count > 0, EF_ERR_UNSUPPORTED, "device '%s' supports no SpMV work-group size (>= 64)",
           ctx->device_name);
  return EF_SUCCESS;
}

/* The untuned choice: 256 items, lanes ~ half the average row, 8 groups per compute unit. */
static void ef_cg_default_config(const ef_cl_cg *cg, ef_cl_cg_config *c) {
  int w = 8;
  while (w > 5 && !ef_cg_wgs_fits(cg->ctx, w)) --w;
  int64_t avg = (cg->A.nnz + cg->A.n - 1) / cg->A.n;
  int64_t lanes = ef_pow2_ceil((avg + 1) / 2);
  int lane_bits = 0;
  while ((1 << lane_bits) < lanes && lane_bits < 5 && lane_bits < w) ++lane_bits;
  c->wgs_bits = w;
  c->rows_bits = w - lane_bits;
  c->groups = ef_cg_clamp_groups(cg->n, c->rows_bits, (int64_t)cg->ctx->compute_units * 8);
  c->seconds_per_iteration = 0.0;
}

/* Install a configuration: build its kernels, replacing the current ones. */
static int ef_cg_use_config(ef_cl_cg *cg, const ef_cl_cg_config *c) {
  ef_cg_kernels k;
  EF_CALL(ef_cg_kernels_build(cg, c->wgs_bits, c->rows_bits, &k));
  ef_cg_kernels_release(&cg->k);
  cg->k = k;
  cg->cfg = *c;
  cg->cfg.groups = ef_cg_clamp_groups(cg->n, c->rows_bits, c->groups);
  ef_cg_set_groups(cg);
  return EF_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Matrix scaling. */

/* d = sqrt(diag A), Ah = D^-1/2 A D^-1/2 on the device; refuses a bad diagonal. */
int ef_cl_cg_update_matrix(ef_cl_cg *cg) {
  EF_CHECK(cg, EF_ERR_PARAMETER, "ef_cl_cg_update_matrix: no solver");
  const int big = INT_MAX;
  EF_CL_CALL(clEnqueueWriteBuffer(cg->ctx->queue, cg->bad, CL_FALSE, 0, sizeof big, &big, 0, NULL,
                                  NULL));
  cl_kernel k = cg->k.diag;
  EF_ARG(k, 0, cg->n);
  EF_ARG(k, 1, cg->A.row_ptr);
  EF_ARG(k, 2, cg->A.col_idx);
  EF_ARG(k, 3, cg->A.values);
  EF_ARG(k, 4, cg->d);
  EF_ARG(k, 5, cg->bad);
  EF_CALL(ef_cg_launch_v(cg, k, 0));
  int bad = 0;
  EF_CL_CALL(clEnqueueReadBuffer(cg->ctx->queue, cg->bad, CL_TRUE, 0, sizeof bad, &bad, 0, NULL,
                                 NULL));
  EF_CHECK(bad == INT_MAX, EF_ERR_SOLVER, "device CG: row %d has a missing, non-positive or "
           "non-finite diagonal; the pressure matrix must be SPD (fixed rows as identity rows)",
           bad);
  /* Only now: the off-diagonal layout assumes one diagonal entry per row. */
  k = cg->k.scale_matrix;
  EF_ARG(k, 0, cg->n);
  EF_ARG(k, 1, cg->A.row_ptr);
  EF_ARG(k, 2, cg->A.col_idx);
  EF_ARG(k, 3, cg->A.values);
  EF_ARG(k, 4, cg->d);
  EF_ARG(k, 5, cg->rp_off);
  EF_ARG(k, 6, cg->col_off);
  EF_ARG(k, 7, cg->val_off);
  EF_CALL(ef_cg_launch_v(cg, k, 0));
  return EF_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* The solve. */

/* The arguments of the iteration kernels that stay fixed during a solve (set once,
 * so that an iteration costs the host only a few clSetKernelArg calls). */
static int ef_cg_set_iteration_args(ef_cl_cg *cg, cl_mem x) {
  const int n = cg->n;
  if (cg->s.variant == EF_CG_STANDARD) {
    cl_kernel a = cg->k.std_spmv, b = cg->k.std_update;
    EF_ARG(a, 0, n);
    EF_ARG(a, 1, cg->rp_off);
    EF_ARG(a, 2, cg->col_off);
    EF_ARG(a, 3, cg->val_off);
    EF_ARG(a, 4, cg->v[0]); /* r */
    EF_ARG(a, 7, cg->v[3]); /* q */
    EF_ARG(a, 8, x);
    EF_ARG(a, 9, cg->part_a);
    EF_ARG(a, 11, cg->part_b);
    EF_ARG(a, 12, cg->state);
    EF_ARG(b, 0, n);
    EF_ARG(b, 1, cg->v[0]);
    EF_ARG(b, 2, cg->v[3]);
    EF_ARG(b, 3, cg->part_b);
    EF_ARG(b, 4, cg->cfg.groups);
    EF_ARG(b, 5, cg->part_a);
    EF_ARG(b, 6, cg->state);
    return EF_SUCCESS;
  }
  cl_kernel a = cg->k.tt_spmv, b = cg->k.tt_update;
  EF_ARG(a, 0, n);
  EF_ARG(a, 1, cg->rp_off);
  EF_ARG(a, 2, cg->col_off);
  EF_ARG(a, 3, cg->val_off);
  EF_ARG(a, 5, cg->v[2]); /* s */
  EF_ARG(a, 6, cg->part_a);
  EF_ARG(a, 7, cg->part_b);
  EF_ARG(a, 8, cg->state);
  EF_ARG(b, 0, n);
  EF_ARG(b, 5, cg->v[2]);
  EF_ARG(b, 6, cg->part_a);
  EF_ARG(b, 7, cg->part_b);
  EF_ARG(b, 8, cg->cfg.groups);
  EF_ARG(b, 9, cg->state);
  return EF_SUCCESS;
}

/* Enqueue iteration k of the chosen variant (two launches); vectors alternate
 * between two buffers by the parity of k. */
static int ef_cg_enqueue_iteration(ef_cl_cg *cg, cl_mem x, int k) {
  if (cg->s.variant == EF_CG_STANDARD) {
    cl_mem pnew = cg->v[1 + (k & 1)], pold = cg->v[1 + ((k + 1) & 1)];
    int n_rho = k == 0 ? cg->cfg.groups : cg->groups_v; /* who wrote the rho partials */
    cl_kernel a = cg->k.std_spmv, b = cg->k.std_update;
    EF_ARG(a, 5, pold);
    EF_ARG(a, 6, pnew);
    EF_ARG(a, 10, n_rho);
    EF_ARG(a, 13, k);
    EF_CALL(ef_cg_launch_a(cg, a, 1));
    EF_ARG(b, 7, k);
    return ef_cg_launch_v(cg, b, 1);
  }
  cl_mem xs[2] = {x, cg->v[3]}, rs[2] = {cg->v[0], cg->v[1]};
  cl_kernel a = cg->k.tt_spmv, b = cg->k.tt_update;
  EF_ARG(a, 4, rs[k & 1]);
  EF_CALL(ef_cg_launch_a(cg, a, 1));
  EF_ARG(b, 1, xs[k & 1]);
  EF_ARG(b, 2, xs[(k + 1) & 1]);
  EF_ARG(b, 3, rs[k & 1]);
  EF_ARG(b, 4, rs[(k + 1) & 1]);
  EF_ARG(b, 10, k);
  return ef_cg_launch_v(cg, b, 1);
}

/* xh = D^1/2 x, r_0 = bh - Ah xh, state reset. */
static int ef_cg_enqueue_setup(ef_cl_cg *cg, cl_mem b, cl_mem x) {
  const int n = cg->n;
  cl_kernel k = cg->k.scale_in;
  EF_ARG(k, 0, n);
  EF_ARG(k, 1, cg->d);
  EF_ARG(k, 2, b);
  EF_ARG(k, 3, x);
  EF_ARG(k, 4, cg->part_b);
  EF_CALL(ef_cg_launch_v(cg, k, 0));
  int three = cg->s.variant == EF_CG_THREE_TERM;
  cl_mem aux1 = three ? cg->v[1] : cg->v[2]; /* r_{-1} / p_{-1} */
  cl_mem aux2 = cg->v[3];                    /* x_{-1} (three-term only) */
  k = cg->k.init;
  EF_ARG(k, 0, n);
  EF_ARG(k, 1, cg->rp_off);
  EF_ARG(k, 2, cg->col_off);
  EF_ARG(k, 3, cg->val_off);
  EF_ARG(k, 4, cg->d);
  EF_ARG(k, 5, b);
  EF_ARG(k, 6, x);
  EF_ARG(k, 7, cg->v[0]);
  EF_ARG(k, 8, aux1);
  EF_ARG(k, 9, aux2);
  EF_ARG(k, 10, three);
  EF_ARG(k, 11, cg->part_b);
  EF_ARG(k, 12, cg->groups_v);
  EF_ARG(k, 13, cg->part_a);
  EF_ARG(k, 14, cg->state);
  EF_ARG(k, 15, cg->s.rtol);
  return ef_cg_launch_a(cg, k, 0);
}

/* Partials of the residual of (values, x) against b (scaled or not), reduced into
 * state[slot] (res.res) and state[slot + 1] (rhs.rhs). */
static int ef_cg_enqueue_residual(ef_cl_cg *cg, cl_mem x, cl_mem b, int scaled, int slot) {
  cl_kernel k = cg->k.residual;
  cl_mem rp = scaled ? cg->rp_off : cg->A.row_ptr, col = scaled ? cg->col_off : cg->A.col_idx;
  cl_mem val = scaled ? cg->val_off : cg->A.values;
  EF_ARG(k, 0, cg->n);
  EF_ARG(k, 1, rp);
  EF_ARG(k, 2, col);
  EF_ARG(k, 3, val);
  EF_ARG(k, 4, x);
  EF_ARG(k, 5, b);
  EF_ARG(k, 6, cg->d);
  EF_ARG(k, 7, scaled);
  EF_ARG(k, 8, cg->part_a);
  EF_ARG(k, 9, cg->part_b);
  EF_CALL(ef_cg_launch_a(cg, k, 0));
  EF_CALL(ef_cg_reduce_to(cg, cg->part_a, cg->cfg.groups, slot));
  return ef_cg_reduce_to(cg, cg->part_b, cg->cfg.groups, slot + 1);
}

/* The stop recorded in a state snapshot (-1: still running). */
static int ef_cg_stop_of(const double *st) {
  double s = st[ST_STOP_A] > st[ST_STOP_B] ? st[ST_STOP_A] : st[ST_STOP_B];
  return s >= 0.0 ? (int)s : -1;
}

/* The iteration loop: check_every iterations per block, each block followed by a
 * non-blocking read of the state that the host inspects one block later, so the
 * device always has queued work while the host looks.  *stop: the iteration the
 * device stopped at, or -1. */
static int ef_cg_iterate(ef_cl_cg *cg, cl_mem x, int *stop) {
  double snap[2][ST_SIZE];
  cl_event reads[2] = {NULL, NULL};
  int err = EF_SUCCESS, slot = 0, pending = -1, k = 0;
  int every = cg->s.check_every > 0 ? cg->s.check_every : 1;
  *stop = -1;
  EF_CALL(ef_cg_set_iteration_args(cg, x));
  while (k < cg->s.max_iterations && *stop < 0) {
    int end = cg->s.max_iterations - k < every ? cg->s.max_iterations : k + every;
    for (; k < end && !err; ++k) err = ef_cg_enqueue_iteration(cg, x, k);
    if (err) break;
    EF_CL_CALL_GOTO(clEnqueueReadBuffer(cg->ctx->queue, cg->state, CL_FALSE, 0,
                                        ST_SIZE * sizeof(double), snap[slot], 0, NULL,
                                        &reads[slot]), done);
    EF_CL_CALL_GOTO(clFlush(cg->ctx->queue), done);
    if (pending >= 0) {
      EF_CL_CALL_GOTO(clWaitForEvents(1, &reads[pending]), done);
      clReleaseEvent(reads[pending]);
      reads[pending] = NULL;
      *stop = ef_cg_stop_of(snap[pending]);
    }
    pending = slot;
    slot ^= 1;
  }
done:
  /* The snapshots live on this stack frame: every read must finish before returning. */
  for (int i = 0; i < 2; ++i)
    if (reads[i]) {
      cl_int st = clWaitForEvents(1, &reads[i]);
      if (!err && st != CL_SUCCESS)
        err = EF_ERROR(EF_ERR_OPENCL, "waiting for the CG state failed: %s (%d)",
                       ef_cl_error_name(st), (int)st);
      clReleaseEvent(reads[i]);
      if (!err && i == pending && *stop < 0) *stop = ef_cg_stop_of(snap[i]);
    }
  return err;
}

/* Scale, iterate, finish, measure the true residuals and unscale (see opencl_cg.h). */
int ef_cl_cg_solve(ef_cl_cg *cg, cl_mem b, cl_mem x, ef_cl_cg_result *res) {
  EF_CHECK(cg && b && x, EF_ERR_PARAMETER, "ef_cl_cg_solve: NULL argument");
  ef_cl_cg_result local;
  if (!res) res = &local;
  memset(res, 0, sizeof *res);
  double t0 = ef_wtime();
  const int three = cg->s.variant == EF_CG_THREE_TERM;
  EF_CALL(ef_cg_enqueue_setup(cg, b, x));
  int stop = -1;
  EF_CALL(ef_cg_iterate(cg, x, &stop));
  const int max = cg->s.max_iterations;
  int iterations = stop >= 0 ? stop : max;
  if (stop < 0) {
    if (!three) {
      cl_kernel k = cg->k.std_finish;
      cl_mem pold = cg->v[1 + ((max - 1) & 1)];
      int n_rho = max == 0 ? cg->cfg.groups : cg->groups_v;
      EF_ARG(k, 0, cg->n);
      EF_ARG(k, 1, x);
      EF_ARG(k, 2, pold);
      EF_ARG(k, 3, cg->part_a);
      EF_ARG(k, 4, n_rho);
      EF_ARG(k, 5, cg->state);
      EF_ARG(k, 6, max);
      EF_CALL(ef_cg_launch_v(cg, k, 0));
    } else {
      cl_mem r = cg->v[max & 1];
      cl_kernel k = cg->k.dot;
      EF_ARG(k, 0, cg->n);
      EF_ARG(k, 1, r);
      EF_ARG(k, 2, r);
      EF_ARG(k, 3, cg->part_a);
      EF_CALL(ef_cg_launch_v(cg, k, 0));
      EF_CALL(ef_cg_reduce_to(cg, cg->part_a, cg->groups_v, ST_FINAL));
    }
  }
  /* Where x_iterations lives: the caller's buffer, or the three-term's other copy. */
  cl_mem xh = (three && (iterations & 1)) ? cg->v[3] : x;
  EF_CALL(ef_cg_enqueue_residual(cg, xh, b, 1, ST_OUT));
  cl_kernel k = cg->k.scale_out;
  EF_ARG(k, 0, cg->n);
  EF_ARG(k, 1, cg->d);
  EF_ARG(k, 2, xh);
  EF_ARG(k, 3, x);
  EF_CALL(ef_cg_launch_v(cg, k, 0));
  EF_CALL(ef_cg_enqueue_residual(cg, x, b, 0, ST_OUT + 2));
  double st[ST_SIZE];
  EF_CALL(ef_cg_read_state(cg, st));
  res->seconds = ef_wtime() - t0;
  res->iterations = iterations;
  res->breakdown = st[ST_BREAK] >= 0.0;
  double bb = st[ST_BB];
  res->converged = !res->breakdown && (stop >= 0 || st[ST_FINAL] <= st[ST_TOL2]);
  res->relres = bb > 0.0 ? sqrt(st[ST_FINAL] / bb) : 0.0;
  res->true_relres = st[ST_OUT + 1] > 0.0 ? sqrt(st[ST_OUT] / st[ST_OUT + 1]) : 0.0;
  res->true_relres_unscaled = st[ST_OUT + 3] > 0.0 ? sqrt(st[ST_OUT + 2] / st[ST_OUT + 3]) : 0.0;
  EF_CHECK(!res->breakdown, EF_ERR_SOLVER,
           "device CG (%s) broke down at iteration %d: %s <= 0 or not finite, so the scaled "
           "matrix is not symmetric positive definite (relative residual there %.3e)",
           three ? "three-term" : "standard", iterations, three ? "r.Ar" : "p.Ap", res->relres);
  return EF_SUCCESS;
}

/* Replace the stopping parameters. */
int ef_cl_cg_set_stopping(ef_cl_cg *cg, double rtol, int max_iterations, int check_every) {
  EF_CHECK(cg, EF_ERR_PARAMETER, "ef_cl_cg_set_stopping: no solver");
  EF_CHECK(rtol >= 0.0 && max_iterations >= 0 && check_every >= 1, EF_ERR_PARAMETER,
           "device CG: need rtol >= 0, max_iterations >= 0, check_every >= 1 (got %g, %d, %d)",
           rtol, max_iterations, check_every);
  cg->s.rtol = rtol;
  cg->s.max_iterations = max_iterations;
  cg->s.check_every = check_every;
  return EF_SUCCESS;
}

/* y = A x with the caller's (unscaled) values. */
int ef_cl_cg_spmv(ef_cl_cg *cg, cl_mem x, cl_mem y) {
  EF_CHECK(cg && x && y, EF_ERR_PARAMETER, "ef_cl_cg_spmv: NULL argument");
  cl_kernel k = cg->k.spmv;
  EF_ARG(k, 0, cg->n);
  EF_ARG(k, 1, cg->A.row_ptr);
  EF_ARG(k, 2, cg->A.col_idx);
  EF_ARG(k, 3, cg->A.values);
  EF_ARG(k, 4, x);
  EF_ARG(k, 5, y);
  return ef_cg_launch_a(cg, k, 0);
}

/* x.y: group partials, one-group sum, read back. */
int ef_cl_cg_dot(ef_cl_cg *cg, cl_mem x, cl_mem y, double *result) {
  EF_CHECK(cg && x && y && result, EF_ERR_PARAMETER, "ef_cl_cg_dot: NULL argument");
  cl_kernel k = cg->k.dot;
  EF_ARG(k, 0, cg->n);
  EF_ARG(k, 1, x);
  EF_ARG(k, 2, y);
  EF_ARG(k, 3, cg->part_a);
  EF_CALL(ef_cg_launch_v(cg, k, 0));
  EF_CALL(ef_cg_reduce_to(cg, cg->part_a, cg->groups_v, ST_OUT));
  double st[ST_SIZE];
  EF_CALL(ef_cg_read_state(cg, st));
  *result = st[ST_OUT];
  return EF_SUCCESS;
}

/* The SpMV configuration in use and the tuning time. */
void ef_cl_cg_get_config(const ef_cl_cg *cg, ef_cl_cg_config *config, double *tuning_seconds) {
  if (config) *config = cg->cfg;
  if (tuning_seconds) *tuning_seconds = cg->tuning_seconds;
}

/* Release and forget the profiling events. */
static void ef_cg_drop_profile(ef_cl_cg *cg) {
  for (int i = 0; i < cg->n_prof; ++i) clReleaseEvent(cg->prof[i]);
  free(cg->prof);
  cg->prof = NULL;
  cg->n_prof = cg->cap_prof = 0;
}

/* Wall and kernel seconds per iteration of a fixed-count solve from zero: one run
 * without events for the wall clock (events cost host time per launch), one with
 * profiling events on the iteration launches for the kernel time. */
int ef_cl_cg_time_iterations(ef_cl_cg *cg, cl_mem b, cl_mem x, int iterations,
                             double *wall_seconds_per_iteration,
                             double *kernel_seconds_per_iteration, double *matrix_seconds_per_iteration) {
  EF_CHECK(cg && b && x && iterations >= 1, EF_ERR_PARAMETER, "ef_cl_cg_time_iterations: bad argument");
  ef_cl_cg_settings saved = cg->s;
  const double zero = 0.0;
  const size_t bytes = (size_t)cg->n * 8;
  int err = EF_SUCCESS;
  double wall = 0.0, kernel = 0.0, matrix = 0.0;
  cg->s.rtol = 0.0;
  cg->s.check_every = iterations; /* no read-back inside the timed loop */
  /* Warm-up: first launches compile or load code on some drivers. */
  cg->s.max_iterations = 2;
  EF_CL_CALL_GOTO(clEnqueueFillBuffer(cg->ctx->queue, x, &zero, sizeof zero, 0, bytes, 0, NULL, NULL),
                  done);
  EF_CALL_GOTO(ef_cl_cg_solve(cg, b, x, NULL), done);
  cg->s.max_iterations = iterations;
  if (wall_seconds_per_iteration) {
    EF_CL_CALL_GOTO(clEnqueueFillBuffer(cg->ctx->queue, x, &zero, sizeof zero, 0, bytes, 0, NULL,
                                        NULL), done);
    EF_CL_CALL_GOTO(clFinish(cg->ctx->queue), done);
    double t0 = ef_wtime();
    EF_CALL_GOTO(ef_cl_cg_solve(cg, b, x, NULL), done);
    wall = (ef_wtime() - t0) / iterations;
  }
  if (kernel_seconds_per_iteration) {
    EF_CL_CALL_GOTO(clEnqueueFillBuffer(cg->ctx->queue, x, &zero, sizeof zero, 0, bytes, 0, NULL,
                                        NULL), done);
    cg->prof = calloc((size_t)iterations * 2, sizeof *cg->prof);
    EF_CHECK_GOTO(cg->prof, EF_ERR_MEMORY, done, "out of memory for profiling events");
    cg->cap_prof = iterations * 2;
    EF_CALL_GOTO(ef_cl_cg_solve(cg, b, x, NULL), done);
    for (int i = 0; i < cg->n_prof; ++i) {
      double sec;
      EF_CALL_GOTO(ef_cl_event_seconds(cg->prof[i], &sec), done);
      kernel += sec;
      if (i % 2 == 0) matrix += sec; /* each iteration launches the matrix kernel first */
    }
    kernel /= iterations;
    matrix /= iterations;
  }
done:
  ef_cg_drop_profile(cg);
  cg->s = saved;
  if (!err) {
    if (wall_seconds_per_iteration) *wall_seconds_per_iteration = wall;
    if (kernel_seconds_per_iteration) *kernel_seconds_per_iteration = kernel;
    if (matrix_seconds_per_iteration) *matrix_seconds_per_iteration = matrix;
  }
  return err;
}

/* ------------------------------------------------------------------------- */
/* The tuner. */

/* Deterministic pseudo-random numbers in [-1, 1) (xorshift64*). */
static double ef_cg_random(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return (double)((x * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
}

/* Host data the tuner checks each candidate against. */
typedef struct {
  int64_t *rp;
  int32_t *col;
  double *val;
  double *x, *y_ref, *bound; /* SpMV input, reference and per-row error bound */
  double *b, *x_ref;         /* right-hand side and x after EF_CG_VERIFY_ITERATIONS host CG steps */
  cl_mem dx, dy, db, dsol;
} ef_cg_tune_data;

/* Free the tuner's host and device data. */
static void ef_cg_tune_data_free(ef_cg_tune_data *t) {
  free(t->rp);
  free(t->col);
  free(t->val);
  free(t->x);
  free(t->y_ref);
  free(t->bound);
  free(t->b);
  free(t->x_ref);
  ef_release_mem(&t->dx);
  ef_release_mem(&t->dy);
  ef_release_mem(&t->db);
  ef_release_mem(&t->dsol);
}

/* EF_CG_VERIFY_ITERATIONS steps of textbook CG on the scaled system from 0, unscaled. */
static int ef_cg_host_reference_cg(const ef_cg_tune_data *t, int64_t n, double *x_out) {
  double *d = NULL, *r = NULL, *p = NULL, *q = NULL, *xh = NULL;
  int err = EF_SUCCESS;
  d = malloc((size_t)n * sizeof *d);
  r = malloc((size_t)n * sizeof *r);
  p = malloc((size_t)n * sizeof *p);
  q = malloc((size_t)n * sizeof *q);
  xh = calloc((size_t)n, sizeof *xh);
  EF_CHECK_GOTO(d && r && p && q && xh, EF_ERR_MEMORY, done, "out of memory in the tuner");
  for (int64_t i = 0; i < n; ++i) {
    double a = 1.0;
    for (int64_t j = t->rp[i]; j < t->rp[i + 1]; ++j)
      if (t->col[j] == i) a = t->val[j];
    d[i] = sqrt(a);
  }
  double rho = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    r[i] = p[i] = t->b[i] / d[i];
    rho += r[i] * r[i];
  }
  for (int it = 0; it < EF_CG_VERIFY_ITERATIONS && rho > 0.0; ++it) {
    double pq = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      double s = 0.0;
      for (int64_t j = t->rp[i]; j < t->rp[i + 1]; ++j)
        s += t->val[j] / (d[i] * d[t->col[j]]) * p[t->col[j]];
      q[i] = s;
      pq += p[i] * s;
    }
    double alpha = rho / pq, rho_new = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      xh[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      rho_new += r[i] * r[i];
    }
    double beta = rho_new / rho;
    rho = rho_new;
    for (int64_t i = 0; i < n; ++i) p[i] = r[i] + beta * p[i];
  }
  for (int64_t i = 0; i < n; ++i) x_out[i] = xh[i] / d[i];
done:
  free(d);
  free(r);
  free(p);
  free(q);
  free(xh);
  return err;
}

/* Download A, draw inputs and compute the host references. */
static int ef_cg_tune_data_make(ef_cl_cg *cg, ef_cg_tune_data *t) {
  memset(t, 0, sizeof *t);
  const int64_t n = cg->n;
  EF_CALL(ef_cl_csr_download(cg->ctx, &cg->A, &t->rp, &t->col, &t->val));
  t->x = malloc((size_t)n * sizeof(double));
  t->y_ref = malloc((size_t)n * sizeof(double));
  t->bound = malloc((size_t)n * sizeof(double));
  t->b = malloc((size_t)n * sizeof(double));
  t->x_ref = malloc((size_t)n * sizeof(double));
  EF_CHECK(t->x && t->y_ref && t->bound && t->b && t->x_ref, EF_ERR_MEMORY, "out of memory in the tuner");
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  for (int64_t i = 0; i < n; ++i) {
    t->x[i] = ef_cg_random(&seed);
    t->b[i] = ef_cg_random(&seed);
  }
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.0, a = 0.0;
    for (int64_t j = t->rp[i]; j < t->rp[i + 1]; ++j) {
      s += t->val[j] * t->x[t->col[j]];
      a += fabs(t->val[j] * t->x[t->col[j]]);
    }
    t->y_ref[i] = s;
    /* Any summation order of m products errs by at most about m eps sum|a x|;
     * 4 m covers the reference's own error and fused multiply-adds. */
    t->bound[i] = 4.0 * (double)(t->rp[i + 1] - t->rp[i]) * DBL_EPSILON * a;
  }
  EF_CALL(ef_cg_host_reference_cg(t, n, t->x_ref));
  EF_CALL(ef_cl_vector_create(cg->ctx, n, t->x, &t->dx));
  EF_CALL(ef_cl_vector_create(cg->ctx, n, NULL, &t->dy));
  EF_CALL(ef_cl_vector_create(cg->ctx, n, t->b, &t->db));
  EF_CALL(ef_cl_vector_create(cg->ctx, n, NULL, &t->dsol));
  return EF_SUCCESS;
}

/* Check the installed configuration: SpMV per row, then a few CG steps against the host. */
static int ef_cg_verify(ef_cl_cg *cg, ef_cg_tune_data *t, double *work) {
  const int64_t n = cg->n;
  EF_CALL(ef_cl_cg_spmv(cg, t->dx, t->dy));
  EF_CALL(ef_cl_vector_read(cg->ctx, t->dy, n, work));
  for (int64_t i = 0; i < n; ++i)
    EF_CHECK(fabs(work[i] - t->y_ref[i]) <= t->bound[i], EF_ERR_INTERNAL,
             "SpMV (wgs_bits %d, rows_bits %d) row %" PRId64 ": %.17g, host %.17g", cg->cfg.wgs_bits,
             cg->cfg.rows_bits, i, work[i], t->y_ref[i]);
  ef_cl_cg_settings saved = cg->s;
  cg->s.rtol = 0.0;
  cg->s.max_iterations = EF_CG_VERIFY_ITERATIONS;
  cg->s.check_every = EF_CG_VERIFY_ITERATIONS;
  const double zero = 0.0;
  cl_int st = clEnqueueFillBuffer(cg->ctx->queue, t->dsol, &zero, sizeof zero, 0, (size_t)n * 8, 0,
                                  NULL, NULL);
  int err = st == CL_SUCCESS ? ef_cl_cg_solve(cg, t->db, t->dsol, NULL)
                             : EF_ERROR(EF_ERR_OPENCL, "clEnqueueFillBuffer failed: %s",
                                        ef_cl_error_name(st));
  cg->s = saved;
  EF_CALL(err);
  EF_CALL(ef_cl_vector_read(cg->ctx, t->dsol, n, work));
  double diff = 0.0, ref = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    diff += (work[i] - t->x_ref[i]) * (work[i] - t->x_ref[i]);
    ref += t->x_ref[i] * t->x_ref[i];
  }
  /* A few CG steps amplify rounding only mildly: 1e-8 is far above it and far
   * below any indexing or synchronisation fault. */
  EF_CHECK(diff <= 1e-16 * ref, EF_ERR_INTERNAL, "CG (wgs_bits %d, rows_bits %d, groups %d) after %d "
           "iterations differs from the host by %.3e (relative)", cg->cfg.wgs_bits,
           cg->cfg.rows_bits, cg->cfg.groups, EF_CG_VERIFY_ITERATIONS, ref > 0 ? sqrt(diff / ref) : diff);
  return EF_SUCCESS;
}

/* Path of the tuning cache file for this solver. */
static int ef_cg_tune_path(const ef_cl_cg *cg, char *path, size_t size) {
  if (!cg->ctx->cache_dir[0]) return 0;
  uint64_t key = ef_cl_hash_str(EF_FNV_SEED, cg->ctx->device_name);
  key = ef_cl_hash_str(key, cg->ctx->driver_version);
  key = ef_cl_hash_str(key, cg->ctx->platform_version);
  int64_t shape[5] = {cg->A.n, cg->A.nnz, cg->A.row_ptr_64, cg->s.variant, cg->vec_wgs_bits};
  key = ef_cl_hash(key, &cg->source_hash, sizeof cg->source_hash);
  key = ef_cl_hash(key, shape, sizeof shape);
  snprintf(path, size, "%s/tune-%016" PRIx64 ".txt", cg->ctx->cache_dir, key);
  return 1;
}

/* A cached tuning result, if one exists and parses. */
static int ef_cg_tune_load(const ef_cl_cg *cg, ef_cl_cg_config *c) {
  char path[1200];
  if (!ef_cg_tune_path(cg, path, sizeof path)) return 0;
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int ok = fscanf(f, "EFTUNE1 %d %d %d %lf", &c->wgs_bits, &c->rows_bits, &c->groups,
                  &c->seconds_per_iteration) == 4;
  fclose(f);
  return ok && c->wgs_bits >= 1 && c->wgs_bits <= 12 && c->rows_bits >= 0 &&
         c->rows_bits <= c->wgs_bits && c->groups >= 1 && ef_cg_wgs_fits(cg->ctx, c->wgs_bits);
}

/* Store a tuning result (best effort). */
static void ef_cg_tune_store(const ef_cl_cg *cg, const ef_cl_cg_config *c) {
  char path[1200], tmp[1300];
  if (!ef_cg_tune_path(cg, path, sizeof path)) return;
  if (ef_make_folders(cg->ctx->cache_dir) != EF_SUCCESS) {
    ef_error_clear(); /* no cache is not an error: the next run tunes again */
    return;
  }
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return;
  int ok = fprintf(f, "EFTUNE1 %d %d %d %.9g\n# device '%s', driver '%s', n %" PRId64 ", nnz %" PRId64
                   "\n", c->wgs_bits, c->rows_bits, c->groups, c->seconds_per_iteration,
                   cg->ctx->device_name, cg->ctx->driver_version, cg->A.n, cg->A.nnz) > 0;
  if (fclose(f) != 0) ok = 0;
  if (!ok || rename(tmp, path) != 0) remove(tmp);
}

/* Time every candidate on the actual matrix and install the fastest. */
static int ef_cg_tune(ef_cl_cg *cg) {
  ef_cl_cg_config cached;
  if (!cg->s.force_retune && ef_cg_tune_load(cg, &cached)) {
    int err = ef_cg_use_config(cg, &cached);
    if (!err) {
      if (cg->s.verbose >= 1)
        fprintf(cg->ctx->log, "edgeflow: CG SpMV parameters from the tuning cache: wgs_bits %d, "
                "rows_bits %d, groups %d (%.1f us per iteration when tuned)\n", cached.wgs_bits,
                cached.rows_bits, cached.groups, cached.seconds_per_iteration * 1e6);
      return EF_SUCCESS;
    }
    ef_error_clear(); /* an unusable cached choice: tune again */
  }
  double t0 = ef_wtime();
  ef_cl_cg_config *list = malloc(EF_CG_MAX_CANDIDATES * sizeof *list);
  double *work = malloc((size_t)cg->n * sizeof *work);
  ef_cg_tune_data t;
  memset(&t, 0, sizeof t);
  int count = 0, err = EF_SUCCESS, tried = 0;
  ef_cl_cg_config best = {0, 0, 0, INFINITY};
  EF_CHECK_GOTO(list && work, EF_ERR_MEMORY, done, "out of memory in the tuner");
  EF_CALL_GOTO(ef_cl_cg_candidates(cg->ctx, &cg->A, list, EF_CG_MAX_CANDIDATES, &count), done);
  EF_CALL_GOTO(ef_cg_tune_data_make(cg, &t), done);
  for (int i = 0; i < count; ++i) {
    ef_cl_cg_config *c = &list[i];
    int e = EF_SUCCESS;
    if (i == 0 || c->wgs_bits != list[i - 1].wgs_bits || c->rows_bits != list[i - 1].rows_bits)
      e = ef_cg_use_config(cg, c);
    if (!e) {
      cg->cfg.groups = c->groups;
      ef_cg_set_groups(cg);
      e = ef_cg_verify(cg, &t, work);
    }
    double kern = 0.0;
    if (!e) e = ef_cl_cg_time_iterations(cg, t.db, t.dsol, 10, NULL, &kern, NULL);
    if (e == EF_ERR_INTERNAL) {
      /* A wrong answer is a bug, not a slow candidate: report it. */
      err = e;
      goto done;
    }
    if (e) {
      if (cg->s.verbose >= 2)
        fprintf(cg->ctx->log, "edgeflow: tuner skips wgs_bits %d rows_bits %d: %s\n", c->wgs_bits,
                c->rows_bits, ef_error_message());
      ef_error_clear();
      /* Skip the remaining group counts of a configuration that does not build. */
      while (i + 1 < count && list[i + 1].wgs_bits == c->wgs_bits &&
             list[i + 1].rows_bits == c->rows_bits)
        ++i;
      continue;
    }
    ++tried;
    c->seconds_per_iteration = kern;
    if (cg->s.verbose >= 2)
      fprintf(cg->ctx->log, "edgeflow: tuner wgs_bits %d rows_bits %d groups %d: %.2f us/iteration\n",
              c->wgs_bits, c->rows_bits, c->groups, c->seconds_per_iteration * 1e6);
    if (c->seconds_per_iteration < best.seconds_per_iteration) best = *c;
  }
  EF_CHECK_GOTO(tried > 0, EF_ERR_UNSUPPORTED, done, "the CG tuner found no working SpMV "
                "configuration on '%s'", cg->ctx->device_name);
  EF_CALL_GOTO(ef_cg_use_config(cg, &best), done);
  cg->tuning_seconds = ef_wtime() - t0;
  ef_cg_tune_store(cg, &best);
  if (cg->s.verbose >= 1)
    fprintf(cg->ctx->log, "edgeflow: CG tuner chose wgs_bits %d, rows_bits %d (%d lanes per row), "
            "groups %d: %.2f us per iteration; %d candidates timed in %.2f s\n", best.wgs_bits,
            best.rows_bits, 1 << (best.wgs_bits - best.rows_bits), best.groups,
            best.seconds_per_iteration * 1e6, tried, cg->tuning_seconds);
done:
  ef_cg_tune_data_free(&t);
  free(list);
  free(work);
  return err;
}

/* ------------------------------------------------------------------------- */
/* Life cycle. */

/* Defaults documented in opencl_cg.h. */
void ef_cl_cg_settings_default(ef_cl_cg_settings *s) {
  memset(s, 0, sizeof *s);
  s->variant = EF_CG_STANDARD;
  s->rtol = 1e-8;
  s->max_iterations = 1000;
  s->check_every = 8;
  s->tune = 1;
  s->verbose = 1;
}

/* Wait for the queue, then release kernels and buffers. */
void ef_cl_cg_destroy(ef_cl_cg **pcg) {
  if (!pcg || !*pcg) return;
  ef_cl_cg *cg = *pcg;
  if (cg->ctx && cg->ctx->queue) clFinish(cg->ctx->queue);
  ef_cg_drop_profile(cg);
  ef_cg_kernels_release(&cg->k);
  ef_release_mem(&cg->rp_off);
  ef_release_mem(&cg->col_off);
  ef_release_mem(&cg->val_off);
  ef_release_mem(&cg->d);
  for (int i = 0; i < 4; ++i) ef_release_mem(&cg->v[i]);
  ef_release_mem(&cg->part_a);
  ef_release_mem(&cg->part_b);
  ef_release_mem(&cg->state);
  ef_release_mem(&cg->bad);
  free(cg);
  *pcg = NULL;
}

/* Check explicit SpMV parameters against the device. */
static int ef_cg_check_explicit(const ef_cl_cg *cg, const ef_cl_cg_settings *s) {
  EF_CHECK(s->wgs_bits >= 1 && s->wgs_bits <= 12 && s->rows_bits >= 0 && s->rows_bits <= s->wgs_bits,
           EF_ERR_PARAMETER, "device CG: need 1 <= wgs_bits <= 12 and 0 <= rows_bits <= wgs_bits "
           "(got %d, %d)", s->wgs_bits, s->rows_bits);
  EF_CHECK(ef_cg_wgs_fits(cg->ctx, s->wgs_bits), EF_ERR_PARAMETER,
           "device CG: a work-group of %d items does not fit '%s' (max %zu items, %lu bytes of "
           "local memory)", 1 << s->wgs_bits, cg->ctx->device_name, cg->ctx->max_work_group_size,
           (unsigned long)cg->ctx->local_mem_bytes);
  EF_CHECK(s->groups >= 0, EF_ERR_PARAMETER, "device CG: groups must be >= 0 (0: automatic)");
  return EF_SUCCESS;
}

/* Check sizes and memory, allocate, build, scale the matrix, tune. */
int ef_cl_cg_create(ef_cl_context *ctx, const ef_cl_csr *A, const ef_cl_cg_settings *settings,
                    ef_cl_cg **out) {
  EF_CHECK(ctx && A && out, EF_ERR_PARAMETER, "ef_cl_cg_create: NULL argument");
  *out = NULL;
  EF_CHECK(A->row_ptr && A->col_idx && A->values, EF_ERR_PARAMETER, "ef_cl_cg_create: matrix buffers missing");
  /* Rows are indexed with int on the device; leave room for the grid stride. */
  EF_CHECK(A->n >= 1 && A->n <= INT32_MAX - (1 << 26) && A->nnz >= A->n, EF_ERR_PARAMETER,
           "device CG: unsupported size n = %" PRId64 ", nnz = %" PRId64, A->n, A->nnz);
  EF_CHECK(A->row_ptr_64 || A->nnz <= INT32_MAX, EF_ERR_PARAMETER,
           "device CG: nnz = %" PRId64 " needs 64-bit row offsets (row_ptr_64)", A->nnz);
  ef_cl_cg_settings s;
  if (settings) s = *settings;
  else ef_cl_cg_settings_default(&s);
  EF_CHECK(s.variant == EF_CG_STANDARD || s.variant == EF_CG_THREE_TERM, EF_ERR_PARAMETER,
           "device CG: unknown variant %d", (int)s.variant);
  EF_CHECK(s.rtol >= 0.0 && s.max_iterations >= 0 && s.check_every >= 1, EF_ERR_PARAMETER,
           "device CG: need rtol >= 0, max_iterations >= 0, check_every >= 1 (got %g, %d, %d)",
           s.rtol, s.max_iterations, s.check_every);
  EF_CALL(ef_cl_context_check_memory(ctx, ef_cl_cg_memory_bytes(A->n, A->nnz, A->row_ptr_64),
                                     "the device CG (matrix, scaled copy, 6 vectors)"));
  ef_cl_cg *cg = calloc(1, sizeof *cg);
  EF_CHECK(cg, EF_ERR_MEMORY, "out of memory");
  cg->ctx = ctx;
  cg->A = *A;
  cg->n = (int)A->n;
  cg->s = s;
  int err = EF_SUCCESS;
  int vb = 8;
  while (vb > 0 && ((size_t)1 << vb) > ctx->max_work_group_size) --vb;
  cg->vec_wgs_bits = vb;
  if (s.wgs_bits > 0) EF_CALL_GOTO(ef_cg_check_explicit(cg, &s), fail);
  cg->source_hash = EF_FNV_SEED;
  const char *files[2] = {EF_CG_VECTOR_SOURCE, EF_CG_MATRIX_SOURCE};
  for (int i = 0; i < 2; ++i) {
    char *source = NULL;
    EF_CALL_GOTO(ef_cl_source_resolve(files[i], &source), fail);
    cg->source_hash = ef_cl_hash_str(cg->source_hash, source);
    free(source);
  }

  size_t n8 = (size_t)A->n * 8;
  EF_CHECK_GOTO(A->nnz >= A->n, EF_ERR_PARAMETER, fail, "device CG: %" PRId64 " nonzeros for %" PRId64
                " rows: every row needs its diagonal entry", A->nnz, A->n);
  const size_t m = (size_t)(A->nnz - A->n), off_bytes = (size_t)(A->n + 1) * (A->row_ptr_64 ? 8 : 4);
  EF_CALL_GOTO(ef_buffer(ctx, CL_MEM_READ_WRITE, off_bytes, NULL, "the scaled matrix offsets", &cg->rp_off),
               fail);
  EF_CALL_GOTO(ef_buffer(ctx, CL_MEM_READ_WRITE, m * 4, NULL, "the scaled matrix columns", &cg->col_off),
               fail);
  EF_CALL_GOTO(ef_buffer(ctx, CL_MEM_READ_WRITE, m * 8, NULL, "the scaled values", &cg->val_off), fail);
  EF_CALL_GOTO(ef_buffer(ctx, CL_MEM_READ_WRITE, n8, NULL, "the scaling", &cg->d), fail);
  for (int i = 0; i < 4; ++i)
    EF_CALL_GOTO(ef_buffer(ctx, CL_MEM_READ_WRITE, n8, NULL, "a CG vector", &cg->v[i]), fail);
  EF_CALL_GOTO(ef_buffer(ctx, CL_MEM_READ_WRITE, EF_CG_MAX_PARTIALS * 8, NULL, "partial sums",
                         &cg->part_a), fail);
  EF_CALL_GOTO(ef_buffer(ctx, CL_MEM_READ_WRITE, EF_CG_MAX_PARTIALS * 8, NULL, "partial sums",
                         &cg->part_b), fail);
  EF_CALL_GOTO(ef_buffer(ctx, CL_MEM_READ_WRITE, ST_SIZE * 8, NULL, "the CG state", &cg->state), fail);
  EF_CALL_GOTO(ef_buffer(ctx, CL_MEM_READ_WRITE, sizeof(cl_int), NULL, "a flag", &cg->bad), fail);
  /* The state is read before any kernel wrote some slots: start from defined values. */
  double init_state[ST_SIZE];
  for (int i = 0; i < ST_SIZE; ++i) init_state[i] = -1.0;
  EF_CL_CALL_GOTO(clEnqueueWriteBuffer(ctx->queue, cg->state, CL_TRUE, 0, sizeof init_state,
                                       init_state, 0, NULL, NULL), fail);

  ef_cl_cg_config c;
  if (s.wgs_bits > 0) {
    c.wgs_bits = s.wgs_bits;
    c.rows_bits = s.rows_bits;
    c.groups = s.groups > 0 ? s.groups : (int)ctx->compute_units * 8;
    c.seconds_per_iteration = 0.0;
  } else {
    ef_cg_default_config(cg, &c);
    if (s.groups > 0) c.groups = s.groups;
  }
  EF_CALL_GOTO(ef_cg_use_config(cg, &c), fail);
  EF_CALL_GOTO(ef_cl_cg_update_matrix(cg), fail);
  if (s.wgs_bits == 0 && s.tune) EF_CALL_GOTO(ef_cg_tune(cg), fail);
  *out = cg;
  return EF_SUCCESS;
fail:
  ef_cl_cg_destroy(&cg);
  return err;
}
