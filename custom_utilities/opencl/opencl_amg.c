/* opencl_amg.c -- device buffers, refresh and cycle of the aggregation multigrid (see
 * opencl_amg.h and amg.h; kernels in custom_kernels/amg.cl). */
#include "opencl_amg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_log.h"
#include "edgeflow/ef_util.h"

#define AMG_SOURCE "amg.cl"
#define AMG_WGS 128
#define AMG_LANES 64
#define AMG_ROW_LANES 4 /* items per row of the row kernels (sweep, residual, post) */
#define AMG_MAX_GROUPS 256 /* groups of the K-cycle reduction kernels */
/* The K-cycle's last step (xc = c1 v1 + a2 v2) is formed by the post-smoothing of the level above
 * (amg_post_k) when that level is at least this one, else launched (amg_k_combine).  Not on the
 * fine level: its many groups each re-adding the partials cost more than the launch (H200, cavity3d
 * level 3: 36.2-37.7 against 33.6-34.7 ms a step; level 2's solve 7.70 against 7.32 ms). */
#define AMG_POST_K_MIN_LEVEL 1
/* Items of the one-group kernels (small levels, dense coarsest inverse), on every device; fewer when
 * the device allows fewer.  Each operation of the one group ends in barriers, whose cost grows with
 * the group's warps: on an H200 the obstacle's solve (first small level 261 rows) took 2.70-2.77 ms with
 * 1024 items, 2.09 with 512, 1.78-1.97 with 256 and 1.85-1.90 with 128; cavity3d level 2's (227 rows)
 * 7.28-7.40, 7.16-7.28, 7.18-7.34 and 7.75-7.78 ms (benchmarks/results/session27_H200_20261128). */
#define AMG_SMALL_WGS 256

enum { PH_REFRESH, PH_SMOOTH, PH_RESTRICT, PH_POST, PH_KRYLOV, PH_COARSE, PH_COUNT };

typedef struct {
  cl_program program;
  cl_kernel refresh, refresh_offsets, refresh_mapped, l1, down, down_q, smooth0, sweep, resid, restr, post, post_k,
      k_first, k_second, k_third, k_combine, dense_inv, solve, small_refresh, small_cycle, small_pcg;
} amg_kernels;

typedef struct {
  int n, nnz, groups;
  cl_mem rp, col, val; /* level 0: the caller's */
  int owns_matrix;
  cl_mem dinv, agg, mp, mem;
  cl_mem off; /* byte per entry: its place in its coarse row (amg_refresh_offsets), levels with a multi-group refresh */
  cl_mem r, x, t, v1, v2, w1, w2, q, part, part2;
  int voff[8]; /* small levels: offsets in dbuf of r, x, t, v1, v2, w1, w2, q */
} amg_dlevel;

enum { AV_R, AV_X, AV_T, AV_V1, AV_V2, AV_W1, AV_W2, AV_Q };
/* Mirrors amg.cl. */
enum { OP_SMOOTH0 = 0, OP_SWEEP = 1, OP_RESID = 2, OP_RESTRICT = 3, OP_POST = 4, OP_DENSE = 5, OP_K1 = 6, OP_K3 = 7 };
#define AMG_LT 8
#define AMG_OPW 8

typedef struct {
  cl_kernel proto, k; /* the kernel this slot copies, and its copy */
  ef_cl_bound_args bound;
} amg_slot;

typedef struct {
  amg_slot *v;
  int cap, next;
} amg_slots;

struct ef_cl_amg_s {
  ef_cl_context *ctx;
  ef_amg *h;
  double *host_values; /* downloaded fine values when no host matrix was given */
  int64_t *host_rp;
  int32_t *host_col;
  amg_kernels kf, kc; /* fine-level (its row offset type) and coarse-level kernels */
  amg_dlevel lev[32];
  cl_mem W; /* dense coarsest inverse */
  /* The small levels (first_small .. n_levels - 1, at most settings.small_rows rows each) in
   * two buffers, one group per launch (amg.cl): level table, operation list, ints, doubles. */
  int first_small, n_ops, small_wgs;
  cl_mem lt, ops, ibuf, dbuf, dummy;
  cl_mem work, out; /* the whole solve in one group (first_small == 0): 5 n doubles; its results */
  int lt_host[32 * 8];
  int profiling;
  cl_event *events;
  int *event_phase;
  int n_events, cap_events;
  double phase[PH_COUNT];
  int applies, launches;
  double setup_seconds;
  amg_slots refresh_slots, apply_slots, *cur; /* launch slots of ef_cl_amg_refresh and ef_cl_amg_apply */
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
  cl_kernel *all[] = {&k->refresh,   &k->refresh_offsets, &k->refresh_mapped, &k->l1,        &k->down,
                      &k->smooth0,   &k->sweep,           &k->resid,          &k->restr,     &k->post,
                      &k->k_first,   &k->k_second,        &k->k_third,        &k->k_combine, &k->dense_inv,
                      &k->solve,     &k->small_refresh,   &k->small_cycle,    &k->small_pcg};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
    if (*all[i]) clReleaseKernel(*all[i]), *all[i] = NULL;
  if (k->program) clReleaseProgram(k->program);
  k->program = NULL;
}

