/* opencl_fs_mpi.c -- the device fractional step on a rank's piece (opencl_fs_mpi.h), in the order of
 * ef_cl_fs_step's explicit branch and with the exchanges of fractional_step_mpi.c. */
#include "opencl_fs_mpi.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"
#include "opencl_fs_mpi_view.h"
#include "stage_cg.h"

#define FSM_SOURCE "fs_mpi.cl"
#define FSM_TAG 7300

struct ef_cl_fs_mpi_s {
  ef_cl_fs *fs;
  ef_cl_fs_mpi_view_s v;
  ef_comm comm;
  const ef_partition *p;
  int64_t n, n_owned, n_global, n_send, n_fixed_owned;
  double rtol;
  int max_it;
  int fixed_it; /* > 0: every pressure solve runs exactly this many iterations (scaling benchmarks) */
  size_t wgs, groups; /* the CG kernels' work-groups over the owned rows, one row an item (fsm_cg_start) */
  /* The CG product (fsm_cg_spmv_dots*): lanes work-items a row (FSM_LANES), at most group_cap work-groups a
   * launch striding over the rows (so few partials), groups_owned of them over the owned rows. */
  int lanes;
  size_t group_cap, groups_owned;
  /* The overlap of the CG product with its halo (docs/mpi.md): the owned rows split into interior rows (no
   * ghost column in H) and boundary rows, a second queue for the read of the packed send list. */
  int overlap;
  int64_t n_interior, n_boundary;
  size_t groups_interior, groups_boundary;
  cl_command_queue copy_queue;
  cl_event ghost_write; /* the last non-blocking write of a ghost block (h_recv is not refilled before it is done) */
  cl_program program;
  cl_kernel k_pack, k_start, k_spmv, k_spmv_rows, k_update, k_zero;
  cl_mem send_nodes, send_dev, r, u, w, pv, sv, dinv, cg_part, rows_interior, rows_boundary;
  cl_mem pin_send, pin_recv, pin_part; /* pinned host twins: send list, ghost block, CG partials */
  double *h_send, *h_recv, *h_part;
  double **send_ptr, **recv_ptr;
  int64_t *send_count, *recv_count;
  double seconds_exchange;
  int started; /* the first time step met every rank (an untimed barrier) */
  /* The implicit viscosity (v.s->fs.viscous_implicit): the stage CG's update kernel, its s = A p (3 a node), the
   * partial sums of its start and product (3 a group) and their pinned host twin; with the overlap, where each
   * row block's rows start in rows_interior and rows_boundary (n_blocks + 1 each); the figures of the step. */
  int implicit;
  int64_t *block_interior, *block_boundary;
  cl_kernel k_visc_update;
  cl_mem vs, vpart, pin_vpart;
  double *h_vpart;
  int v_iterations, v_max_iterations;
  double v_residual, v_seconds;
  ef_cl_fs_mpi_pressure_fn psolve; /* a pressure solver set by the caller (the device AMG's (F)CG), else fsm_cg */
  void *psolve_ctx;
};

/* ---------------------------------------------------------------------------
 * Helpers. */

static void fsm_release(cl_mem *m) {
  if (*m) clReleaseMemObject(*m);
  *m = NULL;
}

/* A device buffer of bytes, copied from host or zeroed (a copied zero block: p and s of the CG's first update
 * are read times beta = 0). */
static int fsm_buffer(ef_cl_fs_mpi *m, size_t bytes, const void *host, cl_mem *out) {
  cl_int st;
  void *zero = host ? NULL : calloc(bytes ? bytes : 8, 1);
  EF_CHECK(host || zero, EF_ERR_MEMORY, "out of memory");
  *out = clCreateBuffer(m->v.ctx->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes ? bytes : 8,
                        host ? (void *)host : zero, &st);
  free(zero);
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clCreateBuffer (%zu bytes) failed: %s (%d)", bytes,
           ef_cl_error_name(st), (int)st);
  return EF_SUCCESS;
}

/* A pinned host buffer mapped for the executor's life. */
static int fsm_pinned(ef_cl_fs_mpi *m, size_t bytes, cl_mem *buf, double **host) {
  cl_int st;
  *buf = clCreateBuffer(m->v.ctx->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes ? bytes : 8, NULL, &st);
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clCreateBuffer (pinned, %zu bytes) failed: %s (%d)", bytes,
           ef_cl_error_name(st), (int)st);
  *host = clEnqueueMapBuffer(m->v.ctx->queue, *buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes ? bytes : 8, 0,
                             NULL, NULL, &st);
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clEnqueueMapBuffer (pinned) failed: %s (%d)", ef_cl_error_name(st),
           (int)st);
  return EF_SUCCESS;
}

static void fsm_pinned_release(ef_cl_fs_mpi *m, cl_mem *buf, double **host) {
  if (*buf && *host) clEnqueueUnmapMemObject(m->v.ctx->queue, *buf, *host, 0, NULL, NULL);
  *host = NULL;
  fsm_release(buf);
}

static int fsm_launch(ef_cl_fs_mpi *m, cl_kernel k, int64_t items) {
  const size_t global = (size_t)((items + (int64_t)m->wgs - 1) / (int64_t)m->wgs) * m->wgs;
  if (global == 0) return EF_SUCCESS;
  EF_CL_CALL(clEnqueueNDRangeKernel(m->v.ctx->queue, k, 1, NULL, &global, &m->wgs, 0, NULL, NULL));
  return EF_SUCCESS;
}

/* The CG product's work-groups over rows rows: one a block of wgs / lanes rows, at most group_cap. */
static size_t fsm_product_groups(const ef_cl_fs_mpi *m, int64_t rows) {
  const int64_t per = (int64_t)m->wgs / m->lanes, blocks = (rows + per - 1) / per;
  return (size_t)blocks < m->group_cap ? (size_t)blocks : m->group_cap;
}

/* A CG product kernel (its arguments set) on groups work-groups. */
static int fsm_launch_groups(ef_cl_fs_mpi *m, cl_kernel k, size_t groups) {
  const size_t global = groups * m->wgs;
  if (global == 0) return EF_SUCCESS;
  EF_CL_CALL(clEnqueueNDRangeKernel(m->v.ctx->queue, k, 1, NULL, &global, &m->wgs, 0, NULL, NULL));
  return EF_SUCCESS;
}

/* The CG product's shape (docs/mpi.md), each overridable from the environment for benchmarks and tests:
 * work-items a row, EDGEFLOW_MPI_CG_LANES (a power of two from 1 to the work-group size), else 4: the one-process
 * tuner's usual choice for the 3D pressure matrix (about 15 entries a row; 4 lanes on H200 at 10M rows,
 * benchmarks/results/cg_unroll_H200_20261121.log) and the stage operator's FS_VISC_LANES; at most
 * EDGEFLOW_MPI_CG_GROUPS work-groups a launch, else compute units x 16 (the one-process tuner's largest grid,
 * which it picks for 3D matrices of millions of rows: 2112 groups on 132 compute units). */
