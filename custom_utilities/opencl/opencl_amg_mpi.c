/* opencl_amg_mpi.c -- the device AMG and its (F)CG across ranks (opencl_amg_mpi.h; kernels: amg.cl, pcg.cl and
 * amg_mpi.cl).  The cycle is host_amg.c's distributed one with amg.cl's kernels on the owned rows. */
#include "opencl_amg_mpi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_comm.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"
#include "opencl_amg.h"
#include "opencl_csr.h"

/* amg.cl's tunables as opencl_amg.c builds it (the same program from the cache). */
#define AMGM_AMG_WGS 128
#define AMGM_AMG_LANES 64
#define AMGM_AMG_ROW_LANES 4
#define AMGM_AMG_SMALL_WGS 256
#define AMGM_MAX_GROUPS 256 /* groups of the K-cycle reduction kernels (as opencl_amg.c) */
#define AMGM_WGS 256        /* amg_mpi.cl and pcg.cl */
#define AMGM_PCG_MAX_GROUPS 1024
#define AMGM_PCG_TAG 7400   /* the outer (F)CG's halo (the levels': amg.c's 700 + level) */

/* ---------------------------------------------------------------------------
 * Profile (EDGEFLOW_AMG_MPI_PROFILE=1): host wall time of each part, the queue finished before and after it,
 * printed by every rank when its (F)CG is destroyed.  Off by default (the fences serialise the cycle). */
enum { PF_REFRESH, PF_HALO, PF_CYCLE, PF_COARSEST, PF_GATHERED, PF_KDOTS, PF_KKERNELS, PF_DOT, PF_SPMV, PF_UPDATE,
       PF_PRECOND, PF_SOLVE, PF_N };
static const char *const amgm_prof_names[PF_N] = {"refresh", "halo", "cycle kernels", "coarsest", "gathered solve",
                                                   "K dots", "K kernels", "outer dot", "outer spmv", "outer update",
                                                   "preconditioner", "solve"};
static struct {
  int on; /* -1: not read yet */
  double t[PF_N];
  long n[PF_N];
} amgm_prof = {-1, {0}, {0}};

static double amgm_prof_begin(ef_cl_context *ctx) {
  if (amgm_prof.on < 0) {
    const char *e = getenv("EDGEFLOW_AMG_MPI_PROFILE");
    amgm_prof.on = e && e[0] == '1';
  }
  if (!amgm_prof.on) return 0.0;
  clFinish(ctx->queue);
  return ef_wtime();
}

static void amgm_prof_end(ef_cl_context *ctx, int part, double t0) {
  if (amgm_prof.on <= 0) return;
  clFinish(ctx->queue);
  amgm_prof.t[part] += ef_wtime() - t0;
  amgm_prof.n[part]++;
}

/* ---------------------------------------------------------------------------
 * Small helpers. */

/* A device buffer of bytes (at least 8), copied from host when given. */
static int amgm_buffer(ef_cl_context *ctx, size_t bytes, const void *host, cl_mem *out) {
  return ef_cl_buffer_create(ctx, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes, (void *)host,
                             "the AMG across ranks", out);
}

/* A pinned host buffer, mapped for the object's life. */
static int amgm_pinned(ef_cl_context *ctx, size_t bytes, cl_mem *buf, double **host) {
  cl_int st;
  *buf = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes ? bytes : 8, NULL, &st);
  EF_CL_CHECK_STATUS(st, "clCreateBuffer (pinned, AMG across ranks)");
  *host = clEnqueueMapBuffer(ctx->queue, *buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes ? bytes : 8, 0, NULL,
                             NULL, &st);
  EF_CL_CHECK_STATUS(st, "clEnqueueMapBuffer (pinned, AMG across ranks)");
  return EF_SUCCESS;
}

static void amgm_pinned_release(ef_cl_context *ctx, cl_mem *buf, double **host) {
  if (*buf && *host) clEnqueueUnmapMemObject(ctx->queue, *buf, *host, 0, NULL, NULL);
  *host = NULL;
  ef_cl_buffer_release(buf);
}

