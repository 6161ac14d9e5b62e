/* opencl_amg.c -- device buffers, refresh and cycle of the aggregation multigrid (see
 * opencl_amg.h and amg.h; kernels in custom_kernels/amg.cl). */
#include "opencl_amg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_util.h"

#define AMG_SOURCE "amg.cl"
#define AMG_WGS 128
#define AMG_LANES 64
#define AMG_ROW_LANES 4 /* items per row of the row kernels (sweep, residual, post) */
#define AMG_MAX_GROUPS 256 /* groups of the K-cycle reduction kernels */

enum { PH_REFRESH, PH_SMOOTH, PH_RESTRICT, PH_POST, PH_KRYLOV, PH_COARSE, PH_COUNT };

typedef struct {
  cl_program program;
  cl_kernel refresh, l1, smooth0, sweep, resid, restr, post, k_first, k_second, k_third, k_combine, fill, gj, sym, solve;
} amg_kernels;

typedef struct {
  int n, nnz, groups;
  cl_mem rp, col, val; /* level 0: the caller's */
  int owns_matrix;
  cl_mem dinv, agg, mp, mem;
  cl_mem r, x, t, v1, v2, w1, w2, q, part, part2;
} amg_dlevel;

struct ef_cl_amg_s {
  ef_cl_context *ctx;
  ef_amg *h;
  double *host_values; /* downloaded fine values when no host matrix was given */
  int64_t *host_rp;
  int32_t *host_col;
  amg_kernels kf, kc; /* fine-level (its row offset type) and coarse-level kernels */
  amg_dlevel lev[32];
  cl_mem W, W2; /* dense coarsest inverse and its ping-pong partner */
  cl_mem W_final;
  int profiling;
  cl_event *events;
  int *event_phase;
  int n_events, cap_events;
  double phase[PH_COUNT];
  int applies, launches;
  double setup_seconds;
};

static void amg_release_mem(cl_mem *m) {
  if (*m) clReleaseMemObject(*m);
  *m = NULL;
}

/* A device buffer of bytes, initialised from host when given. */
static int amg_buffer(ef_cl_context *ctx, size_t bytes, const void *host, cl_mem *out) {
  EF_CHECK(bytes <= ctx->max_alloc_bytes, EF_ERR_UNSUPPORTED, "AMG: a buffer of %.1f MiB exceeds '%s''s limit",
           (double)bytes / 1048576.0, ctx->device_name);
  cl_int st;
  cl_mem_flags f = CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0);
  *out = clCreateBuffer(ctx->context, f, bytes ? bytes : 8, host ? (void *)host : NULL, &st);
  EF_CL_CHECK_STATUS(st, "clCreateBuffer (AMG)");
  return EF_SUCCESS;
}

static void amg_kernels_release(amg_kernels *k) {
  cl_kernel *all[] = {&k->refresh, &k->l1,       &k->smooth0,   &k->sweep, &k->resid, &k->restr, &k->post, &k->k_first,
                      &k->k_second, &k->k_third, &k->k_combine, &k->fill,  &k->gj,    &k->sym,  &k->solve};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    if (*all[i]) clReleaseKernel(*all[i]), *all[i] = NULL;
  if (k->program) clReleaseProgram(k->program);
  k->program = NULL;
}

