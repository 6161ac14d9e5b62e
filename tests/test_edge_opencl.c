/* test_edge_opencl.c -- the kernels of custom_kernels/edge_kernels.cl (one work-item per
 * row, the row functions of edge_physics.h compiled as OpenCL C) give the same results as
 * the OpenMP executor: projections and tau, the four RK4 stages (uh), the pressure system
 * (H values and f) and the correction, on jittered 2D and 3D meshes with fixed velocities,
 * slip nodes, a fixed pressure and a body force.  The rows are processed in two blocks
 * (row_begin / edge_base) to exercise the split of the edge arrays.
 * Tolerance: 1e-12 of the largest magnitude of each compared array (the device compiler
 * may contract a*b+c into fma, which changes last bits, never more).
 * Skips (77) without an OpenCL device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge_data.h"
#include "edge_physics.h"
#include "edgeflow/ef_error.h"
#include "fractional_step.h"
#include "opencl_context.h"
#include "test_mesh_gen.h"

static int failures = 0;
#define EXPECT(cond, ...)                                      \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "%s:%d: FAILED: ", __FILE__, __LINE__);  \
      fprintf(stderr, __VA_ARGS__);                            \
      fputc('\n', stderr);                                     \
      ++failures;                                              \
    }                                                          \
  } while (0)

/* max |a - b| <= 1e-12 max |a| over n values. */
static void compare(const char *what, const double *host, const double *dev, int64_t n, int dim) {
  double scale = 0.0, diff = 0.0;
  int64_t where = -1;
  for (int64_t i = 0; i < n; ++i) {
    scale = fmax(scale, fabs(host[i]));
    if (!(fabs(host[i] - dev[i]) <= diff)) {
      diff = fabs(host[i] - dev[i]);
      where = i;
    }
  }
  EXPECT(diff <= 1e-12 * scale, "%dD %s: max difference %g at %lld (scale %g)", dim, what, diff, (long long)where,
         scale);
}

/* A device copy of a host array (NULL for no data). */
static cl_mem buffer(ef_cl_context *ctx, const void *data, size_t bytes, int *err) {
  if (!data || bytes == 0) return NULL;
  cl_int st;
  cl_mem m = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, (void *)data, &st);
  if (st != CL_SUCCESS) *err = 1;
  return m;
}

/* Blocking read of a device buffer. */
static int read_back(ef_cl_context *ctx, cl_mem m, void *out, size_t bytes) {
  return clEnqueueReadBuffer(ctx->queue, m, CL_TRUE, 0, bytes, out, 0, NULL, NULL) != CL_SUCCESS;
}

/* Set kernel arguments from a list: each entry a pointer to the value and its size. */
typedef struct {
  size_t size;
  const void *value;
} karg;

/* Launch a row kernel once per row block with the block arguments set. */
static int run_kernel(ef_cl_context *ctx, cl_kernel k, const karg *args, int nargs, const ef_edge_data *ed,
                      const int64_t *blocks, int nblocks, cl_mem *ev_blocks, cl_mem *col_blocks) {
  for (int b = 0; b < nblocks; ++b) {
    const cl_long row_begin = blocks[b], n_rows = blocks[b + 1] - blocks[b], edge_base = ed->row_ptr[blocks[b]];
    if (clSetKernelArg(k, 0, sizeof row_begin, &row_begin) || clSetKernelArg(k, 1, sizeof n_rows, &n_rows) ||
        clSetKernelArg(k, 2, sizeof edge_base, &edge_base) || clSetKernelArg(k, 4, sizeof(cl_mem), &col_blocks[b]) ||
        clSetKernelArg(k, 5, sizeof(cl_mem), &ev_blocks[b]))
      return 1;
    for (int a = 0; a < nargs; ++a)
      if (a != 0 && a != 1 && a != 2 && a != 4 && a != 5 && args[a].size &&
          clSetKernelArg(k, (cl_uint)a, args[a].size, args[a].value) != CL_SUCCESS) {
        fprintf(stderr, "argument %d refused\n", a);
        return 1;
      }
    size_t global = (size_t)n_rows;
    if (clEnqueueNDRangeKernel(ctx->queue, k, 1, NULL, &global, NULL, 0, NULL, NULL) != CL_SUCCESS) return 1;
  }
  return clFinish(ctx->queue) != CL_SUCCESS;
}

#define M(x) {sizeof(cl_mem), &(x)}
#define V(x) {sizeof(x), &(x)}
#define SKIPPED {0, NULL}