/* Enqueue k over items work-items in groups of local (items rounded up; nothing for 0 items). */
static int amgm_launch(ef_cl_context *ctx, cl_kernel k, size_t items, size_t local) {
  const size_t global = (items + local - 1) / local * local;
  if (global == 0) return EF_SUCCESS;
  EF_CL_CALL(clEnqueueNDRangeKernel(ctx->queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
  return EF_SUCCESS;
}

/* amgm_launch timed as part (the profile). */
static int amgm_launch_p(ef_cl_context *ctx, cl_kernel k, size_t items, size_t local, int part) {
  const double p0 = amgm_prof_begin(ctx);
  EF_CALL(amgm_launch(ctx, k, items, local));
  amgm_prof_end(ctx, part, p0);
  return EF_SUCCESS;
}

/* amg_mpi.cl's kernels (one program per context and options, from the cache). */
typedef struct {
  cl_program program;
  cl_kernel pack, unpack, combine, direction, update;
} amgm_kernels;

static void amgm_kernels_release(amgm_kernels *k) {
  cl_kernel ks[] = {k->pack, k->unpack, k->combine, k->direction, k->update};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i)
    if (ks[i]) clReleaseKernel(ks[i]);
  if (k->program) clReleaseProgram(k->program);
  memset(k, 0, sizeof *k);
}

static int amgm_kernels_build(ef_cl_context *ctx, amgm_kernels *k) {
  memset(k, 0, sizeof *k);
  char options[64];
  snprintf(options, sizeof options, "-D AMGM_WGS=%d", AMGM_WGS);
  EF_CALL(ef_cl_program_get(ctx, "amg_mpi.cl", options, &k->program));
  EF_CALL(ef_cl_kernel_create(k->program, "amgm_pack", &k->pack));
  EF_CALL(ef_cl_kernel_create(k->program, "amgm_unpack", &k->unpack));
  EF_CALL(ef_cl_kernel_create(k->program, "amgm_combine", &k->combine));
  EF_CALL(ef_cl_kernel_create(k->program, "amgm_direction", &k->direction));
  return ef_cl_kernel_create(k->program, "amgm_update", &k->update);
}

/* Sum of count values, in order. */
static double amgm_sum(const double *v, int64_t count) {
  double s = 0.0;
  for (int64_t i = 0; i < count; ++i) s += v[i];
  return s;
}

/* ---------------------------------------------------------------------------
 * The device halo. */

struct ef_cl_halo_s {
  ef_cl_context *ctx;
  ef_comm comm;
  int n_peers, tag, block; /* block: the received rows are first_ghost.. in order (one write) */
  const int *peers;
  int64_t n_send, n_recv, first_ghost;
  int64_t *send_count, *recv_count;
  double **send_ptr, **recv_ptr;
  cl_mem send_idx, recv_idx, send_dev, recv_dev, pin_send, pin_recv;
  double *h_send, *h_recv;
  amgm_kernels k;
  double seconds;
};

void ef_cl_halo_destroy(ef_cl_halo **hp) {
  if (!hp || !*hp) return;
  ef_cl_halo *h = *hp;
  amgm_pinned_release(h->ctx, &h->pin_send, &h->h_send);
  amgm_pinned_release(h->ctx, &h->pin_recv, &h->h_recv);
  ef_cl_buffer_release(&h->send_idx);
  ef_cl_buffer_release(&h->recv_idx);
  ef_cl_buffer_release(&h->send_dev);
  ef_cl_buffer_release(&h->recv_dev);
  amgm_kernels_release(&h->k);
  free(h->send_count);
  free(h->recv_count);
  free(h->send_ptr);
  free(h->recv_ptr);
  free(h);
  *hp = NULL;
}

int ef_cl_halo_create(ef_cl_context *ctx, const ef_host_dist *d, ef_cl_halo **out) {
  EF_CHECK(ctx && out, EF_ERR_PARAMETER, "ef_cl_halo_create: NULL argument");
  *out = NULL;
  if (!d) return EF_SUCCESS;
  ef_cl_halo *h = calloc(1, sizeof *h);
  EF_CHECK(h, EF_ERR_MEMORY, "out of memory");
  int err = EF_SUCCESS;
  int32_t *si = NULL, *ri = NULL;
  h->ctx = ctx;
  h->comm = ef_host_dist_comm(d);
  const int64_t *sc, *sidx, *rc, *ridx;
  ef_host_dist_plan(d, &h->n_peers, &h->peers, &sc, &sidx, &rc, &ridx, &h->tag);
  const int np = h->n_peers > 0 ? h->n_peers : 1;
  h->send_count = calloc((size_t)np, sizeof *h->send_count);
  h->recv_count = calloc((size_t)np, sizeof *h->recv_count);
  h->send_ptr = calloc((size_t)np, sizeof *h->send_ptr);
  h->recv_ptr = calloc((size_t)np, sizeof *h->recv_ptr);
  EF_CHECK_GOTO(h->send_count && h->recv_count && h->send_ptr && h->recv_ptr, EF_ERR_MEMORY, fail, "out of memory");
  for (int k = 0; k < h->n_peers; ++k) {
    h->send_count[k] = sc[k];
    h->recv_count[k] = rc[k];
    h->n_send += sc[k];
    h->n_recv += rc[k];
  }
  si = malloc((size_t)(h->n_send > 0 ? h->n_send : 1) * sizeof *si);
  ri = malloc((size_t)(h->n_recv > 0 ? h->n_recv : 1) * sizeof *ri);
  EF_CHECK_GOTO(si && ri, EF_ERR_MEMORY, fail, "out of memory");
  for (int64_t j = 0; j < h->n_send; ++j) si[j] = (int32_t)sidx[j];
  /* EDGEFLOW_AMG_HALO_SCATTER=1 (tests): the scatter kernel even where the received rows are one block. */
  const char *scatter = getenv("EDGEFLOW_AMG_HALO_SCATTER");
  h->block = !(scatter && scatter[0] == '1');
  h->first_ghost = h->n_recv > 0 ? ridx[0] : 0;
  for (int64_t j = 0; j < h->n_recv; ++j) {
    ri[j] = (int32_t)ridx[j];
    if (ridx[j] != h->first_ghost + j) h->block = 0;
  }
  EF_CALL_GOTO(amgm_buffer(ctx, (size_t)h->n_send * 4, si, &h->send_idx), fail);
  EF_CALL_GOTO(amgm_buffer(ctx, (size_t)h->n_recv * 4, ri, &h->recv_idx), fail);
  EF_CALL_GOTO(amgm_buffer(ctx, (size_t)h->n_send * 8, NULL, &h->send_dev), fail);
  EF_CALL_GOTO(amgm_buffer(ctx, (size_t)h->n_recv * 8, NULL, &h->recv_dev), fail);
  EF_CALL_GOTO(amgm_pinned(ctx, (size_t)h->n_send * 8, &h->pin_send, &h->h_send), fail);
  EF_CALL_GOTO(amgm_pinned(ctx, (size_t)h->n_recv * 8, &h->pin_recv, &h->h_recv), fail);
  int64_t so = 0, ro = 0;
  for (int k = 0; k < h->n_peers; ++k) {
    h->send_ptr[k] = h->h_send + so;
    h->recv_ptr[k] = h->h_recv + ro;
    so += sc[k];
    ro += rc[k];
  }
  EF_CALL_GOTO(amgm_kernels_build(ctx, &h->k), fail);
  free(si);
  free(ri);
  *out = h;
  return EF_SUCCESS;
fail:
  free(si);
  free(ri);
  ef_cl_halo_destroy(&h);
  return err;
}

int ef_cl_halo_exchange(ef_cl_halo *h, cl_mem x) {
  if (!h) return EF_SUCCESS;
  const double p0 = amgm_prof_begin(h->ctx);
  const double t0 = ef_wtime();
  cl_command_queue q = h->ctx->queue;
  const cl_int ns = (cl_int)h->n_send, nr = (cl_int)h->n_recv;
  if (ns > 0) {
    EF_CL_SET_ARGS(h->k.pack, EF_CL_ARG(ns), EF_CL_ARG(h->send_idx), EF_CL_ARG(x), EF_CL_ARG(h->send_dev));
    EF_CALL(amgm_launch(h->ctx, h->k.pack, (size_t)ns, AMGM_WGS));
    EF_CL_CALL(clEnqueueReadBuffer(q, h->send_dev, CL_TRUE, 0, (size_t)ns * 8, h->h_send, 0, NULL, NULL));
  } else {
    EF_CL_CALL(clFinish(q)); /* x complete before its ghosts are overwritten */
  }
  void *pending = NULL;
  EF_CALL(ef_comm_exchange_begin(h->comm, h->n_peers, h->peers, h->send_ptr, h->send_count, h->recv_ptr,
                                 h->recv_count, h->tag, &pending));
  EF_CALL(ef_comm_exchange_end(h->comm, pending));
  /* Not blocking: the queue is in order, so later kernels see the ghosts, and h_recv is refilled only by the next
   * exchange, after its blocking read (or clFinish) has waited for this write. */
  if (nr > 0 && h->block) {
    EF_CL_CALL(clEnqueueWriteBuffer(q, x, CL_FALSE, (size_t)h->first_ghost * 8, (size_t)nr * 8, h->h_recv, 0, NULL,
                                    NULL));
  } else if (nr > 0) {
    EF_CL_CALL(clEnqueueWriteBuffer(q, h->recv_dev, CL_FALSE, 0, (size_t)nr * 8, h->h_recv, 0, NULL, NULL));
    EF_CL_SET_ARGS(h->k.unpack, EF_CL_ARG(nr), EF_CL_ARG(h->recv_idx), EF_CL_ARG(h->recv_dev), EF_CL_ARG(x));
    EF_CALL(amgm_launch(h->ctx, h->k.unpack, (size_t)nr, AMGM_WGS));
  }
  h->seconds += ef_wtime() - t0;
  amgm_prof_end(h->ctx, PF_HALO, p0);
  return EF_SUCCESS;
}

double ef_cl_halo_seconds(const ef_cl_halo *h) { return h ? h->seconds : 0.0; }

/* ---------------------------------------------------------------------------
 * The hierarchy on the device. */

typedef struct {
  cl_program program;
  cl_kernel offsets, refresh, l1, smooth0, sweep, resid, restr, post, k_first, k_third;
} amgm_amg_kernels;

static void amgm_amg_kernels_release(amgm_amg_kernels *k) {
  cl_kernel ks[] = {k->offsets, k->refresh, k->l1,   k->smooth0, k->sweep,
                    k->resid,   k->restr,   k->post, k->k_first, k->k_third};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i)
    if (ks[i]) clReleaseKernel(ks[i]);
  if (k->program) clReleaseProgram(k->program);
  memset(k, 0, sizeof *k);
}

/* amg.cl with opencl_amg.c's options (row offsets int64 when wide). */
static int amgm_amg_kernels_build(ef_cl_context *ctx, int wide, amgm_amg_kernels *k) {
  memset(k, 0, sizeof *k);
  char options[160];
  snprintf(options, sizeof options, "-D AMG_WGS=%d -D AMG_LANES=%d -D AMG_ROW_LANES=%d -D AMG_SMALL_WGS=%d%s",
           AMGM_AMG_WGS, AMGM_AMG_LANES, AMGM_AMG_ROW_LANES, AMGM_AMG_SMALL_WGS, wide ? " -D EF_ROW_PTR_64" : "");
  EF_CALL(ef_cl_program_get(ctx, "amg.cl", options, &k->program));
  EF_CALL(ef_cl_kernel_create(k->program, "amg_refresh_offsets", &k->offsets));
  EF_CALL(ef_cl_kernel_create(k->program, "amg_refresh_mapped", &k->refresh));
  EF_CALL(ef_cl_kernel_create(k->program, "amg_l1", &k->l1));
  EF_CALL(ef_cl_kernel_create(k->program, "amg_smooth0", &k->smooth0));
  EF_CALL(ef_cl_kernel_create(k->program, "amg_sweep", &k->sweep));
  EF_CALL(ef_cl_kernel_create(k->program, "amg_residual", &k->resid));
  EF_CALL(ef_cl_kernel_create(k->program, "amg_restrict", &k->restr));
  EF_CALL(ef_cl_kernel_create(k->program, "amg_post", &k->post));
  EF_CALL(ef_cl_kernel_create(k->program, "amg_k_first", &k->k_first));
  return ef_cl_kernel_create(k->program, "amg_k_third", &k->k_third);
}

typedef struct {
  cl_int n, groups; /* owned rows; groups of the K-cycle kernels */
  int64_t n_ghost, nnz;
  cl_mem rp, col, val; /* level 0: the caller's */
  int owns_matrix;
  cl_mem dinv, agg, mp, mem;
  cl_mem off; /* a byte per entry: its place in its coarse row (amg.cl's amg_refresh_offsets), once per hierarchy */
  cl_mem r, x, t, v1, v2, w1, w2, q, part, part2; /* vectors: owned and ghost rows */
  ef_cl_halo *halo;
} amgm_level;

