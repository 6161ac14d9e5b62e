/* opencl_pcg.c -- host side of the device PCG / FCG (opencl_pcg.h, custom_kernels/pcg.cl). */
#include "opencl_pcg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_linear_solver.h"
#include "edgeflow/ef_util.h"

#define PCG_SOURCE "pcg.cl"
#define PCG_WGS 256
#define PCG_MAX_GROUPS 1024
#define PCG_PREDICT_STEPS 4 /* blocking single iterations after the predicted count (ef_cl_pcg_solve) */
/* Mirrors pcg.cl. */
enum { PS_BB = 0, PS_TOL2 = 1, PS_SD = 2, PS_RHO = 4, PS_RR = 6, PS_OUT = 7, PS_SU = 11, PS_SIZE = 12 };

struct ef_cl_pcg_s {
  ef_cl_context *ctx;
  ef_cl_csr A;
  int n, groups;
  ef_cl_pcg_settings s;
  ef_cl_precond_fn precond;
  void *pctx;
  cl_program program;
  cl_kernel init, dot, direction, spmv, update, residual, reduce;
  /* The kernels of the iteration keep their arguments between launches (EF_CL_BIND_ARGS). */
  ef_cl_bound_args b_dot, b_direction, b_spmv, b_update;
  cl_mem r, z, p, q, rold, part, part_pq, part_rr, part_bb, state;
  int last_iterations; /* of the last solve that stopped (0: none yet); see ef_cl_pcg_solve */
};

void ef_cl_pcg_settings_default(ef_cl_pcg_settings *s) {
  s->rtol = EF_DEFAULT_TOLERANCE;
  s->max_iterations = EF_DEFAULT_MAX_ITERATION;
  s->check_every = 2;
  s->flexible = 1;
  s->null_space = 0;
}

static int pcg_buffer(ef_cl_context *ctx, size_t bytes, cl_mem *out) {
  cl_int st;
  *out = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, bytes ? bytes : 8, NULL, &st);
  EF_CL_CHECK_STATUS(st, "clCreateBuffer (PCG)");
  return EF_SUCCESS;
}

void ef_cl_pcg_destroy(ef_cl_pcg **pcg) {
  if (!pcg || !*pcg) return;
  ef_cl_pcg *c = *pcg;
  cl_kernel ks[] = {c->init, c->dot, c->direction, c->spmv, c->update, c->residual, c->reduce};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i)
    if (ks[i]) clReleaseKernel(ks[i]);
  cl_mem ms[] = {c->r, c->z, c->p, c->q, c->rold, c->part, c->part_pq, c->part_rr, c->part_bb, c->state};
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; ++i)
    if (ms[i]) clReleaseMemObject(ms[i]);
  if (c->program) clReleaseProgram(c->program);
  free(c);
  *pcg = NULL;
}

int ef_cl_pcg_set_settings(ef_cl_pcg *c, const ef_cl_pcg_settings *s) {
  EF_CHECK(c && s && s->rtol >= 0.0 && s->max_iterations >= 0 && s->check_every >= 1, EF_ERR_PARAMETER,
           "device PCG: need rtol >= 0, max_iterations >= 0, check_every >= 1");
  c->s = *s;
  return EF_SUCCESS;
}

int ef_cl_pcg_get_settings(const ef_cl_pcg *c, ef_cl_pcg_settings *s) {
  EF_CHECK(c && s, EF_ERR_PARAMETER, "ef_cl_pcg_get_settings: NULL argument");
  *s = c->s;
  return EF_SUCCESS;
}

