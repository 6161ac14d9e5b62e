/* opencl_cg_tuner.c -- the device CG's SpMV configurations: candidates, the untuned
 * default, verify-then-time tuning on the actual matrix, the on-disk tuning cache, and the
 * per-iteration timing used by the tuner and by tools/ef_cl_cg (see opencl_cg_tuner.h). */
#include "opencl_cg_tuner.h"

#include "opencl_cg_private.h"

#include "edgeflow/ef_util.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EF_CG_MAX_CANDIDATES 256
#define EF_CG_VERIFY_ITERATIONS 5

/* ------------------------------------------------------------------------- */
/* Small helpers. */

/* Smallest power of two >= v (v >= 1). */
static int64_t ef_pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

/* ------------------------------------------------------------------------- */
/* Configurations. */

/* Matrix-kernel groups: a multiple of the compute units, no more than there are row blocks. */
int ef_cl_cg_clamp_groups(int64_t n, int rows_bits, int64_t groups) {
  int64_t blocks = (n + ((int64_t)1 << rows_bits) - 1) >> rows_bits;
  if (groups > blocks) groups = blocks;
  if (groups > EF_CG_MAX_PARTIALS) groups = EF_CG_MAX_PARTIALS;
  return groups < 1 ? 1 : (int)groups;
}

/* Largest lanes-per-row worth trying: twice the average row length, rounded up to a power of two. */
static int ef_cl_cg_max_lanes(const ef_cl_csr *A) {
  int64_t avg = (A->nnz + A->n - 1) / (A->n > 0 ? A->n : 1);
  int64_t lanes = 2 * ef_pow2_ceil(avg < 1 ? 1 : avg);
  return lanes > 32 ? 32 : (int)lanes;
}

/* Whether a work-group of 2^wgs_bits fits the device (items and local memory). */
int ef_cl_cg_wgs_fits(const ef_cl_context *ctx, int wgs_bits) {
  size_t wgs = (size_t)1 << wgs_bits;
  /* Matrix kernels hold a double2 reduction buffer and two double lane buffers. */
  return wgs <= ctx->max_work_group_size && 32 * wgs <= ctx->local_mem_bytes;
}