struct ef_cl_amg_mpi_s {
  ef_cl_context *ctx;
  ef_amg *h;
  double *host_val; /* level 0's values on the host (downloaded), the coarsest's when it is level 0 */
  amgm_amg_kernels kf, kc;
  amgm_kernels km;
  amgm_level lev[32];
  double *hpart, *hc_r, *hc_x; /* partials read back; the coarsest level's right-hand side and solution */
  double seconds_reduce;
  /* The gathered sub-hierarchy (settings.gather_rows): level g (0: none) gathered on every rank in the global
   * numbering (gn rows, its pattern g_rp/g_col, values g_val), cycled by a one-process device AMG (gamg) on gA;
   * g_r its right-hand side on the host, g_rd and g_xd on the device, g_pick the global row of each owned and
   * ghost row of level g (amgm_pack picks them from g_xd). */
  int g;
  int64_t gn, g_first;
  int64_t *g_rp;
  int32_t *g_col;
  double *g_val, *g_r, *g_own; /* g_own: the owned rows' values or right-hand side as read */
  int32_t *g_perm;              /* place in g_val of each owned entry (the gathered rows' columns sorted) */
  int g_nmaps;                  /* levels g..n_levels-2's aggregate maps in the global numbering (the set-up's) */
  int32_t *g_maps[32];
  ef_cl_csr gA;
  ef_cl_amg *gamg;
  cl_mem g_rd, g_xd, g_pick;
  amgm_level gl; /* the K-cycle's level g on the gathered rows (gA's matrix, its own vectors), when it has one */
};

static const amgm_amg_kernels *amgm_k(const ef_cl_amg_mpi *a, int l) { return l == 0 ? &a->kf : &a->kc; }

static int amgm_reduce(ef_cl_amg_mpi *a, double *v, int n) {
  const double t0 = ef_wtime();
  const int err = ef_comm_allreduce(ef_host_dist_comm(a->h->lev[0].halo), v, n, EF_COMM_SUM);
  a->seconds_reduce += ef_wtime() - t0;
  return err;
}

void ef_cl_amg_mpi_destroy(ef_cl_amg_mpi **ap) {
  if (!ap || !*ap) return;
  ef_cl_amg_mpi *a = *ap;
  for (int l = 0; l < 32; ++l) {
    amgm_level *D = &a->lev[l];
    if (D->owns_matrix) ef_cl_buffer_release(&D->rp), ef_cl_buffer_release(&D->col), ef_cl_buffer_release(&D->val);
    cl_mem *m[] = {&D->dinv, &D->agg, &D->mp, &D->mem, &D->off, &D->r,    &D->x,
                   &D->t,    &D->v1,  &D->v2, &D->w1,  &D->w2,  &D->q,    &D->part, &D->part2};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; ++i) ef_cl_buffer_release(m[i]);
    ef_cl_halo_destroy(&D->halo);
  }
  amgm_amg_kernels_release(&a->kf);
  amgm_amg_kernels_release(&a->kc);
  amgm_kernels_release(&a->km);
  ef_cl_amg_destroy(&a->gamg);
  cl_mem *gv[] = {&a->gl.v1, &a->gl.v2, &a->gl.w1, &a->gl.w2, &a->gl.q, &a->gl.part, &a->gl.part2};
  for (size_t i = 0; i < sizeof gv / sizeof gv[0]; ++i) ef_cl_buffer_release(gv[i]);
  cl_mem *gm[] = {&a->gA.row_ptr, &a->gA.col_idx, &a->gA.values, &a->g_rd, &a->g_xd, &a->g_pick};
  for (size_t i = 0; i < sizeof gm / sizeof gm[0]; ++i) ef_cl_buffer_release(gm[i]);
  free(a->g_rp);
  free(a->g_col);
  free(a->g_val);
  free(a->g_r);
  free(a->g_own);
  free(a->g_perm);
  for (int j = 0; j < 32; ++j) free(a->g_maps[j]);
  ef_amg_destroy(&a->h);
  free(a->host_val);
  free(a->hpart);
  free(a->hc_r);
  free(a->hc_x);
  free(a);
  *ap = NULL;
}

/* Each member entry's place in its coarse row, once per hierarchy (ef_cl_amg_offsets, as one process). */
static int amgm_offsets(ef_cl_amg_mpi *a) {
  for (int l = 0; l + 1 < a->h->n_levels; ++l) {
    amgm_level *F = &a->lev[l], *C = &a->lev[l + 1];
    EF_CALL(ef_cl_amg_offsets(a->ctx, amgm_k(a, l)->offsets, a->h->s.refresh_direct, F->nnz, C->n, C->rp, C->col,
                              F->mp, F->mem, F->rp, F->col, F->agg, &F->off));
  }
  return EF_SUCCESS;
}

/* The gathered sub-hierarchy's set-up (settings.gather_rows > 0): g the first level after the fine one, and before
 * the coarsest, of at most gather_rows rows over all ranks (the same on every rank: global counts); its pattern
 * and the aggregate maps of levels g.. gathered on every rank in the global numbering (as amg.c's coarsest:
 * zero-padded reductions, one contributor an entry), the pattern uploaded; the one-process AMG is built at the
 * first refresh, from the first gathered values and those maps. */
static int amgm_gather_setup(ef_cl_amg_mpi *a) {
  const ef_amg *h = a->h;
  a->g = 0;
  if (h->s.gather_rows <= 0) return EF_SUCCESS;
  for (int l = 1; l + 1 < h->n_levels && !a->g; ++l)
    if (h->lev[l].n_global <= h->s.gather_rows) a->g = l;
  if (!a->g) return EF_SUCCESS;
  const ef_amg_level *L = &h->lev[a->g];
  const int64_t gn = L->n_global, first = ef_host_dist_first_row(L->halo);
  EF_CHECK(gn < INT32_MAX, EF_ERR_UNSUPPORTED, "AMG across ranks: the gathered level has too many rows");
  a->gn = gn;
  a->g_first = first;
  int err = EF_SUCCESS;
  double *len = calloc((size_t)gn, sizeof *len), *gc = NULL;
  int32_t *pick = malloc((size_t)(L->n + L->n_ghost > 0 ? L->n + L->n_ghost : 1) * sizeof *pick);
  const int64_t own = L->nnz > L->n ? L->nnz : L->n;
  a->g_rp = calloc((size_t)gn + 1, sizeof *a->g_rp);
  a->g_r = malloc((size_t)gn * sizeof *a->g_r);
  a->g_own = malloc((size_t)(own > 0 ? own : 1) * sizeof *a->g_own);
  a->g_perm = malloc((size_t)(L->nnz > 0 ? L->nnz : 1) * sizeof *a->g_perm);
  EF_CHECK_GOTO(len && pick && a->g_rp && a->g_r && a->g_own && a->g_perm, EF_ERR_MEMORY, done,
                "AMG across ranks: out of memory (gathered level)");
  for (int64_t I = 0; I < L->n; ++I) len[first + I] = (double)(L->row_ptr[I + 1] - L->row_ptr[I]);
  EF_CALL_GOTO(ef_host_dist_sum(L->halo, len, (int)gn), done);
  for (int64_t I = 0; I < gn; ++I) a->g_rp[I + 1] = a->g_rp[I] + (int64_t)len[I];
  const int64_t nnz = a->g_rp[gn];
  EF_CHECK_GOTO(nnz < INT32_MAX, EF_ERR_UNSUPPORTED, done, "AMG across ranks: the gathered level has too many entries");
  gc = calloc((size_t)(nnz > 0 ? nnz : 1), sizeof *gc);
  a->g_col = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *a->g_col);
  a->g_val = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *a->g_val);
  EF_CHECK_GOTO(gc && a->g_col && a->g_val, EF_ERR_MEMORY, done, "AMG across ranks: out of memory (gathered level)");
  /* Each owned row's entries in the order of their global columns (the one-process set-up wants sorted rows):
   * g_perm[j] the place of local entry j (an insertion sort by rank: rows are short). */
  for (int64_t I = 0; I < L->n; ++I) {
    const int64_t b = L->row_ptr[I], e = L->row_ptr[I + 1], gb = a->g_rp[first + I];
    for (int64_t j = b; j < e; ++j) {
      const int32_t c = L->col[j];
      const int64_t gcol = c < L->n ? first + c : L->ghost_global[c - L->n];
      int64_t rank = 0;
      for (int64_t k = b; k < e; ++k) {
        const int32_t ck = L->col[k];
        const int64_t gk = ck < L->n ? first + ck : L->ghost_global[ck - L->n];
        rank += gk < gcol;
      }
      a->g_perm[j] = (int32_t)(gb + rank);
      gc[gb + rank] = (double)gcol;
    }
  }
  EF_CALL_GOTO(ef_host_dist_sum(L->halo, gc, (int)nnz), done);
  for (int64_t k = 0; k < nnz; ++k) a->g_col[k] = (int32_t)gc[k];
  for (int64_t i = 0; i < L->n + L->n_ghost; ++i) pick[i] = (int32_t)(i < L->n ? first + i : L->ghost_global[i - L->n]);
  int32_t *rp32 = (int32_t *)gc; /* gc's room (nnz doubles) holds gn + 1 offsets when nnz >= gn + 1; else apart */
  int32_t *rp_own = NULL;
  if ((size_t)(nnz > 0 ? nnz : 1) * sizeof *gc < (size_t)(gn + 1) * sizeof *rp32) {
    rp_own = malloc((size_t)(gn + 1) * sizeof *rp_own);
    EF_CHECK_GOTO(rp_own, EF_ERR_MEMORY, done, "AMG across ranks: out of memory (gathered level)");
    rp32 = rp_own;
  }
  for (int64_t I = 0; I <= gn; ++I) rp32[I] = (int32_t)a->g_rp[I];
  a->gA.n = gn;
  a->gA.nnz = nnz;
  a->gA.row_ptr_64 = 0;
  err = amgm_buffer(a->ctx, (size_t)(gn + 1) * 4, rp32, &a->gA.row_ptr);
  free(rp_own);
  if (err) goto done;
  EF_CALL_GOTO(amgm_buffer(a->ctx, (size_t)nnz * 4, a->g_col, &a->gA.col_idx), done);
  EF_CALL_GOTO(amgm_buffer(a->ctx, (size_t)nnz * 8, NULL, &a->gA.values), done);
  EF_CALL_GOTO(amgm_buffer(a->ctx, (size_t)gn * 8, NULL, &a->g_rd), done);
  EF_CALL_GOTO(amgm_buffer(a->ctx, (size_t)gn * 8, NULL, &a->g_xd), done);
  EF_CALL_GOTO(amgm_buffer(a->ctx, (size_t)(L->n + L->n_ghost) * 4, pick, &a->g_pick), done);
  /* The aggregate maps of levels g.. in the global numbering (a reduction each: one contributor a row, the
   * aggregate + 1), so that the one-process hierarchy is this one's levels g.. (the aggregates inside each rank, the
   * maps of a restart file) rather than a new aggregation of the gathered values. */
  a->g_nmaps = h->n_levels - 1 - a->g;
  for (int j = 0; j < a->g_nmaps; ++j) {
    const ef_amg_level *F = &h->lev[a->g + j], *Cl = &h->lev[a->g + j + 1];
    const int64_t fn = F->n_global, ff = ef_host_dist_first_row(F->halo), cf = ef_host_dist_first_row(Cl->halo);
    double *mv = calloc((size_t)(fn > 0 ? fn : 1), sizeof *mv);
    a->g_maps[j] = malloc((size_t)(fn > 0 ? fn : 1) * sizeof *a->g_maps[j]);
    if (!mv || !a->g_maps[j]) {
      free(mv);
      err = EF_ERROR(EF_ERR_MEMORY, "AMG across ranks: out of memory (gathered maps)");
      goto done;
    }
    for (int64_t i = 0; i < F->n; ++i) mv[ff + i] = F->agg[i] < 0 ? 0.0 : (double)(cf + F->agg[i] + 1);
    err = ef_host_dist_sum(F->halo, mv, (int)fn);
    for (int64_t i = 0; i < fn && !err; ++i) a->g_maps[j][i] = (int32_t)mv[i] - 1;
    free(mv);
    if (err) goto done;
  }
  if (h->s.cycle == EF_AMG_CYCLE_K && a->g <= h->s.kcycle_levels) { /* the K-cycle of level g, on every rank */
    amgm_level *G = &a->gl;
    const int64_t gr = (gn + AMGM_AMG_WGS - 1) / AMGM_AMG_WGS;
    G->n = (cl_int)gn;
    G->groups = (cl_int)(gr < 1 ? 1 : gr > AMGM_MAX_GROUPS ? AMGM_MAX_GROUPS : gr);
    G->nnz = nnz;
    G->rp = a->gA.row_ptr, G->col = a->gA.col_idx, G->val = a->gA.values;
    cl_mem *vecs[] = {&G->v1, &G->v2, &G->w1, &G->w2, &G->q};
    for (size_t v = 0; v < sizeof vecs / sizeof vecs[0]; ++v)
      EF_CALL_GOTO(amgm_buffer(a->ctx, (size_t)gn * 8, NULL, vecs[v]), done);
    EF_CALL_GOTO(amgm_buffer(a->ctx, (size_t)G->groups * 2 * 8, NULL, &G->part), done);
    EF_CALL_GOTO(amgm_buffer(a->ctx, (size_t)G->groups * 3 * 8, NULL, &G->part2), done);
  }