/* Build amg.cl (row offsets int64 when wide) and create its kernels. */
static int amg_kernels_build(ef_cl_context *ctx, int wide, amg_kernels *k) {
  memset(k, 0, sizeof *k);
  char options[128];
  snprintf(options, sizeof options, "-D AMG_WGS=%d -D AMG_LANES=%d -D AMG_ROW_LANES=%d%s", AMG_WGS, AMG_LANES,
           AMG_ROW_LANES, wide ? " -D EF_ROW_PTR_64" : "");
  EF_CALL(ef_cl_program_get(ctx, AMG_SOURCE, options, &k->program));
  struct {
    const char *name;
    cl_kernel *kernel;
  } list[] = {{"amg_refresh", &k->refresh},   {"amg_l1", &k->l1},           {"amg_smooth0", &k->smooth0},
              {"amg_sweep", &k->sweep},       {"amg_residual", &k->resid},  {"amg_restrict", &k->restr},
              {"amg_post", &k->post},
              {"amg_k_first", &k->k_first},   {"amg_k_second", &k->k_second}, {"amg_k_third", &k->k_third},
              {"amg_k_combine", &k->k_combine}, {"amg_dense_fill", &k->fill}, {"amg_gj_step", &k->gj},
              {"amg_dense_sym", &k->sym},     {"amg_dense_solve", &k->solve}};
  for (size_t i = 0; i < sizeof list / sizeof list[0]; ++i) {
    cl_int st;
    *list[i].kernel = clCreateKernel(k->program, list[i].name, &st);
    if (st != CL_SUCCESS) {
      amg_kernels_release(k);
      return EF_ERROR(EF_ERR_OPENCL, "clCreateKernel(%s) failed: %s (%d)", list[i].name, ef_cl_error_name(st),
                      (int)st);
    }
  }
  return EF_SUCCESS;
}

/* Enqueue kernel over `items` work-items in groups of `local` (items rounded up). */
static int amg_launch(ef_cl_amg *a, cl_kernel k, size_t items, size_t local, int phase) {
  size_t global = (items + local - 1) / local * local;
  if (global == 0) return EF_SUCCESS;
  cl_event ev = NULL;
  int keep = a->profiling && a->n_events < a->cap_events;
  EF_CL_CALL(clEnqueueNDRangeKernel(a->ctx->queue, k, 1, NULL, &global, &local, 0, NULL, keep ? &ev : NULL));
  a->launches++;
  if (keep) {
    a->events[a->n_events] = ev;
    a->event_phase[a->n_events++] = phase;
  }
  return EF_SUCCESS;
}

/* Enqueue kernel on an n x n grid (the dense kernels; the driver picks the group shape). */
static int amg_launch_square(ef_cl_amg *a, cl_kernel k, size_t n, int phase) {
  size_t global[2] = {n, n};
  cl_event ev = NULL;
  int keep = a->profiling && a->n_events < a->cap_events;
  EF_CL_CALL(clEnqueueNDRangeKernel(a->ctx->queue, k, 2, NULL, global, NULL, 0, NULL, keep ? &ev : NULL));
  a->launches++;
  if (keep) {
    a->events[a->n_events] = ev;
    a->event_phase[a->n_events++] = phase;
  }
  return EF_SUCCESS;
}

/* Enqueue a row kernel (AMG_ROW_LANES items per row) over n rows. */
static int amg_launch_rows(ef_cl_amg *a, cl_kernel k, int n, int phase) {
  const size_t rows_per_group = AMG_WGS / AMG_ROW_LANES;
  return amg_launch(a, k, ((size_t)n + rows_per_group - 1) / rows_per_group * AMG_WGS, AMG_WGS, phase);
}

/* Kernels of level l: the fine set on level 0, the coarse set below. */
static const amg_kernels *amg_k(const ef_cl_amg *a, int l) { return l == 0 ? &a->kf : &a->kc; }

/* Upload an int32 array. */
static int amg_upload_i32(ef_cl_context *ctx, const int32_t *v, int64_t count, cl_mem *out) {
  return amg_buffer(ctx, (size_t)count * sizeof(int32_t), v, out);
}

