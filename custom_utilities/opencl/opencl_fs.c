/* opencl_fs.c -- device executor of one edge-based fractional step (see opencl_fs.h). */
#include "opencl_fs.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge_physics.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_log.h"
#include "ef_omp.h"
#include "opencl_cg.h" /* ef_cl_cg_memory_bytes: the memory estimate's solver share */
#include "opencl_solvers.h"

#define FS_SOURCE "fs_kernels.cl"
#define FS_DEFAULT_WGS_BITS 7 /* 128 items: 4 warps, enough groups per SM for latency hiding */
#define FS_DT_MAX_GROUPS 256  /* the dt reduction's fixed grid */
#define FS_VISC_GROUPS_PER_CU 4 /* the stage CG's vector kernels' automatic grid (fs_visc_groups) */
#define FS_STATE_SIZE 8       /* doubles: 0-2 null-space sums and mean, 3 dt minimum */

/* Kernels of fs_kernels.cl and the other profiled commands (one row of the kernel table each). */
enum {
  K_PREPARE = 0,
  K_STAGE,
  K_PRESSURE,
  K_SUM,
  K_MEAN,
  K_CORRECT,
  K_DT_PARTIAL,
  K_DT_FINAL,
  K_SCATTER,
  K_GATHER,
  K_IMEX_RESIDUAL, /* the implicit option's kernels */
  K_IMEX_RHS,
  K_IMEX_PROJECT,
  K_IMEX_FINAL,
  K_VISC_INIT,
  K_VISC_APPLY,
  K_VISC_REDUCE,
  K_VISC_UPDATE,
  K_VISC_DIRECTION,
  K_DT_CONVECTIVE,
  K_IMEX_CORR_START,
  K_IMEX_CORRECT,
  K_IMEX_CONTINUITY,
  K_IMEX_FILTER,
  K_IMEX_ROTATIONAL,
  K_CP_RESIDUAL, /* the projection "converged" */
  K_CP_AXPBY,
  K_CP_DOT,
  K_STAGE_OPERATOR, /* set-up of the implicit option */
  K_VISC_APPLY_DOTS, /* the implicit option on several ranks (opencl_fs_mpi.c) */
  K_PRESSURE_GUESS,  /* pressure_guess */
  K_N_KERNELS,
  R_UPLOAD = K_N_KERNELS, /* boundary values to the device */
  R_FLAGS,                /* flag/sum fill and read-back of a step */
  R_CG,                   /* the pressure solve (wall clock: its kernels are the solver's) */
  R_COUNT
};
static const char *const fs_record_names[R_COUNT] = {
    "fs_prepare",       "fs_rk_stage",     "fs_pressure_system", "fs_sum_partials",
    "fs_remove_mean",   "fs_correct",      "fs_dt_partial",      "fs_dt_final",
    "fs_scatter_fixed", "fs_gather_fixed", "fs_imex_residual", "fs_imex_rhs", "fs_imex_project",
    "fs_imex_final",    "fs_visc_init",    "fs_visc_apply",      "fs_visc_reduce",  "fs_visc_update",
    "fs_visc_direction", "fs_dt_partial_convective", "fs_imex_correction_start", "fs_imex_correct",
    "fs_imex_continuity", "fs_imex_filter", "fs_imex_rotational", "fs_cp_residual", "fs_cp_axpby", "fs_cp_dot",
    "fs_stage_operator", "fs_visc_apply_dots", "fs_pressure_guess",
    "boundary values upload", "step flags fill/read",
    "CG solve (opencl_cg, wall)"};

/* Phases of a step, for the Table-5 breakdown; FS_PHASE_NONE: outside a step. */
enum { FS_PHASE_NONE = -1, FS_PHASE_UPLOAD = 0, FS_PHASE_1 = 1, FS_PHASE_2 = 2, FS_PHASE_3 = 3 };

typedef struct {
  cl_event event;
  int record, phase;
  double bytes;
} fs_pending;

typedef struct {
  int log_event;
  double seconds, bytes;
  long calls;
} fs_record;

struct ef_cl_fs_s {
  ef_cl_context *ctx;
  const ef_edge_data *ed;
  ef_cl_fs_settings s;
  int64_t n, n_edges, nnz;
  int dim;
  size_t wgs;
  /* Edge data: row blocks of col/records, global row offsets and node arrays. */
  int n_blocks;
  int64_t *row_begin;
  cl_mem *col_b, *ev_b;
  cl_mem row_ptr, mass, inv_mass, h, hmin;
  /* State (double-buffered) and intermediates. */
  cl_mem u[2], p[2];
  int cur;
  cl_mem tau, xi, xp, acc, ua, ub, uh, reaction, fixu, fixp, f;
  /* Boundary arrays. */
  cl_mem vfix, pfix, slip, slip_normal, slip_tangent, body_force;
  uint8_t *h_pfix;
  int64_t n_fixed_pressure;
  /* Pressure matrix (structure built here) and solver. */
  int64_t *h_row_ptr;
  int32_t *h_col;
  ef_cl_csr H;
  ef_linear_solver *solver;          /* the strategy's, borrowed */
  double solver_bytes_per_iteration; /* its traffic figure (ef_cl_fs_set_solver) */
  /* Reductions. */
  cl_mem partials, state, flags;
  int64_t assembly_groups;
  int dt_groups;
  double h_scalars[FS_STATE_SIZE];
  cl_int h_flags[2];
  /* Fixed dofs for time-dependent boundary values. */
  int64_t n_fixed_dofs, cap_fixed;
  int32_t *fixed_dofs;
  double *fixed_cur; /* the values u_n/p_n hold at the fixed dofs (kinematic pressure) */
  int fixed_cur_valid;
  cl_mem d_fixed_dofs, d_fixed_vals[3]; /* [0]: t + dt, [1]: t + dt/2 (implicit: t + c_1 dt), [2]: t + c_2 dt */
  cl_mem pin_fixed;
  double *h_fixed;                      /* pinned, 3 * cap_fixed */
  cl_event fixed_write[3];
  double *eval_u, *eval_p;              /* host targets of the callback (3n, n) */
  /* ef_cl_fs_create's uploads (fs_staging_*): two pinned buffers of stg_bytes taking turns, the pending write from
   * each, and a pinned block of zeros; released at the end of the creation. */
  cl_mem stg[2], zero_pin;
  char *stg_host[2], *zero_host;
  cl_event stg_written[2];
  size_t stg_bytes;
  int stg_next, ev_stg_wait;
  /* Pinned read-back of u, p and the reactions (7n). */
  cl_mem pin_state;
  double *h_state;
  /* Snapshots (ef_cl_fs_snapshot_*): per slot a device copy of u, p and the reactions (7n), its
   * pinned host twin and the event of the read between them on copy_queue.  A slot's fields
   * belong to the thread that began it until its wait returns (the caller hands slots out). */
  cl_command_queue copy_queue;
  cl_mem snap_dev[EF_CL_FS_SNAPSHOTS], snap_pin[EF_CL_FS_SNAPSHOTS];
  double *snap_host[EF_CL_FS_SNAPSHOTS];
  cl_event snap_read[EF_CL_FS_SNAPSHOTS];
  /* Kernels and profiling. */
  cl_program program;
  cl_kernel k[K_N_KERNELS];
  fs_record rec[R_COUNT];
  fs_pending *pend;
  int n_pend, cap_pend;
  /* Implicit viscosity (s.fs.viscous_implicit; fractional_step.h 2'): the four stage residuals F, V (12n
   * each, stage j at 3n j), the stage velocity U and right-hand side (3n; also the viscous correction's
   * delta and rhs), the stage CG's vectors, Jacobi diagonal and stiffness diagonal K_II (fs_stage_operator), its
   * partial sums (the start's and fs_visc_apply's in vpart, fs_visc_update's in vpart2) and its two state buffers
   * (cgs: the start's and after fs_visc_direction, the one read back; cgs2: after fs_visc_update). */
  cl_mem imex_f, imex_v, imex_u, imex_rhs, cg_r, cg_z, cg_p, cg_q, vdiag, kdiag, vpart, vpart2, cgs, cgs2;
  ef_cl_bound_args visc_args[3]; /* the stage CG iteration's kernels: fs_visc_apply, _update, _direction */
  int solver_set_up; /* the solver's first set-up was timed */
  cl_mem *lij_b; /* per row block: the compact stage operator, L_IJ per directed edge (ef_row_edge_laplacians) */
  int64_t node_groups;       /* work-groups of the node kernels: n / wgs rounded up */
  int visc_lanes;            /* work-items a row in fs_visc_apply (FS_VISC_LANES) */
  int64_t visc_groups;       /* its work-groups over all blocks */
  double hmin2_over_nu;      /* min_I hmin_I^2 / nu (the viscous cap of the automatic step) */
  double tau_dt;             /* TAU_TIME_STEP: tau's step bound from ef_cl_fs_compute_dt for the next step (0: none) */
  int v_iterations, v_max_iterations;
  int v_last[4]; /* iterations of the last solve of each slot (fs_visc_solve), 0 before the first */
  double v_residual, v_seconds;
  /* The projection "converged" (s.fs.viscous_projection; fs_cp_solve): the single projection's velocity and
   * pressure, the corrected velocity of a trial pressure and its assembly's right-hand side, the PCG vectors
   * (the iterate is the step's p_{n+1} buffer), the dot products' per-group partial sums and their host copy. */
  cl_mem cp_u0, cp_u, cp_f, cp_p0, cp_r0, cp_r, cp_z, cp_d, cp_q, cp_t, cp_part, cp_one;
  double *cp_hpart;
  int cp_iterations;
  /* pressure_guess: the input pressures of the last two steps (pg[1] with "quadratic" only), their steps, how many
   * levels are known (0-2; an upload of the pressure forgets them). */
  cl_mem pg[2];
  double pg_dt[2];
  int pg_levels;
  /* The last step. */
  int stepped;
  double last_dt, last_residual;
  int last_iterations;
};

/* ---------------------------------------------------------------------------
 * Small helpers. */

static void fs_release_mem(cl_mem *m) {
  if (*m) clReleaseMemObject(*m);
  *m = NULL;
}

/* ---------------------------------------------------------------------------
 * Pinned staging of ef_cl_fs_create's uploads.  A write from pageable memory (CL_MEM_COPY_HOST_PTR, a malloc'ed
 * block of zeros) runs at 1-2 GB/s on NVIDIA's OpenCL, one from pinned memory near the bus's speed; so while the
 * executor is created every upload goes through two pinned buffers that take turns (one is filled while the
 * other's write runs) and every zeroing writes from one pinned block of zeros. */

#define FS_ZERO_BYTES ((size_t)4 << 20)

/* Unmap and release the staging buffers after the writes from them (also on failure; idempotent). */
static int fs_staging_close(ef_cl_fs *fs) {
  if (!fs->stg[0] && !fs->stg[1] && !fs->zero_pin) return EF_SUCCESS;
  cl_command_queue q = fs->ctx->queue;
  cl_int st = clFinish(q);
  for (int k = 0; k < 2; ++k) {
    if (fs->stg_written[k]) clReleaseEvent(fs->stg_written[k]);
    fs->stg_written[k] = NULL;
    if (fs->stg_host[k]) clEnqueueUnmapMemObject(q, fs->stg[k], fs->stg_host[k], 0, NULL, NULL);
    fs->stg_host[k] = NULL;
  }
  if (fs->zero_host) clEnqueueUnmapMemObject(q, fs->zero_pin, fs->zero_host, 0, NULL, NULL);
  fs->zero_host = NULL;
  cl_int st2 = clFinish(q);
  for (int k = 0; k < 2; ++k) fs_release_mem(&fs->stg[k]);
  fs_release_mem(&fs->zero_pin);
  if (st == CL_SUCCESS) st = st2;
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "writing to the device failed: %s (%d)", ef_cl_error_name(st), (int)st);
  return EF_SUCCESS;
}

/* Two pinned staging buffers of bytes each and the pinned zeros, mapped for writing. */
static int fs_staging_open(ef_cl_fs *fs, size_t bytes) {
  const int ev = ef_log_event("setup", "device executor: staging buffers (create, map, release)");
  ef_log_event_begin(ev);
  fs->ev_stg_wait = ef_log_event("setup", "device executor: wait for a staging buffer's write");
  fs->stg_bytes = bytes;
  fs->stg_next = 0;
  cl_int st = CL_SUCCESS;
  for (int k = 0; k < 3 && st == CL_SUCCESS; ++k) {
    cl_mem *m = k < 2 ? &fs->stg[k] : &fs->zero_pin;
    char **h = k < 2 ? &fs->stg_host[k] : &fs->zero_host;
    const size_t b = k < 2 ? bytes : FS_ZERO_BYTES;
    *m = clCreateBuffer(fs->ctx->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, b, NULL, &st);
    if (st == CL_SUCCESS) *h = clEnqueueMapBuffer(fs->ctx->queue, *m, CL_TRUE, CL_MAP_WRITE, 0, b, 0, NULL, NULL, &st);
  }
  if (st != CL_SUCCESS) {
    fs_staging_close(fs);
    ef_log_event_end(ev);
    return EF_ERROR(EF_ERR_OPENCL, "a pinned staging buffer (%zu bytes) failed: %s (%d)", bytes, ef_cl_error_name(st),
                    (int)st);
  }
  memset(fs->zero_host, 0, FS_ZERO_BYTES);
  ef_log_event_end(ev);
  return EF_SUCCESS;
}

/* The next staging buffer, once the write from it that is still pending (two chunks ago) is done. */
static int fs_staging_take(ef_cl_fs *fs, char **host) {
  const int k = fs->stg_next;
  if (fs->stg_written[k]) {
    ef_log_event_begin(fs->ev_stg_wait);
    cl_int st = clWaitForEvents(1, &fs->stg_written[k]);
    ef_log_event_end(fs->ev_stg_wait);
    clReleaseEvent(fs->stg_written[k]);
    fs->stg_written[k] = NULL;
    EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "writing to the device failed: %s (%d)", ef_cl_error_name(st), (int)st);
  }
  *host = fs->stg_host[k];
  return EF_SUCCESS;
}

/* Write the first len bytes of the buffer fs_staging_take gave to dst at off (not blocking); the other's turn. */
static int fs_staging_put(ef_cl_fs *fs, cl_mem dst, size_t off, size_t len) {
  const int k = fs->stg_next;
  cl_int st = clEnqueueWriteBuffer(fs->ctx->queue, dst, CL_FALSE, off, len, fs->stg_host[k], 0, NULL,
                                   &fs->stg_written[k]);
  if (st == CL_SUCCESS) st = clFlush(fs->ctx->queue);
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "writing to the device failed: %s (%d)", ef_cl_error_name(st), (int)st);
  fs->stg_next ^= 1;
  return EF_SUCCESS;
}

/* bytes of host to dst through the staging buffers, each piece copied by all threads (ef_omp_copy). */
static int fs_staging_write(ef_cl_fs *fs, cl_mem dst, size_t bytes, const void *host) {
  for (size_t off = 0; off < bytes;) {
    const size_t len = bytes - off < fs->stg_bytes ? bytes - off : fs->stg_bytes;
    char *to = NULL;
    EF_CALL(fs_staging_take(fs, &to));
    ef_omp_copy(to, (const char *)host + off, len);
    EF_CALL(fs_staging_put(fs, dst, off, len));
    off += len;
  }
  return EF_SUCCESS;
}

/* Zero the first bytes of a buffer by writes from a zero block: during ef_cl_fs_create the pinned one (not
 * blocking: it never changes), else a blocking write from a malloc'ed one.  Not
 * clEnqueueFillBuffer: oclgrind's uninitialised-value tracking then loses later kernel
 * stores to the buffer, which would hide real reports among false ones. */
static int fs_zero(ef_cl_fs *fs, cl_mem m, size_t bytes) {
  if (fs->zero_host) {
    cl_int st = CL_SUCCESS;
    for (size_t off = 0; off < bytes && st == CL_SUCCESS; off += FS_ZERO_BYTES) {
      const size_t len = bytes - off < FS_ZERO_BYTES ? bytes - off : FS_ZERO_BYTES;
      st = clEnqueueWriteBuffer(fs->ctx->queue, m, CL_FALSE, off, len, fs->zero_host, 0, NULL, NULL);
    }
    EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clearing a buffer failed: %s (%d)", ef_cl_error_name(st), (int)st);
    return EF_SUCCESS;
  }
  const size_t chunk = bytes < ((size_t)4 << 20) ? bytes : ((size_t)4 << 20);
  void *zero = calloc(chunk ? chunk : 1, 1);
  EF_CHECK(zero, EF_ERR_MEMORY, "out of memory");
  cl_int st = CL_SUCCESS;
  for (size_t off = 0; off < bytes && st == CL_SUCCESS; off += chunk) {
    const size_t len = bytes - off < chunk ? bytes - off : chunk;
    st = clEnqueueWriteBuffer(fs->ctx->queue, m, CL_TRUE, off, len, zero, 0, NULL, NULL);
  }
  free(zero);
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clearing a buffer failed: %s (%d)", ef_cl_error_name(st), (int)st);
  return EF_SUCCESS;
}

/* A device buffer of bytes, copied from host or zeroed: blocking, or through the staging buffers and the pinned
 * zeros while ef_cl_fs_create holds them (host is copied before the call returns). */
static int fs_buffer(ef_cl_fs *fs, size_t bytes, const void *host, const char *what, cl_mem *out) {
  ef_cl_context *ctx = fs->ctx;
  EF_CHECK(bytes <= ctx->max_alloc_bytes, EF_ERR_UNSUPPORTED,
           "%s needs one buffer of %.1f MiB but '%s' allows at most %.1f MiB per buffer", what,
           (double)bytes / 1048576.0, ctx->device_name, (double)ctx->max_alloc_bytes / 1048576.0);
  cl_int st;
  if (host && fs->stg_host[0]) {
    *out = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, bytes ? bytes : 8, NULL, &st);
    EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clCreateBuffer for %s (%zu bytes) failed: %s (%d)", what, bytes,
             ef_cl_error_name(st), (int)st);
    return fs_staging_write(fs, *out, bytes, host);
  }
  cl_mem_flags flags = CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0);
  *out = clCreateBuffer(ctx->context, flags, bytes ? bytes : 8, host ? (void *)host : NULL, &st);
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clCreateBuffer for %s (%zu bytes) failed: %s (%d)", what, bytes,
           ef_cl_error_name(st), (int)st);
  if (!host) return fs_zero(fs, *out, bytes ? bytes : 8);
  return EF_SUCCESS;
}

/* A device buffer of bytes left unset, for one the caller writes whole (the edge records: zeroing them first
 * would be a second pass of their size over the bus). */
static int fs_buffer_unset(ef_cl_fs *fs, size_t bytes, const char *what, cl_mem *out) {
  ef_cl_context *ctx = fs->ctx;
  EF_CHECK(bytes <= ctx->max_alloc_bytes, EF_ERR_UNSUPPORTED,
           "%s needs one buffer of %.1f MiB but '%s' allows at most %.1f MiB per buffer", what,
           (double)bytes / 1048576.0, ctx->device_name, (double)ctx->max_alloc_bytes / 1048576.0);
  cl_int st;
  *out = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, bytes ? bytes : 8, NULL, &st);
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clCreateBuffer for %s (%zu bytes) failed: %s (%d)", what, bytes,
           ef_cl_error_name(st), (int)st);
  return EF_SUCCESS;
}

/* The records of rows [r0, r1) into the new device buffer dst (which holds exactly them), computed or copied
 * by ef_edge_data_records, through the two pinned staging buffers (fs_staging_open): the records of the
 * next whole rows that fit are built (all threads) straight into one while the other's write to the device
 * runs, because a write from pageable memory goes at 1-2 GB/s on NVIDIA's OpenCL (0.21-0.25 s for the
 * 349 MB of edge records of the 3D cavity at level 2 on an H100) and one from pinned memory near the bus's
 * speed; so a structure-only build (ef_edge_data_build_structure) never holds the records on the host. */