done:
  free(len);
  free(gc);
  free(pick);
  return err;
}

/* The gathered level's values: its owned rows' device values read back, gathered on every rank by one reduction
 * of a zero-padded array (bit-identical everywhere), uploaded; the one-process AMG built on them the first time
 * (its K-cycle levels counted from level g: kcycle_levels - g), refreshed after. */
static int amgm_gather_refresh(ef_cl_amg_mpi *a) {
  const ef_amg *h = a->h;
  const ef_amg_level *L = &h->lev[a->g];
  const int64_t nnz = a->gA.nnz;
  if (L->nnz > 0)
    EF_CL_CALL(clEnqueueReadBuffer(a->ctx->queue, a->lev[a->g].val, CL_TRUE, 0, (size_t)L->nnz * 8, a->g_own, 0,
                                   NULL, NULL));
  for (int64_t k = 0; k < nnz; ++k) a->g_val[k] = 0.0;
  for (int64_t j = 0; j < L->nnz; ++j) a->g_val[a->g_perm[j]] = a->g_own[j];
  const double t0 = ef_wtime();
  const int err = ef_host_dist_sum(L->halo, a->g_val, (int)nnz);
  a->seconds_reduce += ef_wtime() - t0;
  EF_CALL(err);
  EF_CL_CALL(clEnqueueWriteBuffer(a->ctx->queue, a->gA.values, CL_TRUE, 0, (size_t)nnz * 8, a->g_val, 0, NULL, NULL));
  if (a->gamg) return ef_cl_amg_refresh(a->gamg);
  ef_amg_settings s = h->s;
  s.kcycle_levels = s.kcycle_levels > a->g ? s.kcycle_levels - a->g : 0;
  s.max_levels = s.max_levels > a->g ? s.max_levels - a->g : 1;
  s.gather_rows = 0;
  const ef_amg_matrix M = {a->gn, nnz, a->g_rp, a->g_col, a->g_val, h->constant_null_space};
  return ef_cl_amg_create_from_maps(a->ctx, &a->gA, &M, h->constant_null_space, &s, a->g_nmaps, a->g_maps, &a->gamg);
}

