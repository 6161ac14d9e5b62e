/* opencl_cg.c -- the device CG: symmetric scaling, fused iterations, true residuals
 * (kernels in custom_kernels/cg.cl, spmv.cl; see opencl_cg.h).  The SpMV tuner is in
 * opencl_cg_tuner.c. */
#include "opencl_cg_private.h"

#include "opencl_solvers.h"
#include "amg_register.h"

#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_linear_solver.h"
#include "edgeflow/ef_util.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
static void ef_cl_cg_kernels_release(ef_cl_cg_kernels *k) {
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

/* Build spmv.cl for (wgs_bits, rows_bits) and cg.cl (or take them from the program
 * cache) and create every kernel; fails with EF_ERR_UNSUPPORTED when the device
 * cannot run the matrix kernels at that size. */
static int ef_cl_cg_kernels_build(ef_cl_cg *cg, int wgs_bits, int rows_bits, ef_cl_cg_kernels *k) {
  memset(k, 0, sizeof *k);
  const char *wide = cg->A.row_ptr_64 ? " -D EF_ROW_PTR_64" : "";
  char vec_options[128], options[128];
  snprintf(vec_options, sizeof vec_options, "-D VEC_WGS_BITS=%d%s", cg->vec_wgs_bits, wide);
  snprintf(options, sizeof options, "-D WGS_BITS=%d -D ROWS_BITS=%d%s", wgs_bits, rows_bits, wide);
  int err = ef_cl_program_get(cg->ctx, EF_CG_VECTOR_SOURCE, vec_options, &k->vector_program);
  if (!err) err = ef_cl_program_get(cg->ctx, EF_CG_MATRIX_SOURCE, options, &k->matrix_program);
  if (err) {
    ef_cl_cg_kernels_release(k);
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
    err = ef_cl_kernel_create(list[i].matrix ? k->matrix_program : k->vector_program, list[i].name,
                       list[i].kernel);
    size_t limit = 0, need = (size_t)1 << (list[i].matrix ? wgs_bits : cg->vec_wgs_bits);
    if (!err && clGetKernelWorkGroupInfo(*list[i].kernel, cg->ctx->device, CL_KERNEL_WORK_GROUP_SIZE,
                                         sizeof limit, &limit, NULL) == CL_SUCCESS &&
        limit < need)
      err = EF_ERROR(EF_ERR_UNSUPPORTED, "kernel %s with %s runs at most %zu items per group on "
                     "'%s', it needs %zu", list[i].name, options, limit, cg->ctx->device_name, need);
  }
  if (err) ef_cl_cg_kernels_release(k);
  return err;
}

/* Enqueue kernel on groups work-groups of 2^bits items; with profiling on, keep the event. */
static int ef_cl_cg_launch(ef_cl_cg *cg, cl_kernel kernel, int groups, int bits, int profiled) {
  size_t local = (size_t)1 << bits, global = (size_t)groups * local;
  cl_event ev = NULL, *pev = NULL;
  if (profiled && cg->prof && cg->n_prof < cg->cap_prof) pev = &ev;
  EF_CL_CALL(clEnqueueNDRangeKernel(cg->ctx->queue, kernel, 1, NULL, &global, &local, 0, NULL, pev));
  if (pev) cg->prof[cg->n_prof++] = ev;
  return EF_SUCCESS;
}

/* Launch the matrix-kernel grid / the vector-kernel grid. */
static int ef_cl_cg_launch_a(ef_cl_cg *cg, cl_kernel kernel, int profiled) {
  return ef_cl_cg_launch(cg, kernel, cg->cfg.groups, cg->cfg.wgs_bits, profiled);
}
/* Launch on the vector-kernel grid. */
static int ef_cl_cg_launch_v(ef_cl_cg *cg, cl_kernel kernel, int profiled) {
  return ef_cl_cg_launch(cg, kernel, cg->groups_v, cg->vec_wgs_bits, profiled);
}

/* Reduce count partials into state[slot] with the one-group kernel. */
static int ef_cl_cg_reduce_to(ef_cl_cg *cg, cl_mem part, int count, int slot) {
  cl_kernel k = cg->k.reduce;
  EF_CL_SET_ARGS(k, EF_CL_ARG(part), EF_CL_ARG(count), EF_CL_ARG(cg->state), EF_CL_ARG(slot));
  return ef_cl_cg_launch(cg, k, 1, cg->vec_wgs_bits, 0);
}

/* Read the state buffer (blocking). */
static int ef_cl_cg_read_state(ef_cl_cg *cg, double *st) {
  EF_CL_CALL(clEnqueueReadBuffer(cg->ctx->queue, cg->state, CL_TRUE, 0, ST_SIZE * sizeof(double), st,
                                 0, NULL, NULL));
  return EF_SUCCESS;
}

/* Groups of the vector kernels: as many items as the matrix grid, within bounds. */
void ef_cl_cg_set_groups(ef_cl_cg *cg) {
  int64_t items = (int64_t)cg->cfg.groups << cg->cfg.wgs_bits;
  int64_t g = items >> cg->vec_wgs_bits;
  int64_t useful = (cg->n + ((int64_t)1 << cg->vec_wgs_bits) - 1) >> cg->vec_wgs_bits;
  if (g > useful) g = useful;
  if (g > EF_CG_MAX_PARTIALS) g = EF_CG_MAX_PARTIALS;
  cg->groups_v = g < 1 ? 1 : (int)g;
}

/* Install a configuration: build its kernels, replacing the current ones. */
int ef_cl_cg_use_config(ef_cl_cg *cg, const ef_cl_cg_config *c) {
  ef_cl_cg_kernels k;
  EF_CALL(ef_cl_cg_kernels_build(cg, c->wgs_bits, c->rows_bits, &k));
  ef_cl_cg_kernels_release(&cg->k);
  cg->k = k;
  cg->cfg = *c;
  cg->cfg.groups = ef_cl_cg_clamp_groups(cg->n, c->rows_bits, c->groups);
  ef_cl_cg_set_groups(cg);
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
  EF_CL_SET_ARGS(k, EF_CL_ARG(cg->n), EF_CL_ARG(cg->A.row_ptr), EF_CL_ARG(cg->A.col_idx),
                 EF_CL_ARG(cg->A.values), EF_CL_ARG(cg->d), EF_CL_ARG(cg->bad));
  EF_CALL(ef_cl_cg_launch_v(cg, k, 0));
  int bad = 0;
  EF_CL_CALL(clEnqueueReadBuffer(cg->ctx->queue, cg->bad, CL_TRUE, 0, sizeof bad, &bad, 0, NULL,
                                 NULL));
  EF_CHECK(bad == INT_MAX, EF_ERR_SOLVER, "device CG: row %d has a missing, non-positive or "
           "non-finite diagonal; the pressure matrix must be SPD (fixed rows as identity rows)",
           bad);
  /* Only now: the off-diagonal layout assumes one diagonal entry per row. */
  k = cg->k.scale_matrix;
  EF_CL_SET_ARGS(k, EF_CL_ARG(cg->n), EF_CL_ARG(cg->A.row_ptr), EF_CL_ARG(cg->A.col_idx),
                 EF_CL_ARG(cg->A.values), EF_CL_ARG(cg->d), EF_CL_ARG(cg->rp_off), EF_CL_ARG(cg->col_off),
                 EF_CL_ARG(cg->val_off));
  EF_CALL(ef_cl_cg_launch_v(cg, k, 0));
  return EF_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* The solve. */

/* Enqueue iteration k of the chosen variant (two launches); vectors alternate
 * between two buffers by the parity of k.  Each kernel's whole list is given at each launch,
 * and only the arguments that changed (k, the alternating vectors) reach the driver. */
static int ef_cl_cg_enqueue_iteration(ef_cl_cg *cg, cl_mem x, int k) {
  const int n = cg->n;
  if (cg->s.variant == EF_CG_STANDARD) {
    cl_mem r = cg->v[0], q = cg->v[3];
    cl_mem pnew = cg->v[1 + (k & 1)], pold = cg->v[1 + ((k + 1) & 1)];
    int n_rho = k == 0 ? cg->cfg.groups : cg->groups_v; /* who wrote the rho partials */
    cl_kernel a = cg->k.std_spmv, b = cg->k.std_update;
    EF_CL_BIND_ARGS(&cg->k.b_std_spmv, a, EF_CL_ARG(n), EF_CL_ARG(cg->rp_off), EF_CL_ARG(cg->col_off),
                    EF_CL_ARG(cg->val_off), EF_CL_ARG(r), EF_CL_ARG(pold), EF_CL_ARG(pnew), EF_CL_ARG(q), EF_CL_ARG(x),
                    EF_CL_ARG(cg->part_a), EF_CL_ARG(n_rho), EF_CL_ARG(cg->part_b), EF_CL_ARG(cg->state), EF_CL_ARG(k));
    EF_CALL(ef_cl_cg_launch_a(cg, a, 1));
    EF_CL_BIND_ARGS(&cg->k.b_std_update, b, EF_CL_ARG(n), EF_CL_ARG(r), EF_CL_ARG(q), EF_CL_ARG(cg->part_b),
                    EF_CL_ARG(cg->cfg.groups), EF_CL_ARG(cg->part_a), EF_CL_ARG(cg->state), EF_CL_ARG(k));
    return ef_cl_cg_launch_v(cg, b, 1);
  }
  cl_mem xs[2] = {x, cg->v[3]}, rs[2] = {cg->v[0], cg->v[1]}, s = cg->v[2];
  cl_kernel a = cg->k.tt_spmv, b = cg->k.tt_update;
  EF_CL_BIND_ARGS(&cg->k.b_tt_spmv, a, EF_CL_ARG(n), EF_CL_ARG(cg->rp_off), EF_CL_ARG(cg->col_off),
                  EF_CL_ARG(cg->val_off), EF_CL_ARG(rs[k & 1]), EF_CL_ARG(s), EF_CL_ARG(cg->part_a),
                  EF_CL_ARG(cg->part_b), EF_CL_ARG(cg->state));
  EF_CALL(ef_cl_cg_launch_a(cg, a, 1));
  EF_CL_BIND_ARGS(&cg->k.b_tt_update, b, EF_CL_ARG(n), EF_CL_ARG(xs[k & 1]), EF_CL_ARG(xs[(k + 1) & 1]),
                  EF_CL_ARG(rs[k & 1]), EF_CL_ARG(rs[(k + 1) & 1]), EF_CL_ARG(s), EF_CL_ARG(cg->part_a),
                  EF_CL_ARG(cg->part_b), EF_CL_ARG(cg->cfg.groups), EF_CL_ARG(cg->state), EF_CL_ARG(k));
  return ef_cl_cg_launch_v(cg, b, 1);
}

/* xh = D^1/2 x, r_0 = bh - Ah xh, state reset. */
static int ef_cl_cg_enqueue_setup(ef_cl_cg *cg, cl_mem b, cl_mem x) {
  const int n = cg->n;
  cl_kernel k = cg->k.scale_in;
  EF_CL_SET_ARGS(k, EF_CL_ARG(n), EF_CL_ARG(cg->d), EF_CL_ARG(b), EF_CL_ARG(x), EF_CL_ARG(cg->part_b));
  EF_CALL(ef_cl_cg_launch_v(cg, k, 0));
  int three = cg->s.variant == EF_CG_THREE_TERM;
  cl_mem aux1 = three ? cg->v[1] : cg->v[2]; /* r_{-1} / p_{-1} */
  cl_mem aux2 = cg->v[3];                    /* x_{-1} (three-term only) */
  k = cg->k.init;
  EF_CL_SET_ARGS(k, EF_CL_ARG(n), EF_CL_ARG(cg->rp_off), EF_CL_ARG(cg->col_off), EF_CL_ARG(cg->val_off),
                 EF_CL_ARG(cg->d), EF_CL_ARG(b), EF_CL_ARG(x), EF_CL_ARG(cg->v[0]), EF_CL_ARG(aux1),
                 EF_CL_ARG(aux2), EF_CL_ARG(three), EF_CL_ARG(cg->part_b), EF_CL_ARG(cg->groups_v),
                 EF_CL_ARG(cg->part_a), EF_CL_ARG(cg->state), EF_CL_ARG(cg->s.rtol));
  return ef_cl_cg_launch_a(cg, k, 0);
}

/* Partials of the residual of (values, x) against b (scaled or not), reduced into
 * state[slot] (res.res) and state[slot + 1] (rhs.rhs). */
static int ef_cl_cg_enqueue_residual(ef_cl_cg *cg, cl_mem x, cl_mem b, int scaled, int slot) {
  cl_kernel k = cg->k.residual;
  cl_mem rp = scaled ? cg->rp_off : cg->A.row_ptr, col = scaled ? cg->col_off : cg->A.col_idx;
  cl_mem val = scaled ? cg->val_off : cg->A.values;
  EF_CL_SET_ARGS(k, EF_CL_ARG(cg->n), EF_CL_ARG(rp), EF_CL_ARG(col), EF_CL_ARG(val), EF_CL_ARG(x),
                 EF_CL_ARG(b), EF_CL_ARG(cg->d), EF_CL_ARG(scaled), EF_CL_ARG(cg->part_a),
                 EF_CL_ARG(cg->part_b));
  EF_CALL(ef_cl_cg_launch_a(cg, k, 0));
  EF_CALL(ef_cl_cg_reduce_to(cg, cg->part_a, cg->cfg.groups, slot));
  return ef_cl_cg_reduce_to(cg, cg->part_b, cg->cfg.groups, slot + 1);
}

/* The stop recorded in a state snapshot (-1: still running). */
static int ef_cl_cg_stop_of(const double *st) {
  double s = st[ST_STOP_A] > st[ST_STOP_B] ? st[ST_STOP_A] : st[ST_STOP_B];
  return s >= 0.0 ? (int)s : -1;
}

/* The iteration loop: check_every iterations per block, each block followed by a
 * non-blocking read of the state that the host inspects one block later, so the
 * device always has queued work while the host looks.  *stop: the iteration the
 * device stopped at, or -1. */
static int ef_cl_cg_iterate(ef_cl_cg *cg, cl_mem x, int *stop) {
  double snap[2][ST_SIZE];
  cl_event reads[2] = {NULL, NULL};
  int err = EF_SUCCESS, slot = 0, pending = -1, k = 0;
  int every = cg->s.check_every > 0 ? cg->s.check_every : 1;
  *stop = -1;
  while (k < cg->s.max_iterations && *stop < 0) {
    int end = cg->s.max_iterations - k < every ? cg->s.max_iterations : k + every;
    for (; k < end && !err; ++k) err = ef_cl_cg_enqueue_iteration(cg, x, k);
    if (err) break;
    EF_CL_CALL_GOTO(clEnqueueReadBuffer(cg->ctx->queue, cg->state, CL_FALSE, 0,
                                        ST_SIZE * sizeof(double), snap[slot], 0, NULL,
                                        &reads[slot]), done);
    EF_CL_CALL_GOTO(clFlush(cg->ctx->queue), done);
    if (pending >= 0) {
      EF_CL_CALL_GOTO(clWaitForEvents(1, &reads[pending]), done);
      clReleaseEvent(reads[pending]);
      reads[pending] = NULL;
      *stop = ef_cl_cg_stop_of(snap[pending]);
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
      if (!err && i == pending && *stop < 0) *stop = ef_cl_cg_stop_of(snap[i]);
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
  EF_CALL(ef_cl_cg_enqueue_setup(cg, b, x));
  int stop = -1;
  EF_CALL(ef_cl_cg_iterate(cg, x, &stop));
  const int max = cg->s.max_iterations;
  int iterations = stop >= 0 ? stop : max;
  if (stop < 0) {
    if (!three) {
      cl_kernel k = cg->k.std_finish;
      cl_mem pold = cg->v[1 + ((max - 1) & 1)];
      int n_rho = max == 0 ? cg->cfg.groups : cg->groups_v;
      EF_CL_SET_ARGS(k, EF_CL_ARG(cg->n), EF_CL_ARG(x), EF_CL_ARG(pold), EF_CL_ARG(cg->part_a),
                     EF_CL_ARG(n_rho), EF_CL_ARG(cg->state), EF_CL_ARG(max));
      EF_CALL(ef_cl_cg_launch_v(cg, k, 0));
    } else {
      cl_mem r = cg->v[max & 1];
      cl_kernel k = cg->k.dot;
      EF_CL_SET_ARGS(k, EF_CL_ARG(cg->n), EF_CL_ARG(r), EF_CL_ARG(r), EF_CL_ARG(cg->part_a));
      EF_CALL(ef_cl_cg_launch_v(cg, k, 0));
      EF_CALL(ef_cl_cg_reduce_to(cg, cg->part_a, cg->groups_v, ST_FINAL));
    }
  }
  /* Where x_iterations lives: the caller's buffer, or the three-term's other copy. */
  cl_mem xh = (three && (iterations & 1)) ? cg->v[3] : x;
  EF_CALL(ef_cl_cg_enqueue_residual(cg, xh, b, 1, ST_OUT));
  cl_kernel k = cg->k.scale_out;
  EF_CL_SET_ARGS(k, EF_CL_ARG(cg->n), EF_CL_ARG(cg->d), EF_CL_ARG(xh), EF_CL_ARG(x));
  EF_CALL(ef_cl_cg_launch_v(cg, k, 0));
  EF_CALL(ef_cl_cg_enqueue_residual(cg, x, b, 0, ST_OUT + 2));
  double st[ST_SIZE];
  EF_CALL(ef_cl_cg_read_state(cg, st));
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
  EF_CL_SET_ARGS(k, EF_CL_ARG(cg->n), EF_CL_ARG(cg->A.row_ptr), EF_CL_ARG(cg->A.col_idx),
                 EF_CL_ARG(cg->A.values), EF_CL_ARG(x), EF_CL_ARG(y));
  return ef_cl_cg_launch_a(cg, k, 0);
}

/* x.y: group partials, one-group sum, read back. */
int ef_cl_cg_dot(ef_cl_cg *cg, cl_mem x, cl_mem y, double *result) {
  EF_CHECK(cg && x && y && result, EF_ERR_PARAMETER, "ef_cl_cg_dot: NULL argument");
  cl_kernel k = cg->k.dot;
  EF_CL_SET_ARGS(k, EF_CL_ARG(cg->n), EF_CL_ARG(x), EF_CL_ARG(y), EF_CL_ARG(cg->part_a));
  EF_CALL(ef_cl_cg_launch_v(cg, k, 0));
  EF_CALL(ef_cl_cg_reduce_to(cg, cg->part_a, cg->groups_v, ST_OUT));
  double st[ST_SIZE];
  EF_CALL(ef_cl_cg_read_state(cg, st));
  *result = st[ST_OUT];
  return EF_SUCCESS;
}

/* The SpMV configuration in use and the tuning time. */
void ef_cl_cg_get_config(const ef_cl_cg *cg, ef_cl_cg_config *config, double *tuning_seconds) {
  if (config) *config = cg->cfg;
  if (tuning_seconds) *tuning_seconds = cg->tuning_seconds;
}

/* ------------------------------------------------------------------------- */
/* Life cycle. */

/* Defaults documented in opencl_cg.h. */
void ef_cl_cg_settings_default(ef_cl_cg_settings *s) {
  memset(s, 0, sizeof *s);
  s->variant = EF_CG_STANDARD;
  s->rtol = EF_DEFAULT_TOLERANCE;
  s->max_iterations = EF_DEFAULT_MAX_ITERATION;
  s->check_every = 8;
  s->tune = 1;
  s->verbose = 1;
}

/* Wait for the queue, then release kernels and buffers. */
void ef_cl_cg_destroy(ef_cl_cg **pcg) {
  if (!pcg || !*pcg) return;
  ef_cl_cg *cg = *pcg;
  if (cg->ctx && cg->ctx->queue) clFinish(cg->ctx->queue);
  ef_cl_cg_drop_profile(cg);
  ef_cl_cg_kernels_release(&cg->k);
  ef_cl_buffer_release(&cg->rp_off);
  ef_cl_buffer_release(&cg->col_off);
  ef_cl_buffer_release(&cg->val_off);
  ef_cl_buffer_release(&cg->d);
  for (int i = 0; i < 4; ++i) ef_cl_buffer_release(&cg->v[i]);
  ef_cl_buffer_release(&cg->part_a);
  ef_cl_buffer_release(&cg->part_b);
  ef_cl_buffer_release(&cg->state);
  ef_cl_buffer_release(&cg->bad);
  free(cg);
  *pcg = NULL;
}

/* Check explicit SpMV parameters against the device. */
static int ef_cl_cg_check_explicit(const ef_cl_cg *cg, const ef_cl_cg_settings *s) {
  EF_CHECK(s->wgs_bits >= 1 && s->wgs_bits <= 12 && s->rows_bits >= 0 && s->rows_bits <= s->wgs_bits,
           EF_ERR_PARAMETER, "device CG: need 1 <= wgs_bits <= 12 and 0 <= rows_bits <= wgs_bits "
           "(got %d, %d)", s->wgs_bits, s->rows_bits);
  EF_CHECK(ef_cl_cg_wgs_fits(cg->ctx, s->wgs_bits), EF_ERR_PARAMETER,
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
  if (s.wgs_bits > 0) EF_CALL_GOTO(ef_cl_cg_check_explicit(cg, &s), fail);
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
  EF_CALL_GOTO(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, off_bytes, NULL, "the scaled matrix offsets", &cg->rp_off),
               fail);
  EF_CALL_GOTO(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, m * 4, NULL, "the scaled matrix columns", &cg->col_off),
               fail);
  EF_CALL_GOTO(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, m * 8, NULL, "the scaled values", &cg->val_off), fail);
  EF_CALL_GOTO(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, n8, NULL, "the scaling", &cg->d), fail);
  for (int i = 0; i < 4; ++i)
    EF_CALL_GOTO(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, n8, NULL, "a CG vector", &cg->v[i]), fail);
  EF_CALL_GOTO(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, EF_CG_MAX_PARTIALS * 8, NULL, "partial sums",
                         &cg->part_a), fail);
  EF_CALL_GOTO(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, EF_CG_MAX_PARTIALS * 8, NULL, "partial sums",
                         &cg->part_b), fail);
  EF_CALL_GOTO(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, ST_SIZE * 8, NULL, "the CG state", &cg->state), fail);
  EF_CALL_GOTO(ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE, sizeof(cl_int), NULL, "a flag", &cg->bad), fail);
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
    ef_cl_cg_default_config(cg, &c);
    if (s.groups > 0) c.groups = s.groups;
  }
  EF_CALL_GOTO(ef_cl_cg_use_config(cg, &c), fail);
  EF_CALL_GOTO(ef_cl_cg_update_matrix(cg), fail);
  if (s.wgs_bits == 0 && s.tune) EF_CALL_GOTO(ef_cl_cg_tune(cg), fail);
  *out = cg;
  return EF_SUCCESS;