/* Build amg.cl (row offsets int64 when wide) and create its kernels. */
static int amg_kernels_build(ef_cl_context *ctx, int wide, int small_wgs, amg_kernels *k) {
  memset(k, 0, sizeof *k);
  char options[160];
  snprintf(options, sizeof options, "-D AMG_WGS=%d -D AMG_LANES=%d -D AMG_ROW_LANES=%d -D AMG_SMALL_WGS=%d%s", AMG_WGS,
           AMG_LANES, AMG_ROW_LANES, small_wgs, wide ? " -D EF_ROW_PTR_64" : "");
  EF_CALL(ef_cl_program_get(ctx, AMG_SOURCE, options, &k->program));
  struct {
    const char *name;
    cl_kernel *kernel;
  } list[] = {{"amg_refresh", &k->refresh},         {"amg_refresh_offsets", &k->refresh_offsets},
              {"amg_refresh_mapped", &k->refresh_mapped}, {"amg_l1", &k->l1},
              {"amg_down", &k->down},               {"amg_down_q", &k->down_q},
              {"amg_post_k", &k->post_k},           {"amg_smooth0", &k->smooth0},
              {"amg_sweep", &k->sweep},             {"amg_residual", &k->resid},
              {"amg_restrict", &k->restr},          {"amg_post", &k->post},
              {"amg_k_first", &k->k_first},         {"amg_k_second", &k->k_second},
              {"amg_k_third", &k->k_third},         {"amg_k_combine", &k->k_combine},
              {"amg_dense_inverse", &k->dense_inv}, {"amg_dense_solve", &k->solve},
              {"amg_small_refresh", &k->small_refresh}, {"amg_small_cycle", &k->small_cycle},
              {"amg_small_pcg", &k->small_pcg}};
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

/* Launch slots.  A refresh or a cycle walks the same recursion every time, so its i-th launch is
 * always the same kernel with the same arguments, except the caller's vectors: each launch gets
 * its own copy of the kernel (slot i of the walk), whose arguments are set once and afterwards
 * only where they changed (EF_CL_BIND_ARGS).  Setting some ten arguments per launch again cost
 * as much host time as the launch itself on NVIDIA's OpenCL, more than the small levels' kernels
 * take on the device (a host-bound cycle). */
static int amg_slot_kernel(ef_cl_amg *a, cl_kernel proto, amg_slot **out) {
  amg_slots *S = a->cur;
  if (S->next == S->cap) {
    const int cap = S->cap ? 2 * S->cap : 64;
    amg_slot *v = realloc(S->v, (size_t)cap * sizeof *v);
    EF_CHECK(v, EF_ERR_MEMORY, "AMG: out of memory for the launch slots");
    memset(v + S->cap, 0, (size_t)(cap - S->cap) * sizeof *v);
    S->v = v, S->cap = cap;
  }
  amg_slot *slot = &S->v[S->next++];
  if (slot->proto != proto) {
    if (slot->k) clReleaseKernel(slot->k);
    memset(slot, 0, sizeof *slot);
    cl_program program;
    char name[64];
    EF_CL_CALL(clGetKernelInfo(proto, CL_KERNEL_PROGRAM, sizeof program, &program, NULL));
    EF_CL_CALL(clGetKernelInfo(proto, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL));
    cl_int st;
    slot->k = clCreateKernel(program, name, &st);
    EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clCreateKernel(%s) failed: %s (%d)", name, ef_cl_error_name(st),
             (int)st);
    slot->proto = proto;
  }
  *out = slot;
  return EF_SUCCESS;
}

static int amg_launch_args(ef_cl_amg *a, cl_kernel proto, size_t items, size_t local, int phase, const char *file,
                           int line, int count, const ef_cl_arg *args) {
  amg_slot *slot = NULL;
  EF_CALL(amg_slot_kernel(a, proto, &slot));
  EF_CALL(ef_cl_bind_args_at(&slot->bound, slot->k, file, line, count, args));
  return amg_launch(a, slot->k, items, local, phase);
}

static void amg_slots_release(amg_slots *S) {
  for (int i = 0; i < S->cap; ++i)
    if (S->v[i].k) clReleaseKernel(S->v[i].k);
  free(S->v);
  memset(S, 0, sizeof *S);
}

#define AMG_ARGC(...) ((int)(sizeof((ef_cl_arg[]){__VA_ARGS__}) / sizeof(ef_cl_arg)))
/* Launch kernel k over items work-items in groups of local, its arguments in order. */
#define AMG_LAUNCH(a, k, items, local, phase, ...)                                                        \
  EF_CALL(amg_launch_args((a), (k), (items), (local), (phase), __FILE__, __LINE__, AMG_ARGC(__VA_ARGS__), \
                          (ef_cl_arg[]){__VA_ARGS__}))
/* A row kernel (AMG_ROW_LANES items per row) over n rows. */
#define AMG_ROW_ITEMS(n) (((size_t)(n) + AMG_WGS / AMG_ROW_LANES - 1) / (AMG_WGS / AMG_ROW_LANES) * AMG_WGS)
#define AMG_LAUNCH_ROWS(a, k, n, phase, ...) AMG_LAUNCH(a, k, AMG_ROW_ITEMS(n), AMG_WGS, phase, __VA_ARGS__)

/* Kernels of level l: the fine set on level 0, the coarse set below. */
static const amg_kernels *amg_k(const ef_cl_amg *a, int l) { return l == 0 ? &a->kf : &a->kc; }

/* Upload an int32 array. */
static int amg_upload_i32(ef_cl_context *ctx, const int32_t *v, int64_t count, cl_mem *out) {
  return amg_buffer(ctx, (size_t)count * sizeof(int32_t), v, out);
}

/* The operation list of the small levels (amg.cl's amg_small_cycle), written by walking the
 * recursion of amg_cycle / amg_correction below; vector operands: -1 / -2 the kernel's input /
 * output vector, else offsets into dbuf. */
typedef struct {
  int *ops;
  int n, cap, failed;
} amg_oplist;