static int fsm_product_shape(const ef_cl_context *ctx, size_t wgs, int *lanes, size_t *group_cap) {
  const char *env = getenv("EDGEFLOW_MPI_CG_LANES");
  *lanes = wgs < 4 ? (int)wgs : 4;
  if (env && *env) {
    char *end = NULL;
    const long v = strtol(env, &end, 10);
    EF_CHECK(*end == '\0' && v >= 1 && (size_t)v <= wgs && (v & (v - 1)) == 0, EF_ERR_PARAMETER,
             "EDGEFLOW_MPI_CG_LANES='%s': expected a power of two from 1 to %zu (the work-group size)", env, wgs);
    *lanes = (int)v;
  }
  env = getenv("EDGEFLOW_MPI_CG_GROUPS");
  *group_cap = (size_t)(ctx->compute_units ? ctx->compute_units : 1) * 16;
  if (env && *env) {
    char *end = NULL;
    const long v = strtol(env, &end, 10);
    EF_CHECK(*end == '\0' && v >= 1 && v <= INT_MAX, EF_ERR_PARAMETER,
             "EDGEFLOW_MPI_CG_GROUPS='%s': expected a positive number of work-groups", env);
    *group_cap = (size_t)v;
  }
  return EF_SUCCESS;
}

static int fsm_reduce(ef_cl_fs_mpi *m, double *v, int n, ef_comm_op op) {
  const double t0 = ef_wtime();
  int err = ef_comm_allreduce(m->comm, v, n, op);
  m->seconds_exchange += ef_wtime() - t0;
  return err;
}

/* The host part of a halo of x (nc doubles a node) whose send lists are in h_send: the nonblocking exchange
 * into h_recv, then the ghost block (contiguous: n_owned..n-1) written back on the main queue without blocking
 * (later commands on that queue see the ghosts; the host does not wait for the copy).  h_recv is refilled only
 * after that write is done: the next exchange waits for its event first (normally done already: the send list's
 * read follows it on the in-order queue). */
static int fsm_exchange_write(ef_cl_fs_mpi *m, cl_mem x, int nc) {
  const ef_partition *p = m->p;
  if (m->ghost_write) {
    const cl_int ws = clWaitForEvents(1, &m->ghost_write);
    clReleaseEvent(m->ghost_write);
    m->ghost_write = NULL;
    EF_CL_CALL(ws);
  }
  for (int k = 0; k < p->n_neighbours; ++k) {
    m->send_ptr[k] = m->h_send + p->send_offsets[k] * nc;
    m->send_count[k] = (p->send_offsets[k + 1] - p->send_offsets[k]) * nc;
    m->recv_ptr[k] = m->h_recv + p->recv_offsets[k] * nc;
    m->recv_count[k] = (p->recv_offsets[k + 1] - p->recv_offsets[k]) * nc;
  }
  void *pending = NULL;
  EF_CALL(ef_comm_exchange_begin(m->comm, p->n_neighbours, p->neighbours, m->send_ptr, m->send_count, m->recv_ptr,
                                 m->recv_count, FSM_TAG + nc, &pending));
  EF_CALL(ef_comm_exchange_end(m->comm, pending));
  const int64_t ghosts = m->n - m->n_owned;
  if (ghosts > 0)
    EF_CL_CALL(clEnqueueWriteBuffer(m->v.ctx->queue, x, CL_FALSE, (size_t)(m->n_owned * nc) * 8,
                                    (size_t)(ghosts * nc) * 8, m->h_recv, 0, NULL, &m->ghost_write));
  return EF_SUCCESS;
}

/* The ghosts of x (nc doubles a node) from their owners: the send lists packed on the device and read into
 * pinned memory (the one wait), the nonblocking exchange, the ghost block (contiguous: n_owned..n-1) written
 * back on the main queue (not waited for). */
static int fsm_halo(ef_cl_fs_mpi *m, cl_mem x, int nc) {
  const double t0 = ef_wtime();
  cl_command_queue q = m->v.ctx->queue;
  const int cnt = (int)m->n_send;
  if (cnt > 0) {
    EF_CL_SET_ARGS(m->k_pack, EF_CL_ARG(cnt), EF_CL_ARG(nc), EF_CL_ARG(m->send_nodes), EF_CL_ARG(x),
                   EF_CL_ARG(m->send_dev));
    EF_CALL(fsm_launch(m, m->k_pack, cnt));
    EF_CL_CALL(clEnqueueReadBuffer(q, m->send_dev, CL_TRUE, 0, (size_t)cnt * nc * 8, m->h_send, 0, NULL, NULL));
  } /* nothing to send: no wait (the ghosts' write follows x's kernels on the in-order queue) */
  EF_CALL(fsm_exchange_write(m, x, nc));
  m->seconds_exchange += ef_wtime() - t0;
  return EF_SUCCESS;
}

/* The overlapped halo of x (nc doubles a node), first half: the send lists packed on the main queue and their
 * read into pinned memory started on the copy queue (*read: its event, NULL when there is nothing to send); the
 * caller enqueues work that reads no ghost of x and flushes the main queue. */
static int fsm_halo_begin(ef_cl_fs_mpi *m, cl_mem x, int nc, cl_event *read) {
  const double t0 = ef_wtime();
  const int cnt = (int)m->n_send;
  *read = NULL;
  if (cnt > 0) {
    cl_event packed = NULL;
    const size_t global = (size_t)((cnt + (int64_t)m->wgs - 1) / (int64_t)m->wgs) * m->wgs;
    EF_CL_SET_ARGS(m->k_pack, EF_CL_ARG(cnt), EF_CL_ARG(nc), EF_CL_ARG(m->send_nodes), EF_CL_ARG(x),
                   EF_CL_ARG(m->send_dev));
    EF_CL_CALL(clEnqueueNDRangeKernel(m->v.ctx->queue, m->k_pack, 1, NULL, &global, &m->wgs, 0, NULL, &packed));
    cl_int st = clEnqueueReadBuffer(m->copy_queue, m->send_dev, CL_FALSE, 0, (size_t)cnt * nc * 8, m->h_send, 1,
                                    &packed, read);
    clReleaseEvent(packed);
    EF_CL_CALL(st);
    EF_CL_CALL(clFlush(m->v.ctx->queue)); /* the pack submitted before the copy queue waits on it */
    EF_CL_CALL(clFlush(m->copy_queue));
  }
  m->seconds_exchange += ef_wtime() - t0;
  return EF_SUCCESS;
}

/* Second half: wait for the read, the nonblocking exchange, the ghost block written back on the main queue
 * (after the work enqueued since fsm_halo_begin, not blocking: later kernels on that queue see the ghosts). */
static int fsm_halo_end(ef_cl_fs_mpi *m, cl_mem x, int nc, cl_event read) {
  const double t0 = ef_wtime();
  if (read) {
    cl_int st = clWaitForEvents(1, &read);
    clReleaseEvent(read);
    EF_CL_CALL(st);
  }
  EF_CALL(fsm_exchange_write(m, x, nc));
  m->seconds_exchange += ef_wtime() - t0;
  return EF_SUCCESS;
}