fail:
  ef_cl_cg_destroy(&cg);
  return err;
}
/* ------------------------------------------------------------------------- */
/* The device linear solver "cg" (opencl_solvers.h). */

/* The device CG's own keys of linear_solver_settings, with their defaults:
 *   cg_variant               "standard" or "three_term"
 *   check_every              read the convergence state back every this many iterations (1..1000)
 *   workgroup_size_bits      SpMV work-group 2^bits items; -1 or 0: tuned (autotune) or default
 *   rows_per_workgroup_bits  2^bits rows per work-group; -1: workgroup_size_bits - 1 (2 lanes
 *                            per row) when the group size is given
 *   autotune, retune         run the SpMV tuner (when no group size is given); ignore its cache
 *   tune_budget_seconds      the tuner's time budget; 0: by device (ef_cl_cg_settings.tune_budget) */
#define EF_CL_CG_DEFAULTS                                                                         \
  "{\"cg_variant\": \"standard\", \"check_every\": 1, \"workgroup_size_bits\": -1,"                 \
  " \"rows_per_workgroup_bits\": -1, \"autotune\": true, \"retune\": false, \"tune_budget_seconds\": 0.0}"

/* The keys above and the shared ones into the solver's settings. */
static int ef_cl_cg_read_settings(ef_parameters p, const ef_linear_solver_common *common, const ef_cl_context *ctx,
                                  ef_cl_cg_settings *s) {
  const char *variant;
  long check, wg, rows;
  int autotune, retune;
  EF_CALL(ef_parameters_get_string(p, "cg_variant", &variant));
  EF_CALL(ef_parameters_get_int(p, "check_every", &check));
  EF_CALL(ef_parameters_get_int(p, "workgroup_size_bits", &wg));
  EF_CALL(ef_parameters_get_int(p, "rows_per_workgroup_bits", &rows));
  EF_CALL(ef_parameters_get_bool(p, "autotune", &autotune));
  EF_CALL(ef_parameters_get_bool(p, "retune", &retune));
  double budget;
  EF_CALL(ef_parameters_get_double(p, "tune_budget_seconds", &budget));
  EF_CHECK(budget >= 0 && isfinite(budget), EF_ERR_PARAMETER, "%s.tune_budget_seconds must be >= 0 (0: by device)",
           ef_parameters_path(p));
  const char *path = ef_parameters_path(p);
  EF_CHECK(!strcmp(variant, "standard") || !strcmp(variant, "three_term"), EF_ERR_PARAMETER,
           "%s.cg_variant is '%s', expected \"standard\" or \"three_term\"", path, variant);
  EF_CHECK(check >= 1 && check <= 1000, EF_ERR_PARAMETER, "%s.check_every must be 1..1000", path);
  EF_CHECK(wg == -1 || (wg >= 0 && wg <= 10), EF_ERR_PARAMETER, "%s.workgroup_size_bits must be -1 or 0..10", path);
  EF_CHECK(rows == -1 || (rows >= 0 && rows <= 10), EF_ERR_PARAMETER, "%s.rows_per_workgroup_bits must be -1 or 0..10",
           path);
  ef_cl_cg_settings_default(s);
  s->variant = !strcmp(variant, "three_term") ? EF_CG_THREE_TERM : EF_CG_STANDARD;
  s->rtol = common->tolerance;
  s->max_iterations = common->max_iteration;
  s->check_every = (int)check;
  s->wgs_bits = wg > 0 ? (int)wg : 0;
  s->rows_bits = rows > 0 ? (int)rows : 0;
  if (s->wgs_bits > 0 && rows < 0) s->rows_bits = s->wgs_bits - 1; /* 2 lanes per row, a fair default */
  s->tune = autotune;
  s->force_retune = retune;
  s->tune_budget = budget;
  /* Tuning lines follow the device's verbosity (solver_settings.device.verbose). */
  s->verbose = ctx->verbose > common->verbosity ? ctx->verbose : common->verbosity;
  return EF_SUCCESS;
}