/* Build (host), upload, refresh (device). */
int ef_cl_amg_create(ef_cl_context *ctx, const ef_cl_csr *A, const ef_amg_matrix *host_A, int constant_null_space,
                     const ef_amg_settings *settings, ef_cl_amg **out) {
  EF_CHECK(ctx && A && out, EF_ERR_PARAMETER, "ef_cl_amg_create: NULL argument");
  *out = NULL;
  double t0 = ef_wtime();
  ef_amg_settings defaults;
  if (!settings) ef_amg_settings_default(&defaults), settings = &defaults;
  ef_cl_amg *a = calloc(1, sizeof *a);
  EF_CHECK(a, EF_ERR_MEMORY, "AMG: out of memory");
  a->ctx = ctx;
  int err = EF_SUCCESS;
  ef_amg_matrix M;
  if (host_A) {
    M = *host_A;
  } else {
    EF_CALL_GOTO(ef_cl_csr_download(ctx, A, &a->host_rp, &a->host_col, &a->host_values), fail);
    M = (ef_amg_matrix){A->n, A->nnz, a->host_rp, a->host_col, a->host_values, constant_null_space};
  }
  EF_CHECK_GOTO(M.n == A->n && M.nnz == A->nnz, EF_ERR_PARAMETER, fail,
                "AMG: the host matrix (%lld rows, %lld nonzeros) is not the device one (%lld, %lld)",
                (long long)M.n, (long long)M.nnz, (long long)A->n, (long long)A->nnz);
  EF_CALL_GOTO(ef_amg_create(settings, &M, &a->h), fail);
  EF_CALL_GOTO(amg_kernels_build(ctx, A->row_ptr_64, &a->kf), fail);
  EF_CALL_GOTO(amg_kernels_build(ctx, 0, &a->kc), fail);
  const ef_amg *h = a->h;
  for (int l = 0; l < h->n_levels; ++l) {
    const ef_amg_level *L = &h->lev[l];
    amg_dlevel *D = &a->lev[l];
    D->n = (int)L->n;
    D->nnz = (int)L->nnz;
    int64_t gr = (L->n + AMG_WGS - 1) / AMG_WGS;
    D->groups = (int)(gr < 1 ? 1 : gr > AMG_MAX_GROUPS ? AMG_MAX_GROUPS : gr);
    if (l == 0) {
      D->rp = A->row_ptr, D->col = A->col_idx, D->val = A->values;
    } else {
      D->owns_matrix = 1;
      EF_CALL_GOTO(amg_upload_i32(ctx, L->row_ptr, L->n + 1, &D->rp), fail);
      EF_CALL_GOTO(amg_upload_i32(ctx, L->col, L->nnz, &D->col), fail);
      EF_CALL_GOTO(amg_buffer(ctx, (size_t)L->nnz * 8, NULL, &D->val), fail);
    }
    if (l + 1 < h->n_levels) {
      EF_CALL_GOTO(amg_upload_i32(ctx, L->agg, L->n, &D->agg), fail);
      EF_CALL_GOTO(amg_upload_i32(ctx, L->mem_ptr, h->lev[l + 1].n + 1, &D->mp), fail);
      EF_CALL_GOTO(amg_upload_i32(ctx, L->mem, L->mem_ptr[h->lev[l + 1].n], &D->mem), fail);
    }
    size_t vb = (size_t)L->n * 8;
    cl_mem *vecs[] = {&D->dinv, &D->r, &D->x, &D->t, &D->v1, &D->v2, &D->w1, &D->w2, &D->q};
    for (size_t v = 0; v < sizeof vecs / sizeof vecs[0]; ++v) {
      if (l == 0 && vecs[v] != &D->dinv && vecs[v] != &D->t && vecs[v] != &D->w2) continue; /* caller's r, z */
      EF_CALL_GOTO(amg_buffer(ctx, vb, NULL, vecs[v]), fail);
    }
    EF_CALL_GOTO(amg_buffer(ctx, (size_t)D->groups * 2 * 8, NULL, &D->part), fail);
    EF_CALL_GOTO(amg_buffer(ctx, (size_t)D->groups * 3 * 8, NULL, &D->part2), fail);
  }
  size_t wb = (size_t)(h->nc * h->nc) * 8;
  EF_CALL_GOTO(amg_buffer(ctx, wb, NULL, &a->W), fail);
  EF_CALL_GOTO(amg_buffer(ctx, wb, NULL, &a->W2), fail);
  EF_CALL_GOTO(ef_cl_amg_refresh(a), fail);
  EF_CL_CALL_GOTO(clFinish(ctx->queue), fail);
  a->setup_seconds = ef_wtime() - t0;
  *out = a;
  return EF_SUCCESS;
fail:
  ef_cl_amg_destroy(&a);
  return err;
}