static void amg_op(amg_oplist *o, int code, int l, int v0, int v1, int v2, int v3, int v4, int v5) {
  if (o->n == o->cap) {
    int cap = o->cap ? 2 * o->cap : 64;
    int *p = realloc(o->ops, (size_t)cap * AMG_OPW * sizeof *p);
    if (!p) {
      o->failed = 1;
      return;
    }
    o->ops = p, o->cap = cap;
  }
  int *w = o->ops + (size_t)o->n++ * AMG_OPW;
  w[0] = code, w[1] = l, w[2] = v0, w[3] = v1, w[4] = v2, w[5] = v3, w[6] = v4, w[7] = v5;
}

#define AMG_VO(l, v) (a->lev[l].voff[v])
static void amg_gen_cycle(const ef_cl_amg *a, amg_oplist *o, int l, int r, int x);

static void amg_gen_correction(const ef_cl_amg *a, amg_oplist *o, int c, int rc, int xc) {
  const ef_amg *h = a->h;
  if (c == h->n_levels - 1) {
    amg_op(o, OP_DENSE, c, rc, xc, 0, 0, 0, 0);
    return;
  }
  if (h->s.cycle != EF_AMG_CYCLE_K || c > h->s.kcycle_levels) {
    amg_gen_cycle(a, o, c, rc, xc);
    return;
  }
  amg_gen_cycle(a, o, c, rc, AMG_VO(c, AV_V1));
  amg_op(o, OP_K1, c, rc, AMG_VO(c, AV_V1), AMG_VO(c, AV_W1), AMG_VO(c, AV_Q), 0, 0);
  amg_gen_cycle(a, o, c, AMG_VO(c, AV_Q), AMG_VO(c, AV_V2));
  amg_op(o, OP_K3, c, AMG_VO(c, AV_V1), AMG_VO(c, AV_V2), AMG_VO(c, AV_W1), AMG_VO(c, AV_W2), AMG_VO(c, AV_Q), xc);
}

static void amg_gen_cycle(const ef_cl_amg *a, amg_oplist *o, int l, int r, int x) {
  const int nu = a->h->s.sweeps;
  const int buf[2] = {x, AMG_VO(l, AV_T)};
  int cur = buf[(2 * nu - 1) & 1];
  amg_op(o, OP_SMOOTH0, l, r, cur, 0, 0, 0, 0);
  for (int s = 2; s <= nu; ++s) {
    const int next = buf[(2 * nu - s) & 1];
    amg_op(o, OP_SWEEP, l, r, cur, next, 0, 0, 0);
    cur = next;
  }
  amg_op(o, OP_RESID, l, r, cur, AMG_VO(l, AV_W2), 0, 0, 0);
  amg_op(o, OP_RESTRICT, l, AMG_VO(l, AV_W2), AMG_VO(l + 1, AV_R), 0, 0, 0, 0);
  amg_gen_correction(a, o, l + 1, AMG_VO(l + 1, AV_R), AMG_VO(l + 1, AV_X));
  int next = buf[(nu - 1) & 1];
  amg_op(o, OP_POST, l, AMG_VO(l + 1, AV_X), r, cur, next, 0, 0);
  cur = next;
  for (int s = nu + 2; s <= 2 * nu; ++s) {
    next = buf[(2 * nu - s) & 1];
    amg_op(o, OP_SWEEP, l, r, cur, next, 0, 0, 0);
    cur = next;
  }
}

/* A sub-buffer of count elements of size bytes at element offset off of parent. */
static int amg_sub(cl_mem parent, int64_t off, int64_t count, size_t size, cl_mem *out) {
  cl_buffer_region reg = {(size_t)off * size, (size_t)(count > 0 ? count : 1) * size};
  cl_int st;
  *out = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &reg, &st);
  EF_CL_CHECK_STATUS(st, "clCreateSubBuffer (AMG small levels)");
  return EF_SUCCESS;
}

static int64_t amg_align(int64_t off, int64_t a) { return (off + a - 1) / a * a; }

/* Lay out the small levels in ibuf / dbuf (level table lt_host), upload their structure, make
 * the sub-buffers that the multi-group kernels of the level above share with them (pattern,
 * values, l1 diagonal, right-hand side and correction), and upload the operation list. */