/* The CG partials of the last kernels' first groups groups into two sums (group order). */
static int fsm_partials_n(ef_cl_fs_mpi *m, size_t groups, double sums[2]) {
  EF_CL_CALL(clEnqueueReadBuffer(m->v.ctx->queue, m->cg_part, CL_TRUE, 0, groups * 16, m->h_part, 0, NULL, NULL));
  double a = 0.0, b = 0.0;
  for (size_t g = 0; g < groups; ++g) {
    a += m->h_part[2 * g];
    b += m->h_part[2 * g + 1];
  }
  sums[0] = a;
  sums[1] = b;
  return EF_SUCCESS;
}

static int fsm_partials(ef_cl_fs_mpi *m, double sums[2]) { return fsm_partials_n(m, m->groups, sums); }

/* After the interior rows' launch (err its result) with the halo's read in flight: flush, so the interior
 * product runs while the host waits for the read; on an error the read finishes before the error goes up. */
static int fsm_interior_launched(ef_cl_fs_mpi *m, int err, cl_event read) {
  if (!err) {
    const cl_int st = clFlush(m->v.ctx->queue);
    if (st != CL_SUCCESS) err = EF_ERROR(EF_ERR_OPENCL, "clFlush failed: %s (%d)", ef_cl_error_name(st), (int)st);
  }
  if (err && read) {
    clWaitForEvents(1, &read);
    clReleaseEvent(read);
  }
  return err;
}

/* The CG product w = H u on the owned rows with u's ghosts received first, and the partial sums of r.u and w.u
 * over this rank.  Without the overlap: the halo, then one kernel over the owned rows.  With it: the halo
 * started, the interior rows' product while it is in flight, the ghosts written, the boundary rows' product
 * (the partials summed in another order: the same sums within rounding).  The host waits twice: for the send
 * list's read (with the overlap while the interior rows' product runs) and for the partials, which the
 * MPI_Allreduce of the iteration needs; the ghosts' write is not waited for. */
static int fsm_product(ef_cl_fs_mpi *m, double sums[2]) {
  if (!m->overlap) {
    EF_CALL(fsm_halo(m, m->u, 1));
    EF_CALL(fsm_launch_groups(m, m->k_spmv, m->groups_owned)); /* its arguments are set once, in fsm_cg */
    return fsm_partials_n(m, m->groups_owned, sums);
  }
  const ef_cl_csr *H = m->v.H;
  const cl_int ni = (cl_int)m->n_interior, nb = (cl_int)m->n_boundary, g0 = 0, g1 = (cl_int)m->groups_interior;
  if (ni > 0)
    EF_CL_SET_ARGS(m->k_spmv_rows, EF_CL_ARG(ni), EF_CL_ARG(m->rows_interior), EF_CL_ARG(g0), EF_CL_ARG(H->row_ptr),
                   EF_CL_ARG(H->col_idx), EF_CL_ARG(H->values), EF_CL_ARG(m->r), EF_CL_ARG(m->u), EF_CL_ARG(m->w),
                   EF_CL_ARG(m->cg_part));
  cl_event read = NULL;
  EF_CALL(fsm_halo_begin(m, m->u, 1, &read));
  int err = ni > 0 ? fsm_launch_groups(m, m->k_spmv_rows, m->groups_interior) : EF_SUCCESS;
  EF_CALL(fsm_interior_launched(m, err, read));
  EF_CALL(fsm_halo_end(m, m->u, 1, read));
  if (nb > 0) {
    EF_CL_SET_ARGS(m->k_spmv_rows, EF_CL_ARG(nb), EF_CL_ARG(m->rows_boundary), EF_CL_ARG(g1), EF_CL_ARG(H->row_ptr),
                   EF_CL_ARG(H->col_idx), EF_CL_ARG(H->values), EF_CL_ARG(m->r), EF_CL_ARG(m->u), EF_CL_ARG(m->w),
                   EF_CL_ARG(m->cg_part));
    EF_CALL(fsm_launch_groups(m, m->k_spmv_rows, m->groups_boundary));
  }
  return fsm_partials_n(m, m->groups_interior + m->groups_boundary, sums);
}

/* ---------------------------------------------------------------------------
 * Creation. */

void ef_cl_fs_mpi_destroy(ef_cl_fs_mpi **pm) {
  if (!pm || !*pm) return;
  ef_cl_fs_mpi *m = *pm;
  if (m->v.ctx) {
    fsm_pinned_release(m, &m->pin_send, &m->h_send);
    fsm_pinned_release(m, &m->pin_recv, &m->h_recv);
    fsm_pinned_release(m, &m->pin_part, &m->h_part);
    fsm_pinned_release(m, &m->pin_vpart, &m->h_vpart);
  }
  if (m->ghost_write) clReleaseEvent(m->ghost_write);
  cl_mem *all[] = {&m->send_nodes, &m->send_dev, &m->r,    &m->u,       &m->w,           &m->pv,
                   &m->sv,         &m->dinv,     &m->cg_part, &m->rows_interior, &m->rows_boundary,
                   &m->vs,         &m->vpart};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) fsm_release(all[i]);
  cl_kernel ks[] = {m->k_pack, m->k_start, m->k_spmv, m->k_spmv_rows, m->k_update, m->k_zero, m->k_visc_update};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i)
    if (ks[i]) clReleaseKernel(ks[i]);
  if (m->program) clReleaseProgram(m->program);
  if (m->copy_queue) clReleaseCommandQueue(m->copy_queue);
  free(m->block_interior);
  free(m->block_boundary);
  free(m->send_ptr);
  free(m->recv_ptr);
  free(m->send_count);
  free(m->recv_count);
  free(m);
  *pm = NULL;
}