/* Host executor vs kernels for one dimension. */
static int check_dim(ef_cl_context *ctx, int dim) {
  ef_test_mesh m;
  int rc = dim == 3 ? ef_test_mesh_3d(7, 6, 6, 1.0, 0.9, 0.8, 0.2, 41, &m) : ef_test_mesh_2d(24, 21, 1.0, 0.9, 0.2, 43, &m);
  if (rc) return 1;
  const int64_t n = m.n_nodes;
  ef_edge_data ed;
  if (ef_edge_data_build(dim, n, m.coords, m.n_elements, dim + 1, m.elements, &ed)) return 1;
  const size_t V3 = 3 * (size_t)n * sizeof(double), V1 = (size_t)n * sizeof(double);
  double *un = calloc(3 * (size_t)n, sizeof(double)), *pn = calloc((size_t)n, sizeof(double));
  double *body = calloc(3 * (size_t)n, sizeof(double)), *normal = calloc(3 * (size_t)n, sizeof(double));
  double *tangent = calloc(3 * (size_t)n, sizeof(double)), *pnew = calloc((size_t)n, sizeof(double));
  uint8_t *vfix = calloc(3 * (size_t)n, 1), *pfix = calloc((size_t)n, 1), *slip = calloc((size_t)n, 1);
  for (int64_t i = 0; i < n; ++i) {
    const double *x = m.coords + 3 * i;
    un[3 * i] = sin(2.0 * x[1]) + 0.3;
    un[3 * i + 1] = cos(1.5 * x[0]) * 0.5;
    if (dim == 3) un[3 * i + 2] = 0.2 * x[0] * x[1];
    pn[i] = x[0] * x[0] - 0.5 * x[1] + 0.1 * x[2];
    pnew[i] = pn[i] + 0.05 * sin(3.0 * x[0] + x[1]);
    body[3 * i + 1] = -1.0;
    const uint8_t b = m.boundary[i];
    if (b & (EF_TM_YMIN | EF_TM_YMAX)) {
      vfix[3 * i] = vfix[3 * i + 1] = vfix[3 * i + 2] = 1;
    } else if (b == EF_TM_XMIN) {
      slip[i] = EF_SLIP_FACE;
      normal[3 * i] = -1.0;
    } else if (dim == 3 && b == (EF_TM_XMIN | EF_TM_ZMIN)) {
      slip[i] = EF_SLIP_EDGE;
      tangent[3 * i + 1] = 1.0;
    } else if (b & EF_TM_XMAX) {
      vfix[3 * i + 1] = 1; /* one component only */
    }
    if (b == EF_TM_XMAX) pfix[i] = 1;
  }
  /* Host reference. */
  ef_fs_settings s;
  ef_fs_settings_default(&s);
  s.nu = 0.02;
  s.velocity_fixed = vfix;
  s.pressure_fixed = pfix;
  s.slip_type = slip;
  s.slip_normal = normal;
  s.slip_tangent = tangent;
  s.body_force = body;
  ef_fs *fs = NULL;
  const double dt = 0.004, cc = 0.5 * dt;
  double *uh = calloc(3 * (size_t)n, sizeof(double)), *pw = calloc((size_t)n, sizeof(double));
  double *ucorr = calloc(3 * (size_t)n, sizeof(double));
  int err = ef_fs_create(&ed, &s, &fs);
  if (!err) err = ef_fs_prepare(fs, dt, un, pn);
  if (!err) err = ef_fs_momentum(fs, 0.0, dt, un, pn, uh, pw, NULL);
  if (!err) err = ef_fs_assemble_pressure(fs, dt, uh, pn, pn, NULL);
  if (!err) err = ef_fs_correct(fs, dt, uh, pn, pnew, ucorr);
  if (err) {
    fprintf(stderr, "host reference: %s\n", ef_error_message());
    return 1;
  }

  /* Device: two row blocks. */
  int64_t nb = 0, blocks[4];
  const int64_t half = (ed.n_edges / 2 + ed.max_row) * ed.stride;
  if (ef_edge_data_row_blocks(&ed, half, &nb, NULL) || nb != 2 || ef_edge_data_row_blocks(&ed, half, &nb, blocks)) {
    fprintf(stderr, "row blocks: %s\n", ef_error_message());
    return 1;
  }
  int berr = 0;
  cl_mem ev_b[2], col_b[2];
  for (int b = 0; b < 2; ++b) {
    const int64_t e0 = ed.row_ptr[blocks[b]], e1 = ed.row_ptr[blocks[b + 1]];
    ev_b[b] = buffer(ctx, ed.values + e0 * ed.stride, (size_t)(e1 - e0) * ed.stride * sizeof(double), &berr);
    col_b[b] = buffer(ctx, ed.col + e0, (size_t)(e1 - e0) * sizeof(int32_t), &berr);
  }
  int64_t *hrp = malloc(((size_t)n + 1) * sizeof(int64_t));
  for (int64_t i = 0; i <= n; ++i) hrp[i] = ed.row_ptr[i] + i;
  cl_mem d_rp = buffer(ctx, ed.row_ptr, ((size_t)n + 1) * sizeof(int64_t), &berr);
  cl_mem d_mass = buffer(ctx, ed.mass, V1, &berr), d_im = buffer(ctx, ed.inv_mass, V1, &berr);
  cl_mem d_h = buffer(ctx, ed.h, V1, &berr);
  cl_mem d_un = buffer(ctx, un, V3, &berr), d_pn = buffer(ctx, pn, V1, &berr), d_pnew = buffer(ctx, pnew, V1, &berr);
  cl_mem d_tau = buffer(ctx, pn, V1, &berr), d_xi = buffer(ctx, un, V3, &berr), d_xp = buffer(ctx, un, V3, &berr);
  cl_mem d_acc = buffer(ctx, un, V3, &berr), d_ua = buffer(ctx, un, V3, &berr), d_ub = buffer(ctx, un, V3, &berr);
  cl_mem d_uh = buffer(ctx, un, V3, &berr), d_uc = buffer(ctx, un, V3, &berr);
  cl_mem d_body = buffer(ctx, body, V3, &berr), d_nrm = buffer(ctx, normal, V3, &berr);
  cl_mem d_tng = buffer(ctx, tangent, V3, &berr), d_f = buffer(ctx, pn, V1, &berr);
  cl_mem d_vfix = buffer(ctx, vfix, 3 * (size_t)n, &berr), d_pfix = buffer(ctx, pfix, (size_t)n, &berr);
  cl_mem d_slip = buffer(ctx, slip, (size_t)n, &berr);
  const size_t nnz = (size_t)(ed.n_edges + n);
  double *hzero = calloc(nnz, sizeof(double));
  cl_mem d_hval = buffer(ctx, hzero, nnz * sizeof(double), &berr);
  if (berr) {
    fprintf(stderr, "buffer creation failed\n");
    return 1;
  }
  char options[64];
  snprintf(options, sizeof options, "-D EF_DIM=%d", dim);
  cl_program prog;
  if (ef_cl_program_get(ctx, "edge_kernels.cl", options, &prog)) {
    fprintf(stderr, "%s\n", ef_error_message());
    return 1;
  }
  cl_int st;
  cl_kernel k_prep = clCreateKernel(prog, "ef_fs_prepare", &st);
  cl_kernel k_rk = clCreateKernel(prog, "ef_fs_rk_stage", &st);
  cl_kernel k_ps = clCreateKernel(prog, "ef_fs_pressure_system", &st);
  cl_kernel k_cor = clCreateKernel(prog, "ef_fs_correct", &st);
  if (!k_prep || !k_rk || !k_ps || !k_cor) {
    fprintf(stderr, "kernel creation failed\n");
    return 1;
  }
  const cl_double nu = s.nu, cdt = dt, c1 = s.tau_c1, c2 = s.tau_c2, c3 = s.tau_c3, ccc = cc;
  const cl_int stab = 1;
  int kerr = 0;
  {
    karg a[] = {SKIPPED, SKIPPED, SKIPPED, M(d_rp), SKIPPED, SKIPPED, M(d_un), M(d_pn), M(d_im), M(d_h), V(nu),
                V(cdt), V(c1), V(c2), V(c3), V(stab), M(d_tau), M(d_xi), M(d_xp)};
    kerr |= run_kernel(ctx, k_prep, a, (int)(sizeof a / sizeof a[0]), &ed, blocks, 2, ev_b, col_b);
  }
  cl_mem stage_in[4] = {d_un, d_ua, d_ub, d_ua}, stage_out[4] = {d_ua, d_ub, d_ua, d_uh};
  for (cl_int stage = 0; stage < 4 && !kerr; ++stage) {
    karg a[] = {SKIPPED, SKIPPED, SKIPPED, M(d_rp), SKIPPED, SKIPPED, V(stage), V(cdt), V(nu), M(d_mass), M(d_im),
                M(d_tau), M(d_xi), M(d_body), M(d_un), M(d_pn), M(stage_in[stage]), M(d_acc), M(stage_out[stage]),
                M(d_vfix), M(d_slip), M(d_nrm), M(d_tng)};
    kerr |= run_kernel(ctx, k_rk, a, (int)(sizeof a / sizeof a[0]), &ed, blocks, 2, ev_b, col_b);
  }
  if (!kerr) {
    karg a[] = {SKIPPED, SKIPPED, SKIPPED, M(d_rp), SKIPPED, SKIPPED, V(ccc), M(d_tau), M(d_uh), M(d_pn), M(d_pn),
                M(d_xp), M(d_pfix), M(d_hval), M(d_f)};
    kerr |= run_kernel(ctx, k_ps, a, (int)(sizeof a / sizeof a[0]), &ed, blocks, 2, ev_b, col_b);
  }
  if (!kerr) {
    /* The correction from the host's uh, so only the correction is compared. */
    kerr |= clEnqueueWriteBuffer(ctx->queue, d_uc, CL_TRUE, 0, V3, uh, 0, NULL, NULL) != CL_SUCCESS;
    karg a[] = {SKIPPED, SKIPPED, SKIPPED, M(d_rp), SKIPPED, SKIPPED, V(ccc), M(d_im), M(d_uc), M(d_pn), M(d_pnew),
                M(d_ua), M(d_vfix), M(d_slip), M(d_nrm), M(d_tng)};
    kerr |= run_kernel(ctx, k_cor, a, (int)(sizeof a / sizeof a[0]), &ed, blocks, 2, ev_b, col_b);
  }
  EXPECT(!kerr, "%dD: a kernel launch failed", dim);
  double *tmp3 = malloc(V3), *tmp1 = malloc(V1), *tmpH = malloc(nnz * sizeof(double));
  if (!kerr) {
    read_back(ctx, d_tau, tmp1, V1);
    compare("tau", ef_fs_tau(fs), tmp1, n, dim);
    read_back(ctx, d_xi, tmp3, V3);
    compare("convective projection", ef_fs_convective_projection(fs), tmp3, 3 * n, dim);
    read_back(ctx, d_xp, tmp3, V3);
    compare("pressure projection", ef_fs_pressure_projection(fs), tmp3, 3 * n, dim);
    read_back(ctx, d_uh, tmp3, V3);
    compare("RK4 velocity uh", uh, tmp3, 3 * n, dim);
    read_back(ctx, d_hval, tmpH, nnz * sizeof(double));
    compare("pressure matrix H", ef_fs_pressure_matrix(fs)->val, tmpH, (int64_t)nnz, dim);
    read_back(ctx, d_f, tmp1, V1);
    compare("pressure rhs f", ef_fs_pressure_rhs(fs), tmp1, n, dim);
    read_back(ctx, d_ua, tmp3, V3);
    compare("corrected velocity", ucorr, tmp3, 3 * n, dim);
  }
  cl_mem all[] = {ev_b[0], ev_b[1], col_b[0], col_b[1], d_rp, d_mass, d_im, d_h, d_un, d_pn, d_pnew, d_tau, d_xi, d_xp,
                  d_acc, d_ua, d_ub, d_uh, d_uc, d_body, d_nrm, d_tng, d_f, d_vfix, d_pfix, d_slip, d_hval};
  for (size_t q = 0; q < sizeof all / sizeof all[0]; ++q)
    if (all[q]) clReleaseMemObject(all[q]);
  clReleaseKernel(k_prep);
  clReleaseKernel(k_rk);
  clReleaseKernel(k_ps);
  clReleaseKernel(k_cor);
  clReleaseProgram(prog);
  ef_fs_destroy(&fs);
  ef_edge_data_free(&ed);
  ef_test_mesh_free(&m);
  free(un);
  free(pn);
  free(body);
  free(normal);
  free(tangent);
  free(pnew);
  free(vfix);
  free(pfix);
  free(slip);
  free(uh);
  free(pw);
  free(ucorr);
  free(hrp);
  free(hzero);
  free(tmp3);
  free(tmp1);
  free(tmpH);
  return 0;
}

/* Compare on 3D and 2D meshes; skip without a device. */
int main(void) {
  int count = 0;
  if (ef_cl_count_devices(&count) || count == 0) return 77;
  ef_cl_settings cs;
  ef_cl_settings_default(&cs);
  cs.verbose = 0;
  cs.cache_dir = "";
  ef_cl_context *ctx = NULL;
  if (ef_cl_context_create(&cs, &ctx)) {
    fprintf(stderr, "no usable OpenCL device (%s): skipped\n", ef_error_message());
    return 77;
  }
  if (check_dim(ctx, 3) || check_dim(ctx, 2)) ++failures;
  ef_cl_context_destroy(&ctx);
  return failures ? 1 : 0;
}