static int amg_small_create(ef_cl_amg *a) {
  const ef_amg *h = a->h;
  ef_cl_context *ctx = a->ctx;
  const int s = a->first_small, nl = h->n_levels;
  if (s >= nl) return EF_SUCCESS;
  cl_uint align_bits = 1024;
  clGetDeviceInfo(ctx->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL);
  const int64_t ai = align_bits / 32 > 0 ? align_bits / 32 : 1, ad = align_bits / 64 > 0 ? align_bits / 64 : 1;
  int64_t io = 0, dof = 0;
  for (int l = s; l < nl; ++l) {
    const ef_amg_level *L = &h->lev[l];
    int *t = a->lt_host + l * AMG_LT;
    t[0] = (int)L->n;
    t[1] = (int)(io = amg_align(io, ai)), io += L->n + 1;
    t[2] = (int)(io = amg_align(io, ai)), io += L->nnz;
    if (l + 1 < nl) {
      t[5] = (int)(io = amg_align(io, ai)), io += L->n;
      t[6] = (int)(io = amg_align(io, ai)), io += h->lev[l + 1].n + 1;
      t[7] = (int)(io = amg_align(io, ai)), io += L->mem_ptr[h->lev[l + 1].n];
    }
    t[3] = (int)(dof = amg_align(dof, ad)), dof += L->nnz;
    t[4] = (int)(dof = amg_align(dof, ad)), dof += L->n;
    for (int v = 0; v < 8; ++v) a->lev[l].voff[v] = (int)(dof = amg_align(dof, ad)), dof += L->n;
  }
  EF_CHECK(io < INT32_MAX && dof < INT32_MAX, EF_ERR_UNSUPPORTED, "AMG: the small levels exceed int32 offsets");
  int32_t *ih = calloc((size_t)io + 1, sizeof *ih);
  double *dh = calloc((size_t)dof + 1, sizeof *dh);
  int err = EF_SUCCESS;
  amg_oplist o = {0};
  EF_CHECK_GOTO(ih && dh, EF_ERR_MEMORY, done, "AMG: out of memory");
  for (int l = s; l < nl; ++l) {
    const ef_amg_level *L = &h->lev[l];
    const int *t = a->lt_host + l * AMG_LT;
    for (int64_t i = 0; i <= L->n; ++i) ih[t[1] + i] = L->row_ptr64 ? (int32_t)L->row_ptr64[i] : L->row_ptr[i];
    memcpy(ih + t[2], L->col, (size_t)L->nnz * sizeof *ih);
    if (l + 1 < nl) {
      memcpy(ih + t[5], L->agg, (size_t)L->n * sizeof *ih);
      memcpy(ih + t[6], L->mem_ptr, (size_t)(h->lev[l + 1].n + 1) * sizeof *ih);
      memcpy(ih + t[7], L->mem, (size_t)L->mem_ptr[h->lev[l + 1].n] * sizeof *ih);
    }
  }
  EF_CALL_GOTO(amg_buffer(ctx, (size_t)(io + 1) * 4, ih, &a->ibuf), done);
  EF_CALL_GOTO(amg_buffer(ctx, (size_t)(dof + 1) * 8, dh, &a->dbuf), done);
  EF_CALL_GOTO(amg_buffer(ctx, sizeof a->lt_host, a->lt_host, &a->lt), done);
  EF_CALL_GOTO(amg_buffer(ctx, 8, dh, &a->dummy), done);
  for (int l = s > 0 ? s : 1; l < nl; ++l) {
    const ef_amg_level *L = &h->lev[l];
    const int *t = a->lt_host + l * AMG_LT;
    amg_dlevel *D = &a->lev[l];
    D->owns_matrix = 1;
    EF_CALL_GOTO(amg_sub(a->ibuf, t[1], L->n + 1, 4, &D->rp), done);
    EF_CALL_GOTO(amg_sub(a->ibuf, t[2], L->nnz, 4, &D->col), done);
    EF_CALL_GOTO(amg_sub(a->dbuf, t[3], L->nnz, 8, &D->val), done);
    EF_CALL_GOTO(amg_sub(a->dbuf, t[4], L->n, 8, &D->dinv), done);
    EF_CALL_GOTO(amg_sub(a->dbuf, D->voff[AV_R], L->n, 8, &D->r), done);
    EF_CALL_GOTO(amg_sub(a->dbuf, D->voff[AV_X], L->n, 8, &D->x), done);
  }
  if (s == 0) {
    if (nl == 1) amg_gen_correction(a, &o, 0, -1, -2);
    else amg_gen_cycle(a, &o, 0, -1, -2);
  } else {
    amg_gen_correction(a, &o, s, AMG_VO(s, AV_R), AMG_VO(s, AV_X));
  }
  EF_CHECK_GOTO(!o.failed && o.n > 0, EF_ERR_MEMORY, done, "AMG: out of memory for the operation list");
  a->n_ops = o.n;
  EF_CALL_GOTO(amg_buffer(ctx, (size_t)o.n * AMG_OPW * sizeof(int), o.ops, &a->ops), done);
done:
  free(ih);
  free(dh);
  free(o.ops);
  return err;
}

/* The entries' places in their coarse rows (amg.cl's amg_refresh_offsets), once per hierarchy, for a level whose
 * coarse level the multi-group kernel refreshes: the refresh then reads a byte per entry instead of searching the
 * coarse row for the entry's aggregate (the level-3 cavity's refresh 3.7 -> 2.4 ms on an H100).  *off (nnz bytes)
 * starts as the drop marker, from the host (oclgrind does not see what clEnqueueFillBuffer writes); only the
 * members' entries are written and read. */