static int fs_upload_records(ef_cl_fs *fs, cl_mem dst, int64_t r0, int64_t r1) {
  const ef_edge_data *ed = fs->ed;
  const int64_t *rp = ed->row_ptr;
  const size_t rec = (size_t)ed->stride * 8;
  EF_CHECK(fs->stg_host[0] && fs->stg_bytes >= (size_t)ed->max_row * rec, EF_ERR_PARAMETER,
           "edge records: no staging buffers of a row's records");
  const int ev_compute = ef_log_event("setup", "edge records: compute into staging (host)");
  const int64_t max_edges = (int64_t)(fs->stg_bytes / rec);
  for (int64_t a = r0; a < r1;) {
    int64_t lo = a + 1, hi = r1; /* the last row end b with rp[b] - rp[a] <= max_edges (a row fits: b > a) */
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (rp[mid] - rp[a] <= max_edges)
        lo = mid;
      else
        hi = mid - 1;
    }
    const int64_t b = lo;
    char *host = NULL;
    EF_CALL(fs_staging_take(fs, &host)); /* the write from this buffer two chunks ago is done */
    ef_log_event_begin(ev_compute);
    const int err = ef_edge_data_records(ed, a, b, (double *)host);
    ef_log_event_end(ev_compute);
    EF_CALL(err);
    EF_CALL(fs_staging_put(fs, dst, (size_t)(rp[a] - rp[r0]) * rec, (size_t)(rp[b] - rp[a]) * rec));
    a = b;
  }
  return EF_SUCCESS;
}

/* A pinned host buffer, mapped once for the executor's life (the host side of fast copies). */
static int fs_pinned(ef_cl_fs *fs, size_t bytes, cl_mem *buf, double **host) {
  cl_int st;
  *buf = clCreateBuffer(fs->ctx->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &st);
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clCreateBuffer (pinned, %zu bytes) failed: %s (%d)", bytes,
           ef_cl_error_name(st), (int)st);
  *host = clEnqueueMapBuffer(fs->ctx->queue, *buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL,
                             &st);
  if (st != CL_SUCCESS) {
    fs_release_mem(buf);
    *host = NULL;
    return EF_ERROR(EF_ERR_OPENCL, "mapping a pinned buffer (%zu bytes) failed: %s (%d)", bytes,
                    ef_cl_error_name(st), (int)st);
  }
  return EF_SUCCESS;
}

/* Unmap and release a pinned buffer of fs_pinned. */
static void fs_pinned_release(ef_cl_fs *fs, cl_mem *buf, double **host) {
  if (*buf && *host) {
    clEnqueueUnmapMemObject(fs->ctx->queue, *buf, *host, 0, NULL, NULL);
    clFinish(fs->ctx->queue);
  }
  fs_release_mem(buf);
  *host = NULL;
}

/* Keep a command's event for the profile of its record and phase. */
static int fs_track(ef_cl_fs *fs, cl_event ev, int record, int phase, double bytes) {
  if (fs->n_pend == fs->cap_pend) {
    int cap = fs->cap_pend ? 2 * fs->cap_pend : 64;
    fs_pending *p = realloc(fs->pend, (size_t)cap * sizeof *p);
    if (!p) {
      clReleaseEvent(ev);
      return EF_ERROR(EF_ERR_MEMORY, "out of memory for profiling events");
    }
    fs->pend = p;
    fs->cap_pend = cap;
  }
  fs_pending *q = &fs->pend[fs->n_pend++];
  q->event = ev;
  q->record = record;
  q->phase = phase;
  q->bytes = bytes;
  return EF_SUCCESS;
}

/* Launch a 1D kernel of global items (a multiple of local) and track it. */
static int fs_launch(ef_cl_fs *fs, int record, int phase, size_t global, size_t local, double bytes) {
  cl_event ev = NULL;
  EF_CL_CALL(clEnqueueNDRangeKernel(fs->ctx->queue, fs->k[record], 1, NULL, &global, &local, 0, NULL, &ev));
  return fs_track(fs, ev, record, phase, bytes);
}

/* n rounded up to a multiple of m (a grid of whole work-groups). */
static size_t fs_round_up(int64_t n, size_t m) { return (size_t)((n + (int64_t)m - 1) / (int64_t)m) * m; }

/* Phase spans and per-record sums of the finished tracked commands; releases them.  A
 * device that gives no profiling data leaves the times at 0. */
typedef struct {
  double start[4], end[4], sum[4];
  int seen[4];
} fs_spans;

static void fs_collect(ef_cl_fs *fs, fs_spans *sp) {
  if (sp) memset(sp, 0, sizeof *sp);
  for (int i = 0; i < fs->n_pend; ++i) {
    fs_pending *q = &fs->pend[i];
    cl_ulong t0 = 0, t1 = 0;
    if (clGetEventProfilingInfo(q->event, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) == CL_SUCCESS &&
        clGetEventProfilingInfo(q->event, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) == CL_SUCCESS &&
        t1 >= t0) {
      const double s = 1e-9 * (double)(t1 - t0), a = 1e-9 * (double)t0, b = 1e-9 * (double)t1;
      fs_record *r = &fs->rec[q->record];
      r->seconds += s;
      r->bytes += q->bytes;
      r->calls++;
      ef_log_event_add(r->log_event, s);
      if (q->bytes > 0) ef_log_event_add_bytes(r->log_event, q->bytes);
      if (sp && q->phase >= 0) {
        const int ph = q->phase;
        if (!sp->seen[ph] || a < sp->start[ph]) sp->start[ph] = a;
        if (!sp->seen[ph] || b > sp->end[ph]) sp->end[ph] = b;
        sp->sum[ph] += s;
        sp->seen[ph] = 1;
      }
    }
    clReleaseEvent(q->event);
  }
  fs->n_pend = 0;
}

/* ---------------------------------------------------------------------------
 * Sizes. */

/* Bytes an edge kernel must move for a block of nr rows and ne edges: the record entries it
 * reads (rec doubles per edge), the columns, the row offsets, `per_edge` more bytes per edge
 * and `per_row` bytes of node arrays per row (neighbour gathers counted as cached).  The
 * GB/s of the kernel table are these bytes over the kernel's time: with 128-byte records a
 * kernel that reads 3 of 16 doubles still fetches whole 32-byte sectors. */
static double fs_edge_bytes(int64_t nr, int64_t ne, int rec, double per_edge, double per_row) {
  return (double)ne * (8.0 * rec + 4.0 + per_edge) + 8.0 * (double)(nr + 1) + per_row * (double)nr;
}

/* Record doubles an edge kernel reads (see edge_physics.h): projections and correction use
 * nabla only; a stage L^d, nabla and G; the pressure row the L^d diagonal, nabla and G. */
static int fs_record_doubles(int record, int dim) {
  switch (record) {
  case K_STAGE: return dim * dim + 2 * dim;
  case K_PRESSURE: return 3 * dim;
  default: return dim;
  }
}

/* Node-array bytes per row of each edge kernel (reads + writes, see fs_kernels.cl). */
static double fs_row_bytes(int record, int stage, int fixed_values) {
  switch (record) {
  case K_PREPARE: return 24 + 8 + 8 + 8 + 8 + 24 + 24;                 /* u p 1/m h | tau xi xp */
  case K_STAGE: {
    double b = 8 + 8 + 8 + 24 + 24 + 24 + 8 + 24 + 24 + 24 + 3 + 1; /* m 1/m tau xi b u_n p us | acc u vfix slip */
    if (stage > 0) b += 24;                                           /* acc read */
    if (fixed_values) b += 24;
    if (stage == 3) b += 24 + 8 + 1 + (fixed_values ? 8 : 0);         /* reaction, pnew, pfix */
    return b;
  }
  case K_PRESSURE: return 8 + 24 + 8 + 8 + 24 + 1 + 8 + 8;            /* tau uh p_n pf xp pfix | diag f */
  case K_CORRECT: return 8 + 24 + 8 + 8 + 3 + 1 + 24;                 /* 1/m uh p_n p_new vfix slip | u */
  default: return 0;
  }
}

/* Bytes of one launch of edge kernel `record` over a block. */
static double fs_kernel_bytes(const ef_cl_fs *fs, int record, int stage, int fixed_values, int64_t nr, int64_t ne) {
  const double per_edge = record == K_PRESSURE ? 8.0 : 0.0; /* the off-diagonal written */
  return fs_edge_bytes(nr, ne, fs_record_doubles(record, fs->dim), per_edge,
                       fs_row_bytes(record, stage, fixed_values));
}

/* Device bytes: edge data + node vectors + reductions + the CG's share (matrix, scaled copy, vectors). */
uint64_t ef_cl_fs_memory_bytes(const ef_edge_data *ed) {
  if (!ed) return 0;
  const uint64_t n = (uint64_t)ed->n_nodes, E = (uint64_t)ed->n_edges, nnz = E + n;
  const uint64_t edges = E * (8u * (uint64_t)ed->stride + 4u) + (n + 1) * 8u + 4u * 8u * n;
  const uint64_t vectors = 12u * 24u * n    /* u x2, xi, xp, acc, ua, ub, uh, reaction, fixu, normal, tangent */
                           + 24u * n        /* body force */
                           + 6u * 8u * n    /* p x2, tau, f, fixp, (spare) */
                           + 5u * n;        /* fixity flags, slip types */
  const uint64_t reductions = 16u * (n / 32u + 1024u) + 4096u;
  /* The CG's share counts the matrix, its scaled copy, its vectors, the rhs and x; f and
   * p_new are ours, so the estimate is a little high. */
  return edges + vectors + reductions + ef_cl_cg_memory_bytes((int64_t)n, (int64_t)nnz, nnz > INT32_MAX);
}

/* Sum of the edge kernels' bytes (fs_kernel_bytes) plus cg_iterations CG iterations. */
double ef_cl_fs_bytes_per_step(const ef_cl_fs *fs, int cg_iterations) {
  if (!fs) return 0.0;
  const int64_t n = fs->n, E = fs->n_edges;
  double b = fs_kernel_bytes(fs, K_PREPARE, 0, 0, n, E);
  for (int s = 0; s < 4; ++s) b += fs_kernel_bytes(fs, K_STAGE, s, 0, n, E);
  b += fs_kernel_bytes(fs, K_PRESSURE, 0, 0, n, E) + fs_kernel_bytes(fs, K_CORRECT, 0, 0, n, E);
  b += (double)cg_iterations * fs->solver_bytes_per_iteration;
  return b;
}

/* Doubles in a named array: n, 3n or nnz. */
int64_t ef_cl_fs_array_size(const ef_cl_fs *fs, ef_cl_fs_array which) {
  if (!fs) return 0;
  switch (which) {
  case EF_CL_FS_PRESSURE:
  case EF_CL_FS_TAU:
  case EF_CL_FS_PNEW:
  case EF_CL_FS_RHS: return fs->n;
  case EF_CL_FS_MATRIX: return fs->nnz;
  case EF_CL_FS_N_ARRAYS: return 0;
  default: return 3 * fs->n;
  }
}

/* The device buffer of a named array. */
static cl_mem fs_array(ef_cl_fs *fs, ef_cl_fs_array which) {
  switch (which) {
  case EF_CL_FS_VELOCITY: return fs->u[fs->cur];
  case EF_CL_FS_PRESSURE: return fs->p[fs->cur];
  case EF_CL_FS_TAU: return fs->tau;
  case EF_CL_FS_XI: return fs->xi;
  case EF_CL_FS_XP: return fs->xp;
  case EF_CL_FS_ACC: return fs->acc;
  case EF_CL_FS_STAGE_A: return fs->ua;
  case EF_CL_FS_STAGE_B: return fs->ub;
  case EF_CL_FS_UH: return fs->uh;
  case EF_CL_FS_REACTION: return fs->reaction;
  case EF_CL_FS_PNEW: return fs->p[1 - fs->cur];
  case EF_CL_FS_RHS: return fs->f;
  case EF_CL_FS_MATRIX: return fs->H.values;
  case EF_CL_FS_UNEW: return fs->u[1 - fs->cur];
  default: return NULL;
  }
}

/* Blocking upload of a named array (tests; the state through ef_cl_fs_set_state). */
int ef_cl_fs_write_array(ef_cl_fs *fs, ef_cl_fs_array which, const double *host) {
  EF_CHECK(fs && host && fs_array(fs, which), EF_ERR_PARAMETER, "ef_cl_fs_write_array: bad argument");
  EF_CL_CALL(clEnqueueWriteBuffer(fs->ctx->queue, fs_array(fs, which), CL_TRUE, 0,
                                  (size_t)ef_cl_fs_array_size(fs, which) * 8, host, 0, NULL, NULL));
  if (which == EF_CL_FS_VELOCITY || which == EF_CL_FS_PRESSURE) fs->fixed_cur_valid = 0;
  if (which == EF_CL_FS_PRESSURE) fs->pg_levels = 0; /* not the pressure the last step returned */
  return EF_SUCCESS;
}

/* Blocking read-back of a named array. */
int ef_cl_fs_read_array(ef_cl_fs *fs, ef_cl_fs_array which, double *host) {
  EF_CHECK(fs && host && fs_array(fs, which), EF_ERR_PARAMETER, "ef_cl_fs_read_array: bad argument");
  EF_CL_CALL(clEnqueueReadBuffer(fs->ctx->queue, fs_array(fs, which), CL_TRUE, 0,
                                 (size_t)ef_cl_fs_array_size(fs, which) * 8, host, 0, NULL, NULL));
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Life cycle. */

void ef_cl_fs_settings_default(ef_cl_fs_settings *s) {
  memset(s, 0, sizeof *s);
  ef_fs_settings_default(&s->fs);
  s->viscous_check_every = 8;
}

/* Finish the queue, drop the profile, release kernels and buffers. */
void ef_cl_fs_destroy(ef_cl_fs **pfs) {
  if (!pfs || !*pfs) return;
  ef_cl_fs *fs = *pfs;
  fs_staging_close(fs); /* a creation that failed */
  if (fs->ctx && fs->ctx->queue) clFinish(fs->ctx->queue);
  fs_collect(fs, NULL);
  free(fs->pend);
  if (fs->copy_queue) clFinish(fs->copy_queue);
  for (int i = 0; i < EF_CL_FS_SNAPSHOTS; ++i) {
    if (fs->snap_read[i]) clReleaseEvent(fs->snap_read[i]);
    fs_pinned_release(fs, &fs->snap_pin[i], &fs->snap_host[i]);
    fs_release_mem(&fs->snap_dev[i]);
  }
  if (fs->copy_queue) clReleaseCommandQueue(fs->copy_queue);
  ef_cl_csr_release(&fs->H);
  for (int i = 0; i < 3; ++i)
    if (fs->fixed_write[i]) clReleaseEvent(fs->fixed_write[i]);
  fs_pinned_release(fs, &fs->pin_fixed, &fs->h_fixed);
  fs_pinned_release(fs, &fs->pin_state, &fs->h_state);
  for (int b = 0; fs->col_b && b < fs->n_blocks; ++b) fs_release_mem(&fs->col_b[b]);
  for (int b = 0; fs->ev_b && b < fs->n_blocks; ++b) fs_release_mem(&fs->ev_b[b]);
  for (int b = 0; fs->lij_b && b < fs->n_blocks; ++b) fs_release_mem(&fs->lij_b[b]);
  cl_mem *all[] = {&fs->row_ptr, &fs->mass,  &fs->inv_mass, &fs->h,        &fs->hmin,     &fs->u[0],
                   &fs->u[1],    &fs->p[0],  &fs->p[1],     &fs->tau,      &fs->xi,       &fs->xp,
                   &fs->acc,     &fs->ua,    &fs->ub,       &fs->uh,       &fs->reaction, &fs->fixu,
                   &fs->fixp,    &fs->f,     &fs->vfix,     &fs->pfix,     &fs->slip,     &fs->slip_normal,
                   &fs->slip_tangent, &fs->body_force, &fs->partials, &fs->state, &fs->flags,
                   &fs->d_fixed_dofs, &fs->d_fixed_vals[0], &fs->d_fixed_vals[1], &fs->d_fixed_vals[2],
                   &fs->imex_f, &fs->imex_v, &fs->imex_u, &fs->imex_rhs, &fs->cg_r, &fs->cg_z, &fs->cg_p,
                   &fs->cg_q, &fs->vdiag, &fs->kdiag, &fs->vpart, &fs->vpart2, &fs->cgs, &fs->cgs2, &fs->cp_u0,
                   &fs->cp_u, &fs->cp_f, &fs->cp_p0, &fs->cp_r0, &fs->cp_r, &fs->cp_z, &fs->cp_d, &fs->cp_q,
                   &fs->cp_t, &fs->cp_part, &fs->cp_one, &fs->pg[0], &fs->pg[1]};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) fs_release_mem(all[i]);
  for (int i = 0; i < K_N_KERNELS; ++i)
    if (fs->k[i]) clReleaseKernel(fs->k[i]);
  if (fs->program) clReleaseProgram(fs->program);
  free(fs->col_b);
  free(fs->ev_b);
  free(fs->lij_b);
  free(fs->row_begin);
  free(fs->h_pfix);
  free(fs->h_row_ptr);
  free(fs->h_col);
  free(fs->fixed_dofs);
  free(fs->fixed_cur);
  free(fs->eval_u);
  free(fs->eval_p);
  free(fs->cp_hpart);
  free(fs);
  *pfs = NULL;
}

/* Build fs_kernels.cl with 2^bits items per group and create the kernels; EF_ERR_UNSUPPORTED
 * when a kernel cannot run groups that large on this device. */
static int fs_build(ef_cl_fs *fs, int bits) {
  for (int i = 0; i < K_N_KERNELS; ++i)
    if (fs->k[i]) {
      clReleaseKernel(fs->k[i]);
      fs->k[i] = NULL;
    }
  if (fs->program) clReleaseProgram(fs->program);
  fs->program = NULL;
  fs->wgs = (size_t)1 << bits;
  fs->visc_lanes = fs->wgs < 4 ? (int)fs->wgs : 4;
  char options[128];
  snprintf(options, sizeof options, "-D EF_DIM=%d -D FS_WGS=%zu -D FS_VISC_LANES=%d", fs->dim, fs->wgs,
           fs->visc_lanes);
  EF_CALL(ef_cl_program_get(fs->ctx, FS_SOURCE, options, &fs->program));
  for (int i = 0; i < K_N_KERNELS; ++i) {
    cl_int st;
    fs->k[i] = clCreateKernel(fs->program, fs_record_names[i], &st);
    EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clCreateKernel(%s) failed: %s (%d)", fs_record_names[i],
             ef_cl_error_name(st), (int)st);
    size_t limit = 0;
    if (clGetKernelWorkGroupInfo(fs->k[i], fs->ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof limit, &limit,
                                 NULL) == CL_SUCCESS &&
        limit < fs->wgs)
      return EF_ERROR(EF_ERR_UNSUPPORTED, "kernel %s runs at most %zu items per group on '%s', %zu asked",
                      fs_record_names[i], limit, fs->ctx->device_name, fs->wgs);
  }
  return EF_SUCCESS;
}

/* The pressure matrix's structure: the edge graph with the diagonal inserted in sorted
 * position (the host executor's layout, so row i starts at row_ptr_edges[i] + i). */