/* Release everything. */
void ef_cl_amg_destroy(ef_cl_amg **amg) {
  if (!amg || !*amg) return;
  ef_cl_amg *a = *amg;
  for (int l = 0; l < 32; ++l) {
    amg_dlevel *D = &a->lev[l];
    if (D->owns_matrix) amg_release_mem(&D->rp), amg_release_mem(&D->col), amg_release_mem(&D->val);
    cl_mem *m[] = {&D->dinv, &D->agg, &D->mp, &D->mem, &D->r,  &D->x,    &D->t,
                   &D->v1,   &D->v2,  &D->w1, &D->w2,  &D->q,  &D->part, &D->part2};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; ++i) amg_release_mem(m[i]);
  }
  amg_release_mem(&a->W);
  amg_release_mem(&a->W2);
  amg_kernels_release(&a->kf);
  amg_kernels_release(&a->kc);
  ef_cl_amg_set_profiling(a, 0);
  ef_amg_destroy(&a->h);
  free(a->host_values);
  free(a->host_rp);
  free(a->host_col);
  free(a);
  *amg = NULL;
}

/* Coarse values, l1 diagonals, dense coarsest inverse (Gauss-Jordan, one launch per pivot). */
int ef_cl_amg_refresh(ef_cl_amg *a) {
  EF_CHECK(a, EF_ERR_PARAMETER, "ef_cl_amg_refresh: no AMG");
  const ef_amg *h = a->h;
  for (int l = 0; l + 1 < h->n_levels; ++l) {
    amg_dlevel *F = &a->lev[l], *C = &a->lev[l + 1];
    cl_kernel k = amg_k(a, l)->refresh;
    EF_CL_SET_ARGS(k, EF_CL_ARG(C->n), EF_CL_ARG(C->rp), EF_CL_ARG(C->col), EF_CL_ARG(C->val), EF_CL_ARG(F->mp),
                   EF_CL_ARG(F->mem), EF_CL_ARG(F->rp), EF_CL_ARG(F->col), EF_CL_ARG(F->val), EF_CL_ARG(F->agg));
    EF_CALL(amg_launch(a, k, (size_t)C->n, AMG_WGS, PH_REFRESH));
  }
  for (int l = 0; l < h->n_levels; ++l) {
    amg_dlevel *L = &a->lev[l];
    cl_kernel k = amg_k(a, l)->l1;
    EF_CL_SET_ARGS(k, EF_CL_ARG(L->n), EF_CL_ARG(L->rp), EF_CL_ARG(L->val), EF_CL_ARG(L->dinv));
    EF_CALL(amg_launch(a, k, (size_t)L->n, AMG_WGS, PH_REFRESH));
  }
  const int lc = h->n_levels - 1, nc = (int)h->nc, ns = h->constant_null_space;
  amg_dlevel *Lc = &a->lev[lc];
  /* The fill kernel reads int32 offsets: a one-level hierarchy uses the coarse kernels only
   * when the fine offsets are int32 (always, below 2^31 nonzeros, which nc <= 4096 implies). */
  cl_kernel k = a->kc.fill;
  EF_CL_SET_ARGS(k, EF_CL_ARG(nc), EF_CL_ARG(Lc->rp), EF_CL_ARG(Lc->col), EF_CL_ARG(Lc->val), EF_CL_ARG(ns),
                 EF_CL_ARG(a->W));
  EF_CALL(amg_launch(a, k, AMG_WGS, AMG_WGS, PH_REFRESH));
  cl_mem in = a->W, outb = a->W2;
  for (int p = 0; p < nc; ++p) {
    k = a->kc.gj;
    EF_CL_SET_ARGS(k, EF_CL_ARG(nc), EF_CL_ARG(p), EF_CL_ARG(in), EF_CL_ARG(outb));
    EF_CALL(amg_launch_square(a, k, (size_t)nc, PH_REFRESH));
    cl_mem s = in;
    in = outb;
    outb = s;
  }
  k = a->kc.sym;
  EF_CL_SET_ARGS(k, EF_CL_ARG(nc), EF_CL_ARG(in), EF_CL_ARG(outb));
  EF_CALL(amg_launch_square(a, k, (size_t)nc, PH_REFRESH));
  a->W_final = outb;
  return EF_SUCCESS;
}