int ef_cl_fs_mpi_create(ef_cl_fs *fs, ef_comm comm, const ef_partition *p, double rtol, int max_it, int overlap,
                        ef_cl_fs_mpi **out) {
  EF_CHECK(fs && p && out, EF_ERR_PARAMETER, "ef_cl_fs_mpi_create: NULL argument");
  *out = NULL;
  ef_cl_fs_mpi *m = calloc(1, sizeof *m);
  EF_CHECK(m, EF_ERR_MEMORY, "out of memory");
  int err = EF_SUCCESS;
  m->fs = fs;
  m->comm = comm;
  m->p = p;
  m->rtol = rtol;
  m->max_it = max_it;
  m->n_owned = p->n_owned;
  m->n_global = p->n_global_nodes;
  EF_CALL_GOTO(ef_cl_fs_mpi_view(fs, p->n_owned, &m->v), fail);
  const ef_fs_settings *fss = &m->v.s->fs;
  EF_CHECK_GOTO(!fss->viscous_implicit ||
                    (fss->viscous_correction == 0 && fss->viscous_pressure == 0 && fss->viscous_projection == 0),
                EF_ERR_UNSUPPORTED, fail, EF_CL_FS_MPI_IMPLICIT_REFUSAL);
  m->implicit = fss->viscous_implicit != 0;
  m->n = m->v.n;
  EF_CHECK_GOTO(m->n == p->n_nodes, EF_ERR_PARAMETER, fail, "distributed device step: %lld nodes but a piece of %lld",
                (long long)m->n, (long long)p->n_nodes);
  m->wgs = m->v.wgs;
  m->groups = (size_t)((m->n_owned + (int64_t)m->wgs - 1) / (int64_t)m->wgs);
  EF_CALL_GOTO(fsm_product_shape(m->v.ctx, m->wgs, &m->lanes, &m->group_cap), fail);
  m->groups_owned = fsm_product_groups(m, m->n_owned);
  for (int64_t i = 0; i < m->n_owned; ++i) m->n_fixed_owned += m->v.h_pfix[i] != 0;
  /* Kernels. */
  char options[128];
  snprintf(options, sizeof options, "-D FSM_WGS=%zu -D FSM_LANES=%d%s", m->wgs, m->lanes,
           m->v.H->row_ptr_64 ? " -D EF_ROW_PTR_64" : "");
  EF_CALL_GOTO(ef_cl_program_get(m->v.ctx, FSM_SOURCE, options, &m->program), fail);
  {
    const char *names[] = {"fsm_pack",      "fsm_cg_start", "fsm_cg_spmv_dots", "fsm_cg_spmv_dots_rows",
                           "fsm_cg_update", "fsm_zero",     "fsm_visc_update"};
    cl_kernel *ks[] = {&m->k_pack,   &m->k_start, &m->k_spmv,        &m->k_spmv_rows,
                       &m->k_update, &m->k_zero,  &m->k_visc_update};
    for (int i = 0; i < 7; ++i) {
      cl_int st;
      *ks[i] = clCreateKernel(m->program, names[i], &st);
      EF_CHECK_GOTO(st == CL_SUCCESS, EF_ERR_OPENCL, fail, "clCreateKernel(%s) failed: %s (%d)", names[i],
                    ef_cl_error_name(st), (int)st);
    }
  }
  /* Halo: the send list on the device, pinned twins of the packed values and the ghost block (3 a node). */
  m->n_send = p->send_offsets[p->n_neighbours];
  const int64_t ghosts = m->n - m->n_owned;
  {
    int32_t *idx = malloc((size_t)(m->n_send ? m->n_send : 1) * sizeof *idx);
    EF_CHECK_GOTO(idx, EF_ERR_MEMORY, fail, "out of memory");
    for (int64_t k = 0; k < m->n_send; ++k) idx[k] = (int32_t)p->send_nodes[k];
    err = fsm_buffer(m, (size_t)(m->n_send ? m->n_send : 1) * 4, idx, &m->send_nodes);
    free(idx);
    if (err) goto fail;
  }
  EF_CALL_GOTO(fsm_buffer(m, (size_t)(3 * m->n_send) * 8, NULL, &m->send_dev), fail);
  EF_CALL_GOTO(fsm_pinned(m, (size_t)(3 * m->n_send) * 8, &m->pin_send, &m->h_send), fail);
  EF_CALL_GOTO(fsm_pinned(m, (size_t)(3 * ghosts) * 8, &m->pin_recv, &m->h_recv), fail);
  const int nn = p->n_neighbours > 0 ? p->n_neighbours : 1;
  m->send_ptr = calloc((size_t)nn, sizeof *m->send_ptr);
  m->recv_ptr = calloc((size_t)nn, sizeof *m->recv_ptr);
  m->send_count = calloc((size_t)nn, sizeof *m->send_count);
  m->recv_count = calloc((size_t)nn, sizeof *m->recv_count);
  EF_CHECK_GOTO(m->send_ptr && m->recv_ptr && m->send_count && m->recv_count, EF_ERR_MEMORY, fail, "out of memory");
  /* The CG's vectors (n: u's ghosts are received) and partials. */
  cl_mem *vecs[] = {&m->r, &m->u, &m->w, &m->pv, &m->sv, &m->dinv};
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; ++i)
    EF_CALL_GOTO(fsm_buffer(m, (size_t)m->n * 8, NULL, vecs[i]), fail);
  /* The overlap: H's owned rows with a ghost column are the boundary rows (the rest read no ghost). */
  m->overlap = overlap && p->n_neighbours > 0;
  if (m->overlap) {
    int64_t hn = 0;
    const int64_t *rp = NULL;
    const int32_t *col = NULL;
    ef_cl_fs_matrix_structure(fs, &hn, NULL, &rp, &col);
    EF_CHECK_GOTO(hn == m->n && rp && col, EF_ERR_INTERNAL, fail, "distributed device step: no host copy of H");
    int32_t *rows = malloc((size_t)m->n_owned * sizeof *rows);
    EF_CHECK_GOTO(rows, EF_ERR_MEMORY, fail, "out of memory");
    int64_t ni = 0, nb = 0;
    for (int64_t i = 0; i < m->n_owned; ++i) { /* interior rows from the front, boundary rows from the back */
      int ghost = 0;
      for (int64_t k = rp[i]; k < rp[i + 1] && !ghost; ++k) ghost = col[k] >= m->n_owned;
      if (ghost)
        rows[m->n_owned - 1 - nb++] = (int32_t)i;
      else
        rows[ni++] = (int32_t)i;
    }
    for (int64_t a = m->n_owned - nb, b = m->n_owned - 1; a < b; ++a, --b) { /* boundary rows ascending */
      const int32_t t = rows[a];
      rows[a] = rows[b];
      rows[b] = t;
    }
    m->n_interior = ni;
    m->n_boundary = nb;
    m->groups_interior = fsm_product_groups(m, ni);
    m->groups_boundary = fsm_product_groups(m, nb);
    if (m->implicit) { /* the stage CG's product by row block: where each block's rows start in either list */
      const int nblk = ef_cl_fs_blocks(fs);
      int64_t *rb = malloc((size_t)(nblk + 1) * sizeof *rb);
      m->block_interior = malloc((size_t)(nblk + 1) * sizeof *m->block_interior);
      m->block_boundary = malloc((size_t)(nblk + 1) * sizeof *m->block_boundary);
      if (!rb || !m->block_interior || !m->block_boundary) {
        free(rb);
        free(rows);
        err = EF_ERROR(EF_ERR_MEMORY, "out of memory");
        goto fail;
      }
      ef_cl_fs_mpi_block_rows(fs, rb);
      int64_t ki = 0, kb = 0;
      for (int b = 0; b <= nblk; ++b) { /* both lists ascending */
        while (ki < ni && rows[ki] < rb[b]) ++ki;
        while (kb < nb && rows[ni + kb] < rb[b]) ++kb;
        m->block_interior[b] = ki;
        m->block_boundary[b] = kb;
      }
      m->block_interior[nblk] = ni;
      m->block_boundary[nblk] = nb;
      free(rb);
    }
    err = fsm_buffer(m, (size_t)(ni ? ni : 1) * 4, ni ? rows : NULL, &m->rows_interior);
    if (!err) err = fsm_buffer(m, (size_t)(nb ? nb : 1) * 4, nb ? rows + ni : NULL, &m->rows_boundary);
    free(rows);
    if (err) goto fail;
    cl_int st;
    m->copy_queue = clCreateCommandQueue(m->v.ctx->context, m->v.ctx->device, 0, &st);
    EF_CHECK_GOTO(st == CL_SUCCESS, EF_ERR_OPENCL, fail, "clCreateCommandQueue (copy queue) failed: %s (%d)",
                  ef_cl_error_name(st), (int)st);
  }
  size_t part_groups = m->groups > m->groups_owned ? m->groups : m->groups_owned;
  if (part_groups < m->groups_interior + m->groups_boundary) part_groups = m->groups_interior + m->groups_boundary;
  EF_CALL_GOTO(fsm_buffer(m, part_groups * 16, NULL, &m->cg_part), fail);
  EF_CALL_GOTO(fsm_pinned(m, part_groups * 16, &m->pin_part, &m->h_part), fail);
  if (m->implicit) { /* the stage CG's s and partials: fs_visc_init's groups over the rows or fs_visc_apply_dots' (with
                       * the overlap two lists a block, each rounded up to whole groups) */
    const size_t vgroups =
        (size_t)(m->v.visc_groups > m->v.assembly_groups ? m->v.visc_groups : m->v.assembly_groups) +
        2 * (size_t)ef_cl_fs_blocks(fs);
    EF_CALL_GOTO(fsm_buffer(m, (size_t)m->n * 24, NULL, &m->vs), fail);
    EF_CALL_GOTO(fsm_buffer(m, vgroups * 24, NULL, &m->vpart), fail);
    EF_CALL_GOTO(fsm_pinned(m, vgroups * 24, &m->pin_vpart, &m->h_vpart), fail);
  }
  *out = m;
  return EF_SUCCESS;