static int fs_matrix_structure(ef_cl_fs *fs) {
  const ef_edge_data *ed = fs->ed;
  const int64_t n = fs->n;
  const int ev_host = ef_log_event("setup", "pressure matrix structure: host pattern");
  const int ev_upload = ef_log_event("setup", "pressure matrix structure: buffers, upload");
  ef_log_event_begin(ev_host);
  EF_MALLOC(fs->h_row_ptr, n + 1);
  EF_MALLOC(fs->h_col, fs->nnz);
  fs->h_row_ptr[0] = 0;
  EF_OMP(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; ++i) { /* row i starts at row_ptr_edges[i] + i: rows are independent */
    fs->h_row_ptr[i + 1] = ed->row_ptr[i + 1] + i + 1;
    int64_t o = ed->row_ptr[i] + i;
    int placed = 0;
    for (int64_t k = ed->row_ptr[i]; k < ed->row_ptr[i + 1]; ++k) {
      if (!placed && ed->col[k] > i) {
        fs->h_col[o++] = (int32_t)i;
        placed = 1;
      }
      fs->h_col[o++] = ed->col[k];
    }
    if (!placed) fs->h_col[o++] = (int32_t)i;
  }
  ef_log_event_end(ev_host);
  ef_log_event_begin(ev_upload);
  /* The device CSR in opencl_csr.h's form, values writable (the assembly kernel fills them). */
  ef_cl_csr *H = &fs->H;
  H->n = n;
  H->nnz = fs->nnz;
  H->row_ptr_64 = fs->nnz > INT32_MAX;
  int err = EF_SUCCESS;
  if (H->row_ptr_64) {
    err = fs_buffer(fs, (size_t)(n + 1) * 8, fs->h_row_ptr, "matrix row offsets", &H->row_ptr);
  } else {
    int32_t *rp32 = malloc((size_t)(n + 1) * sizeof *rp32);
    EF_CHECK(rp32, EF_ERR_MEMORY, "out of memory for the matrix row offsets");
    EF_OMP(omp parallel for schedule(static))
    for (int64_t i = 0; i <= n; ++i) rp32[i] = (int32_t)fs->h_row_ptr[i];
    err = fs_buffer(fs, (size_t)(n + 1) * 4, rp32, "matrix row offsets", &H->row_ptr);
    free(rp32);
  }
  if (!err) err = fs_buffer(fs, (size_t)fs->nnz * 4, fs->h_col, "matrix columns", &H->col_idx);
  if (!err) err = fs_buffer(fs, (size_t)fs->nnz * 8, NULL, "matrix values", &H->values);
  ef_log_event_end(ev_upload);
  return err;
}

static int fs_stage_operator(ef_cl_fs *fs);

/* Memory check, kernels, edge data in row blocks, node arrays, the pressure matrix's structure. */
int ef_cl_fs_create(ef_cl_context *ctx, const ef_edge_data *ed, const ef_cl_fs_settings *settings,
                     ef_cl_fs **out) {
  EF_CHECK(out, EF_ERR_PARAMETER, "ef_cl_fs_create: output handle is NULL");
  *out = NULL;
  EF_CHECK(ctx && ed && ed->row_ptr && ed->n_nodes > 0 && (ed->dim == 2 || ed->dim == 3), EF_ERR_PARAMETER,
           "ef_cl_fs_create: missing context or edge data");
  EF_CHECK(ed->values || ed->source, EF_ERR_PARAMETER,
           "ef_cl_fs_create: the edge data holds no records and no source to compute them from");
  ef_cl_fs_settings s;
  if (settings)
    s = *settings;
  else
    ef_cl_fs_settings_default(&s);
  EF_CHECK(!s.fs.nu_nodal, EF_ERR_UNSUPPORTED, "the OpenCL fractional step has no per-node viscosity");
  EF_CHECK(s.fs.nu >= 0.0 && isfinite(s.fs.nu), EF_ERR_PARAMETER,
           "fractional step: kinematic viscosity must be finite and >= 0, got %g", s.fs.nu);
  EF_CHECK(s.fs.velocity_bound > 0.0 && s.fs.fixed_pressure_scale > 0.0 && s.fs.flux_imbalance_tolerance >= 0.0,
           EF_ERR_PARAMETER, "fractional step: velocity bound and pressure scale must be positive");
  if (s.fs.viscous_implicit) {
    EF_CHECK(s.fs.nu > 0.0, EF_ERR_PARAMETER,
             "implicit viscosity: the kinematic viscosity must be positive, got %g", s.fs.nu);
    EF_CHECK(s.fs.viscous_correction >= 0 && s.fs.viscous_correction <= 3, EF_ERR_PARAMETER,
             "implicit viscosity: unknown correction %d", s.fs.viscous_correction);
    EF_CHECK(s.fs.viscous_rtol > 0.0 && s.fs.viscous_max_iterations > 0 && s.viscous_check_every >= 1,
             EF_ERR_PARAMETER,
             "implicit viscosity: need tolerance > 0, max_iteration > 0 and check_every >= 1 (got %g, %d, %d)",
             s.fs.viscous_rtol, s.fs.viscous_max_iterations, s.viscous_check_every);
    EF_CHECK(s.fs.viscous_pressure == 0, EF_ERR_UNSUPPORTED,
             "implicit viscosity: the extrapolated stage pressures (viscous_pressure 1) run on the host executor only");
    EF_CHECK(s.fs.viscous_projection == 0 || (s.fs.viscous_projection == 1 && s.fs.viscous_correction == 0),
             EF_ERR_PARAMETER,
             "implicit viscosity: projection must be 0 (single) or 1 (converged, with the lumped correction), got %d "
             "with correction %d",
             s.fs.viscous_projection, s.fs.viscous_correction);
  }
  EF_CHECK(s.work_group_bits >= 0 && s.work_group_bits <= 10, EF_ERR_PARAMETER,
           "work_group_bits must be 0 (automatic) or 1..10, got %d", s.work_group_bits);
  EF_CHECK(s.stage_cg_groups >= 0, EF_ERR_PARAMETER, "stage_cg_groups must be 0 (automatic) or positive, got %lld",
           (long long)s.stage_cg_groups);
  /* Fixed dofs are int32 indices into [0, 4n). */
  EF_CHECK(ed->n_nodes <= INT32_MAX / 4, EF_ERR_UNSUPPORTED,
           "the OpenCL fractional step supports at most %d nodes, the mesh has %lld", INT32_MAX / 4,
           (long long)ed->n_nodes);
  /* The implicit option's vectors: F and V (12n each), U, rhs and the CG's four (3n each), the diagonal, the
   * partial sums (at most 3 per row); the compact stage operator (one double per directed edge). */
  const uint64_t implicit_bytes =
      s.fs.viscous_implicit ? 8u * ((uint64_t)ed->n_nodes * (24u + 18u + 1u + 3u) + (uint64_t)ed->n_edges) : 0u;
  /* The projection "converged": two velocities (3n each), eight scalars, a partial sum per node group (at
   * most n). */
  const uint64_t projection_bytes =
      s.fs.viscous_implicit && s.fs.viscous_projection ? 8u * (uint64_t)ed->n_nodes * (6u + 9u + 1u) : 0u;
  EF_CALL(ef_cl_context_check_memory(ctx, ef_cl_fs_memory_bytes(ed) + implicit_bytes + projection_bytes,
                                     s.fs.viscous_implicit ? "the OpenCL fractional step (edge data, vectors, "
                                                             "pressure matrix and CG, implicit stages)"
                                                           : "the OpenCL fractional step (edge data, vectors, "
                                                             "pressure matrix and CG)"));

  ef_cl_fs *fs = calloc(1, sizeof *fs);
  EF_CHECK(fs, EF_ERR_MEMORY, "out of memory");
  int err = EF_SUCCESS;
  fs->ctx = ctx;
  fs->ed = ed;
  fs->s = s;
  fs->n = ed->n_nodes;
  fs->n_edges = ed->n_edges;
  fs->nnz = ed->n_edges + ed->n_nodes;
  fs->dim = ed->dim;
  const int64_t n = fs->n;
  for (int r = 0; r < R_COUNT; ++r) fs->rec[r].log_event = ef_log_event("kernel", fs_record_names[r]);

  /* Kernels: the largest group size (<= the asked or default one) every kernel accepts. */
  int bits = s.work_group_bits > 0 ? s.work_group_bits : FS_DEFAULT_WGS_BITS;
  while (bits > 0 && ((size_t)1 << bits) > ctx->max_work_group_size) --bits;
  for (;;) {
    err = fs_build(fs, bits);
    if (err != EF_ERR_UNSUPPORTED || bits == 0) break;
    ef_error_clear();
    --bits;
  }
  if (err) goto fail;

  /* Edge data, split by rows when the records exceed the largest buffer. */
  int64_t max_doubles = s.max_block_doubles > 0 ? s.max_block_doubles : (int64_t)(ctx->max_alloc_bytes / 8);
  int64_t nb = 0;
  EF_CALL_GOTO(ef_edge_data_row_blocks(ed, max_doubles, &nb, NULL), fail);
  EF_CHECK_GOTO(nb >= 1 && nb < 4096, EF_ERR_UNSUPPORTED, fail, "the edge data needs %lld buffers", (long long)nb);
  fs->n_blocks = (int)nb;
  fs->row_begin = malloc((size_t)(nb + 1) * sizeof *fs->row_begin);
  fs->col_b = calloc((size_t)nb, sizeof *fs->col_b);
  fs->ev_b = calloc((size_t)nb, sizeof *fs->ev_b);
  EF_CHECK_GOTO(fs->row_begin && fs->col_b && fs->ev_b, EF_ERR_MEMORY, fail, "out of memory");
  EF_CALL_GOTO(ef_edge_data_row_blocks(ed, max_doubles, &nb, fs->row_begin), fail);
  fs->assembly_groups = fs->visc_groups = 0;
  {
    /* Staging: the asked size (default 32 MiB), at least a row's records, at most what the largest upload needs. */
    const size_t rec = (size_t)ed->stride * 8;
    size_t stage = s.staging_bytes > 0 ? (size_t)s.staging_bytes : (size_t)32 << 20, need = (size_t)fs->nnz * 4;
    for (int b = 0; b < fs->n_blocks; ++b) {
      const size_t rb = (size_t)(ed->row_ptr[fs->row_begin[b + 1]] - ed->row_ptr[fs->row_begin[b]]) * rec;
      if (rb > need) need = rb;
    }
    if ((size_t)(n + 1) * 8 > need) need = (size_t)(n + 1) * 8;
    if (stage > need) stage = need;
    if (stage < (size_t)ed->max_row * rec) stage = (size_t)ed->max_row * rec; /* a row is never split */
    EF_CALL_GOTO(fs_staging_open(fs, stage), fail);
  }
  const int ev_records = ef_log_event("setup", "device executor: edge records to the device");
  const int ev_columns = ef_log_event("setup", "edge records: columns to the device");
  ef_log_event_begin(ev_records);
  for (int b = 0; b < fs->n_blocks; ++b) {
    const int64_t e0 = ed->row_ptr[fs->row_begin[b]], e1 = ed->row_ptr[fs->row_begin[b + 1]];
    ef_log_event_begin(ev_columns);
    err = fs_buffer(fs, (size_t)(e1 - e0) * 4, ed->col + e0, "edge columns", &fs->col_b[b]);
    ef_log_event_end(ev_columns);
    if (err) goto fail;
    const size_t record_bytes = (size_t)(e1 - e0) * (size_t)ed->stride * 8;
    EF_CALL_GOTO(fs_buffer_unset(fs, record_bytes, "edge records", &fs->ev_b[b]), fail);
    EF_CALL_GOTO(fs_upload_records(fs, fs->ev_b[b], fs->row_begin[b], fs->row_begin[b + 1]), fail);
    fs->assembly_groups += (int64_t)(fs_round_up(fs->row_begin[b + 1] - fs->row_begin[b], fs->wgs) / fs->wgs);
    fs->visc_groups +=
        (int64_t)(fs_round_up(fs->visc_lanes * (fs->row_begin[b + 1] - fs->row_begin[b]), fs->wgs) / fs->wgs);
  }
  ef_log_event_end(ev_records);
  const size_t n8 = (size_t)n * 8, v8 = 3 * n8;
  EF_CALL_GOTO(fs_buffer(fs, (size_t)(n + 1) * 8, ed->row_ptr, "edge row offsets", &fs->row_ptr), fail);
  EF_CALL_GOTO(fs_buffer(fs, n8, ed->mass, "lumped mass", &fs->mass), fail);
  EF_CALL_GOTO(fs_buffer(fs, n8, ed->inv_mass, "inverse mass", &fs->inv_mass), fail);
  EF_CALL_GOTO(fs_buffer(fs, n8, ed->h, "node sizes", &fs->h), fail);
  EF_CALL_GOTO(fs_buffer(fs, n8, ed->hmin, "node heights", &fs->hmin), fail);

  cl_mem *vecs[] = {&fs->u[0], &fs->u[1], &fs->xi,       &fs->xp,   &fs->acc,         &fs->ua,
                    &fs->ub,   &fs->uh,   &fs->reaction, &fs->fixu, &fs->slip_normal, &fs->slip_tangent,
                    &fs->body_force};
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; ++i)
    EF_CALL_GOTO(fs_buffer(fs, v8, NULL, "a node vector", vecs[i]), fail);
  cl_mem *scal[] = {&fs->p[0], &fs->p[1], &fs->tau, &fs->f, &fs->fixp};
  for (size_t i = 0; i < sizeof scal / sizeof scal[0]; ++i)
    EF_CALL_GOTO(fs_buffer(fs, n8, NULL, "a node scalar", scal[i]), fail);
  EF_CALL_GOTO(fs_buffer(fs, 3 * (size_t)n, NULL, "velocity fixity", &fs->vfix), fail);
  EF_CALL_GOTO(fs_buffer(fs, (size_t)n, NULL, "pressure fixity", &fs->pfix), fail);
  EF_CALL_GOTO(fs_buffer(fs, (size_t)n, NULL, "slip types", &fs->slip), fail);
  fs->h_pfix = calloc((size_t)n, 1);
  EF_CHECK_GOTO(fs->h_pfix, EF_ERR_MEMORY, fail, "out of memory");

  int64_t dt_groups = (int64_t)(fs_round_up(n, fs->wgs) / fs->wgs);
  fs->dt_groups = (int)(dt_groups < FS_DT_MAX_GROUPS ? dt_groups : FS_DT_MAX_GROUPS);
  /* 2 dt_groups: the implicit option's dt reduction writes two sets (TAU_TIME_STEP). */
  int64_t n_partials = fs->assembly_groups > fs->dt_groups ? 2 * fs->assembly_groups : 2 * fs->dt_groups;
  EF_CALL_GOTO(fs_buffer(fs, (size_t)n_partials * 8, NULL, "partial sums", &fs->partials), fail);
  EF_CALL_GOTO(fs_buffer(fs, FS_STATE_SIZE * 8, NULL, "step scalars", &fs->state), fail);
  EF_CALL_GOTO(fs_buffer(fs, 2 * sizeof(cl_int), NULL, "step flags", &fs->flags), fail);
  const int ev_structure = ef_log_event("setup", "device executor: pressure matrix structure");
  ef_log_event_begin(ev_structure);
  EF_CALL_GOTO(fs_matrix_structure(fs), fail);
  ef_log_event_end(ev_structure);
  fs->node_groups = (int64_t)(fs_round_up(n, fs->wgs) / fs->wgs);
  if (s.fs.viscous_implicit) {
    cl_mem *iv[] = {&fs->imex_u, &fs->imex_rhs, &fs->cg_r, &fs->cg_z, &fs->cg_p, &fs->cg_q};
    for (size_t i = 0; i < sizeof iv / sizeof iv[0]; ++i)
      EF_CALL_GOTO(fs_buffer(fs, v8, NULL, "a node vector of the implicit stages", iv[i]), fail);
    EF_CALL_GOTO(fs_buffer(fs, 4 * v8, NULL, "the implicit stages' explicit residuals", &fs->imex_f), fail);
    EF_CALL_GOTO(fs_buffer(fs, 4 * v8, NULL, "the implicit stages' viscous residuals", &fs->imex_v), fail);
    EF_CALL_GOTO(fs_buffer(fs, n8, NULL, "the stage solves' diagonal", &fs->vdiag), fail);
    EF_CALL_GOTO(fs_buffer(fs, n8, NULL, "the stage operator's stiffness diagonal", &fs->kdiag), fail);
    int64_t np = 3 * (fs->assembly_groups > fs->node_groups ? fs->assembly_groups : fs->node_groups);
    if (fs->visc_groups > np) np = fs->visc_groups;
    EF_CALL_GOTO(fs_buffer(fs, (size_t)np * 8, NULL, "the stage solves' partial sums", &fs->vpart), fail);
    EF_CALL_GOTO(fs_buffer(fs, (size_t)fs->node_groups * 16, NULL, "the stage solves' partial sums", &fs->vpart2),
                 fail);
    EF_CALL_GOTO(fs_buffer(fs, 16 * 8, NULL, "the stage solves' state", &fs->cgs), fail);
    EF_CALL_GOTO(fs_buffer(fs, 16 * 8, NULL, "the stage solves' state", &fs->cgs2), fail);
    const int ev_stage = ef_log_event("setup", "device executor: stage operator");
    ef_log_event_begin(ev_stage);
    EF_CALL_GOTO(fs_stage_operator(fs), fail);
    ef_log_event_end(ev_stage);
    /* ef_fs_compute_dt's viscous cap, with the same arithmetic (the viscosity is uniform here). */
    fs->hmin2_over_nu = 1.0e300;
    for (int64_t i = 0; i < n; ++i)
      if (s.fs.nu > 0.0 && ed->hmin[i] * ed->hmin[i] / s.fs.nu < fs->hmin2_over_nu)
        fs->hmin2_over_nu = ed->hmin[i] * ed->hmin[i] / s.fs.nu;
    if (s.fs.viscous_projection) {
      cl_mem *cv[] = {&fs->cp_u0, &fs->cp_u};
      for (size_t i = 0; i < sizeof cv / sizeof cv[0]; ++i)
        EF_CALL_GOTO(fs_buffer(fs, v8, NULL, "a node vector of the converged projection", cv[i]), fail);
      cl_mem *cs[] = {&fs->cp_f, &fs->cp_p0, &fs->cp_r0, &fs->cp_r, &fs->cp_z, &fs->cp_d, &fs->cp_q, &fs->cp_t};
      for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i)
        EF_CALL_GOTO(fs_buffer(fs, n8, NULL, "a node scalar of the converged projection", cs[i]), fail);
      /* The constants, copied from the host at creation (oclgrind does not see clEnqueueFillBuffer write). */
      double *ones = malloc(n8);
      EF_CHECK_GOTO(ones, EF_ERR_MEMORY, fail, "out of memory");
      for (int64_t i = 0; i < n; ++i) ones[i] = 1.0;
      err = fs_buffer(fs, n8, ones, "the converged projection's constant vector", &fs->cp_one);
      free(ones);
      if (err) goto fail;
      EF_CALL_GOTO(fs_buffer(fs, (size_t)fs->node_groups * 8, NULL, "the converged projection's partial sums",
                             &fs->cp_part),
                   fail);
      fs->cp_hpart = malloc((size_t)fs->node_groups * sizeof *fs->cp_hpart);
      EF_CHECK_GOTO(fs->cp_hpart, EF_ERR_MEMORY, fail, "out of memory");
    }
  }
  EF_CALL_GOTO(fs_staging_close(fs), fail);
  EF_CL_CALL_GOTO(clFinish(ctx->queue), fail);
  *out = fs;
  return EF_SUCCESS;
fail:
  ef_cl_fs_destroy(&fs);
  return err;
}