int ef_cl_amg_mpi_create(ef_cl_context *ctx, const ef_cl_csr *A, const ef_amg_matrix *host_A,
                         const ef_amg_ranks *ranks, const ef_amg_settings *settings, int n_maps,
                         int32_t *const *maps, ef_cl_amg_mpi **out) {
  EF_CHECK(ctx && A && host_A && ranks && settings && out && host_A->n == A->n && host_A->row_ptr && host_A->col,
           EF_ERR_PARAMETER, "ef_cl_amg_mpi_create: bad arguments");
  *out = NULL;
  const double t0 = ef_wtime();
  ef_cl_amg_mpi *a = calloc(1, sizeof *a);
  EF_CHECK(a, EF_ERR_MEMORY, "AMG across ranks: out of memory");
  int err = EF_SUCCESS;
  a->ctx = ctx;
  ef_amg_matrix M = *host_A;
  const int64_t nnz0 = host_A->row_ptr[host_A->n];
  if (!M.val) { /* the owned rows' values, downloaded once for the set-up (strength of connection) */
    a->host_val = malloc((size_t)(nnz0 > 0 ? nnz0 : 1) * sizeof *a->host_val);
    EF_CHECK_GOTO(a->host_val, EF_ERR_MEMORY, fail, "AMG across ranks: out of memory");
    if (nnz0 > 0)
      EF_CL_CALL_GOTO(clEnqueueReadBuffer(ctx->queue, A->values, CL_TRUE, 0, (size_t)nnz0 * 8, a->host_val, 0, NULL,
                                          NULL),
                      fail);
    M.val = a->host_val;
  }
  M.nnz = nnz0;
  EF_CALL_GOTO(ef_amg_create_ranks(settings, &M, ranks, n_maps, maps, &a->h), fail);
  const ef_amg *h = a->h;
  EF_CHECK_GOTO(h->distributed, EF_ERR_PARAMETER, fail, "AMG across ranks: a communicator of one rank");
  EF_CALL_GOTO(amgm_amg_kernels_build(ctx, A->row_ptr_64, &a->kf), fail);
  EF_CALL_GOTO(amgm_amg_kernels_build(ctx, 0, &a->kc), fail);
  EF_CALL_GOTO(amgm_kernels_build(ctx, &a->km), fail);
  int64_t most = 0;
  for (int l = 0; l < h->n_levels; ++l) {
    const ef_amg_level *L = &h->lev[l];
    amgm_level *D = &a->lev[l];
    EF_CHECK_GOTO(L->n + L->n_ghost < INT32_MAX, EF_ERR_UNSUPPORTED, fail, "AMG across ranks: level %d too large", l);
    D->n = (cl_int)L->n;
    D->n_ghost = L->n_ghost;
    D->nnz = L->nnz;
    const int64_t gr = (L->n + AMGM_AMG_WGS - 1) / AMGM_AMG_WGS;
    D->groups = (cl_int)(gr < 1 ? 1 : gr > AMGM_MAX_GROUPS ? AMGM_MAX_GROUPS : gr);
    if (3 * (int64_t)D->groups > most) most = 3 * (int64_t)D->groups;
    if (l == 0) {
      D->rp = A->row_ptr, D->col = A->col_idx, D->val = A->values;
    } else {
      D->owns_matrix = 1;
      EF_CALL_GOTO(amgm_buffer(ctx, (size_t)(L->n + 1) * 4, L->row_ptr, &D->rp), fail);
      EF_CALL_GOTO(amgm_buffer(ctx, (size_t)L->nnz * 4, L->col, &D->col), fail);
      EF_CALL_GOTO(amgm_buffer(ctx, (size_t)L->nnz * 8, NULL, &D->val), fail);
    }
    if (l + 1 < h->n_levels) { /* the aggregates of the owned and the ghost rows, the members of the owned aggregates */
      const int64_t nc = h->lev[l + 1].n;
      EF_CALL_GOTO(amgm_buffer(ctx, (size_t)(L->n + L->n_ghost) * 4, L->agg, &D->agg), fail);
      EF_CALL_GOTO(amgm_buffer(ctx, (size_t)(nc + 1) * 4, L->mem_ptr, &D->mp), fail);
      EF_CALL_GOTO(amgm_buffer(ctx, (size_t)L->mem_ptr[nc] * 4, L->mem, &D->mem), fail);
    }
    const size_t vb = (size_t)(L->n + L->n_ghost) * 8;
    cl_mem *vecs[] = {&D->dinv, &D->r, &D->x, &D->t, &D->v1, &D->v2, &D->w1, &D->w2, &D->q};
    for (size_t v = 0; v < sizeof vecs / sizeof vecs[0]; ++v) {
      if (l == 0 && (vecs[v] == &D->r || vecs[v] == &D->x)) continue; /* the caller's r, z */
      EF_CALL_GOTO(amgm_buffer(ctx, vb, NULL, vecs[v]), fail);
    }
    EF_CALL_GOTO(amgm_buffer(ctx, (size_t)D->groups * 2 * 8, NULL, &D->part), fail);
    EF_CALL_GOTO(amgm_buffer(ctx, (size_t)D->groups * 3 * 8, NULL, &D->part2), fail);
    EF_CALL_GOTO(ef_cl_halo_create(ctx, L->halo, &D->halo), fail);
  }
  EF_CALL_GOTO(amgm_offsets(a), fail);
  EF_CALL_GOTO(amgm_gather_setup(a), fail);
  if (3 * (int64_t)a->gl.groups > most) most = 3 * (int64_t)a->gl.groups;
  const ef_amg_level *Lc = &h->lev[h->n_levels - 1];
  a->hpart = malloc((size_t)(most > 0 ? most : 1) * sizeof *a->hpart);
  a->hc_r = malloc((size_t)(Lc->n > 0 ? Lc->n : 1) * sizeof *a->hc_r);
  a->hc_x = malloc((size_t)(Lc->n + Lc->n_ghost > 0 ? Lc->n + Lc->n_ghost : 1) * sizeof *a->hc_x);
  EF_CHECK_GOTO(a->hpart && a->hc_r && a->hc_x, EF_ERR_MEMORY, fail, "AMG across ranks: out of memory");
  if (h->n_levels == 1 && !a->host_val) { /* the coarsest is level 0: its values are read into host_val */
    a->host_val = malloc((size_t)(nnz0 > 0 ? nnz0 : 1) * sizeof *a->host_val);
    EF_CHECK_GOTO(a->host_val, EF_ERR_MEMORY, fail, "AMG across ranks: out of memory");
  }
  EF_CALL_GOTO(ef_cl_amg_mpi_refresh(a), fail);
  a->h->setup_seconds = ef_wtime() - t0;
  *out = a;
  return EF_SUCCESS;
fail:
  ef_cl_amg_mpi_destroy(&a);
  return err;
}

/* Coarse values (amg_refresh_mapped) with their l1 diagonals level by level, the fine l1 diagonal, then the coarsest level's owned
 * values read back, gathered and inverted on every rank (ef_amg_coarsest_ranks_refresh). */
int ef_cl_amg_mpi_refresh(ef_cl_amg_mpi *a) {
  EF_CHECK(a, EF_ERR_PARAMETER, "ef_cl_amg_mpi_refresh: no AMG");
  const double p0 = amgm_prof_begin(a->ctx);
  ef_amg *h = a->h;
  const int nl = h->n_levels;
  amgm_level *L0 = &a->lev[0];
  EF_CL_SET_ARGS(a->kf.l1, EF_CL_ARG(L0->n), EF_CL_ARG(L0->rp), EF_CL_ARG(L0->val), EF_CL_ARG(L0->dinv));
  EF_CALL(amgm_launch(a->ctx, a->kf.l1, (size_t)L0->n, AMGM_AMG_WGS));
  for (int l = 0; l + 1 < (a->g ? a->g + 1 : nl); ++l) { /* with a gathered level g, the levels below it unused */
    amgm_level *F = &a->lev[l], *C = &a->lev[l + 1];
    cl_kernel k = amgm_k(a, l)->refresh;
    EF_CL_SET_ARGS(k, EF_CL_ARG(C->n), EF_CL_ARG(C->rp), EF_CL_ARG(C->col), EF_CL_ARG(C->val), EF_CL_ARG(C->dinv),
                   EF_CL_ARG(F->mp), EF_CL_ARG(F->mem), EF_CL_ARG(F->rp), EF_CL_ARG(F->col), EF_CL_ARG(F->val),
                   EF_CL_ARG(F->agg), EF_CL_ARG(F->off));
    EF_CALL(amgm_launch(a->ctx, k, (size_t)C->n, AMGM_AMG_WGS));
  }
  if (a->g) {
    const int gerr = amgm_gather_refresh(a);
    amgm_prof_end(a->ctx, PF_REFRESH, p0);
    return gerr;
  }
  ef_amg_level *Lc = &h->lev[nl - 1];
  double *dest = nl == 1 ? a->host_val : Lc->own_val;
  if (Lc->nnz > 0)
    EF_CL_CALL(clEnqueueReadBuffer(a->ctx->queue, a->lev[nl - 1].val, CL_TRUE, 0, (size_t)Lc->nnz * 8, dest, 0, NULL,
                                   NULL));
  else
    EF_CL_CALL(clFinish(a->ctx->queue));
  Lc->val = dest;
  const double t0 = ef_wtime();
  const int err = ef_amg_coarsest_ranks_refresh(h);
  a->seconds_reduce += ef_wtime() - t0;
  amgm_prof_end(a->ctx, PF_REFRESH, p0);
  return err;
}

static int amgm_cycle(ef_cl_amg_mpi *a, int l, cl_mem r, cl_mem x);

/* The gathered coarsest solve of level c: rc's owned rows to the host, ef_amg_coarsest_ranks_solve, xc's owned
 * and ghost rows back. */
static int amgm_coarsest_body(ef_cl_amg_mpi *a, int c, cl_mem rc, cl_mem xc) {
  amgm_level *C = &a->lev[c];
  cl_command_queue q = a->ctx->queue;
  if (C->n > 0)
    EF_CL_CALL(clEnqueueReadBuffer(q, rc, CL_TRUE, 0, (size_t)C->n * 8, a->hc_r, 0, NULL, NULL));
  else
    EF_CL_CALL(clFinish(q));
  const double t0 = ef_wtime();
  const int err = ef_amg_coarsest_ranks_solve(a->h, a->hc_r, a->hc_x);
  a->seconds_reduce += ef_wtime() - t0;
  EF_CALL(err);
  const int64_t rows = C->n + C->n_ghost;
  if (rows > 0) /* not blocking: hc_x is refilled only after the next visit's blocking read (in-order queue) */
    EF_CL_CALL(clEnqueueWriteBuffer(q, xc, CL_FALSE, 0, (size_t)rows * 8, a->hc_x, 0, NULL, NULL));
  return EF_SUCCESS;
}

static int amgm_coarsest(ef_cl_amg_mpi *a, int c, cl_mem rc, cl_mem xc) {
  const double p0 = amgm_prof_begin(a->ctx);
  EF_CALL(amgm_coarsest_body(a, c, rc, xc));
  amgm_prof_end(a->ctx, PF_COARSEST, p0);
  return EF_SUCCESS;
}

static int amgm_kdots(ef_cl_amg_mpi *a, amgm_level *C, cl_mem part, int m, double *d);
static int amgm_combine(ef_cl_amg_mpi *a, amgm_level *C, double s, cl_mem x, double t, cl_mem y, cl_mem out);

static int amgm_kcycle(ef_cl_amg_mpi *a, int c, amgm_level *C, cl_mem rc, cl_mem xc);

/* The gathered sub-hierarchy's solve at level c = g: rc's owned rows gathered on every rank by one reduction of gn
 * doubles (zero-padded), uploaded, one cycle of the one-process AMG (or level g's K-cycle around two of them, when
 * level g is a K-cycle level), xc's owned and ghost rows picked from the result (amgm_pack). */