fail:
  ef_cl_fs_mpi_destroy(&m);
  return err;
}

double ef_cl_fs_mpi_exchange_seconds(const ef_cl_fs_mpi *m) { return m ? m->seconds_exchange : 0.0; }

void ef_cl_fs_mpi_set_fixed_iterations(ef_cl_fs_mpi *m, int iterations) {
  if (m) m->fixed_it = iterations > 0 ? iterations : 0;
}

int ef_cl_fs_mpi_overlap(const ef_cl_fs_mpi *m, int64_t *interior_rows, int64_t *boundary_rows) {
  if (interior_rows) *interior_rows = m && m->overlap ? m->n_interior : 0;
  if (boundary_rows) *boundary_rows = m && m->overlap ? m->n_boundary : 0;
  return m ? m->overlap : 0;
}

/* ---------------------------------------------------------------------------
 * Time step. */

int ef_cl_fs_mpi_compute_dt(ef_cl_fs_mpi *m, const ef_fs_dt_settings *s, double *dt, double *dt_stable,
                            int *reduced) {
  EF_CHECK(m && s && dt, EF_ERR_PARAMETER, "time step: NULL argument");
  EF_CALL(ef_fs_dt_check(s));
  if (!m->started) { /* the ranks' setup times differ: not an exchange's cost (run_summary's exchange_seconds) */
    EF_CALL(ef_comm_barrier(m->comm));
    m->started = 1;
  }
  const ef_cl_fs_mpi_view_s *v = &m->v;
  const cl_long n = m->n_owned, count = v->dt_groups;
  const double nu = v->s->fs.nu;
  /* The implicit option: the convective limit, and the explicit rule's limit for tau's step (TAU_TIME_STEP) in
   * the second half of the partials, as ef_cl_fs_compute_dt. */
  cl_kernel k = m->implicit ? v->k_dt_convective : v->k_dt_partial;
  EF_CL_SET_ARGS(k, EF_CL_ARG(n), EF_CL_ARG(v->hmin), EF_CL_ARG(v->u[*v->cur]), EF_CL_ARG(nu), EF_CL_ARG(v->partials));
  EF_CALL(ef_cl_fs_mpi_launch(m->fs, k, (size_t)count * v->wgs));
  EF_CL_SET_ARGS(v->k_dt_final, EF_CL_ARG(count), EF_CL_ARG(v->partials), EF_CL_ARG(v->state));
  EF_CALL(ef_cl_fs_mpi_launch(m->fs, v->k_dt_final, v->wgs));
  double stable = 0.0, expl[256], expl_min = 1.0e300;
  EF_CHECK(count <= 256, EF_ERR_INTERNAL, "time step: %ld partial minima", (long)count);
  if (m->implicit)
    EF_CL_CALL(clEnqueueReadBuffer(v->ctx->queue, v->partials, CL_FALSE, (size_t)count * 8, (size_t)count * 8, expl,
                                   0, NULL, NULL));
  EF_CL_CALL(clEnqueueReadBuffer(v->ctx->queue, v->state, CL_TRUE, 3 * 8, 8, &stable, 0, NULL, NULL));
  ef_cl_fs_mpi_collect(m->fs);
  for (cl_long g = 0; m->implicit && g < count; ++g)
    if (expl[g] < expl_min) expl_min = expl[g];
  /* A NaN anywhere must reach every rank: reduce (not finite) and the minima (the implicit option's also the
   * viscous cap's min h^2/nu and the explicit limit) together. */
  double red[4] = {isfinite(stable) || stable == 1.0e300 ? 0.0 : 1.0, stable, v->hmin2_over_nu, expl_min};
  EF_CALL(fsm_reduce(m, red, 1, EF_COMM_MAX));
  EF_CALL(fsm_reduce(m, red + 1, m->implicit ? 3 : 1, EF_COMM_MIN));
  EF_CHECK(red[0] == 0.0, EF_ERR_DIVERGED, "time step: the velocity field is not finite");
  stable = red[1];
  EF_CALL(ef_fs_dt_floor_check(s, stable));
  ef_fs_dt_choose(s, stable, dt, dt_stable, reduced);
  if (m->implicit) {
    ef_fs_dt_cap_viscous(s, &v->s->fs, red[2], dt);
    *v->tau_dt = ef_fs_dt_tau(s, &v->s->fs, red[3]); /* TAU_TIME_STEP */
  }
  return EF_SUCCESS;
}

void ef_cl_fs_mpi_set_pressure_solver(ef_cl_fs_mpi *m, ef_cl_fs_mpi_pressure_fn psolve, void *ctx) {
  if (m) m->psolve = psolve, m->psolve_ctx = ctx;
}

/* ---------------------------------------------------------------------------
 * The pressure CG (fractional_step_mpi.c's pressure_cg on the device). */