/* The host copy of H's CSR structure. */
void ef_cl_fs_matrix_structure(const ef_cl_fs *fs, int64_t *n, int64_t *nnz, const int64_t **row_ptr,
                                const int32_t **col) {
  if (n) *n = fs ? fs->n : 0;
  if (nnz) *nnz = fs ? fs->nnz : 0;
  if (row_ptr) *row_ptr = fs ? fs->h_row_ptr : NULL;
  if (col) *col = fs ? fs->h_col : NULL;
}

/* Accessors. */
ef_linear_solver *ef_cl_fs_solver(ef_cl_fs *fs) { return fs ? fs->solver : NULL; }
const ef_cl_csr *ef_cl_fs_pressure_matrix(const ef_cl_fs *fs) { return fs ? &fs->H : NULL; }

void ef_cl_fs_set_solver(ef_cl_fs *fs, ef_linear_solver *solver, double bytes_per_iteration) {
  if (!fs) return;
  fs->solver = solver;
  fs->solver_bytes_per_iteration = bytes_per_iteration;
}
int ef_cl_fs_blocks(const ef_cl_fs *fs) { return fs ? fs->n_blocks : 0; }

/* ---------------------------------------------------------------------------
 * State and boundary conditions. */

int ef_cl_fs_set_state(ef_cl_fs *fs, const double *velocity, const double *pressure) {
  EF_CHECK(fs, EF_ERR_PARAMETER, "ef_cl_fs_set_state: no executor");
  if (velocity) EF_CALL(ef_cl_fs_write_array(fs, EF_CL_FS_VELOCITY, velocity));
  if (pressure) EF_CALL(ef_cl_fs_write_array(fs, EF_CL_FS_PRESSURE, pressure));
  return EF_SUCCESS;
}

/* Blocking upload of bytes from host (zeros when host is NULL). */
static int fs_upload(ef_cl_fs *fs, cl_mem m, size_t bytes, const void *host) {
  if (host) {
    EF_CL_CALL(clEnqueueWriteBuffer(fs->ctx->queue, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
  } else {
    EF_CALL(fs_zero(fs, m, bytes));
  }
  return EF_SUCCESS;
}

/* Boundary arrays to the device and the compact list of fixed dofs (3 per node, then pressures). */
/* The correction kernel takes the bound per launch: nothing to upload. */
void ef_cl_fs_set_velocity_bound(ef_cl_fs *fs, double bound) {
  if (fs && bound > 0.0) fs->s.fs.velocity_bound = bound;
}

int ef_cl_fs_set_bc(ef_cl_fs *fs, const ef_fs_settings *bc) {
  EF_CHECK(fs && bc, EF_ERR_PARAMETER, "ef_cl_fs_set_bc: NULL argument");
  EF_CHECK(!bc->slip_type || bc->slip_normal, EF_ERR_PARAMETER,
           "fractional step: slip types given without slip normals");
  const int64_t n = fs->n;
  const size_t n8 = (size_t)n * 8;
  EF_CALL(fs_upload(fs, fs->vfix, 3 * (size_t)n, bc->velocity_fixed));
  EF_CALL(fs_upload(fs, fs->pfix, (size_t)n, bc->pressure_fixed));
  EF_CALL(fs_upload(fs, fs->slip, (size_t)n, bc->slip_type));
  EF_CALL(fs_upload(fs, fs->slip_normal, 3 * n8, bc->slip_type ? bc->slip_normal : NULL));
  EF_CALL(fs_upload(fs, fs->slip_tangent, 3 * n8, bc->slip_type ? bc->slip_tangent : NULL));
  EF_CALL(fs_upload(fs, fs->body_force, 3 * n8, bc->body_force));
  if (bc->pressure_fixed)
    memcpy(fs->h_pfix, bc->pressure_fixed, (size_t)n);
  else
    memset(fs->h_pfix, 0, (size_t)n);

  /* The compact list of fixed dofs: velocity components first, then pressures (3n + i). */
  int64_t count = 0, n_fixed_p = 0;
  for (int64_t q = 0; q < 3 * n; ++q) count += bc->velocity_fixed && bc->velocity_fixed[q];
  for (int64_t i = 0; i < n; ++i) n_fixed_p += fs->h_pfix[i] != 0;
  count += n_fixed_p;
  fs->n_fixed_pressure = n_fixed_p;
  if (count > fs->cap_fixed) {
    int64_t cap = count + count / 4 + 16;
    for (int i = 0; i < 3; ++i)
      if (fs->fixed_write[i]) {
        clWaitForEvents(1, &fs->fixed_write[i]);
        clReleaseEvent(fs->fixed_write[i]);
        fs->fixed_write[i] = NULL;
      }
    fs->n_fixed_dofs = 0; /* nothing usable until the new arrays exist */
    fs_pinned_release(fs, &fs->pin_fixed, &fs->h_fixed);
    fs_release_mem(&fs->d_fixed_dofs);
    fs_release_mem(&fs->d_fixed_vals[0]);
    fs_release_mem(&fs->d_fixed_vals[1]);
    fs_release_mem(&fs->d_fixed_vals[2]);
    free(fs->fixed_dofs);
    free(fs->fixed_cur);
    fs->fixed_dofs = NULL;
    fs->fixed_cur = NULL;
    fs->cap_fixed = 0;
    EF_MALLOC(fs->fixed_dofs, cap);
    EF_MALLOC(fs->fixed_cur, cap);
    EF_CALL(fs_buffer(fs, (size_t)cap * 4, NULL, "fixed dofs", &fs->d_fixed_dofs));
    EF_CALL(fs_buffer(fs, (size_t)cap * 8, NULL, "fixed values", &fs->d_fixed_vals[0]));
    EF_CALL(fs_buffer(fs, (size_t)cap * 8, NULL, "fixed values", &fs->d_fixed_vals[1]));
    EF_CALL(fs_buffer(fs, (size_t)cap * 8, NULL, "fixed values", &fs->d_fixed_vals[2]));
    EF_CALL(fs_pinned(fs, (size_t)cap * 24, &fs->pin_fixed, &fs->h_fixed));
    fs->cap_fixed = cap;
  }
  int64_t k = 0;
  for (int64_t q = 0; q < 3 * n; ++q)
    if (bc->velocity_fixed && bc->velocity_fixed[q]) fs->fixed_dofs[k++] = (int32_t)q;
  for (int64_t i = 0; i < n; ++i)
    if (fs->h_pfix[i]) fs->fixed_dofs[k++] = (int32_t)(3 * n + i);
  fs->n_fixed_dofs = count;
  if (count > 0) EF_CALL(fs_upload(fs, fs->d_fixed_dofs, (size_t)count * 4, fs->fixed_dofs));
  fs->fixed_cur_valid = 0;
  fs->s.fs.eval_fixed = bc->eval_fixed;
  fs->s.fs.eval_fixed_ctx = bc->eval_fixed_ctx;
  return EF_SUCCESS;
}

/* u, p and the reactions through the pinned buffer (all reads queued, one wait). */
int ef_cl_fs_read(ef_cl_fs *fs, double *velocity, double *pressure, double *reaction) {
  EF_CHECK(fs, EF_ERR_PARAMETER, "ef_cl_fs_read: no executor");
  const int64_t n = fs->n;
  if (!fs->h_state) EF_CALL(fs_pinned(fs, (size_t)n * 7 * 8, &fs->pin_state, &fs->h_state));
  cl_command_queue q = fs->ctx->queue;
  double *hu = fs->h_state, *hp = hu + 3 * n, *hr = hp + n;
  if (velocity)
    EF_CL_CALL(clEnqueueReadBuffer(q, fs->u[fs->cur], CL_FALSE, 0, 3 * (size_t)n * 8, hu, 0, NULL, NULL));
  if (pressure) EF_CL_CALL(clEnqueueReadBuffer(q, fs->p[fs->cur], CL_FALSE, 0, (size_t)n * 8, hp, 0, NULL, NULL));
  if (reaction)
    EF_CL_CALL(clEnqueueReadBuffer(q, fs->reaction, CL_FALSE, 0, 3 * (size_t)n * 8, hr, 0, NULL, NULL));
  EF_CL_CALL(clFinish(q));
  if (velocity) memcpy(velocity, hu, 3 * (size_t)n * 8);
  if (pressure) memcpy(pressure, hp, (size_t)n * 8);
  if (reaction) memcpy(reaction, hr, 3 * (size_t)n * 8);
  return EF_SUCCESS;
}

/* Snapshot into `slot`: device-to-device copies of u, p and the reactions on the main queue (in
 * order after the step that made them, before the next step's kernels), then a non-blocking read
 * of the copy into pinned memory on the copy queue, waiting on the copies' event, so the DMA runs
 * while the main queue goes on. */
int ef_cl_fs_snapshot_begin(ef_cl_fs *fs, int slot) {
  EF_CHECK(fs && slot >= 0 && slot < EF_CL_FS_SNAPSHOTS && !fs->snap_read[slot], EF_ERR_PARAMETER,
           "ef_cl_fs_snapshot_begin: bad slot %d", slot);
  const size_t n = (size_t)fs->n, bytes = 7 * n * 8;
  cl_int st;
  if (!fs->copy_queue) {
    fs->copy_queue = clCreateCommandQueue(fs->ctx->context, fs->ctx->device, 0, &st);
    EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "creating the copy queue failed: %s (%d)", ef_cl_error_name(st),
             (int)st);
  }
  if (!fs->snap_dev[slot]) {
    fs->snap_dev[slot] = clCreateBuffer(fs->ctx->context, CL_MEM_READ_WRITE, bytes, NULL, &st);
    EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clCreateBuffer (snapshot, %zu bytes) failed: %s (%d)", bytes,
             ef_cl_error_name(st), (int)st);
    EF_CALL(fs_pinned(fs, bytes, &fs->snap_pin[slot], &fs->snap_host[slot]));
  }
  cl_command_queue q = fs->ctx->queue;
  cl_event copied = NULL;
  EF_CL_CALL(clEnqueueCopyBuffer(q, fs->u[fs->cur], fs->snap_dev[slot], 0, 0, 3 * n * 8, 0, NULL, NULL));
  EF_CL_CALL(clEnqueueCopyBuffer(q, fs->p[fs->cur], fs->snap_dev[slot], 0, 3 * n * 8, n * 8, 0, NULL, NULL));
  EF_CL_CALL(clEnqueueCopyBuffer(q, fs->reaction, fs->snap_dev[slot], 0, 4 * n * 8, 3 * n * 8, 0, NULL, &copied));
  st = clFlush(q);
  if (st == CL_SUCCESS)
    st = clEnqueueReadBuffer(fs->copy_queue, fs->snap_dev[slot], CL_FALSE, 0, bytes, fs->snap_host[slot], 1, &copied,
                             &fs->snap_read[slot]);
  clReleaseEvent(copied); /* the in-order main queue finished the earlier copies before this one */
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "enqueueing the snapshot read failed: %s (%d)", ef_cl_error_name(st),
           (int)st);
  EF_CL_CALL(clFlush(fs->copy_queue));
  return EF_SUCCESS;
}

/* Any thread: wait for slot's read; *host: 7n doubles (u, kinematic p, reactions) in pinned
 * memory, the slot's until it is begun again. */
int ef_cl_fs_snapshot_wait(ef_cl_fs *fs, int slot, const double **host) {
  EF_CHECK(fs && host && slot >= 0 && slot < EF_CL_FS_SNAPSHOTS && fs->snap_read[slot], EF_ERR_PARAMETER,
           "ef_cl_fs_snapshot_wait: slot %d was not begun", slot);
  cl_int st = clWaitForEvents(1, &fs->snap_read[slot]);
  clReleaseEvent(fs->snap_read[slot]);
  fs->snap_read[slot] = NULL;
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "waiting for the snapshot read failed: %s (%d)", ef_cl_error_name(st),
           (int)st);
  *host = fs->snap_host[slot];
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Kernel launches.  Each edge kernel runs once per row block; its arguments 0-5 are the block's
 * (FS_ROW_ARGS in fs_kernels.cl), and every launch sets the kernel's whole list. */

/* Row block `index` of the edge kernels: its rows, first edge, grid and first work-group. */
typedef struct {
  int index;          /* -1 before the first block */
  cl_long row0, rows; /* the block's rows: [row0, row0 + rows) */
  cl_long edge0;      /* its first edge (row_ptr[row0]) */
  cl_long edges;
  cl_long group_base; /* index of its first work-group among all blocks' */
  size_t global;      /* work-items: rows rounded up to whole work-groups */
  cl_mem col, ev;     /* its edge columns and records */
  cl_mem lij;         /* its compact stage operator (implicit option; NULL otherwise) */
} fs_block;

#define FS_BLOCK_START {.index = -1}
/* Arguments 0-5 of an edge kernel for block blk, as the first entries of EF_CL_SET_ARGS. */
#define FS_BLOCK_ARGS(fs, blk) \
  EF_CL_ARG((blk).row0), EF_CL_ARG((blk).rows), EF_CL_ARG((blk).edge0), EF_CL_ARG((fs)->row_ptr), \
      EF_CL_ARG((blk).col), EF_CL_ARG((blk).ev)

/* Advance blk to the next row block; 0 after the last. */
static int fs_block_next(const ef_cl_fs *fs, fs_block *blk) {
  const cl_long group_base = blk->index < 0 ? 0 : blk->group_base + (cl_long)(blk->global / fs->wgs);
  const int b = blk->index + 1;
  if (b >= fs->n_blocks) return 0;
  const int64_t r0 = fs->row_begin[b], r1 = fs->row_begin[b + 1];
  blk->index = b;
  blk->row0 = r0;
  blk->rows = r1 - r0;
  blk->edge0 = fs->ed->row_ptr[r0];
  blk->edges = fs->ed->row_ptr[r1] - blk->edge0;
  blk->group_base = group_base;
  blk->global = fs_round_up(r1 - r0, fs->wgs);
  blk->col = fs->col_b[b];
  blk->ev = fs->ev_b[b];
  blk->lij = fs->lij_b ? fs->lij_b[b] : NULL;
  return 1;
}

/* The compact stage operator, L_IJ (ef_row_edge_laplacians) per directed edge in a buffer per row block laid
 * out as the columns, so the stage CG streams 8 bytes per edge instead of the records: computed on the device
 * from the records already there (on the host it was a pass over all of them and one more upload); with it
 * kdiag = K_II (ef_row_stiffness_diagonal), so the stage solves' start does not read the records. */
static int fs_stage_operator(ef_cl_fs *fs) {
  fs->lij_b = calloc((size_t)fs->n_blocks, sizeof *fs->lij_b);
  EF_CHECK(fs->lij_b, EF_ERR_MEMORY, "out of memory");
  for (int b = 0; b < fs->n_blocks; ++b) {
    const int64_t e0 = fs->ed->row_ptr[fs->row_begin[b]], e1 = fs->ed->row_ptr[fs->row_begin[b + 1]];
    EF_CALL(fs_buffer(fs, (size_t)(e1 - e0) * 8, NULL, "the compact stage operator", &fs->lij_b[b]));
  }
  for (fs_block blk = FS_BLOCK_START; fs_block_next(fs, &blk);) {
    EF_CL_SET_ARGS(fs->k[K_STAGE_OPERATOR], FS_BLOCK_ARGS(fs, blk), EF_CL_ARG(blk.lij), EF_CL_ARG(fs->kdiag));
    EF_CALL(fs_launch(fs, K_STAGE_OPERATOR, FS_PHASE_NONE, blk.global, fs->wgs,
                      fs_edge_bytes(blk.rows, blk.edges, fs->dim, 0.0, 8.0) + 8.0 * (double)blk.edges));
  }
  return EF_SUCCESS;
}

/* Launch edge kernel `record` over block blk (stage and fixed_values only size the profile's bytes). */
static int fs_launch_block(ef_cl_fs *fs, int record, int phase, const fs_block *blk, int stage, int fixed_values) {
  const double bytes = fs_kernel_bytes(fs, record, stage, fixed_values, blk->rows, blk->edges);
  return fs_launch(fs, record, phase, blk->global, fs->wgs, bytes);
}

/* Step 1 projections and tau from (un, pn). */
static int fs_enqueue_prepare(ef_cl_fs *fs, double dt, cl_mem un, cl_mem pn, int phase) {
  cl_kernel k = fs->k[K_PREPARE];
  const ef_fs_settings *s = &fs->s.fs;
  const cl_int stab = s->stabilization != 0;
  if (fs->tau_dt > 0.0 && fs->tau_dt < dt) dt = fs->tau_dt; /* TAU_TIME_STEP: dt is tau's only here */
  for (fs_block blk = FS_BLOCK_START; fs_block_next(fs, &blk);) {
    EF_CL_SET_ARGS(k, FS_BLOCK_ARGS(fs, blk), EF_CL_ARG(un), EF_CL_ARG(pn), EF_CL_ARG(fs->inv_mass),
                   EF_CL_ARG(fs->h), EF_CL_ARG(s->nu), EF_CL_ARG(dt), EF_CL_ARG(s->tau_c1), EF_CL_ARG(s->tau_c2),
                   EF_CL_ARG(s->tau_c3), EF_CL_ARG(stab), EF_CL_ARG(fs->tau), EF_CL_ARG(fs->xi), EF_CL_ARG(fs->xp));
    EF_CALL(fs_launch_block(fs, K_PREPARE, phase, &blk, 0, 0));
  }
  return EF_SUCCESS;
}

/* One RK4 stage from us into out (u_n = un, p_n = pn); stage 3 also writes the reactions and
 * pnew (p_n with the prescribed pressures when use_fixed). */
static int fs_enqueue_stage(ef_cl_fs *fs, int stage, double dt, cl_mem un, cl_mem pn, cl_mem us, cl_mem out,
                            int use_fixed, cl_mem pnew, int phase) {
  cl_kernel k = fs->k[K_STAGE];
  const cl_int st = stage, fixed = use_fixed != 0;
  const double inv_dt = 1.0 / dt;
  for (fs_block blk = FS_BLOCK_START; fs_block_next(fs, &blk);) {
    EF_CL_SET_ARGS(k, FS_BLOCK_ARGS(fs, blk), EF_CL_ARG(st), EF_CL_ARG(dt), EF_CL_ARG(inv_dt),
                   EF_CL_ARG(fs->s.fs.nu), EF_CL_ARG(fs->mass), EF_CL_ARG(fs->inv_mass), EF_CL_ARG(fs->tau),
                   EF_CL_ARG(fs->xi), EF_CL_ARG(fs->body_force), EF_CL_ARG(un), EF_CL_ARG(pn), EF_CL_ARG(us),
                   EF_CL_ARG(fs->acc), EF_CL_ARG(out), EF_CL_ARG(fs->vfix), EF_CL_ARG(fs->slip),
                   EF_CL_ARG(fs->slip_normal), EF_CL_ARG(fs->slip_tangent), EF_CL_ARG(fixed), EF_CL_ARG(fs->fixu),
                   EF_CL_ARG(fs->fixp), EF_CL_ARG(fs->pfix), EF_CL_ARG(fs->reaction), EF_CL_ARG(pnew));
    EF_CALL(fs_launch_block(fs, K_STAGE, phase, &blk, stage, use_fixed));
  }
  return EF_SUCCESS;
}

static int fs_enqueue_nullspace(ef_cl_fs *fs, cl_mem f, int phase);

/* Step 2 assembly into (hval, f); with want_sums 1 (no fixed pressure) also the flux sums and
 * the mean removal, with 2 only the partial sums.  has_fixed = 0 gives the matrix before elimination. */