int ef_cl_pcg_create(ef_cl_context *ctx, const ef_cl_csr *A, const ef_cl_pcg_settings *s, ef_cl_precond_fn precond,
                     void *precond_ctx, ef_cl_pcg **out) {
  EF_CHECK(ctx && A && precond && out, EF_ERR_PARAMETER, "ef_cl_pcg_create: NULL argument");
  *out = NULL;
  ef_cl_pcg *c = calloc(1, sizeof *c);
  EF_CHECK(c, EF_ERR_MEMORY, "device PCG: out of memory");
  int err = EF_SUCCESS;
  c->ctx = ctx;
  c->A = *A;
  c->n = (int)A->n;
  c->precond = precond;
  c->pctx = precond_ctx;
  ef_cl_pcg_settings def;
  if (!s) ef_cl_pcg_settings_default(&def), s = &def;
  EF_CALL_GOTO(ef_cl_pcg_set_settings(c, s), fail);
  int64_t g = (A->n + PCG_WGS - 1) / PCG_WGS, cap = (int64_t)(ctx->compute_units ? ctx->compute_units : 1) * 8;
  if (cap > PCG_MAX_GROUPS) cap = PCG_MAX_GROUPS;
  c->groups = (int)(g < 1 ? 1 : g > cap ? cap : g);
  char options[96];
  snprintf(options, sizeof options, "-D PCG_WGS=%d -D PCG_ROW_LANES=4%s", PCG_WGS,
           A->row_ptr_64 ? " -D EF_ROW_PTR_64" : "");
  EF_CALL_GOTO(ef_cl_program_get(ctx, PCG_SOURCE, options, &c->program), fail);
  struct {
    const char *name;
    cl_kernel *k;
  } list[] = {{"pcg_init", &c->init},     {"pcg_dot", &c->dot},           {"pcg_direction", &c->direction},
              {"pcg_spmv", &c->spmv},     {"pcg_update", &c->update},     {"pcg_residual", &c->residual},
              {"pcg_reduce", &c->reduce}};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; ++i) {
    cl_int st;
    *list[i].k = clCreateKernel(c->program, list[i].name, &st);
    EF_CHECK_GOTO(st == CL_SUCCESS, EF_ERR_OPENCL, fail, "clCreateKernel(%s) failed: %s (%d)", list[i].name,
                  ef_cl_error_name(st), (int)st);
  }
  const size_t vb = (size_t)A->n * 8, pb = (size_t)c->groups * 8;
  cl_mem *vecs[] = {&c->r, &c->z, &c->p, &c->q, &c->rold};
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; ++i) EF_CALL_GOTO(pcg_buffer(ctx, vb, vecs[i]), fail);
  EF_CALL_GOTO(pcg_buffer(ctx, 5 * pb, &c->part), fail);
  EF_CALL_GOTO(pcg_buffer(ctx, pb, &c->part_pq), fail);
  EF_CALL_GOTO(pcg_buffer(ctx, pb, &c->part_rr), fail);
  EF_CALL_GOTO(pcg_buffer(ctx, pb, &c->part_bb), fail);
  EF_CALL_GOTO(pcg_buffer(ctx, PS_SIZE * 8, &c->state), fail);
  *out = c;
  return EF_SUCCESS;
fail:
  ef_cl_pcg_destroy(&c);
  return err;
}