/* The device "cg": with "jacobi" the fused CG on the symmetrically scaled matrix (cg); with any
 * other device preconditioner the preconditioned CG of opencl_pcg.h (pcg, not flexible: the
 * preconditioner must be a fixed SPD operator, e.g. the AMG V-cycle). */
typedef struct {
  ef_cl_cg *cg;
  void *pcg; /* ef_cl_pcg_solver (amg_register.h) */
} ef_cl_cg_object;

static int ef_cl_cg_ops_create(ef_parameters settings, const ef_linear_solver_common *common, const ef_matrix *M,
                               ef_preconditioner *pc, void **out) {
  *out = NULL;
  const ef_cl_csr *A = ef_cl_matrix_csr(M);
  ef_cl_context *ctx = ef_cl_matrix_context(M);
  EF_CHECK(A && ctx, EF_ERR_PARAMETER, "device cg: needs a device matrix and its OpenCL context");
  ef_cl_cg_object *o = calloc(1, sizeof *o);
  EF_CHECK(o, EF_ERR_MEMORY, "out of memory");
  int err = EF_SUCCESS;
  if (pc) {
    err = ef_cl_pcg_solver_create(common, M, pc, 0, &o->pcg); /* several ranks: with "amg" (opencl_amg_mpi.h) */
  } else if (ef_comm_size(M->layout.comm) > 1) {
    err = EF_ERROR(EF_ERR_UNSUPPORTED, "device cg with \"jacobi\" does not run across ranks through the registry "
                   "(the OpenCL strategy's distributed step has its own Jacobi CG; docs/mpi.md)");
  } else {
    ef_cl_cg_settings s;
    err = ef_cl_cg_read_settings(settings, common, ctx, &s);
    if (!err) err = ef_cl_cg_create(ctx, A, &s, &o->cg);
  }
  if (err) {
    free(o);
    return err;
  }
  *out = o;
  return EF_SUCCESS;
}