static int amg_cycle(ef_cl_amg *a, int l, cl_mem r, cl_mem x);

/* Coarse correction on level c for right-hand side rc into xc (amg.h). */
static int amg_correction(ef_cl_amg *a, int c, cl_mem rc, cl_mem xc) {
  const ef_amg *h = a->h;
  amg_dlevel *C = &a->lev[c];
  if (c == h->n_levels - 1) {
    const int nc = C->n;
    cl_kernel k = a->kc.solve;
    EF_CL_SET_ARGS(k, EF_CL_ARG(nc), EF_CL_ARG(a->W_final), EF_CL_ARG(rc), EF_CL_ARG(xc));
    return amg_launch(a, k, (size_t)nc * AMG_LANES, AMG_LANES, PH_COARSE);
  }
  if (h->s.cycle != EF_AMG_CYCLE_K || c > h->s.kcycle_levels) return amg_cycle(a, c, rc, xc);
  const amg_kernels *K = amg_k(a, c);
  const size_t items = (size_t)C->groups * AMG_WGS;
  EF_CALL(amg_cycle(a, c, rc, C->v1));
  EF_CL_SET_ARGS(K->k_first, EF_CL_ARG(C->n), EF_CL_ARG(C->rp), EF_CL_ARG(C->col), EF_CL_ARG(C->val),
                 EF_CL_ARG(C->v1), EF_CL_ARG(rc), EF_CL_ARG(C->w1), EF_CL_ARG(C->part));
  EF_CALL(amg_launch(a, K->k_first, items, AMG_WGS, PH_KRYLOV));
  EF_CL_SET_ARGS(K->k_second, EF_CL_ARG(C->n), EF_CL_ARG(C->w1), EF_CL_ARG(rc), EF_CL_ARG(C->part),
                 EF_CL_ARG(C->groups), EF_CL_ARG(C->q));
  EF_CALL(amg_launch(a, K->k_second, items, AMG_WGS, PH_KRYLOV));
  EF_CALL(amg_cycle(a, c, C->q, C->v2));
  EF_CL_SET_ARGS(K->k_third, EF_CL_ARG(C->n), EF_CL_ARG(C->rp), EF_CL_ARG(C->col), EF_CL_ARG(C->val),
                 EF_CL_ARG(C->v2), EF_CL_ARG(C->w1), EF_CL_ARG(C->q), EF_CL_ARG(C->w2), EF_CL_ARG(C->part2));
  EF_CALL(amg_launch(a, K->k_third, items, AMG_WGS, PH_KRYLOV));
  EF_CL_SET_ARGS(K->k_combine, EF_CL_ARG(C->n), EF_CL_ARG(C->v1), EF_CL_ARG(C->v2), EF_CL_ARG(C->part),
                 EF_CL_ARG(C->part2), EF_CL_ARG(C->groups), EF_CL_ARG(xc));
  return amg_launch(a, K->k_combine, items, AMG_WGS, PH_KRYLOV);
}