static int pcg_launch(ef_cl_pcg *c, cl_kernel k, int groups) {
  size_t local = PCG_WGS, global = (size_t)groups * PCG_WGS;
  EF_CL_CALL(clEnqueueNDRangeKernel(c->ctx->queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
  return EF_SUCCESS;
}

/* z = M r, then the partials and direction of iteration k. */
static int pcg_precondition_direction(ef_cl_pcg *c, int k) {
  EF_CALL(c->precond(c->pctx, c->r, c->z));
  EF_CL_BIND_ARGS(&c->b_dot, c->dot, EF_CL_ARG(c->n), EF_CL_ARG(c->r), EF_CL_ARG(c->z), EF_CL_ARG(c->rold),
                  EF_CL_ARG(c->s.flexible), EF_CL_ARG(c->part));
  EF_CALL(pcg_launch(c, c->dot, c->groups));
  EF_CL_BIND_ARGS(&c->b_direction, c->direction, EF_CL_ARG(c->n), EF_CL_ARG(c->z), EF_CL_ARG(c->p),
                  EF_CL_ARG(c->part), EF_CL_ARG(c->part_rr), EF_CL_ARG(c->part_bb), EF_CL_ARG(c->groups), EF_CL_ARG(k),
                  EF_CL_ARG(c->s.flexible), EF_CL_ARG(c->s.null_space), EF_CL_ARG(c->s.rtol), EF_CL_ARG(c->state));
  return pcg_launch(c, c->direction, c->groups);
}

/* The stop recorded in a state snapshot (-1: running). */
static int pcg_stop_of(const double *st) {
  double s = -1.0;
  for (int i = 0; i < 2; ++i)
    if (st[PS_SD + i] >= 0.0 && (s < 0.0 || st[PS_SD + i] < s)) s = st[PS_SD + i];
  if (st[PS_SU] >= 0.0 && (s < 0.0 || st[PS_SU] < s)) s = st[PS_SU];
  return s >= 0.0 ? (int)s : -1;
}

/* Iteration k: q = A p with p.q, the update of x and r, the preconditioner and the next direction. */
static int pcg_iteration(ef_cl_pcg *c, cl_mem x, int k) {
  EF_CL_BIND_ARGS(&c->b_spmv, c->spmv, EF_CL_ARG(c->n), EF_CL_ARG(c->A.row_ptr), EF_CL_ARG(c->A.col_idx),
                  EF_CL_ARG(c->A.values), EF_CL_ARG(c->p), EF_CL_ARG(c->q), EF_CL_ARG(c->part_pq), EF_CL_ARG(k),
                  EF_CL_ARG(c->state));
  EF_CALL(pcg_launch(c, c->spmv, c->groups));
  EF_CL_BIND_ARGS(&c->b_update, c->update, EF_CL_ARG(c->n), EF_CL_ARG(c->p), EF_CL_ARG(c->q), EF_CL_ARG(x),
                  EF_CL_ARG(c->r), EF_CL_ARG(c->rold), EF_CL_ARG(c->part_pq), EF_CL_ARG(c->groups), EF_CL_ARG(k),
                  EF_CL_ARG(c->s.flexible), EF_CL_ARG(c->part_rr), EF_CL_ARG(c->state));
  EF_CALL(pcg_launch(c, c->update, c->groups));
  return pcg_precondition_direction(c, k + 1);
}

int ef_cl_pcg_solve(ef_cl_pcg *c, cl_mem b, cl_mem x, ef_cl_pcg_result *res) {
  EF_CHECK(c && b && x, EF_ERR_PARAMETER, "ef_cl_pcg_solve: NULL argument");
  ef_cl_pcg_result local;
  if (!res) res = &local;
  memset(res, 0, sizeof *res);
  double t0 = ef_wtime();
  int err = EF_SUCCESS;
  EF_CL_SET_ARGS(c->init, EF_CL_ARG(c->n), EF_CL_ARG(c->A.row_ptr), EF_CL_ARG(c->A.col_idx), EF_CL_ARG(c->A.values),
                 EF_CL_ARG(b), EF_CL_ARG(x), EF_CL_ARG(c->r), EF_CL_ARG(c->rold), EF_CL_ARG(c->part_bb),
                 EF_CL_ARG(c->part_rr),
                 EF_CL_ARG(c->state));
  EF_CALL(pcg_launch(c, c->init, c->groups));
  EF_CALL(pcg_precondition_direction(c, 0));
  double snap[2][PS_SIZE];
  cl_event reads[2] = {NULL, NULL};
  int slot = 0, pending = -1, stop = -1, k = 0;
  /* Successive solves of a time loop take nearly the same number of iterations, and an iteration
   * launched after the stop still runs the whole preconditioner (an AMG cycle: some 40 launches)
   * though it changes nothing.  So: first as many iterations as the last solve took, then one at a
   * time with a blocking read (a short pause of the device instead of whole wasted iterations), for
   * at most PCG_PREDICT_STEPS more; then the pipelined batches of check_every below.  The iterate
   * does not depend on this. */
  if (c->last_iterations > 0) {
    int end = c->last_iterations < c->s.max_iterations ? c->last_iterations : c->s.max_iterations;
    const int last = end + PCG_PREDICT_STEPS < c->s.max_iterations ? end + PCG_PREDICT_STEPS : c->s.max_iterations;
    while (stop < 0 && k < last) {
      for (; k < end; ++k) EF_CALL_GOTO(pcg_iteration(c, x, k), done);
      EF_CL_CALL_GOTO(clEnqueueReadBuffer(c->ctx->queue, c->state, CL_TRUE, 0, sizeof snap[0], snap[0], 0, NULL, NULL),
                      done);
      stop = pcg_stop_of(snap[0]);
      end = k + 1;
    }
  }
  while (k < c->s.max_iterations && stop < 0) {
    int end = c->s.max_iterations - k < c->s.check_every ? c->s.max_iterations : k + c->s.check_every;
    for (; k < end; ++k) EF_CALL_GOTO(pcg_iteration(c, x, k), done);
    EF_CL_CALL_GOTO(clEnqueueReadBuffer(c->ctx->queue, c->state, CL_FALSE, 0, sizeof snap[0], snap[slot], 0, NULL,
                                        &reads[slot]), done);
    EF_CL_CALL_GOTO(clFlush(c->ctx->queue), done);
    if (pending >= 0) {
      EF_CL_CALL_GOTO(clWaitForEvents(1, &reads[pending]), done);
      clReleaseEvent(reads[pending]);
      reads[pending] = NULL;
      stop = pcg_stop_of(snap[pending]);
    }
    pending = slot;
    slot ^= 1;
  }
done:
  for (int i = 0; i < 2; ++i)
    if (reads[i]) {
      cl_int st = clWaitForEvents(1, &reads[i]);
      if (!err && st != CL_SUCCESS) err = EF_ERROR(EF_ERR_OPENCL, "waiting for the PCG state failed (%d)", (int)st);
      clReleaseEvent(reads[i]);
      if (!err && i == pending && stop < 0) stop = pcg_stop_of(snap[i]);
    }
  if (err) return err;
  /* True residual. */
  EF_CL_SET_ARGS(c->residual, EF_CL_ARG(c->n), EF_CL_ARG(c->A.row_ptr), EF_CL_ARG(c->A.col_idx),
                 EF_CL_ARG(c->A.values), EF_CL_ARG(b), EF_CL_ARG(x), EF_CL_ARG(c->part_pq), EF_CL_ARG(c->part_bb));
  EF_CALL(pcg_launch(c, c->residual, c->groups));
  int slot_a = PS_OUT, slot_b = PS_OUT + 1;
  EF_CL_SET_ARGS(c->reduce, EF_CL_ARG(c->part_pq), EF_CL_ARG(c->groups), EF_CL_ARG(c->state), EF_CL_ARG(slot_a));
  EF_CALL(pcg_launch(c, c->reduce, 1));
  EF_CL_SET_ARGS(c->reduce, EF_CL_ARG(c->part_bb), EF_CL_ARG(c->groups), EF_CL_ARG(c->state), EF_CL_ARG(slot_b));
  EF_CALL(pcg_launch(c, c->reduce, 1));
  double st[PS_SIZE];
  EF_CL_CALL(clEnqueueReadBuffer(c->ctx->queue, c->state, CL_TRUE, 0, sizeof st, st, 0, NULL, NULL));
  stop = pcg_stop_of(st);
  res->seconds = ef_wtime() - t0;
  res->breakdown = st[PS_SU] >= 0.0;
  res->iterations = stop >= 0 ? stop : c->s.max_iterations;
  c->last_iterations = stop > 0 ? stop : 0;
  res->converged = stop >= 0 && !res->breakdown;
  res->relres = st[PS_BB] > 0.0 ? sqrt(st[PS_RR] / st[PS_BB]) : 0.0;
  res->true_relres = st[PS_OUT + 1] > 0.0 ? sqrt(st[PS_OUT] / st[PS_OUT + 1]) : 0.0;
  EF_CHECK(!res->breakdown, EF_ERR_SOLVER,
           "device PCG broke down at iteration %d: p.Ap <= 0 or not finite (matrix or preconditioner not SPD)",
           res->iterations);
  return EF_SUCCESS;
}