/* New values in the same buffers: rescale. */
static int ef_cl_cg_ops_setup(void *data, const ef_matrix *M) {
  ef_cl_cg_object *o = data;
  if (o->pcg) return EF_SUCCESS; /* the preconditioner was set up by the core */
  ef_cl_cg *cg = o->cg;
  const ef_cl_csr *A = ef_cl_matrix_csr(M);
  EF_CHECK(A && A->values == cg->A.values && A->n == cg->A.n, EF_ERR_PARAMETER,
           "device cg: not the device matrix it was created for");
  return ef_cl_cg_update_matrix(cg);
}

/* residual: the recurrence residual of the scaled system; true_residual: ||b - A x|| / ||b||. */
static int ef_cl_cg_ops_solve(void *data, const ef_vector *b, ef_vector *x, ef_solve_result *result) {
  ef_cl_cg_object *o = data;
  if (o->pcg) return ef_cl_pcg_solver_solve(o->pcg, b, x, result);
  ef_cl_cg_result res;
  memset(&res, 0, sizeof res);
  int err = ef_cl_cg_solve(o->cg, ef_cl_vector_mem(b), ef_cl_vector_mem(x), &res);
  result->iterations = res.iterations;
  result->converged = res.converged;
  result->residual = res.relres;
  result->true_residual = res.true_relres_unscaled;
  return err;
}