static int fsm_cg(ef_cl_fs_mpi *m, cl_mem b, cl_mem x, int *iterations, double *residual) {
  const ef_cl_csr *H = m->v.H;
  const cl_int n = (cl_int)m->n_owned;
  const double bmean = 0.0; /* b's mean is removed by the assembly's null-space step */
  EF_CALL(fsm_halo(m, x, 1));
  EF_CL_SET_ARGS(m->k_start, EF_CL_ARG(n), EF_CL_ARG(H->row_ptr), EF_CL_ARG(H->col_idx), EF_CL_ARG(H->values),
                 EF_CL_ARG(b), EF_CL_ARG(bmean), EF_CL_ARG(x), EF_CL_ARG(m->r), EF_CL_ARG(m->u), EF_CL_ARG(m->dinv),
                 EF_CL_ARG(m->cg_part));
  EF_CALL(fsm_launch(m, m->k_start, n));
  double s0[4];
  EF_CALL(fsm_partials(m, s0 + 2)); /* b.D^-1 b, bad diagonals */
  EF_CL_SET_ARGS(m->k_spmv, EF_CL_ARG(n), EF_CL_ARG(H->row_ptr), EF_CL_ARG(H->col_idx), EF_CL_ARG(H->values),
                 EF_CL_ARG(m->r), EF_CL_ARG(m->u), EF_CL_ARG(m->w), EF_CL_ARG(m->cg_part));
  EF_CALL(fsm_product(m, s0));
  EF_CALL(fsm_reduce(m, s0, 4, EF_COMM_SUM));
  EF_CHECK(s0[3] == 0.0, EF_ERR_SOLVER, "distributed device CG: a diagonal entry is not positive");
  double gamma = s0[0], delta = s0[1];
  const double bnorm = sqrt(s0[2]);
  double rnorm = bnorm > 0.0 ? sqrt(gamma) / bnorm : 0.0;
  int it = 0;
  if (bnorm > 0.0 && (rnorm >= m->rtol || m->fixed_it > 0)) {
    double alpha = 0.0, beta = 0.0;
    for (;;) {
      const double denom = it == 0 ? delta : delta - beta * gamma / alpha;
      EF_CHECK(denom > 0.0, EF_ERR_SOLVER,
               isfinite(denom) ? "distributed device CG: p^T A p = %g <= 0 at iteration %d: the matrix is not "
                                 "positive definite"
                               : "distributed device CG: non-finite value (%g) at iteration %d",
               denom, it + 1);
      alpha = gamma / denom;
      EF_CL_SET_ARGS(m->k_update, EF_CL_ARG(n), EF_CL_ARG(alpha), EF_CL_ARG(beta), EF_CL_ARG(m->pv),
                     EF_CL_ARG(m->sv), EF_CL_ARG(x), EF_CL_ARG(m->r), EF_CL_ARG(m->u), EF_CL_ARG(m->w),
                     EF_CL_ARG(m->dinv));
      EF_CALL(fsm_launch(m, m->k_update, n));
      double g[2];
      EF_CALL(fsm_product(m, g));
      EF_CALL(fsm_reduce(m, g, 2, EF_COMM_SUM));
      ++it;
      EF_CHECK(isfinite(g[0]) && isfinite(g[1]), EF_ERR_SOLVER,
               "distributed device CG: non-finite value at iteration %d", it);
      rnorm = sqrt(fabs(g[0])) / bnorm;
      if (m->fixed_it > 0 ? it >= m->fixed_it : rnorm < m->rtol) break;
      EF_CHECK(it < m->max_it, EF_ERR_SOLVER,
               "distributed device CG: no convergence in %d iterations (relative residual %.3e > %.3e)", m->max_it,
               rnorm, m->rtol);
      beta = g[0] / gamma;
      gamma = g[0];
      delta = g[1];
    }
  } else if (bnorm == 0.0) {
    EF_CL_SET_ARGS(m->k_zero, EF_CL_ARG(n), EF_CL_ARG(x));
    EF_CALL(fsm_launch(m, m->k_zero, n));
  }
  *iterations = it;
  *residual = rnorm;
  return fsm_halo(m, x, 1);
}

/* ---------------------------------------------------------------------------
 * The implicit viscosity (fractional_step_mpi.c's imex_momentum and stage_solve on the device). */

/* The 3-a-group partials of the last start or product (groups of them) into three sums (group order). */
static int fsm_partials3(ef_cl_fs_mpi *m, int64_t groups, double sums[3]) {
  EF_CL_CALL(clEnqueueReadBuffer(m->v.ctx->queue, m->vpart, CL_TRUE, 0, (size_t)groups * 24, m->h_vpart, 0, NULL,
                                 NULL));
  sums[0] = sums[1] = sums[2] = 0.0;
  for (int64_t g = 0; g < groups; ++g)
    for (int q = 0; q < 3; ++q) sums[q] += m->h_vpart[3 * g + q];
  return EF_SUCCESS;
}

/* u's ghosts (the stage CG's preconditioned residual), w = P A u on the owned rows, the sums of r.u, w.u, r.r.
 * Without the overlap: the halo, then the product.  With it (as fsm_product): the halo started, the interior rows'
 * product while it is in flight, the ghosts written, the boundary rows' product (the sums in another order). */
static int fsm_visc_product(ef_cl_fs_mpi *m, double dscale, double sums[3]) {
  const ef_cl_fs_mpi_view_s *v = &m->v;
  int64_t groups = 0;
  if (!m->overlap) {
    EF_CALL(fsm_halo(m, v->cg_z, 3));
    EF_CALL(ef_cl_fs_mpi_visc_product(m->fs, dscale, NULL, NULL, v->cg_r, v->cg_z, v->cg_q, m->vpart, &groups));
    return fsm_partials3(m, groups, sums);
  }
  cl_event read = NULL;
  EF_CALL(fsm_halo_begin(m, v->cg_z, 3, &read));
  int err = ef_cl_fs_mpi_visc_product(m->fs, dscale, m->rows_interior, m->block_interior, v->cg_r, v->cg_z, v->cg_q,
                                      m->vpart, &groups);
  EF_CALL(fsm_interior_launched(m, err, read));
  EF_CALL(fsm_halo_end(m, v->cg_z, 3, read));
  EF_CALL(ef_cl_fs_mpi_visc_product(m->fs, dscale, m->rows_boundary, m->block_boundary, v->cg_r, v->cg_z, v->cg_q,
                                    m->vpart, &groups));
  return fsm_partials3(m, groups, sums);
}

/* The projected Jacobi CG for P (D + K) P x = P rhs (x: imex_u, rhs: imex_rhs) on the owned rows, as stage_solve of
 * fractional_step_mpi.c: the start of the one-process device solve (fs_visc_init), the stopping test |P (rhs - A x)|
 * <= rtol |P rhs|, the Chronopoulos-Gear form with one reduction of r.u, (A u).u and r.r per iteration and one
 * halo of u before each product; x comes back with its ghosts current.  Every decision from reduced values. */