/* The tuner's grid: wgs_bits 6..9, lanes per row 1..min(32, 2 pow2(avg row)), groups CU x 1..16. */
int ef_cl_cg_candidates(const ef_cl_context *ctx, const ef_cl_csr *A, ef_cl_cg_config *list,
                        int max, int *count) {
  EF_CHECK(ctx && A && list && count, EF_ERR_PARAMETER, "ef_cl_cg_candidates: NULL argument");
  *count = 0;
  int max_lanes = ef_cl_cg_max_lanes(A);
  int64_t cu = ctx->compute_units ? ctx->compute_units : 1;
  for (int w = 6; w <= 9; ++w) {
    if (!ef_cl_cg_wgs_fits(ctx, w)) continue;
    for (int lane_bits = 0; lane_bits <= 5 && lane_bits <= w; ++lane_bits) {
      if ((1 << lane_bits) > max_lanes) break;
      int r = w - lane_bits, last = -1;
      for (int j = 0; j <= 4; ++j) {
        int g = ef_cl_cg_clamp_groups(A->n, r, cu << j);
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
void ef_cl_cg_default_config(const ef_cl_cg *cg, ef_cl_cg_config *c) {
  int w = 8;
  while (w > 5 && !ef_cl_cg_wgs_fits(cg->ctx, w)) --w;
  int64_t avg = (cg->A.nnz + cg->A.n - 1) / cg->A.n;
  int64_t lanes = ef_pow2_ceil((avg + 1) / 2);
  int lane_bits = 0;
  while ((1 << lane_bits) < lanes && lane_bits < 5 && lane_bits < w) ++lane_bits;
  c->wgs_bits = w;
  c->rows_bits = w - lane_bits;
  c->groups = ef_cl_cg_clamp_groups(cg->n, c->rows_bits, (int64_t)cg->ctx->compute_units * 8);
  c->seconds_per_iteration = 0.0;
}

/* Release and forget the profiling events. */
void ef_cl_cg_drop_profile(ef_cl_cg *cg) {
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
  ef_cl_cg_drop_profile(cg);
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
static double ef_cl_cg_random(uint64_t *state) {
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
} ef_cl_cg_tune_data;

/* Free the tuner's host and device data. */
static void ef_cl_cg_tune_data_free(ef_cl_cg_tune_data *t) {
  free(t->rp);
  free(t->col);
  free(t->val);
  free(t->x);
  free(t->y_ref);
  free(t->bound);
  free(t->b);
  free(t->x_ref);
  ef_cl_buffer_release(&t->dx);
  ef_cl_buffer_release(&t->dy);
  ef_cl_buffer_release(&t->db);
  ef_cl_buffer_release(&t->dsol);
}

/* EF_CG_VERIFY_ITERATIONS steps of textbook CG on the scaled system from 0, unscaled. */
static int ef_cl_cg_host_reference_cg(const ef_cl_cg_tune_data *t, int64_t n, double *x_out) {
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
static int ef_cl_cg_tune_data_make(ef_cl_cg *cg, ef_cl_cg_tune_data *t) {
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
    t->x[i] = ef_cl_cg_random(&seed);
    t->b[i] = ef_cl_cg_random(&seed);
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
  EF_CALL(ef_cl_cg_host_reference_cg(t, n, t->x_ref));
  EF_CALL(ef_cl_vector_create(cg->ctx, n, t->x, &t->dx));
  EF_CALL(ef_cl_vector_create(cg->ctx, n, NULL, &t->dy));
  EF_CALL(ef_cl_vector_create(cg->ctx, n, t->b, &t->db));
  EF_CALL(ef_cl_vector_create(cg->ctx, n, NULL, &t->dsol));
  return EF_SUCCESS;
}

/* Check the installed configuration: SpMV per row, then a few CG steps against the host. */
static int ef_cl_cg_verify(ef_cl_cg *cg, ef_cl_cg_tune_data *t, double *work) {
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
static int ef_cl_cg_tune_path(const ef_cl_cg *cg, char *path, size_t size) {
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
static int ef_cl_cg_tune_load(const ef_cl_cg *cg, ef_cl_cg_config *c) {
  char path[1200];
  if (!ef_cl_cg_tune_path(cg, path, sizeof path)) return 0;
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int ok = fscanf(f, "EFTUNE1 %d %d %d %lf", &c->wgs_bits, &c->rows_bits, &c->groups,
                  &c->seconds_per_iteration) == 4;
  fclose(f);
  return ok && c->wgs_bits >= 1 && c->wgs_bits <= 12 && c->rows_bits >= 0 &&
         c->rows_bits <= c->wgs_bits && c->groups >= 1 && ef_cl_cg_wgs_fits(cg->ctx, c->wgs_bits);
}

/* Store a tuning result (best effort). */
static void ef_cl_cg_tune_store(const ef_cl_cg *cg, const ef_cl_cg_config *c) {
  char path[1200], tmp[1300];
  if (!ef_cl_cg_tune_path(cg, path, sizeof path)) return;
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
int ef_cl_cg_tune(ef_cl_cg *cg) {
  ef_cl_cg_config cached;
  if (!cg->s.force_retune && ef_cl_cg_tune_load(cg, &cached)) {
    int err = ef_cl_cg_use_config(cg, &cached);
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
  ef_cl_cg_tune_data t;
  memset(&t, 0, sizeof t);
  int count = 0, err = EF_SUCCESS, tried = 0;
  ef_cl_cg_config best = {0, 0, 0, INFINITY};
  EF_CHECK_GOTO(list && work, EF_ERR_MEMORY, done, "out of memory in the tuner");
  EF_CALL_GOTO(ef_cl_cg_candidates(cg->ctx, &cg->A, list, EF_CG_MAX_CANDIDATES, &count), done);
  EF_CALL_GOTO(ef_cl_cg_tune_data_make(cg, &t), done);
  /* The default shape first, so a budget cut short still compares against it. */
  ef_cl_cg_config dflt;
  ef_cl_cg_default_config(cg, &dflt);
  for (int i = 0; i < count; ++i)
    if (list[i].wgs_bits == dflt.wgs_bits && list[i].rows_bits == dflt.rows_bits) {
      int first = i;
      while (first > 0 && list[first - 1].wgs_bits == dflt.wgs_bits && list[first - 1].rows_bits == dflt.rows_bits)
        --first;
      int last = i;
      while (last + 1 < count && list[last + 1].wgs_bits == dflt.wgs_bits && list[last + 1].rows_bits == dflt.rows_bits)
        ++last;
      ef_cl_cg_config block[64];
      int nb = last - first + 1;
      if (nb > 64) break;
      memcpy(block, list + first, (size_t)nb * sizeof *block);
      memmove(list + nb, list, (size_t)first * sizeof *list);
      memcpy(list, block, (size_t)nb * sizeof *block);
      break;
    }
  const int is_cpu = (cg->ctx->device_type & CL_DEVICE_TYPE_CPU) != 0;
  const double budget = cg->s.tune_budget > 0 ? cg->s.tune_budget : is_cpu ? 5.0 : cg->n < 1000000 ? 2.0 : 10.0;
  int pruned = 0, over_budget = 0, skipped = 0;
  for (int i = 0; i < count; ++i) {
    ef_cl_cg_config *c = &list[i];
    if (tried > 0 && ef_wtime() - t0 > budget) {
      over_budget = count - i;
      break;
    }
    int e = EF_SUCCESS;
    if (i == 0 || c->wgs_bits != list[i - 1].wgs_bits || c->rows_bits != list[i - 1].rows_bits)
      e = ef_cl_cg_use_config(cg, c);
    if (!e) {
      cg->cfg.groups = c->groups;
      ef_cl_cg_set_groups(cg);
      e = ef_cl_cg_verify(cg, &t, work);
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
      ++skipped;
      while (i + 1 < count && list[i + 1].wgs_bits == c->wgs_bits &&
             list[i + 1].rows_bits == c->rows_bits) {
        ++i;
        ++skipped;
      }
      continue;
    }
    ++tried;
    c->seconds_per_iteration = kern;
    /* Prune: a shape whose first group count is twice as slow as the best skips its other counts. */
    const int first_of_shape = i == 0 || c->wgs_bits != list[i - 1].wgs_bits || c->rows_bits != list[i - 1].rows_bits;
    if (first_of_shape && kern > 2.0 * best.seconds_per_iteration)
      while (i + 1 < count && list[i + 1].wgs_bits == c->wgs_bits && list[i + 1].rows_bits == c->rows_bits) {
        ++i;
        ++pruned;
      }
    if (cg->s.verbose >= 2)
      fprintf(cg->ctx->log, "edgeflow: tuner wgs_bits %d rows_bits %d groups %d: %.2f us/iteration\n",
              c->wgs_bits, c->rows_bits, c->groups, c->seconds_per_iteration * 1e6);
    if (c->seconds_per_iteration < best.seconds_per_iteration) best = *c;
  }
  EF_CHECK_GOTO(tried > 0, EF_ERR_UNSUPPORTED, done, "the CG tuner found no working SpMV "
                "configuration on '%s'", cg->ctx->device_name);
  EF_CALL_GOTO(ef_cl_cg_use_config(cg, &best), done);
  cg->tuning_seconds = ef_wtime() - t0;
  cg->tune_report = (ef_cl_cg_tune_report){count, tried, skipped, pruned, over_budget, budget, cg->tuning_seconds};
  ef_cl_cg_tune_store(cg, &best);
  if (cg->s.verbose >= 1)
    fprintf(cg->ctx->log, "edgeflow: CG tuner chose wgs_bits %d, rows_bits %d (%d lanes per row), "
            "groups %d: %.2f us per iteration; %d of %d candidates timed in %.2f s (budget %.3g s; %d pruned, "
            "%d skipped, %d left when the budget ran out)\n", best.wgs_bits,
            best.rows_bits, 1 << (best.wgs_bits - best.rows_bits), best.groups,
            best.seconds_per_iteration * 1e6, tried, count, cg->tuning_seconds, budget, pruned, skipped, over_budget);
done:
  ef_cl_cg_tune_data_free(&t);
  free(list);
  free(work);
  return err;
}

void ef_cl_cg_get_tune_report(const ef_cl_cg *cg, ef_cl_cg_tune_report *report) {
  if (!report) return;
  memset(report, 0, sizeof *report);
  if (cg) *report = cg->tune_report;
}