static int amgm_gathered(ef_cl_amg_mpi *a, int c, cl_mem rc, cl_mem xc) {
  const double p0 = amgm_prof_begin(a->ctx);
  amgm_level *C = &a->lev[c];
  cl_command_queue q = a->ctx->queue;
  if (C->n > 0) /* blocking: the in-order queue has also finished the last visit's upload of g_r */
    EF_CL_CALL(clEnqueueReadBuffer(q, rc, CL_TRUE, 0, (size_t)C->n * 8, a->g_own, 0, NULL, NULL));
  else
    EF_CL_CALL(clFinish(q));
  for (int64_t j = 0; j < a->gn; ++j) a->g_r[j] = 0.0;
  memcpy(a->g_r + a->g_first, a->g_own, (size_t)C->n * sizeof *a->g_r);
  const double t0 = ef_wtime();
  const int err = ef_host_dist_sum(a->h->lev[c].halo, a->g_r, (int)a->gn);
  a->seconds_reduce += ef_wtime() - t0;
  EF_CALL(err);
  EF_CL_CALL(clEnqueueWriteBuffer(q, a->g_rd, CL_FALSE, 0, (size_t)a->gn * 8, a->g_r, 0, NULL, NULL));
  if (a->gl.n > 0) /* level g is a K-cycle level: its K-cycle on the gathered rows, the same on every rank */
    EF_CALL(amgm_kcycle(a, c, &a->gl, a->g_rd, a->g_xd));
  else
    EF_CALL(ef_cl_amg_apply(a->gamg, a->g_rd, a->g_xd));
  const cl_int rows = (cl_int)(C->n + C->n_ghost);
  EF_CL_SET_ARGS(a->km.pack, EF_CL_ARG(rows), EF_CL_ARG(a->g_pick), EF_CL_ARG(a->g_xd), EF_CL_ARG(xc));
  EF_CALL(amgm_launch(a->ctx, a->km.pack, (size_t)rows, AMGM_WGS));
  amgm_prof_end(a->ctx, PF_GATHERED, p0);
  return EF_SUCCESS;
}

static int amgm_kdots_body(ef_cl_amg_mpi *a, amgm_level *C, cl_mem part, int m, double *d);
static int amgm_kdots(ef_cl_amg_mpi *a, amgm_level *C, cl_mem part, int m, double *d) {
  const double p0 = amgm_prof_begin(a->ctx);
  EF_CALL(amgm_kdots_body(a, C, part, m, d));
  amgm_prof_end(a->ctx, PF_KDOTS, p0);
  return EF_SUCCESS;
}

/* The m partial sums of the last K-cycle kernel (m per group, groups of them, in blocks of groups) summed in
 * group order, then reduced over the ranks (not on the gathered level, whose rows every rank holds). */
static int amgm_kdots_body(ef_cl_amg_mpi *a, amgm_level *C, cl_mem part, int m, double *d) {
  EF_CL_CALL(clEnqueueReadBuffer(a->ctx->queue, part, CL_TRUE, 0, (size_t)(m * C->groups) * 8, a->hpart, 0, NULL,
                                 NULL));
  for (int k = 0; k < m; ++k) d[k] = amgm_sum(a->hpart + (size_t)k * (size_t)C->groups, C->groups);
  return C == &a->gl ? EF_SUCCESS : amgm_reduce(a, d, m); /* the gathered level: every rank has all rows */
}

/* out = s x + t y on level c's owned rows. */
static int amgm_combine(ef_cl_amg_mpi *a, amgm_level *C, double s, cl_mem x, double t, cl_mem y, cl_mem out) {
  EF_CL_SET_ARGS(a->km.combine, EF_CL_ARG(C->n), EF_CL_ARG(s), EF_CL_ARG(x), EF_CL_ARG(t), EF_CL_ARG(y),
                 EF_CL_ARG(out));
  return amgm_launch_p(a->ctx, a->km.combine, (size_t)C->n, AMGM_WGS, PF_KKERNELS);
}

/* Coarse correction on level c for the right-hand side rc into xc (host_amg.c's amg_correction). */
static int amgm_correction(ef_cl_amg_mpi *a, int c, cl_mem rc, cl_mem xc) {
  const ef_amg *h = a->h;
  amgm_level *C = &a->lev[c];
  if (c == h->n_levels - 1) return amgm_coarsest(a, c, rc, xc);
  if (c == a->g) return amgm_gathered(a, c, rc, xc);
  if (h->s.cycle != EF_AMG_CYCLE_K || c > h->s.kcycle_levels) return amgm_cycle(a, c, rc, xc);
  return amgm_kcycle(a, c, C, rc, xc);
}

/* x = M^-1 r for a K-cycle step on level c, x's ghosts current: one cycle and a halo on a distributed level, one
 * cycle of the one-process AMG on the gathered one (a->gl: every rank holds all its rows, no message). */
static int amgm_kinner(ef_cl_amg_mpi *a, int c, amgm_level *C, cl_mem r, cl_mem x) {
  if (C == &a->gl) return ef_cl_amg_apply(a->gamg, r, x);
  EF_CALL(amgm_cycle(a, c, r, x));
  return ef_cl_halo_exchange(C->halo, x);
}

/* Level c's K-cycle (host_amg.c's amg_correction): two flexible CG steps on A_c preconditioned by amgm_kinner, xc
 * from rc; C is level c's distributed rows or, at level g, the gathered ones (a->gl). */
static int amgm_kcycle(ef_cl_amg_mpi *a, int c, amgm_level *C, cl_mem rc, cl_mem xc) {
  const amgm_amg_kernels *K = amgm_k(a, c);
  const size_t items = (size_t)C->groups * AMGM_AMG_WGS;
  EF_CALL(amgm_kinner(a, c, C, rc, C->v1));
  EF_CL_SET_ARGS(K->k_first, EF_CL_ARG(C->n), EF_CL_ARG(C->rp), EF_CL_ARG(C->col), EF_CL_ARG(C->val), EF_CL_ARG(C->v1),
                 EF_CL_ARG(rc), EF_CL_ARG(C->w1), EF_CL_ARG(C->part));
  EF_CALL(amgm_launch_p(a->ctx, K->k_first, items, AMGM_AMG_WGS, PF_KKERNELS));
  double d1[2];
  EF_CALL(amgm_kdots(a, C, C->part, 2, d1));
  const double rho1 = d1[0], a1 = rho1 > 0.0 ? d1[1] / rho1 : 0.0;
  EF_CALL(amgm_combine(a, C, 1.0, rc, -a1, C->w1, C->q));
  EF_CALL(amgm_kinner(a, c, C, C->q, C->v2));
  EF_CL_SET_ARGS(K->k_third, EF_CL_ARG(C->n), EF_CL_ARG(C->rp), EF_CL_ARG(C->col), EF_CL_ARG(C->val), EF_CL_ARG(C->v2),
                 EF_CL_ARG(C->w1), EF_CL_ARG(C->q), EF_CL_ARG(C->w2), EF_CL_ARG(C->part2));
  EF_CALL(amgm_launch_p(a->ctx, K->k_third, items, AMGM_AMG_WGS, PF_KKERNELS));
  double d2[3];
  EF_CALL(amgm_kdots(a, C, C->part2, 3, d2));
  const double gam = d2[0], vw = d2[1], vq = d2[2];
  const double beta = rho1 > 0.0 ? vw - gam * gam / rho1 : 0.0;
  const double a2 = beta > 0.0 ? vq / beta : 0.0, c1 = rho1 > 0.0 ? a1 - gam * a2 / rho1 : 0.0;
  return amgm_combine(a, C, c1, C->v1, a2, C->v2, xc);
}

/* x = omega D^-1 (r - A xin) + xin on level l, xin's ghosts exchanged first. */
static int amgm_sweep(ef_cl_amg_mpi *a, int l, cl_mem r, cl_mem xin, cl_mem xout) {
  amgm_level *L = &a->lev[l];
  const double omega = a->h->s.omega;
  cl_kernel k = amgm_k(a, l)->sweep;
  EF_CALL(ef_cl_halo_exchange(L->halo, xin));
  EF_CL_SET_ARGS(k, EF_CL_ARG(L->n), EF_CL_ARG(L->rp), EF_CL_ARG(L->col), EF_CL_ARG(L->val), EF_CL_ARG(L->dinv),
                 EF_CL_ARG(omega), EF_CL_ARG(r), EF_CL_ARG(xin), EF_CL_ARG(xout));
  const size_t rows = AMGM_AMG_WGS / AMGM_AMG_ROW_LANES;
  return amgm_launch_p(a->ctx, k, ((size_t)L->n + rows - 1) / rows * AMGM_AMG_WGS, AMGM_AMG_WGS, PF_CYCLE);
}