/* xout = xin + omega D^-1 (r - A xin) on level l. */
static int amg_sweep(ef_cl_amg *a, int l, cl_mem r, cl_mem xin, cl_mem xout) {
  amg_dlevel *L = &a->lev[l];
  const double omega = a->h->s.omega;
  cl_kernel k = amg_k(a, l)->sweep;
  EF_CL_SET_ARGS(k, EF_CL_ARG(L->n), EF_CL_ARG(L->rp), EF_CL_ARG(L->col), EF_CL_ARG(L->val), EF_CL_ARG(L->dinv),
                 EF_CL_ARG(omega), EF_CL_ARG(r), EF_CL_ARG(xin), EF_CL_ARG(xout));
  return amg_launch_rows(a, k, L->n, PH_SMOOTH);
}

/* One cycle on level l (the host twin is amg_cycle in host_amg.c). */
static int amg_cycle(ef_cl_amg *a, int l, cl_mem r, cl_mem x) {
  amg_dlevel *L = &a->lev[l], *C = &a->lev[l + 1];
  const amg_kernels *K = amg_k(a, l);
  const int nu = a->h->s.sweeps;
  const double omega = a->h->s.omega, alpha = a->h->s.alpha;
  cl_mem buf[2] = {x, L->t};
  cl_mem cur = buf[(2 * nu - 1) & 1];
  EF_CL_SET_ARGS(K->smooth0, EF_CL_ARG(L->n), EF_CL_ARG(omega), EF_CL_ARG(L->dinv), EF_CL_ARG(r), EF_CL_ARG(cur));
  EF_CALL(amg_launch(a, K->smooth0, (size_t)L->n, AMG_WGS, PH_SMOOTH));
  for (int s = 2; s <= nu; ++s) {
    cl_mem next = buf[(2 * nu - s) & 1];
    EF_CALL(amg_sweep(a, l, r, cur, next));
    cur = next;
  }
  /* res = r - A x into w2 (free during the cycle: the K-cycle fills it after its second cycle). */
  EF_CL_SET_ARGS(K->resid, EF_CL_ARG(L->n), EF_CL_ARG(L->rp), EF_CL_ARG(L->col), EF_CL_ARG(L->val), EF_CL_ARG(r),
                 EF_CL_ARG(cur), EF_CL_ARG(L->w2));
  EF_CALL(amg_launch_rows(a, K->resid, L->n, PH_RESTRICT));
  EF_CL_SET_ARGS(K->restr, EF_CL_ARG(C->n), EF_CL_ARG(L->mp), EF_CL_ARG(L->mem), EF_CL_ARG(L->w2), EF_CL_ARG(C->r));
  EF_CALL(amg_launch(a, K->restr, (size_t)C->n, AMG_WGS, PH_RESTRICT));
  EF_CALL(amg_correction(a, l + 1, C->r, C->x));
  cl_mem next = buf[(nu - 1) & 1];
  EF_CL_SET_ARGS(K->post, EF_CL_ARG(L->n), EF_CL_ARG(L->rp), EF_CL_ARG(L->col), EF_CL_ARG(L->val), EF_CL_ARG(L->dinv),
                 EF_CL_ARG(omega), EF_CL_ARG(alpha), EF_CL_ARG(L->agg), EF_CL_ARG(C->x), EF_CL_ARG(r), EF_CL_ARG(cur),
                 EF_CL_ARG(next));
  EF_CALL(amg_launch_rows(a, K->post, L->n, PH_POST));
  cur = next;
  for (int s = nu + 2; s <= 2 * nu; ++s) {
    next = buf[(2 * nu - s) & 1];
    EF_CALL(amg_sweep(a, l, r, cur, next));
    cur = next;
  }
  return EF_SUCCESS;
}