/* Variant, stopping, the SpMV configuration ("spmv": as the run summary reports it) and the
 * memory figures. */
static int ef_cl_cg_ops_view(void *data, ef_parameters report) {
  const ef_cl_cg_object *o = data;
  if (o->pcg) {
    EF_CALL(ef_parameters_set_string(report, "cg_variant", "preconditioned"));
    return ef_cl_pcg_solver_view(o->pcg, report); /* several ranks: its exchange seconds */
  }
  const ef_cl_cg *cg = o->cg;
  ef_cl_cg_config c;
  double tuning = 0.0;
  ef_cl_cg_get_config(cg, &c, &tuning);
  EF_CALL(ef_parameters_set_string(report, "cg_variant", cg->s.variant == EF_CG_THREE_TERM ? "three_term" : "standard"));
  EF_CALL(ef_parameters_set_double(report, "check_every", cg->s.check_every));
  EF_CALL(ef_parameters_set_double(report, "bytes_per_iteration",
                                   ef_cl_cg_bytes_per_iteration(cg->A.n, cg->A.nnz, cg->A.row_ptr_64)));
  EF_CALL(ef_parameters_set_double(report, "memory_bytes", (double)ef_cl_cg_memory_bytes(cg->A.n, cg->A.nnz,
                                                                                         cg->A.row_ptr_64)));
  char json[512];
  snprintf(json, sizeof json,
           "{\"wgs_bits\": %d, \"rows_bits\": %d, \"lanes_per_row\": %d, \"groups\": %d,"
           " \"tuned_us_per_iteration\": %.6g, \"tuning_seconds\": %.6f}",
           c.wgs_bits, c.rows_bits, 1 << (c.wgs_bits - c.rows_bits), c.groups, 1e6 * c.seconds_per_iteration, tuning);
  return ef_parameters_set_json(report, "spmv", json);
}