static int fs_enqueue_assembly(ef_cl_fs *fs, double dt, cl_mem uh, cl_mem pn, cl_mem pf, cl_mem hval, cl_mem f,
                               int has_fixed, int want_sums, int phase) {
  cl_kernel k = fs->k[K_PRESSURE];
  const double cc = 0.5 * dt;
  const cl_int hf = has_fixed != 0, ws = want_sums != 0;
  for (fs_block blk = FS_BLOCK_START; fs_block_next(fs, &blk);) {
    EF_CL_SET_ARGS(k, FS_BLOCK_ARGS(fs, blk), EF_CL_ARG(cc), EF_CL_ARG(fs->tau), EF_CL_ARG(uh), EF_CL_ARG(pn),
                   EF_CL_ARG(pf), EF_CL_ARG(fs->xp), EF_CL_ARG(fs->pfix), EF_CL_ARG(hf), EF_CL_ARG(hval),
                   EF_CL_ARG(f), EF_CL_ARG(fs->flags), EF_CL_ARG(ws), EF_CL_ARG(blk.group_base),
                   EF_CL_ARG(fs->partials));
    EF_CALL(fs_launch_block(fs, K_PRESSURE, phase, &blk, 0, 0));
  }
  if (want_sums != 1) return EF_SUCCESS; /* 2: the partials only (fs_enqueue_imex_assembly finishes) */
  return fs_enqueue_nullspace(fs, f, phase);
}

/* The flux sums of the assembly's partials into state and the mean removed from f (no fixed pressure). */
static int fs_enqueue_nullspace(ef_cl_fs *fs, cl_mem f, int phase) {
  const cl_long count = fs->assembly_groups, n = fs->n;
  EF_CL_SET_ARGS(fs->k[K_SUM], EF_CL_ARG(count), EF_CL_ARG(fs->partials), EF_CL_ARG(n), EF_CL_ARG(fs->state));
  EF_CALL(fs_launch(fs, K_SUM, phase, fs->wgs, fs->wgs, 16.0 * (double)count + 24.0));
  EF_CL_SET_ARGS(fs->k[K_MEAN], EF_CL_ARG(n), EF_CL_ARG(f), EF_CL_ARG(fs->state));
  return fs_launch(fs, K_MEAN, phase, fs_round_up(n, fs->wgs), fs->wgs, 16.0 * (double)n);
}

/* Step 3 correction into unew, divergence into flags[0]. */
static int fs_enqueue_correct(ef_cl_fs *fs, double dt, cl_mem uh, cl_mem pn, cl_mem pnew, cl_mem unew,
                              int phase) {
  cl_kernel k = fs->k[K_CORRECT];
  const double cc = 0.5 * dt, bound2 = fs->s.fs.velocity_bound * fs->s.fs.velocity_bound;
  for (fs_block blk = FS_BLOCK_START; fs_block_next(fs, &blk);) {
    EF_CL_SET_ARGS(k, FS_BLOCK_ARGS(fs, blk), EF_CL_ARG(cc), EF_CL_ARG(fs->inv_mass), EF_CL_ARG(uh), EF_CL_ARG(pn),
                   EF_CL_ARG(pnew), EF_CL_ARG(unew), EF_CL_ARG(fs->vfix), EF_CL_ARG(fs->slip),
                   EF_CL_ARG(fs->slip_normal), EF_CL_ARG(fs->slip_tangent), EF_CL_ARG(bound2), EF_CL_ARG(fs->flags));
    EF_CALL(fs_launch_block(fs, K_CORRECT, phase, &blk, 0, 0));
  }
  return EF_SUCCESS;
}

/* flags = {INT_MAX, INT_MAX}: no bad node yet. */
static int fs_enqueue_reset_flags(ef_cl_fs *fs, int phase) {
  static const cl_int none[2] = {INT_MAX, INT_MAX}; /* static: the write may complete after we return */
  cl_event ev = NULL;
  EF_CL_CALL(clEnqueueWriteBuffer(fs->ctx->queue, fs->flags, CL_FALSE, 0, sizeof none, none, 0, NULL, &ev));
  return fs_track(fs, ev, R_FLAGS, phase, 8.0);
}

/* Values of the fixed dofs (count of them in vals) into u and p. */
static int fs_enqueue_scatter(ef_cl_fs *fs, cl_mem vals, cl_mem u, cl_mem p, int phase) {
  const cl_int count = (cl_int)fs->n_fixed_dofs, n3 = (cl_int)(3 * fs->n);
  EF_CL_SET_ARGS(fs->k[K_SCATTER], EF_CL_ARG(count), EF_CL_ARG(fs->d_fixed_dofs), EF_CL_ARG(vals), EF_CL_ARG(n3),
                 EF_CL_ARG(u), EF_CL_ARG(p));
  return fs_launch(fs, K_SCATTER, phase, fs_round_up(count, fs->wgs), fs->wgs, 20.0 * (double)count);
}

/* ---------------------------------------------------------------------------
 * Implicit viscosity (fractional_step.h 2'; the kernels' section of fs_kernels.cl). */

/* A node kernel over n items (one per node) and its bytes. */
static int fs_launch_nodes(ef_cl_fs *fs, int record, int phase, double bytes) {
  return fs_launch(fs, record, phase, fs_round_up(fs->n, fs->wgs), fs->wgs, bytes);
}

/* F and V of the state us into stage slice `stage` of imex_f, imex_v. */
static int fs_enqueue_imex_residual(ef_cl_fs *fs, int stage, cl_mem us, cl_mem pn, int phase) {
  cl_kernel k = fs->k[K_IMEX_RESIDUAL];
  const cl_long off = (cl_long)stage * 3 * fs->n;
  for (fs_block blk = FS_BLOCK_START; fs_block_next(fs, &blk);) {
    EF_CL_SET_ARGS(k, FS_BLOCK_ARGS(fs, blk), EF_CL_ARG(fs->s.fs.nu), EF_CL_ARG(fs->mass), EF_CL_ARG(fs->tau),
                   EF_CL_ARG(fs->xi), EF_CL_ARG(fs->body_force), EF_CL_ARG(us), EF_CL_ARG(pn), EF_CL_ARG(fs->vfix),
                   EF_CL_ARG(fs->pfix), EF_CL_ARG(off), EF_CL_ARG(fs->imex_f), EF_CL_ARG(fs->imex_v));
    EF_CALL(fs_launch_block(fs, K_IMEX_RESIDUAL, phase, &blk, 0, 0));
  }
  return EF_SUCCESS;
}

/* The work-groups of the stage CG's vector kernels (fs_visc_update, fs_visc_direction): each loops over blocks of
 * wgs nodes (g, g + G, ...) and adds the previous kernel's partial sums (as many as a launch over one work-group a
 * block has) once, so fewer groups read fewer of them; enough to keep every compute unit streaming.  The
 * setting stage_cg_groups, else FS_VISC_GROUPS_PER_CU a compute unit; at most one a block. */
static cl_long fs_visc_groups(const ef_cl_fs *fs) {
  const int64_t cu = fs->ctx->compute_units > 0 ? (int64_t)fs->ctx->compute_units : 1;
  const int64_t g = fs->s.stage_cg_groups > 0 ? fs->s.stage_cg_groups : FS_VISC_GROUPS_PER_CU * cu;
  return (cl_long)(g < fs->node_groups ? g : fs->node_groups);
}

/* Projected Jacobi CG for P (D + K) P x = P rhs, D_I = M_II dscale/nu (viscous_solve of fractional_step.c):
 * x enters with the prescribed values and a start.  Device-side reductions: fs_visc_init and fs_visc_reduce
 * start (state into cgs), then three launches an iteration, fs_visc_apply (q = P A p; reads cgs),
 * fs_visc_update (alpha from apply's partial sums, in every work-group; cgs -> cgs2) and fs_visc_direction (beta
 * from update's; cgs2 -> cgs), so cgs holds the state after every iteration.  The state is read back first
 * after one iteration more than the last solve of the same slot (0: the correction, 1..3: the stages) took,
 * which is most often enough (successive steps' stage systems differ little), and then every
 * viscous_check_every iterations (the first solve of a slot: every viscous_check_every); iterations past
 * convergence do nothing.  Adds to the step's viscous figures; the host's error messages. */
static int fs_visc_solve(ef_cl_fs *fs, int slot, double dscale, cl_mem rhs, cl_mem x, int phase, const char *what) {
  const double w0 = ef_wtime(), nu = fs->s.fs.nu, rtol = fs->s.fs.viscous_rtol;
  const cl_int max_it = fs->s.fs.viscous_max_iterations;
  const cl_long n = fs->n, groups = fs->assembly_groups, ngroups = fs->node_groups, vgroups = fs->visc_groups;
  const double nb = (double)fs->n;
  const size_t vgrid = (size_t)fs_visc_groups(fs) * fs->wgs; /* fs_visc_update's and _direction's grid */
  for (fs_block blk = FS_BLOCK_START; fs_block_next(fs, &blk);) {
    EF_CL_SET_ARGS(fs->k[K_VISC_INIT], FS_BLOCK_ARGS(fs, blk), EF_CL_ARG(blk.lij), EF_CL_ARG(dscale), EF_CL_ARG(nu),
                   EF_CL_ARG(fs->mass), EF_CL_ARG(fs->kdiag), EF_CL_ARG(x), EF_CL_ARG(rhs), EF_CL_ARG(fs->vfix),
                   EF_CL_ARG(fs->slip), EF_CL_ARG(fs->slip_normal), EF_CL_ARG(fs->slip_tangent), EF_CL_ARG(fs->cg_r),
                   EF_CL_ARG(fs->cg_z), EF_CL_ARG(fs->cg_p), EF_CL_ARG(fs->vdiag), EF_CL_ARG(blk.group_base),
                   EF_CL_ARG(fs->vpart));
    EF_CALL(fs_launch(fs, K_VISC_INIT, phase, blk.global, fs->wgs,
                      fs_edge_bytes(blk.rows, blk.edges, 0, 8.0, 8.0 * 21.0)));
  }
  EF_CL_SET_ARGS(fs->k[K_VISC_REDUCE], EF_CL_ARG(groups), EF_CL_ARG(fs->vpart), EF_CL_ARG(rtol), EF_CL_ARG(max_it),
                 EF_CL_ARG(fs->cgs));
  EF_CALL(fs_launch(fs, K_VISC_REDUCE, phase, fs->wgs, fs->wgs, 24.0 * (double)groups));
  /* The iteration's arguments: bound, so that only those that change (a block's, dscale and x between solves)
   * reach the driver. */
  ef_cl_bound_args *ba = fs->visc_args;
  EF_CL_BIND_ARGS(&ba[1], fs->k[K_VISC_UPDATE], EF_CL_ARG(n), EF_CL_ARG(vgroups), EF_CL_ARG(fs->vpart),
                  EF_CL_ARG(fs->cgs), EF_CL_ARG(fs->cgs2), EF_CL_ARG(x), EF_CL_ARG(fs->cg_p), EF_CL_ARG(fs->cg_q),
                  EF_CL_ARG(fs->cg_r), EF_CL_ARG(fs->vdiag), EF_CL_ARG(fs->vpart2));
  EF_CL_BIND_ARGS(&ba[2], fs->k[K_VISC_DIRECTION], EF_CL_ARG(n), EF_CL_ARG(ngroups), EF_CL_ARG(fs->vpart2),
                  EF_CL_ARG(max_it), EF_CL_ARG(fs->cgs2), EF_CL_ARG(fs->cgs), EF_CL_ARG(fs->cg_p), EF_CL_ARG(fs->cg_r),
                  EF_CL_ARG(fs->vdiag));
  double state[16];
  for (int batch = fs->v_last[slot] > 0 ? fs->v_last[slot] + 1 : fs->s.viscous_check_every;;
       batch = fs->s.viscous_check_every) {
    for (int b = 0; b < batch; ++b) {
      cl_long base = 0; /* fs_visc_apply's groups: visc_lanes items a row */
      for (fs_block blk = FS_BLOCK_START; fs_block_next(fs, &blk);) {
        const size_t global = fs_round_up(fs->visc_lanes * blk.rows, fs->wgs);
        EF_CL_BIND_ARGS(&ba[0], fs->k[K_VISC_APPLY], FS_BLOCK_ARGS(fs, blk), EF_CL_ARG(blk.lij), EF_CL_ARG(dscale),
                        EF_CL_ARG(nu), EF_CL_ARG(fs->mass), EF_CL_ARG(fs->cg_p), EF_CL_ARG(fs->vfix),
                        EF_CL_ARG(fs->slip), EF_CL_ARG(fs->slip_normal), EF_CL_ARG(fs->slip_tangent),
                        EF_CL_ARG(fs->cgs), EF_CL_ARG(fs->cg_q), EF_CL_ARG(base), EF_CL_ARG(fs->vpart));
        EF_CALL(fs_launch(fs, K_VISC_APPLY, phase, global, fs->wgs,
                          fs_edge_bytes(blk.rows, blk.edges, 0, 8.0, 8.0 * 8.0)));
        base += (cl_long)(global / fs->wgs);
      }
      /* update: x, p, q, r (r written back), diag and x written; direction: r, diag and p (written back); the
       * partial sums once (every work-group reads them, from the cache) */
      EF_CALL(fs_launch(fs, K_VISC_UPDATE, phase, vgrid, fs->wgs, 8.0 * 19.0 * nb + 8.0 * (double)vgroups));
      EF_CALL(fs_launch(fs, K_VISC_DIRECTION, phase, vgrid, fs->wgs, 8.0 * 10.0 * nb + 16.0 * (double)ngroups));
    }
    EF_CL_CALL(clEnqueueReadBuffer(fs->ctx->queue, fs->cgs, CL_TRUE, 0, 10 * 8, state, 0, NULL, NULL));
    if (state[8] != 0.0) break; /* FS_CG_DONE */
  }
  const int its = (int)state[7];
  const double bnorm = state[0], rnorm = state[3];
  fs->v_last[slot] = its;
  fs->v_seconds += ef_wtime() - w0;
  fs->v_iterations += its;
  if (its > fs->v_max_iterations) fs->v_max_iterations = its;
  if (rnorm / bnorm > fs->v_residual) fs->v_residual = rnorm / bnorm;
  int err = EF_SUCCESS;
  if (state[9] != 0.0)
    err = EF_ERROR(EF_ERR_SOLVER, "implicit viscous stage: CG broke down (p.Ap = %g at iteration %d)", state[4], its);
  else if (!(rnorm <= state[1]))
    err = EF_ERROR(EF_ERR_SOLVER,
                   "implicit viscous stage: CG did not converge in %d iterations (scaled residual %.3e > %.3e)", its,
                   rnorm / bnorm, rtol);
  if (err) return ef_error_push(err, __FILE__, __LINE__, "%s", what);
  return EF_SUCCESS;
}

static int fs_enqueue_imex_stage_start(ef_cl_fs *fs, int st, double dt, cl_mem un, int fixed_values, int phase);
static int fs_enqueue_imex_final(ef_cl_fs *fs, double dt, cl_mem un, cl_mem pn, cl_mem pnew, int fixed_values,
                                 int phase);

/* Step 1 with implicit viscosity after fs_prepare: the ARS(3,4,3) stages from (un, pn) into uh, with the
 * reactions (Rbar = sum_j b_j (F_j + V_j) in acc) and the warm start pnew (imex_momentum of
 * fractional_step.c).  fixed_values: slots 1, 2 and 0 of d_fixed_vals hold the prescribed values of
 * t + c_1 dt, t + c_2 dt and t + dt. */
static int fs_enqueue_imex_momentum(ef_cl_fs *fs, double t, double dt, cl_mem un, cl_mem pn, cl_mem pnew,
                                    int fixed_values, int phase) {
  double a[4][4], ai[4][4], b[4], c[4];
  ef_fs_imex_tableau(a, ai, b, c);
  const double gamma = ai[1][1], dscale = 1.0 / (gamma * dt);
  const cl_long n = fs->n;
  fs->v_iterations = fs->v_max_iterations = 0;
  fs->v_residual = fs->v_seconds = 0.0;
  EF_CALL(fs_enqueue_imex_residual(fs, 0, un, pn, phase));
  EF_CL_CALL(clEnqueueCopyBuffer(fs->ctx->queue, un, fs->imex_u, 0, 0, (size_t)n * 24, 0, NULL, NULL));
  for (int st = 1; st < 4; ++st) {
    EF_CALL(fs_enqueue_imex_stage_start(fs, st, dt, un, fixed_values, phase));
    char what[128];
    snprintf(what, sizeof what, "in stage %d of the implicit viscous step (t = %.9g)", st, t + c[st] * dt);
    EF_CALL(fs_visc_solve(fs, st, dscale, fs->imex_rhs, fs->imex_u, phase, what));
    EF_CALL(fs_enqueue_imex_residual(fs, st, fs->imex_u, pn, phase));
  }
  return fs_enqueue_imex_final(fs, dt, un, pn, pnew, fixed_values, phase);
}

/* Stage st's right-hand side into imex_rhs, the prescribed values of t + c_st dt into imex_u (and the pressures,
 * read only after stage 3, into fixp; fixed_values as fs_enqueue_imex_momentum), the slip projection of the
 * start: every local node. */
static int fs_enqueue_imex_stage_start(ef_cl_fs *fs, int st, double dt, cl_mem un, int fixed_values, int phase) {
  double a[4][4], ai[4][4], b[4], c[4];
  ef_fs_imex_tableau(a, ai, b, c);
  const double w = 1.0 / (ai[1][1] * dt) / fs->s.fs.nu;
  const cl_long n = fs->n;
  const double nb = (double)fs->n;
  const cl_int sc = st;
  EF_CL_SET_ARGS(fs->k[K_IMEX_RHS], EF_CL_ARG(n), EF_CL_ARG(sc), EF_CL_ARG(a[st][0]), EF_CL_ARG(a[st][1]),
                 EF_CL_ARG(a[st][2]), EF_CL_ARG(ai[st][0]), EF_CL_ARG(ai[st][1]), EF_CL_ARG(ai[st][2]), EF_CL_ARG(dt),
                 EF_CL_ARG(w), EF_CL_ARG(fs->mass), EF_CL_ARG(un), EF_CL_ARG(fs->imex_f), EF_CL_ARG(fs->imex_v),
                 EF_CL_ARG(fs->imex_rhs));
  EF_CALL(fs_launch_nodes(fs, K_IMEX_RHS, phase, 8.0 * (1.0 + 3.0 + 6.0 * st + 3.0) * nb));
  if (fixed_values) EF_CALL(fs_enqueue_scatter(fs, fs->d_fixed_vals[st == 3 ? 0 : st], fs->imex_u, fs->fixp, phase));
  EF_CL_SET_ARGS(fs->k[K_IMEX_PROJECT], EF_CL_ARG(n), EF_CL_ARG(fs->imex_u), EF_CL_ARG(fs->vfix), EF_CL_ARG(fs->slip),
                 EF_CL_ARG(fs->slip_normal), EF_CL_ARG(fs->slip_tangent));
  return fs_launch_nodes(fs, K_IMEX_PROJECT, phase, 8.0 * 12.0 * nb);
}

/* The end of the stages from imex_u and the residuals: uh, acc = Rbar, the reactions and the warm start pnew
 * (fs_imex_final, every local node). */