/* One cycle on level l (host_amg.c's amg_cycle: the same exchanges). */
static int amgm_cycle(ef_cl_amg_mpi *a, int l, cl_mem r, cl_mem x) {
  amgm_level *L = &a->lev[l], *C = &a->lev[l + 1];
  const amgm_amg_kernels *K = amgm_k(a, l);
  const int nu = a->h->s.sweeps;
  const double omega = a->h->s.omega, alpha = a->h->s.alpha;
  const size_t rows = AMGM_AMG_WGS / AMGM_AMG_ROW_LANES, row_items = ((size_t)L->n + rows - 1) / rows * AMGM_AMG_WGS;
  cl_mem buf[2] = {x, L->t};
  cl_mem cur = buf[(2 * nu - 1) & 1];
  EF_CL_SET_ARGS(K->smooth0, EF_CL_ARG(L->n), EF_CL_ARG(omega), EF_CL_ARG(L->dinv), EF_CL_ARG(r), EF_CL_ARG(cur));
  EF_CALL(amgm_launch_p(a->ctx, K->smooth0, (size_t)L->n, AMGM_AMG_WGS, PF_CYCLE));
  for (int s = 2; s <= nu; ++s) {
    cl_mem next = buf[(2 * nu - s) & 1];
    EF_CALL(amgm_sweep(a, l, r, cur, next));
    cur = next;
  }
  EF_CALL(ef_cl_halo_exchange(L->halo, cur)); /* the residual's and the post-smoothing's ghost columns */
  EF_CL_SET_ARGS(K->resid, EF_CL_ARG(L->n), EF_CL_ARG(L->rp), EF_CL_ARG(L->col), EF_CL_ARG(L->val), EF_CL_ARG(r),
                 EF_CL_ARG(cur), EF_CL_ARG(L->w2));
  EF_CALL(amgm_launch_p(a->ctx, K->resid, row_items, AMGM_AMG_WGS, PF_CYCLE));
  EF_CL_SET_ARGS(K->restr, EF_CL_ARG(C->n), EF_CL_ARG(L->mp), EF_CL_ARG(L->mem), EF_CL_ARG(L->w2), EF_CL_ARG(C->r));
  EF_CALL(amgm_launch_p(a->ctx, K->restr, (size_t)C->n, AMGM_AMG_WGS, PF_CYCLE));
  EF_CALL(amgm_correction(a, l + 1, C->r, C->x));
  if (l + 2 < a->h->n_levels && l + 1 != a->g) /* the gathered solves write their ghosts */
    EF_CALL(ef_cl_halo_exchange(C->halo, C->x));
  cl_mem next = buf[(nu - 1) & 1];
  EF_CL_SET_ARGS(K->post, EF_CL_ARG(L->n), EF_CL_ARG(L->rp), EF_CL_ARG(L->col), EF_CL_ARG(L->val), EF_CL_ARG(L->dinv),
                 EF_CL_ARG(omega), EF_CL_ARG(alpha), EF_CL_ARG(L->agg), EF_CL_ARG(C->x), EF_CL_ARG(r), EF_CL_ARG(cur),
                 EF_CL_ARG(next));
  EF_CALL(amgm_launch_p(a->ctx, K->post, row_items, AMGM_AMG_WGS, PF_CYCLE));
  cur = next;
  for (int s = nu + 2; s <= 2 * nu; ++s) {
    next = buf[(2 * nu - s) & 1];
    EF_CALL(amgm_sweep(a, l, r, cur, next));
    cur = next;
  }
  return EF_SUCCESS;
}

int ef_cl_amg_mpi_apply(ef_cl_amg_mpi *a, cl_mem r, cl_mem z) {
  EF_CHECK(a && r && z && r != z, EF_ERR_PARAMETER, "ef_cl_amg_mpi_apply: bad arguments");
  a->h->err = EF_SUCCESS;
  if (a->h->n_levels == 1) return amgm_coarsest(a, 0, r, z);
  return amgm_cycle(a, 0, r, z);
}

const ef_amg *ef_cl_amg_mpi_host(const ef_cl_amg_mpi *a) { return a ? a->h : NULL; }

double ef_cl_amg_mpi_exchange_seconds(const ef_cl_amg_mpi *a) {
  if (!a) return 0.0;
  double s = a->seconds_reduce;
  for (int l = 0; l < a->h->n_levels; ++l) s += ef_cl_halo_seconds(a->lev[l].halo);
  return s;
}

/* ---------------------------------------------------------------------------
 * The (F)CG across ranks: pcg.cl's init, dot, product and residual kernels, amg_mpi.cl's direction and update
 * with the scalars reduced on the host. */

struct ef_cl_pcg_mpi_s {
  ef_cl_context *ctx;
  ef_cl_csr A;
  ef_comm comm;
  cl_int n, groups;
  int64_t n_ghost, n_global;
  ef_cl_pcg_settings s;
  ef_cl_precond_fn precond;
  void *pctx;
  ef_cl_halo *halo;
  cl_program program;
  cl_kernel init, dot, spmv, residual;
  amgm_kernels km;
  cl_mem r, z, p, q, rold, part, part_pq, part_rr, part_bb, state;
  double *hpart;
  double seconds_reduce;
};

void ef_cl_pcg_mpi_destroy(ef_cl_pcg_mpi **cp) {
  if (!cp || !*cp) return;
  ef_cl_pcg_mpi *c = *cp;
  if (amgm_prof.on > 0) {
    fprintf(stderr, "AMG across ranks, profile of rank %d (s, calls):", ef_comm_rank(c->comm));
    for (int i = 0; i < PF_N; ++i) fprintf(stderr, " %s %.4f/%ld;", amgm_prof_names[i], amgm_prof.t[i], amgm_prof.n[i]);
    fprintf(stderr, "\n");
  }
  cl_kernel ks[] = {c->init, c->dot, c->spmv, c->residual};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i)
    if (ks[i]) clReleaseKernel(ks[i]);
  cl_mem *ms[] = {&c->r, &c->z, &c->p, &c->q, &c->rold, &c->part, &c->part_pq, &c->part_rr, &c->part_bb, &c->state};
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; ++i) ef_cl_buffer_release(ms[i]);
  if (c->program) clReleaseProgram(c->program);
  amgm_kernels_release(&c->km);
  ef_cl_halo_destroy(&c->halo);
  free(c->hpart);
  free(c);
  *cp = NULL;
}

int ef_cl_pcg_mpi_create(ef_cl_context *ctx, const ef_cl_csr *A, const ef_host_dist *d, int64_t n_ghost,
                         int64_t n_global, const ef_cl_pcg_settings *s, ef_cl_precond_fn precond, void *pctx,
                         ef_cl_pcg_mpi **out) {
  EF_CHECK(ctx && A && d && s && precond && out && n_global > 0, EF_ERR_PARAMETER,
           "ef_cl_pcg_mpi_create: bad arguments");
  EF_CHECK(s->rtol >= 0.0 && s->max_iterations >= 0, EF_ERR_PARAMETER, "device PCG across ranks: bad settings");
  *out = NULL;
  ef_cl_pcg_mpi *c = calloc(1, sizeof *c);
  EF_CHECK(c, EF_ERR_MEMORY, "out of memory");
  int err = EF_SUCCESS;
  c->ctx = ctx;
  c->A = *A;
  c->comm = ef_host_dist_comm(d);
  c->n = (cl_int)A->n;
  c->n_ghost = n_ghost;
  c->n_global = n_global;
  c->s = *s;
  c->precond = precond;
  c->pctx = pctx;
  int64_t g = (A->n + AMGM_WGS - 1) / AMGM_WGS, cap = (int64_t)(ctx->compute_units ? ctx->compute_units : 1) * 8;
  if (cap > AMGM_PCG_MAX_GROUPS) cap = AMGM_PCG_MAX_GROUPS;
  c->groups = (cl_int)(g < 1 ? 1 : g > cap ? cap : g);
  char options[96];
  snprintf(options, sizeof options, "-D PCG_WGS=%d -D PCG_ROW_LANES=4%s", AMGM_WGS,
           A->row_ptr_64 ? " -D EF_ROW_PTR_64" : "");
  EF_CALL_GOTO(ef_cl_program_get(ctx, "pcg.cl", options, &c->program), fail);
  EF_CALL_GOTO(ef_cl_kernel_create(c->program, "pcg_init", &c->init), fail);
  EF_CALL_GOTO(ef_cl_kernel_create(c->program, "pcg_dot", &c->dot), fail);
  EF_CALL_GOTO(ef_cl_kernel_create(c->program, "pcg_spmv", &c->spmv), fail);
  EF_CALL_GOTO(ef_cl_kernel_create(c->program, "pcg_residual", &c->residual), fail);
  EF_CALL_GOTO(amgm_kernels_build(ctx, &c->km), fail);
  EF_CALL_GOTO(ef_cl_halo_create(ctx, d, &c->halo), fail);
  const size_t vb = (size_t)(A->n + n_ghost) * 8, pb = (size_t)c->groups * 8;
  cl_mem *vecs[] = {&c->r, &c->z, &c->p, &c->q, &c->rold};
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; ++i) EF_CALL_GOTO(amgm_buffer(ctx, vb, NULL, vecs[i]), fail);
  EF_CALL_GOTO(amgm_buffer(ctx, 5 * pb, NULL, &c->part), fail);
  EF_CALL_GOTO(amgm_buffer(ctx, pb, NULL, &c->part_pq), fail);
  EF_CALL_GOTO(amgm_buffer(ctx, pb, NULL, &c->part_rr), fail);
  EF_CALL_GOTO(amgm_buffer(ctx, pb, NULL, &c->part_bb), fail);
  EF_CALL_GOTO(amgm_buffer(ctx, 12 * 8, NULL, &c->state), fail);
  c->hpart = malloc(5 * pb);
  EF_CHECK_GOTO(c->hpart, EF_ERR_MEMORY, fail, "out of memory");
  *out = c;
  return EF_SUCCESS;