static int fsm_visc_solve(ef_cl_fs_mpi *m, double dscale, int *its_out, double *res_out) {
  const ef_cl_fs_mpi_view_s *v = &m->v;
  const cl_int n = (cl_int)m->n_owned;
  const double rtol = v->s->fs.viscous_rtol;
  const int max_it = v->s->fs.viscous_max_iterations;
  /* The start's x at the ghosts: the prescribed values and the slip projection were set on every local node, so
   * they agree with the owners' already; received anyway, so the start never depends on that. */
  EF_CALL(fsm_halo(m, v->imex_u, 3));
  int64_t groups = 0;
  EF_CALL(ef_cl_fs_mpi_visc_start(m->fs, dscale, v->imex_rhs, v->imex_u, v->cg_r, v->cg_z, v->cg_p, v->vdiag,
                                  m->vpart, &groups));
  double s0[4], start[3];
  EF_CALL(fsm_partials3(m, groups, start));
  s0[3] = start[0]; /* |P rhs|^2 */
  EF_CALL(fsm_visc_product(m, dscale, s0));
  EF_CALL(fsm_reduce(m, s0, 4, EF_COMM_SUM));
  ef_stage_cg c;
  ef_stage_cg_start(&c, s0, rtol);
  while (ef_stage_cg_running(&c, max_it)) {
    EF_CALL(ef_stage_cg_alpha(&c));
    EF_CL_SET_ARGS(m->k_visc_update, EF_CL_ARG(n), EF_CL_ARG(c.alpha), EF_CL_ARG(c.beta), EF_CL_ARG(v->cg_p),
                   EF_CL_ARG(m->vs), EF_CL_ARG(v->imex_u), EF_CL_ARG(v->cg_r), EF_CL_ARG(v->cg_z), EF_CL_ARG(v->cg_q),
                   EF_CL_ARG(v->vdiag));
    EF_CALL(fsm_launch(m, m->k_visc_update, n));
    double g[3];
    EF_CALL(fsm_visc_product(m, dscale, g));
    EF_CALL(fsm_reduce(m, g, 3, EF_COMM_SUM));
    int done;
    EF_CALL(ef_stage_cg_next(&c, g, &done));
    if (done) break;
  }
  EF_CALL(ef_stage_cg_finish(&c, rtol, its_out, res_out));
  return fsm_halo(m, v->imex_u, 3);
}

/* Step 1's IMEX ARS(3,4,3) stages from (un, pn) (their ghosts, tau's and xi's current) into uh with its ghosts, the
 * reactions (Rbar) and the warm start pnew, as fs_enqueue_imex_momentum: the residuals F, V of u_n and of each stage
 * state on the owned rows, each stage's right-hand side, prescribed values and slip projection on every local
 * node, the stage solves across the ranks.  fixed_values: slots 1, 2, 0 hold the values of t + c_1 dt, t + c_2 dt,
 * t + dt. */
static int fsm_imex_momentum(ef_cl_fs_mpi *m, double t, double dt, cl_mem un, cl_mem pn, cl_mem pnew,
                             int fixed_values) {
  const ef_cl_fs_mpi_view_s *v = &m->v;
  double a[4][4], ai[4][4], b[4], c[4];
  ef_fs_imex_tableau(a, ai, b, c);
  const double dscale = 1.0 / (ai[1][1] * dt);
  m->v_iterations = m->v_max_iterations = 0;
  m->v_residual = m->v_seconds = 0.0;
  EF_CALL(ef_cl_fs_mpi_imex_residual(m->fs, 0, un, pn));
  EF_CL_CALL(clEnqueueCopyBuffer(v->ctx->queue, un, v->imex_u, 0, 0, (size_t)m->n * 24, 0, NULL, NULL));
  for (int st = 1; st < 4; ++st) {
    EF_CALL(ef_cl_fs_mpi_imex_stage_start(m->fs, st, dt, un, fixed_values));
    int its = 0;
    double res = 0.0;
    const double t0 = ef_wtime();
    const int err = fsm_visc_solve(m, dscale, &its, &res);
    m->v_seconds += ef_wtime() - t0;
    m->v_iterations += its;
    if (its > m->v_max_iterations) m->v_max_iterations = its;
    if (res > m->v_residual) m->v_residual = res;
    if (err)
      return ef_error_push(err, __FILE__, __LINE__, "in stage %d of the implicit viscous step (t = %.9g)", st,
                           t + c[st] * dt);
    EF_CALL(ef_cl_fs_mpi_imex_residual(m->fs, st, v->imex_u, pn));
  }
  EF_CALL(ef_cl_fs_mpi_imex_final(m->fs, dt, un, pn, pnew, fixed_values));
  return fsm_halo(m, v->uh, 3);
}

/* ---------------------------------------------------------------------------
 * The step. */

/* The flags {divergence node, bad rhs node} of this rank, reduced: 1 where any rank has one. */
static int fsm_flags(ef_cl_fs_mpi *m, cl_int flags[2], double any[2]) {
  EF_CL_CALL(clEnqueueReadBuffer(m->v.ctx->queue, m->v.flags, CL_TRUE, 0, 2 * sizeof(cl_int), flags, 0, NULL, NULL));
  any[0] = flags[0] != INT_MAX ? 1.0 : 0.0;
  any[1] = flags[1] != INT_MAX ? 1.0 : 0.0;
  return EF_SUCCESS;
}