static void ef_cl_cg_ops_destroy(void **data) {
  if (!data || !*data) return;
  ef_cl_cg_object *o = *data;
  ef_cl_cg_destroy(&o->cg);
  ef_cl_pcg_solver_destroy(&o->pcg);
  free(o);
  *data = NULL;
}

/* Restarts: the SpMV configuration in use (a tuned one may differ between runs, and with it the
 * rounding of every solve), tagged with the device it was chosen on. */
static int ef_cl_cg_ops_save_state(void *data, ef_restart_writer *w) {
  const ef_cl_cg_object *o = data;
  if (o->pcg) return ef_cl_pcg_solver_save_state(o->pcg, w);
  const ef_cl_cg *cg = o->cg;
  const int64_t c[3] = {cg->cfg.wgs_bits, cg->cfg.rows_bits, cg->cfg.groups};
  EF_CALL(ef_restart_write_string(w, "cg.device", cg->ctx->device_name));
  return ef_restart_write_int64s(w, "cg.spmv", c, 3);
}

/* The saved configuration again, on the same device (elsewhere the tuned one stays). */
static int ef_cl_cg_ops_load_state(void *data, ef_restart_reader *r) {
  ef_cl_cg_object *o = data;
  if (o->pcg) return ef_cl_pcg_solver_load_state(o->pcg, r);
  ef_cl_cg *cg = o->cg;
  char device[512];
  int64_t c[3];
  EF_CALL(ef_restart_read_string(r, "cg.device", device, sizeof device));
  EF_CALL(ef_restart_read_int64s(r, "cg.spmv", c, 3));
  if (strcmp(device, cg->ctx->device_name)) return EF_SUCCESS;
  if (c[0] == cg->cfg.wgs_bits && c[1] == cg->cfg.rows_bits && c[2] == cg->cfg.groups) return EF_SUCCESS;
  EF_CHECK(c[0] >= 1 && c[0] <= 12 && c[1] >= 0 && c[1] <= c[0] && c[2] >= 1 && ef_cl_cg_wgs_fits(cg->ctx, (int)c[0]),
           EF_ERR_PARSE, "restart file '%s': SpMV configuration (%lld, %lld, %lld) does not fit '%s'",
           ef_restart_reader_path(r), (long long)c[0], (long long)c[1], (long long)c[2], cg->ctx->device_name);
  const ef_cl_cg_config config = {(int)c[0], (int)c[1], (int)c[2], 0.0};
  return ef_cl_cg_use_config(cg, &config);
}

const ef_linear_solver_ops ef_cl_cg_ops = {
    .name = "cg",
    .description = "CG on the device: symmetric Jacobi scaling, fused iterations, tuned SpMV (standard or "
                   "three-term recurrence)",
    .memory = EF_MEMORY_DEVICE,
    .defaults = EF_CL_CG_DEFAULTS,
    .uses_preconditioner = 1,
    .builtin_preconditioner = "jacobi",
    .create = ef_cl_cg_ops_create,
    .setup = ef_cl_cg_ops_setup,
    .solve = ef_cl_cg_ops_solve,
    .view = ef_cl_cg_ops_view,
    .destroy = ef_cl_cg_ops_destroy,
    .save_state = ef_cl_cg_ops_save_state,
    .load_state = ef_cl_cg_ops_load_state,
    .distributed = 1, /* several ranks with the device "amg" only (the create refuses "jacobi") */
};