static int fs_enqueue_imex_final(ef_cl_fs *fs, double dt, cl_mem un, cl_mem pn, cl_mem pnew, int fixed_values,
                                 int phase) {
  double a[4][4], ai[4][4], b[4], c[4];
  ef_fs_imex_tableau(a, ai, b, c);
  const double inv_dt = 1.0 / dt;
  const cl_long n = fs->n;
  const double nb = (double)fs->n;
  const cl_int fixed = fixed_values != 0;
  EF_CL_SET_ARGS(fs->k[K_IMEX_FINAL], EF_CL_ARG(n), EF_CL_ARG(b[0]), EF_CL_ARG(b[1]), EF_CL_ARG(b[2]), EF_CL_ARG(b[3]),
                 EF_CL_ARG(a[3][0]), EF_CL_ARG(a[3][1]), EF_CL_ARG(a[3][2]), EF_CL_ARG(a[3][3]), EF_CL_ARG(dt),
                 EF_CL_ARG(inv_dt), EF_CL_ARG(fs->mass), EF_CL_ARG(fs->inv_mass), EF_CL_ARG(un), EF_CL_ARG(pn),
                 EF_CL_ARG(fs->imex_u), EF_CL_ARG(fs->imex_f), EF_CL_ARG(fs->imex_v), EF_CL_ARG(fs->acc),
                 EF_CL_ARG(fs->uh), EF_CL_ARG(fs->vfix), EF_CL_ARG(fs->slip), EF_CL_ARG(fs->slip_normal),
                 EF_CL_ARG(fs->slip_tangent), EF_CL_ARG(fixed), EF_CL_ARG(fs->fixp), EF_CL_ARG(fs->pfix),
                 EF_CL_ARG(fs->reaction), EF_CL_ARG(pnew));
  return fs_launch_nodes(fs, K_IMEX_FINAL, phase, 8.0 * (2.0 * 24.0 + 12.0 + 4 * 48.0 + 3 * 24.0 + 8.0) * nb);
}

/* Step 2 with implicit_viscosity.correction "viscous" (1) or "rotational" (3) after the assembly's row
 * kernels (their partials written when nullspace): q = M^-1 E(p_n) into cg_z; for 1 the filter of f (and
 * the partials again); then the null-space sums and mean. */
static int fs_enqueue_imex_assembly(ef_cl_fs *fs, double dt, cl_mem pn, int nullspace, int phase) {
  double a[4][4], ai[4][4], b[4], c[4];
  ef_fs_imex_tableau(a, ai, b, c);
  const double gdt_nu = ai[1][1] * dt * fs->s.fs.nu;
  for (fs_block blk = FS_BLOCK_START; fs_block_next(fs, &blk);) {
    EF_CL_SET_ARGS(fs->k[K_IMEX_CONTINUITY], FS_BLOCK_ARGS(fs, blk), EF_CL_ARG(fs->H.col_idx), EF_CL_ARG(fs->H.values),
                   EF_CL_ARG(fs->f), EF_CL_ARG(pn), EF_CL_ARG(fs->inv_mass), EF_CL_ARG(fs->pfix), EF_CL_ARG(fs->cg_z));
    EF_CALL(fs_launch(fs, K_IMEX_CONTINUITY, phase, blk.global, fs->wgs,
                      fs_edge_bytes(blk.rows, blk.edges, 0, 12.0, 8.0 * 7.0)));
  }
  if (fs->s.fs.viscous_correction == 1)
    for (fs_block blk = FS_BLOCK_START; fs_block_next(fs, &blk);) {
      EF_CL_SET_ARGS(fs->k[K_IMEX_FILTER], FS_BLOCK_ARGS(fs, blk), EF_CL_ARG(blk.lij), EF_CL_ARG(gdt_nu),
                     EF_CL_ARG(fs->cg_z), EF_CL_ARG(fs->pfix), EF_CL_ARG(fs->f), EF_CL_ARG(blk.group_base),
                     EF_CL_ARG(fs->partials));
      EF_CALL(fs_launch(fs, K_IMEX_FILTER, phase, blk.global, fs->wgs,
                        fs_edge_bytes(blk.rows, blk.edges, 0, 8.0, 8.0 * 5.0)));
    }
  return nullspace ? fs_enqueue_nullspace(fs, fs->f, phase) : EF_SUCCESS;
}

/* Step 3 with the correction "viscous" or "viscous_unfiltered": delta = -c (M + gamma dt nu K)^-1 G dp by
 * the stage solve (into imex_u), then unew = uh + delta with the BCs and the divergence flag. */
static int fs_enqueue_imex_correct(ef_cl_fs *fs, double dt, cl_mem pn, cl_mem pnew, cl_mem unew, int phase) {
  double a[4][4], ai[4][4], b[4], c[4];
  ef_fs_imex_tableau(a, ai, b, c);
  const double dscale = 1.0 / (ai[1][1] * dt), cc = 0.5 * dt, w = dscale / fs->s.fs.nu;
  const double bound2 = fs->s.fs.velocity_bound * fs->s.fs.velocity_bound;
  const cl_long n = fs->n;
  for (fs_block blk = FS_BLOCK_START; fs_block_next(fs, &blk);) {
    EF_CL_SET_ARGS(fs->k[K_IMEX_CORR_START], FS_BLOCK_ARGS(fs, blk), EF_CL_ARG(cc), EF_CL_ARG(w),
                   EF_CL_ARG(fs->inv_mass), EF_CL_ARG(pn), EF_CL_ARG(pnew), EF_CL_ARG(fs->vfix), EF_CL_ARG(fs->slip),
                   EF_CL_ARG(fs->slip_normal), EF_CL_ARG(fs->slip_tangent), EF_CL_ARG(fs->imex_u),
                   EF_CL_ARG(fs->imex_rhs));
    EF_CALL(fs_launch(fs, K_IMEX_CORR_START, phase, blk.global, fs->wgs,
                      fs_edge_bytes(blk.rows, blk.edges, fs->dim, 0.0, 8.0 * 16.0)));
  }
  EF_CALL(fs_visc_solve(fs, 0, dscale, fs->imex_rhs, fs->imex_u, phase, "in the viscous velocity correction"));
  EF_CL_SET_ARGS(fs->k[K_IMEX_CORRECT], EF_CL_ARG(n), EF_CL_ARG(fs->uh), EF_CL_ARG(fs->imex_u), EF_CL_ARG(pnew),
                 EF_CL_ARG(unew), EF_CL_ARG(fs->vfix), EF_CL_ARG(fs->slip), EF_CL_ARG(fs->slip_normal),
                 EF_CL_ARG(fs->slip_tangent), EF_CL_ARG(bound2), EF_CL_ARG(fs->flags));
  return fs_launch_nodes(fs, K_IMEX_CORRECT, phase, 8.0 * 16.0 * (double)fs->n);
}

/* Correction "rotational" after step 3: p_{n+1} -= 2 gamma nu q at the free-pressure nodes. */
static int fs_enqueue_imex_rotational(ef_cl_fs *fs, cl_mem pnew, int phase) {
  double a[4][4], ai[4][4], b[4], c[4];
  ef_fs_imex_tableau(a, ai, b, c);
  const double g2_nu = 2.0 * ai[1][1] * fs->s.fs.nu;
  const cl_long n = fs->n;
  EF_CL_SET_ARGS(fs->k[K_IMEX_ROTATIONAL], EF_CL_ARG(n), EF_CL_ARG(g2_nu), EF_CL_ARG(fs->cg_z), EF_CL_ARG(fs->pfix),
                 EF_CL_ARG(pnew));
  return fs_launch_nodes(fs, K_IMEX_ROTATIONAL, phase, 8.0 * 3.0 * (double)fs->n);
}

/* ---------------------------------------------------------------------------
 * pressure_guess (fractional_step.h): the history on the device, the guess by fs_pressure_guess. */

static int fs_pg_alloc(ef_cl_fs *fs) {
  const size_t n8 = (size_t)fs->n * 8;
  if (!fs->pg[0]) EF_CALL(fs_buffer(fs, n8, NULL, "the pressure guess's history", &fs->pg[0]));
  if (fs->s.fs.pressure_guess == 2 && !fs->pg[1])
    EF_CALL(fs_buffer(fs, n8, NULL, "the pressure guess's second history level", &fs->pg[1]));
  return EF_SUCCESS;
}

/* The guess into pnew at the free nodes from the known levels; returns them (0: pnew keeps p_n). */
static int fs_enqueue_pressure_guess(ef_cl_fs *fs, double dt, cl_mem pn, cl_mem pnew, int *known) {
  *known = 0;
  const int guess = fs->s.fs.pressure_guess;
  if (!guess) return EF_SUCCESS;
  EF_CALL(fs_pg_alloc(fs));
  *known = fs->pg_levels;
  const int order = *known < guess ? *known : guess;
  if (order == 0) return EF_SUCCESS;
  double a, b;
  ef_pressure_guess_weights(order, dt, fs->pg_dt[0], fs->pg_dt[1], &a, &b);
  const cl_long n = fs->n;
  cl_mem p2 = order == 2 ? fs->pg[1] : fs->pg[0];
  EF_CL_SET_ARGS(fs->k[K_PRESSURE_GUESS], EF_CL_ARG(n), EF_CL_ARG(pn), EF_CL_ARG(fs->pg[0]), EF_CL_ARG(p2),
                 EF_CL_ARG(fs->pfix), EF_CL_ARG(a), EF_CL_ARG(b), EF_CL_ARG(pnew));
  return fs_launch_nodes(fs, K_PRESSURE_GUESS, FS_PHASE_1, (order == 2 ? 33.0 : 25.0) * (double)fs->n);
}

/* After a step: its input pressure pn and step dt in front of the history. */
static int fs_pressure_guess_push(ef_cl_fs *fs, double dt, cl_mem pn, int known) {
  const int guess = fs->s.fs.pressure_guess;
  if (!guess) return EF_SUCCESS;
  if (guess == 2 && known > 0) {
    cl_mem swap = fs->pg[1];
    fs->pg[1] = fs->pg[0];
    fs->pg[0] = swap;
    fs->pg_dt[1] = fs->pg_dt[0];
  }
  EF_CL_CALL(clEnqueueCopyBuffer(fs->ctx->queue, pn, fs->pg[0], 0, 0, (size_t)fs->n * 8, 0, NULL, NULL));
  fs->pg_dt[0] = dt;
  fs->pg_levels = guess == 2 && known > 0 ? 2 : 1;
  return EF_SUCCESS;
}

int ef_cl_fs_get_pressure_history(ef_cl_fs *fs, double *prev, double *prev2, ef_fs_pressure_history *h) {
  EF_CHECK(fs && prev && prev2 && h, EF_ERR_PARAMETER, "ef_cl_fs_get_pressure_history: NULL argument");
  memset(h, 0, sizeof *h);
  if (fs->pg_levels == 0 || !fs->pg[0]) return EF_SUCCESS;
  const size_t n8 = (size_t)fs->n * 8;
  EF_CL_CALL(clEnqueueReadBuffer(fs->ctx->queue, fs->pg[0], CL_TRUE, 0, n8, prev, 0, NULL, NULL));
  if (fs->pg_levels == 2)
    EF_CL_CALL(clEnqueueReadBuffer(fs->ctx->queue, fs->pg[1], CL_TRUE, 0, n8, prev2, 0, NULL, NULL));
  h->levels = fs->pg_levels;
  h->prev = prev;
  h->prev2 = prev2;
  h->dt[0] = fs->pg_dt[0];
  h->dt[1] = fs->pg_levels == 2 ? fs->pg_dt[1] : 0.0;
  return EF_SUCCESS;
}

int ef_cl_fs_set_pressure_history(ef_cl_fs *fs, const ef_fs_pressure_history *h) {
  EF_CHECK(fs && h, EF_ERR_PARAMETER, "ef_cl_fs_set_pressure_history: NULL argument");
  EF_CALL(ef_fs_pressure_history_check(h, 0)); /* the device keeps no "last": an upload forgets the history */
  fs->pg_levels = 0;
  if (h->levels == 0 || !fs->s.fs.pressure_guess) return EF_SUCCESS;
  EF_CALL(fs_pg_alloc(fs));
  const int levels = h->levels == 2 && fs->pg[1] ? 2 : 1; /* "linear" keeps one level */
  const size_t n8 = (size_t)fs->n * 8;
  EF_CL_CALL(clEnqueueWriteBuffer(fs->ctx->queue, fs->pg[0], CL_TRUE, 0, n8, h->prev, 0, NULL, NULL));
  if (levels == 2)
    EF_CL_CALL(clEnqueueWriteBuffer(fs->ctx->queue, fs->pg[1], CL_TRUE, 0, n8, h->prev2, 0, NULL, NULL));
  fs->pg_dt[0] = h->dt[0];
  fs->pg_dt[1] = levels == 2 ? h->dt[1] : 0.0;
  fs->pg_levels = levels;
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * The projection "converged" (viscous_projection 1; cp_solve of fractional_step.c, the same operator,
 * stopping test and breakdown rules).  Phase 3; the host sees only scalars (the dot products' per-group
 * partial sums) and the pressure solver's own read-backs. */

/* y = a x + b y over n entries (a == 0 does not read x, b == 0 does not read y). */
static int fs_cp_axpby(ef_cl_fs *fs, double a, cl_mem x, double b, cl_mem y) {
  const cl_long n = fs->n;
  EF_CL_SET_ARGS(fs->k[K_CP_AXPBY], EF_CL_ARG(n), EF_CL_ARG(a), EF_CL_ARG(x), EF_CL_ARG(b), EF_CL_ARG(y));
  return fs_launch_nodes(fs, K_CP_AXPBY, FS_PHASE_3, 8.0 * ((a != 0.0) + 2.0 * (b != 0.0) + (b == 0.0)) * (double)fs->n);
}

/* a . b: per work-group sums in a fixed tree on the device, added in group order here. */
static int fs_cp_dot(ef_cl_fs *fs, cl_mem a, cl_mem b, double *out) {
  const cl_long n = fs->n;
  EF_CL_SET_ARGS(fs->k[K_CP_DOT], EF_CL_ARG(n), EF_CL_ARG(a), EF_CL_ARG(b), EF_CL_ARG(fs->cp_part));
  EF_CALL(fs_launch_nodes(fs, K_CP_DOT, FS_PHASE_3, 16.0 * (double)fs->n));
  EF_CL_CALL(clEnqueueReadBuffer(fs->ctx->queue, fs->cp_part, CL_TRUE, 0, (size_t)fs->node_groups * 8, fs->cp_hpart,
                                 0, NULL, NULL));
  double sum = 0.0;
  for (int64_t g = 0; g < fs->node_groups; ++g) sum += fs->cp_hpart[g];
  *out = sum;
  return EF_SUCCESS;
}

/* r = f(u(p), p) - H p at the free-pressure rows (0 at fixed ones), u(p) the velocity corrected from (cp_u0,
 * cp_p0) to p with the boundary conditions (fs_correct, its divergence flag), f its assembly (into cp_f; H's
 * values are rewritten with the same ones). */
static int fs_cp_residual(ef_cl_fs *fs, double dt, cl_mem p, cl_mem r) {
  EF_CALL(fs_enqueue_correct(fs, dt, fs->cp_u0, fs->cp_p0, p, fs->cp_u, FS_PHASE_3));
  EF_CALL(fs_enqueue_assembly(fs, dt, fs->cp_u, p, p, fs->H.values, fs->cp_f, 1, fs->n_fixed_pressure == 0,
                              FS_PHASE_3));
  for (fs_block blk = FS_BLOCK_START; fs_block_next(fs, &blk);) {
    EF_CL_SET_ARGS(fs->k[K_CP_RESIDUAL], FS_BLOCK_ARGS(fs, blk), EF_CL_ARG(fs->H.col_idx), EF_CL_ARG(fs->H.values),
                   EF_CL_ARG(fs->cp_f), EF_CL_ARG(p), EF_CL_ARG(fs->pfix), EF_CL_ARG(r));
    EF_CALL(fs_launch(fs, K_CP_RESIDUAL, FS_PHASE_3, blk.global, fs->wgs,
                      fs_edge_bytes(blk.rows, blk.edges, 0, 12.0, 8.0 * 5.0)));
  }
  return EF_SUCCESS;
}

static int fs_cp_dot(ef_cl_fs *fs, cl_mem a, cl_mem b, double *out);

/* z = H^-1 r from 0 by the strategy's pressure solver (set up for H by the step's solve).  Without a fixed
 * pressure H is singular (the constants): r's mean, zero but for rounding, is removed first (in place: the
 * PCG iterates in the complement of the constants), as the host CG does with its right-hand side
 * (constant_null_space); left in, the device CG can break down on it (p.Ap <= 0). */
static int fs_cp_precondition(ef_cl_fs *fs, cl_mem r, cl_mem z) {
  if (fs->n_fixed_pressure == 0) {
    double sum = 0.0;
    EF_CALL(fs_cp_dot(fs, r, fs->cp_one, &sum));
    EF_CALL(fs_cp_axpby(fs, -sum / (double)fs->n, fs->cp_one, 1.0, r));
  }
  EF_CALL(fs_cp_axpby(fs, 0.0, r, 0.0, z));
  const ef_vector vb = ef_cl_vector_wrap(r, fs->n);
  ef_vector vx = ef_cl_vector_wrap(z, fs->n);
  ef_solve_result res;
  memset(&res, 0, sizeof res);
  int err = ef_linear_solver_solve(fs->solver, &vb, &vx, &res);
  if (!err && !res.converged)
    err = EF_ERROR(EF_ERR_SOLVER, "no convergence in %d iterations (relative residual %.3e)", res.iterations,
                   res.residual);
  if (err) return ef_error_push(err, __FILE__, __LINE__, "in the converged projection's preconditioner");
  return EF_SUCCESS;
}

/* From the single projection (unew, pnew): PCG on A dp = r(p0), A dp = r(p0) - r(p0 + dp), to |r| <= 1e-3
 * |r(p0)| or 20 iterations; unew, pnew receive u(p), p (pnew is the iterate).  The corrections' divergence
 * flags stay in flags[0] for the step's check. */
static int fs_cp_solve(ef_cl_fs *fs, double dt, cl_mem unew, cl_mem pnew) {
  cl_command_queue q = fs->ctx->queue;
  const size_t n8 = (size_t)fs->n * 8;
  cl_mem x = pnew, r = fs->cp_r, z = fs->cp_z, d = fs->cp_d, qv = fs->cp_q, t = fs->cp_t, r0 = fs->cp_r0;
  EF_CL_CALL(clEnqueueCopyBuffer(q, unew, fs->cp_u0, 0, 0, 3 * n8, 0, NULL, NULL));
  EF_CL_CALL(clEnqueueCopyBuffer(q, pnew, fs->cp_p0, 0, 0, n8, 0, NULL, NULL));
  fs->cp_iterations = 0;
  EF_CALL(fs_cp_residual(fs, dt, x, r0));
  EF_CL_CALL(clEnqueueCopyBuffer(q, r0, r, 0, 0, n8, 0, NULL, NULL));
  double rr = 0.0;
  EF_CALL(fs_cp_dot(fs, r, r, &rr));
  const double rn0 = sqrt(rr);
  if (rn0 == 0.0) return EF_SUCCESS;
  EF_CALL(fs_cp_precondition(fs, r, z));
  EF_CL_CALL(clEnqueueCopyBuffer(q, z, d, 0, 0, n8, 0, NULL, NULL));
  double rz = 0.0;
  EF_CALL(fs_cp_dot(fs, r, z, &rz));
  for (int k = 0; k < 20; ++k) {
    EF_CL_CALL(clEnqueueCopyBuffer(q, fs->cp_p0, t, 0, 0, n8, 0, NULL, NULL));
    EF_CALL(fs_cp_axpby(fs, 1.0, d, 1.0, t)); /* t = p0 + d */
    EF_CALL(fs_cp_residual(fs, dt, t, qv));
    EF_CALL(fs_cp_axpby(fs, 1.0, r0, -1.0, qv)); /* q = r0 - r(p0 + d) */
    double dq = 0.0;
    EF_CALL(fs_cp_dot(fs, d, qv, &dq));
    EF_CHECK(isfinite(dq), EF_ERR_SOLVER, "converged projection: PCG broke down (d.Ad = %g at iteration %d)", dq, k);
    if (!(dq > 0.0)) break; /* a residual at rounding level (a steady state): keep the iterate */
    const double alpha = rz / dq;
    EF_CALL(fs_cp_axpby(fs, alpha, d, 1.0, x));
    EF_CALL(fs_cp_axpby(fs, -alpha, qv, 1.0, r));
    fs->cp_iterations = k + 1;
    EF_CALL(fs_cp_dot(fs, r, r, &rr));
    if (sqrt(rr) <= 1e-3 * rn0) break;
    EF_CALL(fs_cp_precondition(fs, r, z));
    double rz2 = 0.0;
    EF_CALL(fs_cp_dot(fs, r, z, &rz2));
    const double beta = rz2 / rz;
    rz = rz2;
    EF_CALL(fs_cp_axpby(fs, 1.0, z, beta, d)); /* d = z + beta d */
  }
  return fs_enqueue_correct(fs, dt, fs->cp_u0, fs->cp_p0, x, unew, FS_PHASE_3);
}

/* The error of a divergence flag: the bad node's values read back (as the host executor's message). */
static int fs_divergence_error(ef_cl_fs *fs, int node, cl_mem u, cl_mem p) {
  double v[3] = {0.0, 0.0, 0.0}, pv = 0.0;
  cl_command_queue q = fs->ctx->queue;
  EF_CL_CALL(clEnqueueReadBuffer(q, u, CL_TRUE, (size_t)node * 24, 24, v, 0, NULL, NULL));
  EF_CL_CALL(clEnqueueReadBuffer(q, p, CL_TRUE, (size_t)node * 8, 8, &pv, 0, NULL, NULL));
  if (!isfinite(pv))
    return EF_ERROR(EF_ERR_DIVERGED, "the solution diverged: pressure %g at node %lld", pv, (long long)node);
  return EF_ERROR(EF_ERR_DIVERGED, "the solution diverged: velocity (%g, %g, %g) at node %lld (bound %g)", v[0],
                  v[1], v[2], (long long)node, fs->s.fs.velocity_bound);
}

/* ---------------------------------------------------------------------------
 * Phases for tests. */

int ef_cl_fs_prepare(ef_cl_fs *fs, double dt) {
  EF_CHECK(fs && dt > 0.0, EF_ERR_PARAMETER, "ef_cl_fs_prepare: bad argument");
  EF_CALL(fs_enqueue_prepare(fs, dt, fs->u[fs->cur], fs->p[fs->cur], FS_PHASE_NONE));
  EF_CL_CALL(clFinish(fs->ctx->queue));
  fs_collect(fs, NULL);
  return EF_SUCCESS;
}

/* One RK stage between the named stage arrays, without boundary-value callback. */
int ef_cl_fs_rk_stage(ef_cl_fs *fs, int stage, double dt) {
  EF_CHECK(fs && dt > 0.0 && stage >= 0 && stage <= 3, EF_ERR_PARAMETER, "ef_cl_fs_rk_stage: bad argument");
  cl_mem in[4] = {fs->u[fs->cur], fs->ua, fs->ub, fs->ua}, out[4] = {fs->ua, fs->ub, fs->ua, fs->uh};
  EF_CALL(fs_enqueue_stage(fs, stage, dt, fs->u[fs->cur], fs->p[fs->cur], in[stage], out[stage], 0,
                           fs->p[1 - fs->cur], FS_PHASE_NONE));
  EF_CL_CALL(clFinish(fs->ctx->queue));
  fs_collect(fs, NULL);
  return EF_SUCCESS;
}

/* Flags and null-space sums back (blocking); *imbalance: |sum f| / sum |f| when no pressure
 * is fixed. */
static int fs_read_flags(ef_cl_fs *fs, int phase, double *imbalance) {
  cl_event ev = NULL;
  cl_command_queue q = fs->ctx->queue;
  const int sums = fs->n_fixed_pressure == 0;
  if (sums) {
    EF_CL_CALL(clEnqueueReadBuffer(q, fs->state, CL_FALSE, 0, 3 * 8, fs->h_scalars, 0, NULL, &ev));
    EF_CALL(fs_track(fs, ev, R_FLAGS, phase, 24.0));
  }
  EF_CL_CALL(clEnqueueReadBuffer(q, fs->flags, CL_FALSE, 0, sizeof fs->h_flags, fs->h_flags, 0, NULL, &ev));
  cl_int st = clWaitForEvents(1, &ev);
  EF_CALL(fs_track(fs, ev, R_FLAGS, phase, 8.0));
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "reading the step flags failed: %s (%d)", ef_cl_error_name(st),
           (int)st);
  *imbalance = sums && fs->h_scalars[1] > 0.0 ? fabs(fs->h_scalars[0]) / fs->h_scalars[1] : 0.0;
  return EF_SUCCESS;
}