int ef_cl_fs_mpi_step(ef_cl_fs_mpi *m, double t, double dt, ef_cl_fs_stats *stats) {
  EF_CHECK(m, EF_ERR_PARAMETER, "distributed device step: NULL argument");
  EF_CHECK(dt > 0.0 && isfinite(dt), EF_ERR_PARAMETER, "fractional step: time step must be positive, got %g", dt);
  const double w0 = ef_wtime();
  ef_cl_fs *fs = m->fs;
  const ef_cl_fs_mpi_view_s *v = &m->v;
  cl_command_queue q = v->ctx->queue;
  ef_cl_fs_stats st;
  memset(&st, 0, sizeof st);
  const int cur = *v->cur, fixed_values = v->s->fs.eval_fixed && *v->fixed_dofs > 0;
  cl_mem un = v->u[cur], pn = v->p[cur], unew = v->u[1 - cur], pnew = v->p[1 - cur];

  /* Boundary values of t + dt and t + dt/2 (the processes set them on the ghosts too). */
  const double e0 = ef_wtime();
  double ta[4][4], tai[4][4], tb[4], tc[4];
  ef_fs_imex_tableau(ta, tai, tb, tc);
  if (fixed_values) {
    EF_CALL(ef_cl_fs_mpi_fixed_values(fs, t + dt, 0));
    if (m->implicit) {
      EF_CALL(ef_cl_fs_mpi_fixed_values(fs, t + tc[1] * dt, 1));
      EF_CALL(ef_cl_fs_mpi_fixed_values(fs, t + tc[2] * dt, 2));
    } else {
      EF_CALL(ef_cl_fs_mpi_fixed_values(fs, t + 0.5 * dt, 1));
    }
  }
  st.seconds_upload = ef_wtime() - e0;

  /* Step 1, the ghosts of u_n and p_n, tau and the projections, each stage's velocity. */
  const double t1 = ef_wtime();
  if (fixed_values) EF_CALL(ef_cl_fs_mpi_scatter(fs, v->fixed_vals[0], un, pn));
  EF_CALL(fsm_halo(m, un, 3));
  EF_CALL(fsm_halo(m, pn, 1));
  EF_CALL(ef_cl_fs_mpi_prepare(fs, dt, un, pn));
  EF_CALL(fsm_halo(m, v->xi, 3));
  EF_CALL(fsm_halo(m, v->xp, 3));
  EF_CALL(fsm_halo(m, v->tau, 1));
  if (m->implicit) {
    EF_CALL(fsm_imex_momentum(m, t, dt, un, pn, pnew, fixed_values));
  } else {
    if (fixed_values) EF_CALL(ef_cl_fs_mpi_scatter(fs, v->fixed_vals[1], v->fixu, v->fixp));
    EF_CALL(ef_cl_fs_mpi_stage(fs, 0, dt, un, pn, un, v->ua, fixed_values, pnew));
    EF_CALL(fsm_halo(m, v->ua, 3));
    EF_CALL(ef_cl_fs_mpi_stage(fs, 1, dt, un, pn, v->ua, v->ub, fixed_values, pnew));
    EF_CALL(fsm_halo(m, v->ub, 3));
    if (fixed_values) EF_CALL(ef_cl_fs_mpi_scatter(fs, v->fixed_vals[0], v->fixu, v->fixp));
    EF_CALL(ef_cl_fs_mpi_stage(fs, 2, dt, un, pn, v->ub, v->ua, fixed_values, pnew));
    EF_CALL(fsm_halo(m, v->ua, 3));
    EF_CALL(ef_cl_fs_mpi_stage(fs, 3, dt, un, pn, v->ua, v->uh, fixed_values, pnew));
    EF_CALL(fsm_halo(m, v->uh, 3));
  }
  EF_CALL(fsm_halo(m, pnew, 1));
  EF_CL_CALL(clFinish(q));
  st.seconds_step1 = ef_wtime() - t1;

  /* Step 2: assembly on the owned rows, the flux sums and the fixed-pressure count over the ranks. */
  const double t2 = ef_wtime();
  {
    void *zero = calloc(1, v->partial_bytes);
    EF_CHECK(zero, EF_ERR_MEMORY, "out of memory");
    cl_int zs = clEnqueueWriteBuffer(q, v->partials, CL_TRUE, 0, v->partial_bytes, zero, 0, NULL, NULL);
    free(zero);
    EF_CL_CALL(zs);
  }
  EF_CALL(ef_cl_fs_mpi_assembly(fs, dt, v->uh, pn, pnew));
  const size_t np = (size_t)(2 * v->assembly_groups);
  double *part = malloc((np ? np : 1) * sizeof *part);
  EF_CHECK(part, EF_ERR_MEMORY, "out of memory");
  cl_int rs = clEnqueueReadBuffer(q, v->partials, CL_TRUE, 0, np * 8, part, 0, NULL, NULL);
  double sums[5] = {0.0, 0.0, (double)m->n_fixed_owned, 0.0, 0.0};
  for (size_t g = 0; g < np / 2; ++g) {
    sums[0] += part[2 * g];
    sums[1] += part[2 * g + 1];
  }
  free(part);
  EF_CL_CALL(rs);
  cl_int flags[2];
  double any[2];
  EF_CALL(fsm_flags(m, flags, any));
  sums[3] = any[1];
  EF_CALL(fsm_reduce(m, sums, 4, EF_COMM_SUM));
  EF_CHECK(flags[1] == INT_MAX, EF_ERR_DIVERGED, "pressure right-hand side is not finite at node %lld",
           (long long)flags[1]);
  EF_CHECK(sums[3] == 0.0, EF_ERR_DIVERGED, "pressure right-hand side is not finite on another rank");
  const int nullspace = sums[2] == 0.0;
  double imbalance = 0.0;
  if (nullspace) {
    imbalance = sums[1] > 0.0 ? fabs(sums[0]) / sums[1] : 0.0;
    EF_CHECK(imbalance <= v->s->fs.flux_imbalance_tolerance, EF_ERR_PARAMETER,
             "pressure equation: no node has a fixed pressure and the prescribed velocities do not "
             "conserve mass (net flux imbalance |sum f|/sum|f| = %.3e > tolerance %.3e); fix the "
             "pressure on an outlet, or balance inflow and outflow",
             imbalance, v->s->fs.flux_imbalance_tolerance);
    double state[3] = {sums[0], sums[1], sums[0] / (double)m->n_global};
    EF_CL_CALL(clEnqueueWriteBuffer(q, v->state, CL_TRUE, 0, sizeof state, state, 0, NULL, NULL));
    const cl_long no = m->n_owned;
    EF_CL_SET_ARGS(v->k_mean, EF_CL_ARG(no), EF_CL_ARG(v->f), EF_CL_ARG(v->state));
    const size_t items = (size_t)((m->n_owned + (int64_t)v->wgs - 1) / (int64_t)v->wgs) * v->wgs;
    EF_CALL(ef_cl_fs_mpi_launch(fs, v->k_mean, items));
  }
  EF_CL_CALL(clFinish(q));
  st.seconds_assembly = ef_wtime() - t2;
  const double ts = ef_wtime();
  int iterations = 0;
  double residual = 0.0;
  if (m->psolve) { /* the caller's solver (owned rows), then the pressure's ghosts as after fsm_cg */
    double setup = 0.0;
    EF_CALL(m->psolve(m->psolve_ctx, v->f, pnew, nullspace, &iterations, &residual, &setup));
    EF_CALL(fsm_halo(m, pnew, 1));
    st.seconds_solve = ef_wtime() - ts - setup;
  } else {
    EF_CALL(fsm_cg(m, v->f, pnew, &iterations, &residual));
    st.seconds_solve = ef_wtime() - ts;
  }
  st.seconds_step2 = ef_wtime() - t2;

  /* Step 3 on the owned rows, the new velocity and the reactions at the ghosts, the divergence check. */
  const double t3 = ef_wtime();
  EF_CALL(ef_cl_fs_mpi_correct(fs, dt, v->uh, pn, pnew, unew));
  EF_CALL(fsm_halo(m, unew, 3));
  EF_CALL(fsm_halo(m, v->reaction, 3));
  EF_CALL(fsm_flags(m, flags, any));
  EF_CALL(fsm_reduce(m, any, 1, EF_COMM_MAX));
  if (any[0] != 0.0) {
    if (flags[0] != INT_MAX) {
      double u3[3] = {0.0, 0.0, 0.0};
      EF_CL_CALL(clEnqueueReadBuffer(q, unew, CL_TRUE, (size_t)flags[0] * 24, 24, u3, 0, NULL, NULL));
      return EF_ERROR(EF_ERR_DIVERGED, "the solution diverged: velocity (%g, %g, %g) at node %lld (bound %g)", u3[0],
                      u3[1], u3[2], (long long)flags[0], v->s->fs.velocity_bound);
    }
    return EF_ERROR(EF_ERR_DIVERGED, "the solution diverged on another rank");
  }
  st.seconds_step3 = ef_wtime() - t3;
  st.cg_iterations = iterations;
  st.cg_residual = residual;
  st.flux_imbalance = imbalance;
  st.n_fixed_pressure = (int)(sums[2] > INT32_MAX ? INT32_MAX : sums[2]);
  if (m->implicit) {
    st.viscous_iterations = m->v_iterations;
    st.viscous_max_stage_iterations = m->v_max_iterations;
    st.viscous_residual = m->v_residual;
    st.seconds_viscous = m->v_seconds;
  }
  st.seconds_total = ef_wtime() - w0;
  if (stats) *stats = st;
  return ef_cl_fs_mpi_finish(fs, dt, iterations, residual);
}