int ef_cl_amg_offsets(ef_cl_context *ctx, cl_kernel k, int refresh_direct, int64_t nnz, cl_int nc, cl_mem crp,
                      cl_mem ccol, cl_mem mp, cl_mem mem, cl_mem frp, cl_mem fcol, cl_mem agg, cl_mem *off) {
  EF_CHECK(refresh_direct >= 0 && refresh_direct <= 254, EF_ERR_PARAMETER, "AMG: refresh_direct %d is outside 0..254",
           refresh_direct);
  const cl_int direct = refresh_direct > 0 ? refresh_direct : 254;
  const size_t bytes = (size_t)(nnz > 0 ? nnz : 1);
  unsigned char *init = malloc(bytes);
  EF_CHECK(init, EF_ERR_MEMORY, "AMG: out of memory for the refresh offsets (%zu bytes)", bytes);
  memset(init, 254, bytes); /* amg.cl's AMG_OFF_DROP */
  const int err = amg_buffer(ctx, bytes, init, off);
  free(init); /* copied at the buffer's creation */
  EF_CALL(err);
  EF_CL_SET_ARGS(k, EF_CL_ARG(nc), EF_CL_ARG(crp), EF_CL_ARG(ccol), EF_CL_ARG(mp), EF_CL_ARG(mem), EF_CL_ARG(frp),
                 EF_CL_ARG(fcol), EF_CL_ARG(agg), EF_CL_ARG(direct), EF_CL_ARG(*off));
  const size_t local = AMG_WGS, global = ((size_t)nc + local - 1) / local * local;
  if (global > 0) EF_CL_CALL(clEnqueueNDRangeKernel(ctx->queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
  return EF_SUCCESS;
}

/* Every level above the small ones (their coarse values come from amg_refresh_mapped). */
static int amg_offsets_create(ef_cl_amg *a) {
  for (int l = 0; l + 1 < a->h->n_levels && l < a->first_small; ++l) {
    amg_dlevel *F = &a->lev[l], *C = &a->lev[l + 1];
    EF_CALL(ef_cl_amg_offsets(a->ctx, amg_k(a, l)->refresh_offsets, a->h->s.refresh_direct, F->nnz, C->n, C->rp,
                              C->col, F->mp, F->mem, F->rp, F->col, F->agg, &F->off));
  }
  return EF_SUCCESS;
}

/* Build (host), upload, refresh (device). */
int ef_cl_amg_create(ef_cl_context *ctx, const ef_cl_csr *A, const ef_amg_matrix *host_A, int constant_null_space,
                     const ef_amg_settings *settings, ef_cl_amg **out) {
  return ef_cl_amg_create_from_maps(ctx, A, host_A, constant_null_space, settings, 0, NULL, out);
}

int ef_cl_amg_create_from_maps(ef_cl_context *ctx, const ef_cl_csr *A, const ef_amg_matrix *host_A,
                               int constant_null_space, const ef_amg_settings *settings, int n_maps,
                               int32_t *const *maps, ef_cl_amg **out) {
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
    const int ev_download = ef_log_event("setup", "AMG set-up: matrix download (waits for the queue)");
    ef_log_event_begin(ev_download);
    err = ef_cl_csr_download(ctx, A, &a->host_rp, &a->host_col, &a->host_values);
    ef_log_event_end(ev_download);
    if (err) goto fail;
    M = (ef_amg_matrix){A->n, A->nnz, a->host_rp, a->host_col, a->host_values, constant_null_space};
  }
  EF_CHECK_GOTO(M.n == A->n && M.nnz == A->nnz, EF_ERR_PARAMETER, fail,
                "AMG: the host matrix (%lld rows, %lld nonzeros) is not the device one (%lld, %lld)",
                (long long)M.n, (long long)M.nnz, (long long)A->n, (long long)A->nnz);
  if (maps) EF_CALL_GOTO(ef_amg_create_from_maps(settings, &M, n_maps, maps, &a->h), fail);
  else EF_CALL_GOTO(ef_amg_create(settings, &M, &a->h), fail);
  const int ev_device = ef_log_event("setup", "AMG set-up: device kernels, upload, refresh");
  ef_log_event_begin(ev_device);
  {
    size_t wg = ctx->max_work_group_size ? ctx->max_work_group_size : 64;
    a->small_wgs = 1;
    const int want = settings->small_group > 0 ? settings->small_group : AMG_SMALL_WGS;
    while ((size_t)a->small_wgs * 2 <= wg && a->small_wgs < want) a->small_wgs *= 2;
  }
  EF_CALL_GOTO(amg_kernels_build(ctx, A->row_ptr_64, a->small_wgs, &a->kf), fail);
  EF_CALL_GOTO(amg_kernels_build(ctx, 0, a->small_wgs, &a->kc), fail);
  const ef_amg *h = a->h;
  a->first_small = h->n_levels;
  for (int l = 0; settings->small_rows > 0 && l < h->n_levels; ++l)
    if (h->lev[l].n <= settings->small_rows) {
      a->first_small = l;
      break;
    }
  for (int l = 0; l < h->n_levels; ++l) {
    const ef_amg_level *L = &h->lev[l];
    amg_dlevel *D = &a->lev[l];
    D->n = (int)L->n;
    D->nnz = (int)L->nnz;
    int64_t gr = (L->n + AMG_WGS - 1) / AMG_WGS;
    D->groups = (int)(gr < 1 ? 1 : gr > AMG_MAX_GROUPS ? AMG_MAX_GROUPS : gr);
    if (l == 0) D->rp = A->row_ptr, D->col = A->col_idx, D->val = A->values;
    if (l >= a->first_small) continue; /* amg_small_create */
    if (l > 0) {
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
  EF_CALL_GOTO(amg_buffer(ctx, (size_t)(h->nc * h->nc) * 8, NULL, &a->W), fail);
  EF_CALL_GOTO(amg_small_create(a), fail); /* before the offsets: it makes the first small level's pattern */
  EF_CALL_GOTO(amg_offsets_create(a), fail);
  if (a->first_small == 0) {
    EF_CALL_GOTO(amg_buffer(ctx, (size_t)h->lev[0].n * 5 * 8, NULL, &a->work), fail);
    EF_CALL_GOTO(amg_buffer(ctx, 8 * 8, NULL, &a->out), fail);
  }
  EF_CALL_GOTO(ef_cl_amg_refresh(a), fail);
  EF_CL_CALL_GOTO(clFinish(ctx->queue), fail);
  ef_log_event_end(ev_device);
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
    cl_mem *m[] = {&D->dinv, &D->agg, &D->mp, &D->mem, &D->off, &D->r,  &D->x,    &D->t,
                   &D->v1,   &D->v2,  &D->w1, &D->w2,  &D->q,  &D->part, &D->part2};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; ++i) amg_release_mem(m[i]);
  }
  amg_release_mem(&a->W);
  amg_release_mem(&a->lt);
  amg_release_mem(&a->ops);
  amg_release_mem(&a->ibuf);
  amg_release_mem(&a->dbuf);
  amg_release_mem(&a->dummy);
  amg_release_mem(&a->work);
  amg_release_mem(&a->out);
  amg_slots_release(&a->refresh_slots);
  amg_slots_release(&a->apply_slots);
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

/* Coarse values with their l1 diagonals (one launch per level above the small ones), the fine
 * l1 diagonal, then the small levels and the dense coarsest inverse in one group. */
int ef_cl_amg_refresh(ef_cl_amg *a) {
  EF_CHECK(a, EF_ERR_PARAMETER, "ef_cl_amg_refresh: no AMG");
  const ef_amg *h = a->h;
  const int s = a->first_small, nl = h->n_levels, ns = h->constant_null_space;
  a->cur = &a->refresh_slots;
  a->cur->next = 0;
  if (s > 0) {
    amg_dlevel *L = &a->lev[0];
    cl_kernel k = a->kf.l1;
    AMG_LAUNCH(a, k, (size_t)L->n, AMG_WGS, PH_REFRESH, EF_CL_ARG(L->n), EF_CL_ARG(L->rp), EF_CL_ARG(L->val),
               EF_CL_ARG(L->dinv));
  }
  for (int l = 0; l + 1 < nl && l < s; ++l) {
    amg_dlevel *F = &a->lev[l], *C = &a->lev[l + 1];
    cl_kernel k = amg_k(a, l)->refresh_mapped;
    AMG_LAUNCH(a, k, (size_t)C->n, AMG_WGS, PH_REFRESH, EF_CL_ARG(C->n), EF_CL_ARG(C->rp), EF_CL_ARG(C->col),
               EF_CL_ARG(C->val), EF_CL_ARG(C->dinv), EF_CL_ARG(F->mp), EF_CL_ARG(F->mem), EF_CL_ARG(F->rp),
               EF_CL_ARG(F->col), EF_CL_ARG(F->val), EF_CL_ARG(F->agg), EF_CL_ARG(F->off));
  }
  if (s < nl) {
    const int l1_first = s == 0;
    cl_mem val0 = s == 0 ? a->lev[0].val : a->dummy;
    cl_kernel k = a->kc.small_refresh;
    AMG_LAUNCH(a, k, (size_t)a->small_wgs, (size_t)a->small_wgs, PH_REFRESH, EF_CL_ARG(s), EF_CL_ARG(nl),
               EF_CL_ARG(l1_first), EF_CL_ARG(a->lt), EF_CL_ARG(a->ibuf), EF_CL_ARG(a->dbuf), EF_CL_ARG(val0),
               EF_CL_ARG(ns), EF_CL_ARG(a->W));
    return EF_SUCCESS;
  }
  /* No small levels: the dense inverse alone (int32 offsets: a one-level hierarchy has int32
   * fine offsets, below 2^31 nonzeros, which nc <= 4096 implies). */
  const int nc = (int)h->nc;
  amg_dlevel *Lc = &a->lev[nl - 1];
  cl_kernel k = a->kc.dense_inv;
  AMG_LAUNCH(a, k, (size_t)a->small_wgs, (size_t)a->small_wgs, PH_REFRESH, EF_CL_ARG(nc), EF_CL_ARG(Lc->rp),
             EF_CL_ARG(Lc->col), EF_CL_ARG(Lc->val), EF_CL_ARG(ns), EF_CL_ARG(a->W));
  return EF_SUCCESS;
}

/* The small levels' operation list in one group: vin / vout are the caller's vectors when the
 * small levels start at level 0 (else unused).  With above (level first_small - 1), the launch
 * first restricts that level's residual (its w2) into the first small level's right-hand side. */
static int amg_small(ef_cl_amg *a, cl_mem vin, cl_mem vout, const amg_dlevel *above) {
  const double omega = a->h->s.omega, alpha = a->h->s.alpha;
  cl_mem val0 = a->first_small == 0 ? a->lev[0].val : a->dummy;
  const int pre_nc = above ? a->lev[a->first_small].n : 0, pre_off = above ? a->lev[a->first_small].voff[AV_R] : 0;
  cl_mem pmp = above ? above->mp : a->dummy, pmem = above ? above->mem : a->dummy, pres = above ? above->w2 : a->dummy;
  cl_kernel k = a->kc.small_cycle;
  AMG_LAUNCH(a, k, (size_t)a->small_wgs, (size_t)a->small_wgs, PH_COARSE, EF_CL_ARG(a->n_ops), EF_CL_ARG(a->ops),
             EF_CL_ARG(a->lt), EF_CL_ARG(a->ibuf), EF_CL_ARG(a->dbuf), EF_CL_ARG(a->W), EF_CL_ARG(omega),
             EF_CL_ARG(alpha), EF_CL_ARG(val0), EF_CL_ARG(vin), EF_CL_ARG(vout), EF_CL_ARG(pre_nc), EF_CL_ARG(pmp),
             EF_CL_ARG(pmem), EF_CL_ARG(pres), EF_CL_ARG(pre_off));
  return EF_SUCCESS;
}

/* The K-cycle's second right-hand side q = rc - a1 w1 of a level, for amg_down_q to form. */
typedef struct {
  cl_mem rc, w1, part;
  int groups;
} amg_kq;

static int amg_cycle(ef_cl_amg *a, int l, cl_mem r, cl_mem x, const amg_kq *kq);

/* Coarse correction on level c (above the small levels) for right-hand side rc into xc (amg.h).
 * *later: 1 when a K-cycle left its last step, xc = c1 v1 + a2 v2, to the post-smoothing of level
 * c - 1 (amg_post_k), which reads the correction only there. */
static int amg_correction(ef_cl_amg *a, int c, cl_mem rc, cl_mem xc, int *later) {
  const ef_amg *h = a->h;
  amg_dlevel *C = &a->lev[c];
  *later = 0;
  if (c == h->n_levels - 1) {
    const int nc = C->n;
    cl_kernel k = a->kc.solve;
    AMG_LAUNCH(a, k, (size_t)nc * AMG_LANES, AMG_LANES, PH_COARSE, EF_CL_ARG(nc), EF_CL_ARG(a->W), EF_CL_ARG(rc),
               EF_CL_ARG(xc));
    return EF_SUCCESS;
  }
  if (h->s.cycle != EF_AMG_CYCLE_K || c > h->s.kcycle_levels) return amg_cycle(a, c, rc, xc, NULL);
  const amg_kernels *K = amg_k(a, c);
  const size_t items = (size_t)C->groups * AMG_WGS;
  EF_CALL(amg_cycle(a, c, rc, C->v1, NULL));
  AMG_LAUNCH(a, K->k_first, items, AMG_WGS, PH_KRYLOV, EF_CL_ARG(C->n), EF_CL_ARG(C->rp), EF_CL_ARG(C->col),
             EF_CL_ARG(C->val), EF_CL_ARG(C->v1), EF_CL_ARG(rc), EF_CL_ARG(C->w1), EF_CL_ARG(C->part));
  if (h->s.sweeps == 1) { /* q formed by the cycle's first kernel */
    const amg_kq kq = {rc, C->w1, C->part, C->groups};
    EF_CALL(amg_cycle(a, c, C->q, C->v2, &kq));
  } else {
    AMG_LAUNCH(a, K->k_second, items, AMG_WGS, PH_KRYLOV, EF_CL_ARG(C->n), EF_CL_ARG(C->w1), EF_CL_ARG(rc),
               EF_CL_ARG(C->part), EF_CL_ARG(C->groups), EF_CL_ARG(C->q));
    EF_CALL(amg_cycle(a, c, C->q, C->v2, NULL));
  }
  AMG_LAUNCH(a, K->k_third, items, AMG_WGS, PH_KRYLOV, EF_CL_ARG(C->n), EF_CL_ARG(C->rp), EF_CL_ARG(C->col),
             EF_CL_ARG(C->val), EF_CL_ARG(C->v2), EF_CL_ARG(C->w1), EF_CL_ARG(C->q), EF_CL_ARG(C->w2),
             EF_CL_ARG(C->part2));
  if (c - 1 >= AMG_POST_K_MIN_LEVEL) {
    *later = 1;
    return EF_SUCCESS;
  }
  AMG_LAUNCH(a, K->k_combine, items, AMG_WGS, PH_KRYLOV, EF_CL_ARG(C->n), EF_CL_ARG(C->v1), EF_CL_ARG(C->v2),
             EF_CL_ARG(C->part), EF_CL_ARG(C->part2), EF_CL_ARG(C->groups), EF_CL_ARG(xc));
  return EF_SUCCESS;
}

/* xout = xin + omega D^-1 (r - A xin) on level l. */
static int amg_sweep(ef_cl_amg *a, int l, cl_mem r, cl_mem xin, cl_mem xout) {
  amg_dlevel *L = &a->lev[l];
  const double omega = a->h->s.omega;
  cl_kernel k = amg_k(a, l)->sweep;
  AMG_LAUNCH_ROWS(a, k, L->n, PH_SMOOTH, EF_CL_ARG(L->n), EF_CL_ARG(L->rp), EF_CL_ARG(L->col), EF_CL_ARG(L->val),
                  EF_CL_ARG(L->dinv), EF_CL_ARG(omega), EF_CL_ARG(r), EF_CL_ARG(xin), EF_CL_ARG(xout));
  return EF_SUCCESS;
}

/* One cycle on level l (the host twin is amg_cycle in host_amg.c); with kq (one sweep), r is the
 * K-cycle's q, formed and written by the first kernel. */
static int amg_cycle(ef_cl_amg *a, int l, cl_mem r, cl_mem x, const amg_kq *kq) {
  amg_dlevel *L = &a->lev[l], *C = &a->lev[l + 1];
  const amg_kernels *K = amg_k(a, l);
  const int nu = a->h->s.sweeps;
  const double omega = a->h->s.omega, alpha = a->h->s.alpha;
  cl_mem buf[2] = {x, L->t};
  cl_mem cur = buf[(2 * nu - 1) & 1];
  if (kq) { /* one sweep: amg_down on q = rc - a1 w1 */
    AMG_LAUNCH_ROWS(a, K->down_q, L->n, PH_SMOOTH, EF_CL_ARG(L->n), EF_CL_ARG(L->rp), EF_CL_ARG(L->col),
                    EF_CL_ARG(L->val), EF_CL_ARG(L->dinv), EF_CL_ARG(omega), EF_CL_ARG(kq->rc), EF_CL_ARG(kq->w1),
                    EF_CL_ARG(kq->part), EF_CL_ARG(kq->groups), EF_CL_ARG(r), EF_CL_ARG(cur), EF_CL_ARG(L->w2));
  } else if (nu == 1) { /* first sweep and residual (into w2) fused */
    AMG_LAUNCH_ROWS(a, K->down, L->n, PH_SMOOTH, EF_CL_ARG(L->n), EF_CL_ARG(L->rp), EF_CL_ARG(L->col),
                    EF_CL_ARG(L->val), EF_CL_ARG(L->dinv), EF_CL_ARG(omega), EF_CL_ARG(r), EF_CL_ARG(cur),
                    EF_CL_ARG(L->w2));
  } else {
    AMG_LAUNCH(a, K->smooth0, (size_t)L->n, AMG_WGS, PH_SMOOTH, EF_CL_ARG(L->n), EF_CL_ARG(omega), EF_CL_ARG(L->dinv),
               EF_CL_ARG(r), EF_CL_ARG(cur));
    for (int s = 2; s <= nu; ++s) {
      cl_mem next = buf[(2 * nu - s) & 1];
      EF_CALL(amg_sweep(a, l, r, cur, next));
      cur = next;
    }
    /* res = r - A x into w2 (free during the cycle: the K-cycle fills it after its second cycle). */
    AMG_LAUNCH_ROWS(a, K->resid, L->n, PH_RESTRICT, EF_CL_ARG(L->n), EF_CL_ARG(L->rp), EF_CL_ARG(L->col),
                    EF_CL_ARG(L->val), EF_CL_ARG(r), EF_CL_ARG(cur), EF_CL_ARG(L->w2));
  }
  int later = 0;
  if (l + 1 >= a->first_small) { /* the small levels restrict w2 themselves */
    EF_CALL(amg_small(a, a->dummy, a->dummy, L));
  } else {
    AMG_LAUNCH(a, K->restr, (size_t)C->n, AMG_WGS, PH_RESTRICT, EF_CL_ARG(C->n), EF_CL_ARG(L->mp), EF_CL_ARG(L->mem),
               EF_CL_ARG(L->w2), EF_CL_ARG(C->r));
    EF_CALL(amg_correction(a, l + 1, C->r, C->x, &later));
  }
  cl_mem next = buf[(nu - 1) & 1];
  if (later) /* the K-cycle's combination formed here */
    AMG_LAUNCH_ROWS(a, K->post_k, L->n, PH_POST, EF_CL_ARG(L->n), EF_CL_ARG(L->rp), EF_CL_ARG(L->col),
                    EF_CL_ARG(L->val), EF_CL_ARG(L->dinv), EF_CL_ARG(omega), EF_CL_ARG(alpha), EF_CL_ARG(L->agg),
                    EF_CL_ARG(C->v1), EF_CL_ARG(C->v2), EF_CL_ARG(C->part), EF_CL_ARG(C->part2), EF_CL_ARG(C->groups),
                    EF_CL_ARG(r), EF_CL_ARG(cur), EF_CL_ARG(next));
  else
    AMG_LAUNCH_ROWS(a, K->post, L->n, PH_POST, EF_CL_ARG(L->n), EF_CL_ARG(L->rp), EF_CL_ARG(L->col),
                    EF_CL_ARG(L->val), EF_CL_ARG(L->dinv), EF_CL_ARG(omega), EF_CL_ARG(alpha), EF_CL_ARG(L->agg),
                    EF_CL_ARG(C->x), EF_CL_ARG(r), EF_CL_ARG(cur), EF_CL_ARG(next));
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
  a->cur = &a->apply_slots;
  a->cur->next = 0;
  if (a->first_small == 0) return amg_small(a, r, z, NULL);
  int later = 0;
  if (a->h->n_levels == 1) return amg_correction(a, 0, r, z, &later); /* the dense solve */
  return amg_cycle(a, 0, r, z, NULL);
}

int ef_cl_amg_solves_whole(const ef_cl_amg *a) { return a && a->first_small == 0 && a->work; }

int ef_cl_amg_solve(ef_cl_amg *a, const ef_cl_pcg_settings *s, cl_mem b, cl_mem x, ef_cl_pcg_result *res) {
  EF_CHECK(ef_cl_amg_solves_whole(a) && s && b && x && res && s->max_iterations >= 0 && s->rtol >= 0.0,
           EF_ERR_PARAMETER, "ef_cl_amg_solve: bad arguments, or the fine level is not small");
  const double t0 = ef_wtime(), omega = a->h->s.omega, alpha = a->h->s.alpha;
  memset(res, 0, sizeof *res);
  a->cur = &a->apply_slots;
  a->cur->next = 0;
  AMG_LAUNCH(a, a->kc.small_pcg, (size_t)a->small_wgs, (size_t)a->small_wgs, PH_COARSE, EF_CL_ARG(a->n_ops),
             EF_CL_ARG(a->ops), EF_CL_ARG(a->lt), EF_CL_ARG(a->ibuf), EF_CL_ARG(a->dbuf), EF_CL_ARG(a->W),
             EF_CL_ARG(omega), EF_CL_ARG(alpha), EF_CL_ARG(a->lev[0].val), EF_CL_ARG(b), EF_CL_ARG(x),
             EF_CL_ARG(a->work), EF_CL_ARG(s->max_iterations), EF_CL_ARG(s->rtol), EF_CL_ARG(s->flexible),
             EF_CL_ARG(s->null_space), EF_CL_ARG(a->out));
  double o[5];
  EF_CL_CALL(clEnqueueReadBuffer(a->ctx->queue, a->out, CL_TRUE, 0, sizeof o, o, 0, NULL, NULL));
  res->seconds = ef_wtime() - t0;
  res->iterations = (int)o[0];
  res->breakdown = o[3] != 0.0;
  res->converged = !res->breakdown && o[1] <= s->rtol * s->rtol * o[2];
  res->relres = o[2] > 0.0 ? sqrt(o[1] / o[2]) : 0.0;
  res->true_relres = o[2] > 0.0 ? sqrt(o[4] / o[2]) : 0.0;
  a->applies += res->iterations;
  EF_CHECK(!res->breakdown, EF_ERR_SOLVER,
           "device PCG (one work-group) broke down at iteration %d: p.Ap <= 0 or not finite (matrix or "
           "preconditioner not SPD)", res->iterations);
  return EF_SUCCESS;
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
  cl_mem m = level < 0 ? a->W : a->lev[level].val;
  size_t bytes = level < 0 ? (size_t)(a->h->nc * a->h->nc) * 8 : (size_t)a->lev[level].nnz * 8;
  EF_CL_CALL(clEnqueueReadBuffer(a->ctx->queue, m, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
  return EF_SUCCESS;
}

void ef_cl_amg_memory(const ef_cl_amg *a, double *hierarchy_bytes, double *work_bytes) {
  double hb = 0.0, wb = 0.0;
  ef_amg_memory(a->h, &hb, NULL, &wb, NULL);
  for (int l = 0; l + 1 < a->h->n_levels && l < a->first_small; ++l) hb += (double)a->h->lev[l].nnz; /* off */
  if (hierarchy_bytes) *hierarchy_bytes = hb;
  if (work_bytes) *work_bytes = wb;
}
