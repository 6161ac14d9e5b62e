/* ef_cl_cg.c -- the device CG (with its tuner) on a linear-system file in the
 * peers' format, reporting what the peers report (shared/peers/cupy_cg.py,
 * vcl_cg.cpp): microseconds per iteration over a fixed iteration count from
 * x = 0, and iterations and seconds to reach a relative residual of 1e-8 from
 * x = 0, as one text line and one JSON line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "matrix_io.h"
#include "opencl_cg_tuner.h"
#include "opencl_context.h"

/* The command line help. */
static void usage(FILE *f) {
  fprintf(f,
          "usage: ef_cl_cg FILE [ITERS] [options]\n"
          "  FILE                 int64 n, int64 nnz, int32 row_ptr[n+1], int32 col[nnz],\n"
          "                       float64 values[nnz], float64 rhs[n] (little-endian CSR)\n"
          "  ITERS                iterations of the fixed-count timing (default 200)\n"
          "  --device SPEC        OpenCL device, as EDGEFLOW_OPENCL_DEVICE (\"NVIDIA:0\", \"cpu\")\n"
          "  --variant V          standard (default) or three-term\n"
          "  --rtol R             relative residual of the solve (default 1e-8)\n"
          "  --max-iterations N   iteration limit of the solve (default 20000)\n"
          "  --check-every K      read the convergence state every K iterations (default 8)\n"
          "  --wgs-bits W --rows-bits R [--groups G]   SpMV parameters (no tuning)\n"
          "  --no-tune            untuned default parameters\n"
          "  --retune             ignore a cached tuning result\n"
          "  --write-solution OUT write the system with the solution appended\n"
          "  --list-devices       list OpenCL devices and exit\n"
          "  --quiet              only the result lines\n"
          "  --verbose            also every tuner candidate's time\n");
}

/* Escape a string for JSON (device names are plain, but be safe). */
static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    if ((unsigned char)*s >= 0x20) fputc(*s, f);
  }
  fputc('"', f);
}

typedef struct {
  const char *file, *device, *write_solution;
  int iters, max_iterations, check_every, wgs_bits, rows_bits, groups, tune, retune, quiet, verbose;
  ef_cg_variant variant;
  double rtol;
} options;

/* Parse the command line; returns 0, 1 (error) or 2 (done, e.g. --list-devices). */
static int parse(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->iters = 200;
  o->max_iterations = 20000;
  o->check_every = 8;
  o->tune = 1;
  o->rtol = 1e-8;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 2;
    } else if (!strcmp(a, "--list-devices")) {
      if (ef_cl_list_devices(stdout)) {
        fprintf(stderr, "ef_cl_cg: %s\n", ef_error_message());
        return 1;
      }
      return 2;
    } else if (!strcmp(a, "--no-tune")) {
      o->tune = 0;
    } else if (!strcmp(a, "--retune")) {
      o->retune = 1;
    } else if (!strcmp(a, "--quiet")) {
      o->quiet = 1;
    } else if (!strcmp(a, "--verbose")) {
      o->verbose = 1;
    } else if (a[0] == '-' && a[1] == '-') {
      if (!v) {
        fprintf(stderr, "ef_cl_cg: %s needs a value\n", a);
        return 1;
      }
      ++i;
      if (!strcmp(a, "--device")) o->device = v;
      else if (!strcmp(a, "--variant")) {
        if (!strcmp(v, "standard")) o->variant = EF_CG_STANDARD;
        else if (!strcmp(v, "three-term")) o->variant = EF_CG_THREE_TERM;
        else {
          fprintf(stderr, "ef_cl_cg: unknown variant '%s'\n", v);
          return 1;
        }
      } else if (!strcmp(a, "--rtol")) o->rtol = atof(v);
      else if (!strcmp(a, "--max-iterations")) o->max_iterations = atoi(v);
      else if (!strcmp(a, "--check-every")) o->check_every = atoi(v);
      else if (!strcmp(a, "--wgs-bits")) o->wgs_bits = atoi(v);
      else if (!strcmp(a, "--rows-bits")) o->rows_bits = atoi(v);
      else if (!strcmp(a, "--groups")) o->groups = atoi(v);
      else if (!strcmp(a, "--write-solution")) o->write_solution = v;
      else {
        fprintf(stderr, "ef_cl_cg: unknown option %s\n", a);
        usage(stderr);
        return 1;
      }
    } else if (!o->file) {
      o->file = a;
    } else {
      o->iters = atoi(a);
    }
  }
  if (!o->file || o->iters < 1) {
    usage(stderr);
    return 1;
  }
  return 0;
}