fail:
  ef_cl_pcg_mpi_destroy(&c);
  return err;
}

/* m blocks of the group partials in buf (groups each) summed in group order into d[0..m). */
static int pcgm_partials(ef_cl_pcg_mpi *c, cl_mem buf, int m, double *d) {
  EF_CL_CALL(clEnqueueReadBuffer(c->ctx->queue, buf, CL_TRUE, 0, (size_t)m * (size_t)c->groups * 8, c->hpart, 0, NULL,
                                 NULL));
  for (int k = 0; k < m; ++k) d[k] = amgm_sum(c->hpart + (size_t)k * (size_t)c->groups, c->groups);
  return EF_SUCCESS;
}

static int pcgm_reduce(ef_cl_pcg_mpi *c, double *v, int n) {
  const double t0 = ef_wtime();
  const int err = ef_comm_allreduce(c->comm, v, n, EF_COMM_SUM);
  c->seconds_reduce += ef_wtime() - t0;
  return err;
}

static int pcgm_launch(ef_cl_pcg_mpi *c, cl_kernel k) {
  return amgm_launch(c->ctx, k, (size_t)c->groups * AMGM_WGS, AMGM_WGS);
}

int ef_cl_pcg_mpi_solve(ef_cl_pcg_mpi *c, cl_mem b, cl_mem x, ef_cl_pcg_result *res) {
  EF_CHECK(c && b && x, EF_ERR_PARAMETER, "ef_cl_pcg_mpi_solve: NULL argument");
  ef_cl_pcg_result local;
  if (!res) res = &local;
  memset(res, 0, sizeof *res);
  const double t0 = ef_wtime();
  const ef_cl_csr *A = &c->A;
  const int flexible = c->s.flexible;
  const cl_int zero = 0;
  /* r = r_old = b - A x; ||b||^2 and ||r||^2 over the ranks in one reduction. */
  EF_CALL(ef_cl_halo_exchange(c->halo, x));
  EF_CL_SET_ARGS(c->init, EF_CL_ARG(c->n), EF_CL_ARG(A->row_ptr), EF_CL_ARG(A->col_idx), EF_CL_ARG(A->values),
                 EF_CL_ARG(b), EF_CL_ARG(x), EF_CL_ARG(c->r), EF_CL_ARG(c->rold), EF_CL_ARG(c->part_bb),
                 EF_CL_ARG(c->part_rr), EF_CL_ARG(c->state));
  EF_CALL(pcgm_launch(c, c->init));
  double s0[2];
  EF_CALL(pcgm_partials(c, c->part_bb, 1, s0));
  EF_CALL(pcgm_partials(c, c->part_rr, 1, s0 + 1));
  EF_CALL(pcgm_reduce(c, s0, 2));
  const double bb = s0[0], tol2 = c->s.rtol * c->s.rtol * bb;
  double rr = s0[1], rho_prev = 0.0;
  int k = 0;
  while (rr > tol2 && k < c->s.max_iterations) {
    double p0 = amgm_prof_begin(c->ctx);
    EF_CALL(c->precond(c->pctx, c->r, c->z));
    amgm_prof_end(c->ctx, PF_PRECOND, p0);
    p0 = amgm_prof_begin(c->ctx);
    /* r.z, r_old.z, sum z, sum r, sum r_old: one reduction (pcg.cl's pcg_dot). */
    EF_CL_SET_ARGS(c->dot, EF_CL_ARG(c->n), EF_CL_ARG(c->r), EF_CL_ARG(c->z), EF_CL_ARG(c->rold), EF_CL_ARG(flexible),
                   EF_CL_ARG(c->part));
    EF_CALL(pcgm_launch(c, c->dot));
    double d[5];
    EF_CALL(pcgm_partials(c, c->part, 5, d));
    EF_CALL(pcgm_reduce(c, d, 5));
    amgm_prof_end(c->ctx, PF_DOT, p0);
    const double m = c->s.null_space ? d[2] / (double)c->n_global : 0.0;
    const double rho = d[0] - m * d[3], rho_old_term = flexible ? d[1] - m * d[4] : 0.0;
    const double beta = k == 0 ? 0.0 : (rho - rho_old_term) / rho_prev;
    const cl_int first = k == 0;
    EF_CL_SET_ARGS(c->km.direction, EF_CL_ARG(c->n), EF_CL_ARG(c->z), EF_CL_ARG(c->p), EF_CL_ARG(m), EF_CL_ARG(beta),
                   EF_CL_ARG(first));
    EF_CALL(amgm_launch(c->ctx, c->km.direction, (size_t)c->n, AMGM_WGS));
    /* q = A p (p's ghosts first), p.q over the ranks. */
    p0 = amgm_prof_begin(c->ctx);
    EF_CALL(ef_cl_halo_exchange(c->halo, c->p));
    EF_CL_SET_ARGS(c->spmv, EF_CL_ARG(c->n), EF_CL_ARG(A->row_ptr), EF_CL_ARG(A->col_idx), EF_CL_ARG(A->values),
                   EF_CL_ARG(c->p), EF_CL_ARG(c->q), EF_CL_ARG(c->part_pq), EF_CL_ARG(zero), EF_CL_ARG(c->state));
    EF_CALL(pcgm_launch(c, c->spmv));
    double pq;
    EF_CALL(pcgm_partials(c, c->part_pq, 1, &pq));
    EF_CALL(pcgm_reduce(c, &pq, 1));
    amgm_prof_end(c->ctx, PF_SPMV, p0);
    EF_CHECK(pq > 0.0 && isfinite(pq), EF_ERR_SOLVER,
             "device PCG across ranks broke down at iteration %d: p.Ap = %g (matrix or preconditioner not SPD)", k,
             pq);
    const double alpha = rho / pq;
    EF_CL_SET_ARGS(c->km.update, EF_CL_ARG(c->n), EF_CL_ARG(alpha), EF_CL_ARG(c->p), EF_CL_ARG(c->q), EF_CL_ARG(x),
                   EF_CL_ARG(c->r), EF_CL_ARG(c->rold), EF_CL_ARG(flexible), EF_CL_ARG(c->part_rr));
    p0 = amgm_prof_begin(c->ctx);
    EF_CALL(pcgm_launch(c, c->km.update));
    EF_CALL(pcgm_partials(c, c->part_rr, 1, &rr));
    EF_CALL(pcgm_reduce(c, &rr, 1));
    amgm_prof_end(c->ctx, PF_UPDATE, p0);
    rho_prev = rho;
    ++k;
  }
  res->iterations = k;
  res->converged = rr <= tol2;
  res->relres = bb > 0.0 ? sqrt(rr / bb) : 0.0;
  /* The true residual ||b - A x|| / ||b|| over the ranks. */
  EF_CALL(ef_cl_halo_exchange(c->halo, x));
  EF_CL_SET_ARGS(c->residual, EF_CL_ARG(c->n), EF_CL_ARG(A->row_ptr), EF_CL_ARG(A->col_idx), EF_CL_ARG(A->values),
                 EF_CL_ARG(b), EF_CL_ARG(x), EF_CL_ARG(c->part_pq), EF_CL_ARG(c->part_bb));
  EF_CALL(pcgm_launch(c, c->residual));
  double t[2];
  EF_CALL(pcgm_partials(c, c->part_pq, 1, t));
  EF_CALL(pcgm_partials(c, c->part_bb, 1, t + 1));
  EF_CALL(pcgm_reduce(c, t, 2));
  res->true_relres = t[1] > 0.0 ? sqrt(t[0] / t[1]) : 0.0;
  res->seconds = ef_wtime() - t0;
  if (amgm_prof.on > 0) amgm_prof.t[PF_SOLVE] += res->seconds, amgm_prof.n[PF_SOLVE]++;
  return EF_SUCCESS;
}

double ef_cl_pcg_mpi_exchange_seconds(const ef_cl_pcg_mpi *c) {
  return c ? c->seconds_reduce + ef_cl_halo_seconds(c->halo) : 0.0;
}