/* The checks after assembly, in the host executor's order: non-finite rhs, flux imbalance. */
static int fs_check_assembly(ef_cl_fs *fs, double imbalance) {
  if (fs->h_flags[1] != INT_MAX) {
    const int bad = fs->h_flags[1];
    double v[3] = {0.0, 0.0, 0.0};
    EF_CL_CALL(clEnqueueReadBuffer(fs->ctx->queue, fs->uh, CL_TRUE, (size_t)bad * 24, 24, v, 0, NULL, NULL));
    return EF_ERROR(EF_ERR_DIVERGED,
                    "pressure right-hand side is not finite at node %lld (intermediate velocity "
                    "(%g, %g, %g))",
                    (long long)bad, v[0], v[1], v[2]);
  }
  if (fs->n_fixed_pressure == 0)
    EF_CHECK(imbalance <= fs->s.fs.flux_imbalance_tolerance, EF_ERR_PARAMETER,
             "pressure equation: no node has a fixed pressure and the prescribed velocities do not "
             "conserve mass (net flux imbalance |sum f|/sum|f| = %.3e > tolerance %.3e); fix the "
             "pressure on an outlet, or balance inflow and outflow",
             imbalance, fs->s.fs.flux_imbalance_tolerance);
  return EF_SUCCESS;
}

/* H and f from (UH, p_n, PNEW, XP, TAU), with the checks of the host assembly. */
int ef_cl_fs_assemble(ef_cl_fs *fs, double dt) {
  EF_CHECK(fs && dt > 0.0, EF_ERR_PARAMETER, "ef_cl_fs_assemble: bad argument");
  double imbalance = 0.0;
  EF_CALL(fs_enqueue_reset_flags(fs, FS_PHASE_NONE));
  EF_CALL(fs_enqueue_assembly(fs, dt, fs->uh, fs->p[fs->cur], fs->p[1 - fs->cur], fs->H.values, fs->f, 1,
                              fs->n_fixed_pressure == 0, FS_PHASE_NONE));
  EF_CALL(fs_read_flags(fs, FS_PHASE_NONE, &imbalance));
  fs_collect(fs, NULL);
  return fs_check_assembly(fs, imbalance);
}