/* z = M^-1 r. */
int ef_cl_amg_apply(ef_cl_amg *a, cl_mem r, cl_mem z) {
  EF_CHECK(a && r && z && r != z, EF_ERR_PARAMETER, "ef_cl_amg_apply: bad arguments");
  a->applies++;
  if (a->h->n_levels == 1) return amg_correction(a, 0, r, z);
  return amg_cycle(a, 0, r, z);
}

/* Profiling on/off (off releases pending events). */
void ef_cl_amg_set_profiling(ef_cl_amg *a, int on) {
  if (!a) return;
  for (int i = 0; i < a->n_events; ++i) clReleaseEvent(a->events[i]);
  free(a->events);
  free(a->event_phase);
  a->events = NULL;
  a->event_phase = NULL;
  a->n_events = a->cap_events = 0;
  a->profiling = 0;
  if (on) {
    a->cap_events = 1 << 16;
    a->events = malloc((size_t)a->cap_events * sizeof *a->events);
    a->event_phase = malloc((size_t)a->cap_events * sizeof *a->event_phase);
    if (!a->events || !a->event_phase) {
      free(a->events), free(a->event_phase);
      a->events = NULL, a->event_phase = NULL;
      a->cap_events = 0;
      return;
    }
    a->profiling = 1;
  }
}

/* Wait for the profiled launches and add them into the phases. */
int ef_cl_amg_timing_get(ef_cl_amg *a, ef_cl_amg_timing *t) {
  EF_CHECK(a && t, EF_ERR_PARAMETER, "ef_cl_amg_timing_get: NULL argument");
  for (int i = 0; i < a->n_events; ++i) {
    double s = 0.0;
    EF_CL_CALL(clWaitForEvents(1, &a->events[i]));
    EF_CALL(ef_cl_event_seconds(a->events[i], &s));
    a->phase[a->event_phase[i]] += s;
    clReleaseEvent(a->events[i]);
  }
  a->n_events = 0;
  memset(t, 0, sizeof *t);
  t->setup_seconds = a->setup_seconds;
  t->refresh_seconds = a->phase[PH_REFRESH];
  t->smooth_seconds = a->phase[PH_SMOOTH];
  t->restrict_seconds = a->phase[PH_RESTRICT];
  t->post_seconds = a->phase[PH_POST];
  t->krylov_seconds = a->phase[PH_KRYLOV];
  t->coarse_seconds = a->phase[PH_COARSE];
  t->applies = a->applies;
  t->launches = a->launches;
  return EF_SUCCESS;
}

void ef_cl_amg_timing_reset(ef_cl_amg *a) {
  if (!a) return;
  for (int i = 0; i < a->n_events; ++i) clReleaseEvent(a->events[i]);
  a->n_events = 0;
  memset(a->phase, 0, sizeof a->phase);
  a->applies = a->launches = 0;
}

const ef_amg *ef_cl_amg_host(const ef_cl_amg *a) { return a ? a->h : NULL; }

/* Blocking read of level values or the coarsest inverse. */
int ef_cl_amg_read_values(ef_cl_amg *a, int level, double *out) {
  EF_CHECK(a && out && level >= -1 && level < a->h->n_levels, EF_ERR_PARAMETER, "ef_cl_amg_read_values: bad level");
  cl_mem m = level < 0 ? a->W_final : a->lev[level].val;
  size_t bytes = level < 0 ? (size_t)(a->h->nc * a->h->nc) * 8 : (size_t)a->lev[level].nnz * 8;
  EF_CL_CALL(clEnqueueReadBuffer(a->ctx->queue, m, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
  return EF_SUCCESS;
}

void ef_cl_amg_memory(const ef_cl_amg *a, double *hierarchy_bytes, double *work_bytes) {
  double hb = 0.0, wb = 0.0;
  ef_amg_memory(a->h, &hb, NULL, &wb, NULL);
  hb += 8.0 * (double)a->h->nc * (double)a->h->nc; /* the second dense buffer */
  if (hierarchy_bytes) *hierarchy_bytes = hb;
  if (work_bytes) *work_bytes = wb;
}