/* Everything after parsing; returns an ef_error code. */
static int run(const options *o, int *no_device) {
  ef_linear_system *sys = NULL;
  ef_cl_context *ctx = NULL;
  ef_cl_csr dA = {0};
  ef_cl_cg *cg = NULL;
  cl_mem b = NULL, x = NULL;
  double *xh = NULL;
  int err = EF_SUCCESS;
  EF_CALL_GOTO(ef_linear_system_read(o->file, &sys), done);
  ef_csr_matrix A = ef_linear_system_matrix(sys);

  int devices = 0;
  EF_CALL_GOTO(ef_cl_count_devices(&devices), done);
  if (devices == 0) {
    *no_device = 1;
    err = EF_ERROR(EF_ERR_NOT_FOUND, "no OpenCL device");
    goto done;
  }
  if (o->device) setenv("EDGEFLOW_OPENCL_DEVICE", o->device, 1);
  ef_cl_settings cs;
  ef_cl_settings_default(&cs);
  cs.verbose = o->quiet ? 0 : 1;
  EF_CALL_GOTO(ef_cl_context_create(&cs, &ctx), done);
  EF_CALL_GOTO(ef_cl_csr_upload(ctx, &A, &dA), done);
  EF_CALL_GOTO(ef_cl_vector_create(ctx, sys->n, sys->rhs, &b), done);
  EF_CALL_GOTO(ef_cl_vector_create(ctx, sys->n, NULL, &x), done);

  ef_cl_cg_settings s;
  ef_cl_cg_settings_default(&s);
  s.variant = o->variant;
  s.rtol = o->rtol;
  s.max_iterations = o->max_iterations;
  s.check_every = o->check_every;
  s.wgs_bits = o->wgs_bits;
  s.rows_bits = o->rows_bits;
  s.groups = o->groups;
  s.tune = o->tune;
  s.force_retune = o->retune;
  s.verbose = o->quiet ? 0 : o->verbose ? 2 : 1;
  EF_CALL_GOTO(ef_cl_cg_create(ctx, &dA, &s, &cg), done);
  ef_cl_cg_config cfg;
  double tune_s = 0.0;
  ef_cl_cg_get_config(cg, &cfg, &tune_s);

  /* Fixed iteration count from zero (the peers' per-iteration figure). */
  double wall = 0.0, kern = 0.0, kmat = 0.0;
  EF_CALL_GOTO(ef_cl_cg_time_iterations(cg, b, x, o->iters, &wall, &kern, &kmat), done);

  /* Solve to rtol from zero. */
  const double zero = 0.0;
  EF_CL_CALL_GOTO(clEnqueueFillBuffer(ctx->queue, x, &zero, sizeof zero, 0, (size_t)sys->n * 8, 0,
                                      NULL, NULL), done);
  EF_CALL_GOTO(ef_cl_cg_set_stopping(cg, o->rtol, o->max_iterations, o->check_every), done);
  ef_cl_cg_result res;
  EF_CALL_GOTO(ef_cl_cg_solve(cg, b, x, &res), done);

  /* cupy_cg.py's bytes per iteration, for side-by-side GB/s, and ours (cg.cl). */
  double textbook = (double)sys->nnz * 12 + (double)(sys->n + 1) * 4 + 18.0 * 8.0 * (double)sys->n;
  double model = ef_cl_cg_bytes_per_iteration(sys->n, sys->nnz, dA.row_ptr_64);
  /* The same count with the whole matrix as given (its diagonal included). */
  double full = model + 12.0 * (double)sys->n;
  const char *vname = o->variant == EF_CG_STANDARD ? "standard" : "three-term";
  char rt[32]; /* "1e-8" as the peers print it, not "1e-08" */
  snprintf(rt, sizeof rt, "%g", o->rtol);
  char *e = strstr(rt, "e-0");
  if (e) memmove(e + 2, e + 3, strlen(e + 3) + 1);
  printf("ef_cl_cg n=%lld nnz=%lld variant=%s us_per_iter=%.1f kernel_us_per_iter=%.1f (matrix %.1f, vector %.1f) "
         "textbook_GBps=%.0f model_GBps=%.0f iters_to_%s=%d solve_s=%.3f relres=%.2e "
         "relres_scaled=%.2e converged=%d config=w%dr%dg%d tune_s=%.2f device=\"%s\"\n",
         (long long)sys->n, (long long)sys->nnz, vname, wall * 1e6, kern * 1e6, kmat * 1e6,
         (kern - kmat) * 1e6, textbook / wall / 1e9,
         model / wall / 1e9, rt, res.iterations, res.seconds, res.true_relres_unscaled,
         res.true_relres, res.converged, cfg.wgs_bits, cfg.rows_bits, cfg.groups, tune_s,
         ctx->device_name);
  printf("{\"program\": \"ef_cl_cg\", \"device\": ");
  json_string(stdout, ctx->device_name);
  printf(", \"platform\": ");
  json_string(stdout, ctx->platform_name);
  printf(", \"driver\": ");
  json_string(stdout, ctx->driver_version);
  printf(", \"n\": %lld, \"nnz\": %lld, \"variant\": \"%s\", \"iters_timed\": %d, "
         "\"us_per_iter\": %.3f, \"kernel_us_per_iter\": %.3f, \"matrix_kernel_us_per_iter\": %.3f, "
         "\"vector_kernel_us_per_iter\": %.3f, \"bytes_per_iter\": %.0f, \"full_matrix_bytes_per_iter\": %.0f, "
         "\"textbook_bytes_per_iter\": %.0f, \"model_GBps\": %.1f, \"textbook_GBps\": %.1f, "
         "\"rtol\": %g, \"iters_to_rtol\": %d, \"solve_s\": %.6f, \"converged\": %s, "
         "\"relres\": %.3e, \"relres_scaled\": %.3e, \"recurrence_relres_scaled\": %.3e, "
         "\"wgs_bits\": %d, \"rows_bits\": %d, \"groups\": %d, \"tune_s\": %.3f, "
         "\"check_every\": %d}\n",
         (long long)sys->n, (long long)sys->nnz, vname, o->iters, wall * 1e6, kern * 1e6, kmat * 1e6,
         (kern - kmat) * 1e6, model, full,
         textbook, model / wall / 1e9, textbook / wall / 1e9, o->rtol, res.iterations, res.seconds,
         res.converged ? "true" : "false", res.true_relres_unscaled, res.true_relres, res.relres,
         cfg.wgs_bits, cfg.rows_bits, cfg.groups, tune_s, o->check_every);
  fflush(stdout);

  if (o->write_solution) {
    xh = malloc((size_t)sys->n * sizeof *xh);
    EF_CHECK_GOTO(xh, EF_ERR_MEMORY, done, "out of memory");
    EF_CALL_GOTO(ef_cl_vector_read(ctx, x, sys->n, xh), done);
    EF_CALL_GOTO(ef_linear_system_write(o->write_solution, &A, sys->rhs, xh), done);
  }
done:
  free(xh);
  if (b) clReleaseMemObject(b);
  if (x) clReleaseMemObject(x);
  ef_cl_cg_destroy(&cg);
  ef_cl_csr_release(&dA);
  ef_cl_context_destroy(&ctx);
  ef_linear_system_destroy(&sys);
  return err;
}

/* Parse, run, report errors (77 when no OpenCL device exists). */
int main(int argc, char **argv) {
  options o;
  int p = parse(argc, argv, &o);
  if (p) return p == 2 ? 0 : 2;
  int no_device = 0;
  int err = run(&o, &no_device);
  if (err) {
    fprintf(stderr, "ef_cl_cg: %s\n", ef_error_message());
    return no_device ? 77 : 1;
  }
  return 0;
}