/* UNEW from (UH, p_n, PNEW) and the divergence check. */
int ef_cl_fs_correct(ef_cl_fs *fs, double dt) {
  EF_CHECK(fs && dt > 0.0, EF_ERR_PARAMETER, "ef_cl_fs_correct: bad argument");
  double imbalance;
  cl_mem unew = fs->u[1 - fs->cur], pnew = fs->p[1 - fs->cur];
  EF_CALL(fs_enqueue_reset_flags(fs, FS_PHASE_NONE));
  EF_CALL(fs_enqueue_correct(fs, dt, fs->uh, fs->p[fs->cur], pnew, unew, FS_PHASE_NONE));
  EF_CALL(fs_read_flags(fs, FS_PHASE_NONE, &imbalance));
  fs_collect(fs, NULL);
  if (fs->h_flags[0] != INT_MAX) return fs_divergence_error(fs, fs->h_flags[0], unew, pnew);
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * Time step. */

int ef_cl_fs_compute_dt(ef_cl_fs *fs, const ef_fs_dt_settings *s, double *dt, double *dt_stable, int *reduced) {
  EF_CHECK(fs && s && dt, EF_ERR_PARAMETER, "time step: NULL argument");
  EF_CALL(ef_fs_dt_check(s));
  const cl_long n = fs->n, count = fs->dt_groups;
  const int implicit = fs->s.fs.viscous_implicit != 0;
  if (implicit) {
    /* The convective limit only (ef_fs_compute_dt), capped below by the viscous number. */
    EF_CL_SET_ARGS(fs->k[K_DT_CONVECTIVE], EF_CL_ARG(n), EF_CL_ARG(fs->hmin), EF_CL_ARG(fs->u[fs->cur]),
                   EF_CL_ARG(fs->s.fs.nu), EF_CL_ARG(fs->partials));
    EF_CALL(fs_launch(fs, K_DT_CONVECTIVE, FS_PHASE_NONE, (size_t)count * fs->wgs, fs->wgs, 32.0 * (double)n));
  } else {
    EF_CL_SET_ARGS(fs->k[K_DT_PARTIAL], EF_CL_ARG(n), EF_CL_ARG(fs->hmin), EF_CL_ARG(fs->u[fs->cur]),
                   EF_CL_ARG(fs->s.fs.nu), EF_CL_ARG(fs->partials));
    EF_CALL(fs_launch(fs, K_DT_PARTIAL, FS_PHASE_NONE, (size_t)count * fs->wgs, fs->wgs, 32.0 * (double)n));
  }
  EF_CL_SET_ARGS(fs->k[K_DT_FINAL], EF_CL_ARG(count), EF_CL_ARG(fs->partials), EF_CL_ARG(fs->state));
  EF_CALL(fs_launch(fs, K_DT_FINAL, FS_PHASE_NONE, fs->wgs, fs->wgs, 8.0 * (double)count));
  double stable = 0.0, expl[FS_DT_MAX_GROUPS], expl_min = 1.0e300;
  if (implicit) /* TAU_TIME_STEP: the explicit rule's partials, reduced here */
    EF_CL_CALL(clEnqueueReadBuffer(fs->ctx->queue, fs->partials, CL_FALSE, (size_t)count * 8, (size_t)count * 8, expl,
                                   0, NULL, NULL));
  EF_CL_CALL(clEnqueueReadBuffer(fs->ctx->queue, fs->state, CL_TRUE, 3 * 8, 8, &stable, 0, NULL, NULL));
  fs_collect(fs, NULL);
  for (cl_long g = 0; implicit && g < count; ++g)
    if (expl[g] < expl_min) expl_min = expl[g];
  EF_CHECK(isfinite(stable) || stable == 1.0e300, EF_ERR_DIVERGED, "time step: the velocity field is not finite");
  EF_CALL(ef_fs_dt_floor_check(s, stable));
  ef_fs_dt_choose(s, stable, dt, dt_stable, reduced);
  if (implicit) ef_fs_dt_cap_viscous(s, &fs->s.fs, fs->hmin2_over_nu, dt);
  fs->tau_dt = ef_fs_dt_tau(s, &fs->s.fs, expl_min); /* TAU_TIME_STEP */
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * The solver. */

int ef_cl_fs_assemble_pressure(ef_cl_fs *fs, double dt) {
  EF_CHECK(fs && dt > 0.0, EF_ERR_PARAMETER, "ef_cl_fs_assemble_pressure: bad argument");
  /* Any state gives the matrix's true sparsity and a representative spectrum (a tuner's). */
  EF_CL_CALL(clEnqueueCopyBuffer(fs->ctx->queue, fs->p[fs->cur], fs->p[1 - fs->cur], 0, 0, (size_t)fs->n * 8, 0,
                                 NULL, NULL));
  EF_CALL(fs_enqueue_prepare(fs, dt, fs->u[fs->cur], fs->p[fs->cur], FS_PHASE_NONE));
  EF_CALL(fs_enqueue_reset_flags(fs, FS_PHASE_NONE));
  EF_CALL(fs_enqueue_assembly(fs, dt, fs->u[fs->cur], fs->p[fs->cur], fs->p[1 - fs->cur], fs->H.values, fs->f, 1,
                              0, FS_PHASE_NONE));
  EF_CL_CALL(clFinish(fs->ctx->queue));
  fs_collect(fs, NULL);
  return EF_SUCCESS;
}

/* Evaluate the boundary values at time t on the host, gather the fixed entries into pinned
 * slot `slot` and upload them (non-blocking).  Slot 0 (t + dt) also becomes fixed_cur. */
static int fs_fixed_values(ef_cl_fs *fs, double t, int slot) {
  const int64_t n = fs->n, count = fs->n_fixed_dofs;
  const int32_t *dofs = fs->fixed_dofs;
  if (!fs->eval_u) EF_MALLOC(fs->eval_u, 3 * n);
  if (!fs->eval_p) EF_MALLOC(fs->eval_p, n);
  if (!fs->fixed_cur_valid) {
    /* The device's current values at the fixed dofs: bases for entries the callback skips. */
    const cl_int c = (cl_int)count, n3 = (cl_int)(3 * n);
    EF_CL_SET_ARGS(fs->k[K_GATHER], EF_CL_ARG(c), EF_CL_ARG(fs->d_fixed_dofs), EF_CL_ARG(n3),
                   EF_CL_ARG(fs->u[fs->cur]), EF_CL_ARG(fs->p[fs->cur]), EF_CL_ARG(fs->d_fixed_vals[slot]));
    EF_CALL(fs_launch(fs, K_GATHER, FS_PHASE_UPLOAD, fs_round_up(count, fs->wgs), fs->wgs, 20.0 * (double)count));
    EF_CL_CALL(clEnqueueReadBuffer(fs->ctx->queue, fs->d_fixed_vals[slot], CL_TRUE, 0, (size_t)count * 8,
                                   fs->fixed_cur, 0, NULL, NULL));
    fs->fixed_cur_valid = 1;
  }
  double *hu = fs->eval_u, *hp = fs->eval_p;
  for (int64_t k = 0; k < count; ++k) {
    const int64_t d = dofs[k];
    if (d < 3 * n)
      hu[d] = fs->fixed_cur[k];
    else
      hp[d - 3 * n] = NAN; /* marks a pressure the callback did not write */
  }
  int err = fs->s.fs.eval_fixed(fs->s.fs.eval_fixed_ctx, t, hu, hp);
  if (err) return ef_error_push(err, __FILE__, __LINE__, "while evaluating boundary values at t = %.9g", t);
  if (fs->fixed_write[slot]) {
    /* The pinned slot may still be in flight from the previous step. */
    cl_int st = clWaitForEvents(1, &fs->fixed_write[slot]);
    clReleaseEvent(fs->fixed_write[slot]);
    fs->fixed_write[slot] = NULL;
    EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "waiting for an upload failed: %s (%d)", ef_cl_error_name(st),
             (int)st);
  }
  double *dst = fs->h_fixed + slot * fs->cap_fixed;
  const double scale = fs->s.fs.fixed_pressure_scale;
  for (int64_t k = 0; k < count; ++k) {
    const int64_t d = dofs[k];
    if (d < 3 * n) {
      dst[k] = hu[d];
    } else {
      const double v = hp[d - 3 * n];
      dst[k] = isnan(v) ? fs->fixed_cur[k] : v * scale;
    }
  }
  cl_event ev = NULL;
  EF_CL_CALL(clEnqueueWriteBuffer(fs->ctx->queue, fs->d_fixed_vals[slot], CL_FALSE, 0, (size_t)count * 8, dst, 0,
                                  NULL, &ev));
  clRetainEvent(ev);
  fs->fixed_write[slot] = ev;
  EF_CALL(fs_track(fs, ev, R_UPLOAD, FS_PHASE_UPLOAD, 8.0 * (double)count));
  if (slot == 0) memcpy(fs->fixed_cur, dst, (size_t)count * 8);
  return EF_SUCCESS;
}

/* One fractional step t -> t + dt (eqs. 40-48 as in fractional_step.h) on device-resident data. */
int ef_cl_fs_step(ef_cl_fs *fs, double t, double dt, ef_cl_fs_stats *stats) {
  EF_CHECK(fs, EF_ERR_PARAMETER, "fractional step: NULL argument to step");
  EF_CHECK(dt > 0.0 && isfinite(dt), EF_ERR_PARAMETER, "fractional step: time step must be positive, got %g", dt);
  EF_CHECK(fs->solver, EF_ERR_PARAMETER, "fractional step: no pressure solver (ef_cl_fs_set_solver)");
  const double w0 = ef_wtime();
  ef_cl_fs_stats st;
  memset(&st, 0, sizeof st);
  const int cur = fs->cur, fixed_values = fs->s.fs.eval_fixed && fs->n_fixed_dofs > 0;
  const int implicit = fs->s.fs.viscous_implicit != 0, corr = implicit ? fs->s.fs.viscous_correction : 0;
  double ta[4][4], tai[4][4], tb[4], tc[4];
  ef_fs_imex_tableau(ta, tai, tb, tc);
  cl_mem un = fs->u[cur], pn = fs->p[cur], unew = fs->u[1 - cur], pnew = fs->p[1 - cur];
  int err = EF_SUCCESS;

  /* Boundary values of t + dt (also the ones u_n and p_n carry, as the processes give the
   * host executor) and of t + dt/2. */
  double eval_seconds = 0.0;
  if (fixed_values) {
    const double e0 = ef_wtime();
    EF_CALL(fs_fixed_values(fs, t + dt, 0));
    if (implicit) {
      EF_CALL(fs_fixed_values(fs, t + tc[1] * dt, 1));
      EF_CALL(fs_fixed_values(fs, t + tc[2] * dt, 2));
    } else {
      EF_CALL(fs_fixed_values(fs, t + 0.5 * dt, 1));
    }
    eval_seconds = ef_wtime() - e0;
  }

  /* Step 1. */
  if (fixed_values) EF_CALL(fs_enqueue_scatter(fs, fs->d_fixed_vals[0], un, pn, FS_PHASE_1));
  EF_CALL(fs_enqueue_prepare(fs, dt, un, pn, FS_PHASE_1));
  if (implicit) {
    EF_CALL(fs_enqueue_imex_momentum(fs, t, dt, un, pn, pnew, fixed_values, FS_PHASE_1));
  } else {
    if (fixed_values) EF_CALL(fs_enqueue_scatter(fs, fs->d_fixed_vals[1], fs->fixu, fs->fixp, FS_PHASE_1));
    EF_CALL(fs_enqueue_stage(fs, 0, dt, un, pn, un, fs->ua, fixed_values, pnew, FS_PHASE_1));
    EF_CALL(fs_enqueue_stage(fs, 1, dt, un, pn, fs->ua, fs->ub, fixed_values, pnew, FS_PHASE_1));
    if (fixed_values) EF_CALL(fs_enqueue_scatter(fs, fs->d_fixed_vals[0], fs->fixu, fs->fixp, FS_PHASE_1));
    EF_CALL(fs_enqueue_stage(fs, 2, dt, un, pn, fs->ub, fs->ua, fixed_values, pnew, FS_PHASE_1));
    EF_CALL(fs_enqueue_stage(fs, 3, dt, un, pn, fs->ua, fs->uh, fixed_values, pnew, FS_PHASE_1));
  }
  int pg_known = 0;
  EF_CALL(fs_enqueue_pressure_guess(fs, dt, pn, pnew, &pg_known));
  EF_CL_CALL(clFlush(fs->ctx->queue));

  /* Step 2: assembly, then the solver (its own reads are the step's only other syncs). */
  const int nullspace = fs->n_fixed_pressure == 0;
  EF_CALL(fs_enqueue_reset_flags(fs, FS_PHASE_2));
  if (corr == 1 || corr == 3) {
    /* The continuity residual of the rows before the null-space mean removal, as the host executor. */
    EF_CALL(fs_enqueue_assembly(fs, dt, fs->uh, pn, pnew, fs->H.values, fs->f, 1, nullspace ? 2 : 0, FS_PHASE_2));
    EF_CALL(fs_enqueue_imex_assembly(fs, dt, pn, nullspace, FS_PHASE_2));
  } else {
    EF_CALL(fs_enqueue_assembly(fs, dt, fs->uh, pn, pnew, fs->H.values, fs->f, 1, nullspace, FS_PHASE_2));
  }
  ef_solve_result res;
  memset(&res, 0, sizeof res);
  const ef_matrix A = ef_cl_matrix_wrap(&fs->H, fs->ctx, nullspace);
  const ef_vector vb = ef_cl_vector_wrap(fs->f, fs->n);
  ef_vector vx = ef_cl_vector_wrap(pnew, fs->n);
  /* The first set-up builds the preconditioner's hierarchy (AMG: on the host, then uploaded): timed apart. */
  const int first_setup = !fs->solver_set_up;
  const int ev_setup = first_setup ? ef_log_event("setup", "pressure solver set-up (first step)") : -1;
  if (first_setup) ef_log_event_begin(ev_setup);
  int cg_err = ef_linear_solver_setup(fs->solver, &A);
  if (first_setup) {
    clFinish(fs->ctx->queue);
    ef_log_event_end(ev_setup);
    fs->solver_set_up = 1;
  }
  if (!cg_err) cg_err = ef_linear_solver_solve(fs->solver, &vb, &vx, &res);
  char cg_message[1024] = "";
  if (cg_err) snprintf(cg_message, sizeof cg_message, "%s", ef_error_message());

  /* Step 3. */
  if (!cg_err) {
    if (corr == 1 || corr == 2)
      EF_CALL(fs_enqueue_imex_correct(fs, dt, pn, pnew, unew, FS_PHASE_3));
    else
      EF_CALL(fs_enqueue_correct(fs, dt, fs->uh, pn, pnew, unew, FS_PHASE_3));
    if (corr == 3) EF_CALL(fs_enqueue_imex_rotational(fs, pnew, FS_PHASE_3));
  }
  double imbalance = 0.0;
  EF_CALL(fs_read_flags(fs, FS_PHASE_3, &imbalance));
  if (implicit && fs->s.fs.viscous_projection && !cg_err && res.converged) {
    /* The projection "converged" from a single projection that passed the host executor's checks, which
     * are made first (its flux imbalance is the step's); then the flags of its own corrections and
     * assemblies. */
    EF_CALL(fs_check_assembly(fs, imbalance));
    if (fs->h_flags[0] != INT_MAX) return fs_divergence_error(fs, fs->h_flags[0], unew, pnew);
    EF_CALL(fs_cp_solve(fs, dt, unew, pnew));
    double cp_imbalance = 0.0;
    EF_CALL(fs_read_flags(fs, FS_PHASE_3, &cp_imbalance));
    EF_CALL(fs_check_assembly(fs, cp_imbalance));
    st.projection_iterations = fs->cp_iterations;
  }

  /* Profile. */
  fs_spans sp;
  fs_collect(fs, &sp);
  fs_record *rcg = &fs->rec[R_CG];
  rcg->seconds += res.seconds;
  rcg->calls++;
  const double cg_bytes = (double)res.iterations * fs->solver_bytes_per_iteration;
  rcg->bytes += cg_bytes;
  ef_log_event_add(rcg->log_event, res.seconds);
  ef_log_event_add_bytes(rcg->log_event, cg_bytes);
  st.cg_iterations = res.iterations;
  st.cg_residual = res.residual;
  st.flux_imbalance = nullspace ? imbalance : 0.0;
  st.n_fixed_pressure = (int)(fs->n_fixed_pressure > INT32_MAX ? INT32_MAX : fs->n_fixed_pressure);
  st.seconds_upload = eval_seconds + sp.sum[FS_PHASE_UPLOAD];
  if (sp.seen[1]) st.seconds_step1 = sp.end[1] - sp.start[1];
  if (sp.seen[1] && sp.seen[3]) st.seconds_step2 = sp.start[3] - sp.end[1];
  st.seconds_assembly = sp.sum[FS_PHASE_2];
  st.seconds_solve = res.seconds;
  if (sp.seen[3]) st.seconds_step3 = sp.end[3] - sp.start[3];
  st.seconds_total = ef_wtime() - w0;
  fs->tau_dt = 0.0; /* TAU_TIME_STEP: consumed (the next step's comes from its own ef_cl_fs_compute_dt) */
  if (implicit) {
    st.viscous_iterations = fs->v_iterations;
    st.viscous_max_stage_iterations = fs->v_max_iterations;
    st.viscous_residual = fs->v_residual;
    st.seconds_viscous = fs->v_seconds;
  }
  if (stats) *stats = st;

  /* Checks, in the host executor's order. */
  EF_CALL(fs_check_assembly(fs, imbalance));
  if (cg_err) {
    err = ef_error_set(cg_err, __FILE__, __LINE__, "%s", cg_message);
    return ef_error_push(err, __FILE__, __LINE__, "pressure equation not solved");
  }
  const ef_linear_solver_common *lc = ef_linear_solver_settings(fs->solver);
  if (!res.converged) {
    err = EF_ERROR(EF_ERR_SOLVER, "device %s: no convergence in %d iterations (relative residual %.3e > %.3e)",
                   lc->solver_type, res.iterations, res.residual, lc->tolerance);
    return ef_error_push(err, __FILE__, __LINE__, "pressure equation not solved");
  }
  if (fs->h_flags[0] != INT_MAX) return fs_divergence_error(fs, fs->h_flags[0], unew, pnew);
  EF_CALL(fs_pressure_guess_push(fs, dt, pn, pg_known));
  fs->cur = 1 - cur;
  fs->stepped = 1;
  fs->last_dt = dt;
  fs->last_iterations = res.iterations;
  fs->last_residual = res.residual;
  return EF_SUCCESS;
}

/* ---------------------------------------------------------------------------
 * The last pressure system. */

int ef_cl_fs_copy_pressure_system(ef_cl_fs *fs, ef_pressure_system *out) {
  EF_CHECK(fs && out, EF_ERR_PARAMETER, "ef_cl_fs_copy_pressure_system: NULL argument");
  memset(out, 0, sizeof *out);
  EF_CHECK(fs->stepped, EF_ERR_INTERNAL, "no step has been solved yet");
  const int64_t n = fs->n, nnz = fs->nnz;
  int err = EF_SUCCESS;
  cl_mem hfull = NULL, ffull = NULL;
  cl_command_queue q = fs->ctx->queue;
  EF_CALL(ef_pressure_system_alloc(n, nnz, out));
  memcpy(out->row_ptr, fs->h_row_ptr, (size_t)(n + 1) * sizeof *out->row_ptr);
  memcpy(out->col, fs->h_col, (size_t)nnz * sizeof *out->col);
  memcpy(out->fixed, fs->h_pfix, (size_t)n);
  /* The step swapped the buffers: p[cur] is the solution, p[1 - cur] the step's p_n. */
  const int cur = fs->cur;
  EF_CL_CALL_GOTO(clEnqueueReadBuffer(q, fs->H.values, CL_TRUE, 0, (size_t)nnz * 8, out->values, 0, NULL, NULL),
                  fail);
  EF_CL_CALL_GOTO(clEnqueueReadBuffer(q, fs->f, CL_TRUE, 0, (size_t)n * 8, out->rhs, 0, NULL, NULL), fail);
  EF_CL_CALL_GOTO(clEnqueueReadBuffer(q, fs->p[cur], CL_TRUE, 0, (size_t)n * 8, out->solution, 0, NULL, NULL),
                  fail);
  EF_CL_CALL_GOTO(
      clEnqueueReadBuffer(q, fs->p[1 - cur], CL_TRUE, 0, (size_t)n * 8, out->initial_guess, 0, NULL, NULL), fail);
  /* Fixed rows are identity rows with f_I the prescribed value: the warm start's entries there. */
  for (int64_t i = 0; i < n; ++i)
    if (out->fixed[i]) out->initial_guess[i] = out->rhs[i];
  /* Before elimination: the same rows from the last step's tau and dt without the flags. */
  EF_CALL_GOTO(fs_buffer(fs, (size_t)nnz * 8, NULL, "the matrix before elimination", &hfull), fail);
  EF_CALL_GOTO(fs_buffer(fs, (size_t)n * 8, NULL, "a scratch right-hand side", &ffull), fail);
  EF_CALL_GOTO(fs_enqueue_assembly(fs, fs->last_dt, fs->uh, fs->p[1 - cur], fs->p[1 - cur], hfull, ffull, 0, 0,
                                   FS_PHASE_NONE),
               fail);
  EF_CL_CALL_GOTO(clEnqueueReadBuffer(q, hfull, CL_TRUE, 0, (size_t)nnz * 8, out->values_full, 0, NULL, NULL),
                  fail);
  fs_collect(fs, NULL);
  out->tolerance = fs->solver ? ef_linear_solver_settings(fs->solver)->tolerance : 0.0;
  out->iterations = fs->last_iterations;
  out->relative_residual = fs->last_residual;
  fs_release_mem(&hfull);
  fs_release_mem(&ffull);
  return EF_SUCCESS;
fail:
  fs_release_mem(&hfull);
  fs_release_mem(&ffull);
  ef_pressure_system_free(out);
  return err;
}

/* ---------------------------------------------------------------------------
 * MPI (opencl_fs_mpi.c, docs/mpi.md): the executor's buffers and its enqueue steps for the distributed step,
 * which runs the edge kernels on the owned rows only (ef_cl_fs_mpi_limit_rows: the ghosts, the piece's last
 * rows, sit in the last row block). */

#include "opencl_fs_mpi_view.h"

int ef_cl_fs_mpi_view(ef_cl_fs *fs, int64_t n_owned, ef_cl_fs_mpi_view_s *v) {
  EF_CHECK(fs && v && n_owned > 0 && n_owned <= fs->n, EF_ERR_PARAMETER, "ef_cl_fs_mpi_view: bad argument");
  const int last = fs->n_blocks - 1;
  EF_CHECK(fs->row_begin[last] < n_owned, EF_ERR_UNSUPPORTED,
           "opencl_edge_based on several ranks: the ghost nodes span more than the last row block (docs/mpi.md)");
  fs->row_begin[last + 1] = n_owned; /* the kernels' rows: the owned ones */
  memset(v, 0, sizeof *v);
  v->ctx = fs->ctx;
  v->s = &fs->s;
  v->n = fs->n;
  v->wgs = fs->wgs;
  v->u = fs->u;
  v->p = fs->p;
  v->cur = &fs->cur;
  v->tau = fs->tau;
  v->xi = fs->xi;
  v->xp = fs->xp;
  v->ua = fs->ua;
  v->ub = fs->ub;
  v->uh = fs->uh;
  v->f = fs->f;
  v->reaction = fs->reaction;
  v->fixu = fs->fixu;
  v->fixp = fs->fixp;
  v->partials = fs->partials;
  v->state = fs->state;
  v->flags = fs->flags;
  v->hmin = fs->hmin;
  v->H = &fs->H;
  v->h_pfix = fs->h_pfix;
  v->partial_bytes = (size_t)(fs->assembly_groups > fs->dt_groups ? 2 * fs->assembly_groups : 2 * fs->dt_groups) * 8;
  v->assembly_groups = fs->assembly_groups;
  v->dt_groups = fs->dt_groups;
  v->fixed_dofs = &fs->n_fixed_dofs;
  v->fixed_vals = fs->d_fixed_vals;
  v->k_sum = fs->k[K_SUM];
  v->k_mean = fs->k[K_MEAN];
  v->k_dt_partial = fs->k[K_DT_PARTIAL];
  v->k_dt_final = fs->k[K_DT_FINAL];
  v->k_dt_convective = fs->k[K_DT_CONVECTIVE];
  v->imex_u = fs->imex_u;
  v->imex_rhs = fs->imex_rhs;
  v->cg_r = fs->cg_r;
  v->cg_z = fs->cg_z;
  v->cg_p = fs->cg_p;
  v->cg_q = fs->cg_q;
  v->vdiag = fs->vdiag;
  v->visc_groups = fs->visc_groups;
  v->hmin2_over_nu = fs->hmin2_over_nu;
  v->tau_dt = &fs->tau_dt;
  return EF_SUCCESS;
}

int ef_cl_fs_mpi_fixed_values(ef_cl_fs *fs, double t, int slot) { return fs_fixed_values(fs, t, slot); }
int ef_cl_fs_mpi_scatter(ef_cl_fs *fs, cl_mem vals, cl_mem u, cl_mem p) {
  return fs_enqueue_scatter(fs, vals, u, p, FS_PHASE_1);
}
int ef_cl_fs_mpi_prepare(ef_cl_fs *fs, double dt, cl_mem un, cl_mem pn) {
  return fs_enqueue_prepare(fs, dt, un, pn, FS_PHASE_1);
}
int ef_cl_fs_mpi_stage(ef_cl_fs *fs, int stage, double dt, cl_mem un, cl_mem pn, cl_mem us, cl_mem out, int use_fixed,
                       cl_mem pnew) {
  return fs_enqueue_stage(fs, stage, dt, un, pn, us, out, use_fixed, pnew, FS_PHASE_1);
}
int ef_cl_fs_mpi_assembly(ef_cl_fs *fs, double dt, cl_mem uh, cl_mem pn, cl_mem pnew) {
  EF_CALL(fs_enqueue_reset_flags(fs, FS_PHASE_2));
  return fs_enqueue_assembly(fs, dt, uh, pn, pnew, fs->H.values, fs->f, 1, 2, FS_PHASE_2);
}
int ef_cl_fs_mpi_correct(ef_cl_fs *fs, double dt, cl_mem uh, cl_mem pn, cl_mem pnew, cl_mem unew) {
  EF_CALL(fs_enqueue_reset_flags(fs, FS_PHASE_3));
  return fs_enqueue_correct(fs, dt, uh, pn, pnew, unew, FS_PHASE_3);
}
int ef_cl_fs_mpi_launch(ef_cl_fs *fs, cl_kernel k, size_t global) {
  for (int i = 0; i < K_N_KERNELS; ++i)
    if (fs->k[i] == k) return fs_launch(fs, i, FS_PHASE_NONE, global, fs->wgs, 0.0);
  return EF_ERROR(EF_ERR_INTERNAL, "ef_cl_fs_mpi_launch: not a kernel of the executor");
}
int ef_cl_fs_mpi_finish(ef_cl_fs *fs, double dt, int iterations, double residual) {
  fs_collect(fs, NULL);
  fs->tau_dt = 0.0; /* TAU_TIME_STEP: consumed, as in ef_cl_fs_step */
  fs->cur = 1 - fs->cur;
  fs->stepped = 1;
  fs->last_dt = dt;
  fs->last_iterations = iterations;
  fs->last_residual = residual;
  return EF_SUCCESS;
}
void ef_cl_fs_mpi_collect(ef_cl_fs *fs) { fs_collect(fs, NULL); }

/* The implicit viscosity on a rank's piece: the stage kernels of fs_enqueue_imex_momentum (the edge kernels on the
 * owned rows, the node kernels on every local node) and the stage CG's start and product (fs_visc_init and
 * fs_visc_apply_dots on the owned rows, 3 partial sums a work-group into part; *groups: their count). */
int ef_cl_fs_mpi_imex_residual(ef_cl_fs *fs, int stage, cl_mem us, cl_mem pn) {
  return fs_enqueue_imex_residual(fs, stage, us, pn, FS_PHASE_1);
}
int ef_cl_fs_mpi_imex_stage_start(ef_cl_fs *fs, int stage, double dt, cl_mem un, int fixed_values) {
  return fs_enqueue_imex_stage_start(fs, stage, dt, un, fixed_values, FS_PHASE_1);
}
int ef_cl_fs_mpi_imex_final(ef_cl_fs *fs, double dt, cl_mem un, cl_mem pn, cl_mem pnew, int fixed_values) {
  return fs_enqueue_imex_final(fs, dt, un, pn, pnew, fixed_values, FS_PHASE_1);
}
int ef_cl_fs_mpi_visc_start(ef_cl_fs *fs, double dscale, cl_mem rhs, cl_mem x, cl_mem r, cl_mem u, cl_mem p,
                            cl_mem diag, cl_mem part, int64_t *groups) {
  const double nu = fs->s.fs.nu;
  cl_long g = 0;
  for (fs_block blk = FS_BLOCK_START; fs_block_next(fs, &blk);) {
    EF_CL_SET_ARGS(fs->k[K_VISC_INIT], FS_BLOCK_ARGS(fs, blk), EF_CL_ARG(blk.lij), EF_CL_ARG(dscale), EF_CL_ARG(nu),
                   EF_CL_ARG(fs->mass), EF_CL_ARG(fs->kdiag), EF_CL_ARG(x), EF_CL_ARG(rhs), EF_CL_ARG(fs->vfix),
                   EF_CL_ARG(fs->slip), EF_CL_ARG(fs->slip_normal), EF_CL_ARG(fs->slip_tangent), EF_CL_ARG(r),
                   EF_CL_ARG(u), EF_CL_ARG(p), EF_CL_ARG(diag), EF_CL_ARG(blk.group_base), EF_CL_ARG(part));
    EF_CALL(fs_launch(fs, K_VISC_INIT, FS_PHASE_1, blk.global, fs->wgs,
                      fs_edge_bytes(blk.rows, blk.edges, 0, 8.0, 8.0 * 21.0)));
    g = blk.group_base + (cl_long)(blk.global / fs->wgs);
  }
  *groups = g;
  return EF_SUCCESS;
}
int ef_cl_fs_mpi_visc_product(ef_cl_fs *fs, double dscale, cl_mem rows, const int64_t *block_first, cl_mem r,
                              cl_mem u, cl_mem w, cl_mem part, int64_t *groups) {
  const double nu = fs->s.fs.nu;
  cl_long base = *groups; /* visc_lanes items a row, as fs_visc_solve's fs_visc_apply */
  for (fs_block blk = FS_BLOCK_START; fs_block_next(fs, &blk);) {
    const cl_long first = rows ? block_first[blk.index] : 0;
    const cl_long count = rows ? block_first[blk.index + 1] - first : -1, items = rows ? count : blk.rows;
    if (items == 0) continue;
    cl_mem list = rows ? rows : blk.col; /* unread without a list: any int buffer */
    const size_t global = fs_round_up(fs->visc_lanes * items, fs->wgs);
    EF_CL_SET_ARGS(fs->k[K_VISC_APPLY_DOTS], FS_BLOCK_ARGS(fs, blk), EF_CL_ARG(list), EF_CL_ARG(first),
                   EF_CL_ARG(count), EF_CL_ARG(blk.lij), EF_CL_ARG(dscale), EF_CL_ARG(nu), EF_CL_ARG(fs->mass),
                   EF_CL_ARG(r), EF_CL_ARG(u), EF_CL_ARG(fs->vfix), EF_CL_ARG(fs->slip), EF_CL_ARG(fs->slip_normal),
                   EF_CL_ARG(fs->slip_tangent), EF_CL_ARG(w), EF_CL_ARG(base), EF_CL_ARG(part));
    const double share = blk.rows > 0 ? (double)items / (double)blk.rows : 0.0;
    EF_CALL(fs_launch(fs, K_VISC_APPLY_DOTS, FS_PHASE_1, global, fs->wgs,
                      share * fs_edge_bytes(blk.rows, blk.edges, 0, 8.0, 8.0 * 11.0)));
    base += (cl_long)(global / fs->wgs);
  }
  *groups = base;
  return EF_SUCCESS;
}
int ef_cl_fs_mpi_block_rows(const ef_cl_fs *fs, int64_t *row_begin) {
  for (int b = 0; b <= fs->n_blocks; ++b) row_begin[b] = fs->row_begin[b];
  return fs->n_blocks;
}
