/* ef_amg_bench.c -- the device AMG-preconditioned CG on a linear-system file (peers' format),
 * against our Jacobi-CG (opencl_cg.c) on the same matrix in the same run: host set-up, device
 * refresh, cold-start solve time to ||b - A x|| / ||b|| <= rtol, iterations, per-phase device
 * times of the cycle (profiled solve), hierarchy memory against the fine matrix; one text
 * block and one JSON object (--json FILE, else stdout's last line). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amg.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"
#include "matrix_io.h"
#include "opencl_amg.h"
#include "opencl_cg.h"
#include "opencl_context.h"
#include "opencl_pcg.h"

static void usage(FILE *f) {
  fprintf(f, "usage: ef_amg_bench FILE [options]\n"
             "  --cycle V|K            V-cycle with plain CG, or K-cycle with flexible CG (default K)\n"
             "  --rtol R               relative residual (default 1e-8)\n"
             "  --repeat N             timed cold-start solves, the median is reported (default 5)\n"
             "  --passes P --coarse-enough N --kcycle-levels L --sweeps S --alpha A --omega W --max-levels M\n"
             "  --small-rows N         levels of at most N rows in one work-group (0: never, the default)\n"
             "  --check-every K        device state read every K iterations (default 2)\n"
             "  --no-jacobi            skip our Jacobi-CG\n"
             "  --no-whole             the multi-launch PCG even when every level is small (default: the\n"
             "                         whole solve in one work-group then, as the strategies do)\n"
             "  --null-space           A has the constant null space\n"
             "  --json FILE            write the JSON there\n"
             "  --device SPEC          as EDGEFLOW_OPENCL_DEVICE\n");
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int amg_pc(void *ctx, cl_mem r, cl_mem z) { return ef_cl_amg_apply(ctx, r, z); }

typedef struct {
  const char *file, *json, *device;
  ef_amg_settings amg;
  double rtol;
  int repeat, check_every, jacobi, null_space, no_whole;
} options;

static int parse(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  ef_amg_settings_default(&o->amg);
  o->rtol = 1e-8;
  o->repeat = 5;
  o->check_every = 2;
  o->jacobi = 1;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help")) return usage(stdout), 2;
    if (!strcmp(a, "--no-jacobi")) { o->jacobi = 0; continue; }
    if (!strcmp(a, "--no-whole")) { o->no_whole = 1; continue; }
    if (!strcmp(a, "--null-space")) { o->null_space = 1; continue; }
    if (a[0] != '-') { o->file = a; continue; }
    if (!v) return fprintf(stderr, "ef_amg_bench: %s needs a value\n", a), 1;
    ++i;
    if (!strcmp(a, "--cycle")) o->amg.cycle = (v[0] == 'V' || v[0] == 'v') ? EF_AMG_CYCLE_V : EF_AMG_CYCLE_K;
    else if (!strcmp(a, "--rtol")) o->rtol = atof(v);
    else if (!strcmp(a, "--repeat")) o->repeat = atoi(v);
    else if (!strcmp(a, "--passes")) o->amg.passes = atoi(v);
    else if (!strcmp(a, "--coarse-enough")) o->amg.coarse_enough = atol(v);
    else if (!strcmp(a, "--kcycle-levels")) o->amg.kcycle_levels = atoi(v);
    else if (!strcmp(a, "--sweeps")) o->amg.sweeps = atoi(v);
    else if (!strcmp(a, "--alpha")) o->amg.alpha = atof(v);
    else if (!strcmp(a, "--omega")) o->amg.omega = atof(v);
    else if (!strcmp(a, "--max-levels")) o->amg.max_levels = atoi(v);
    else if (!strcmp(a, "--small-rows")) o->amg.small_rows = atol(v);
    else if (!strcmp(a, "--check-every")) o->check_every = atoi(v);
    else if (!strcmp(a, "--json")) o->json = v;
    else if (!strcmp(a, "--device")) o->device = v;
    else return fprintf(stderr, "ef_amg_bench: unknown option %s\n", a), usage(stderr), 1;
  }
  if (!o->file || o->repeat < 1) return usage(stderr), 1;
  return 0;
}

/* One AMG-preconditioned solve: the whole solve in one work-group when `whole`, else the
 * multi-launch PCG. */
static int bench_solve(ef_cl_pcg *pcg, ef_cl_amg *amg, int whole, const ef_cl_pcg_settings *ps, cl_mem b, cl_mem x,
                       ef_cl_pcg_result *res) {
  return whole ? ef_cl_amg_solve(amg, ps, b, x, res) : ef_cl_pcg_solve(pcg, b, x, res);
}

static int run(const options *o, int *no_device) {
  ef_linear_system *sys = NULL;
  ef_cl_context *ctx = NULL;
  ef_cl_csr A = {0};
  ef_cl_amg *amg = NULL;
  ef_cl_pcg *pcg = NULL;
  ef_cl_cg *cg = NULL;
  cl_mem b = NULL, x = NULL;
  int err = EF_SUCCESS;
  double times[64];
  EF_CALL(ef_linear_system_read(o->file, &sys));
  const int64_t n = sys->n;
  ef_cl_settings cs;
  ef_cl_settings_default(&cs);
  cs.verbose = 0;
  if (o->device) {
    cs.platform = o->device; /* a platform substring, e.g. "NVIDIA" */
  }
  int count = 0;
  if (ef_cl_count_devices(&count) || count == 0) {
    *no_device = 1;
    err = EF_ERROR(EF_ERR_UNSUPPORTED, "no OpenCL device");
    goto done;
  }
  EF_CALL_GOTO(ef_cl_context_create(&cs, &ctx), done);
  ef_csr_matrix hm = ef_linear_system_matrix(sys);
  EF_CALL_GOTO(ef_cl_csr_upload(ctx, &hm, &A), done);
  EF_CALL_GOTO(ef_cl_vector_create(ctx, n, sys->rhs, &b), done);
  EF_CALL_GOTO(ef_cl_vector_create(ctx, n, NULL, &x), done);
  ef_amg_matrix M = {n, sys->nnz, sys->row_ptr, sys->col, sys->values, o->null_space};
  EF_CALL_GOTO(ef_cl_amg_create(ctx, &A, &M, o->null_space, &o->amg, &amg), done);
  const ef_amg *h = ef_cl_amg_host(amg);
  ef_cl_amg_timing tm;
  EF_CALL_GOTO(ef_cl_amg_timing_get(amg, &tm), done);
  double setup = tm.setup_seconds, host_setup = h->setup_seconds;
  /* Refresh: wall per call, queue drained. */
  int nref = 5;
  EF_CL_CALL_GOTO(clFinish(ctx->queue), done);
  for (int r = 0; r < nref; ++r) {
    double t0 = ef_wtime();
    EF_CALL_GOTO(ef_cl_amg_refresh(amg), done);
    EF_CL_CALL_GOTO(clFinish(ctx->queue), done);
    times[r] = ef_wtime() - t0;
  }
  qsort(times, nref, sizeof times[0], cmp_double);
  double refresh = times[nref / 2];
  ef_cl_pcg_settings ps;
  ef_cl_pcg_settings_default(&ps);
  ps.rtol = o->rtol;
  ps.max_iterations = 2000;
  ps.check_every = o->check_every;
  ps.flexible = o->amg.cycle == EF_AMG_CYCLE_K;
  ps.null_space = o->null_space;
  EF_CALL_GOTO(ef_cl_pcg_create(ctx, &A, &ps, amg_pc, amg, &pcg), done);
  const int whole = !o->no_whole && ef_cl_amg_solves_whole(amg);
  ef_cl_pcg_result res;
  const double zero = 0.0;
  int reps = o->repeat > 64 ? 64 : o->repeat;
  for (int r = -1; r < reps; ++r) { /* r = -1: warm-up */
    EF_CL_CALL_GOTO(clEnqueueFillBuffer(ctx->queue, x, &zero, sizeof zero, 0, (size_t)n * 8, 0, NULL, NULL), done);
    EF_CL_CALL_GOTO(clFinish(ctx->queue), done);
    EF_CALL_GOTO(bench_solve(pcg, amg, whole, &ps, b, x, &res), done);
    if (r >= 0) times[r] = res.seconds;
  }
  qsort(times, reps, sizeof times[0], cmp_double);
  double solve = times[reps / 2], solve_min = times[0];
  /* Profiled solve: device time by phase; launches per refresh and per apply (the GPU proxy:
   * small levels are launch-bound). */
  ef_cl_amg_timing_reset(amg);
  ef_cl_amg_set_profiling(amg, 1);
  EF_CL_CALL_GOTO(clEnqueueFillBuffer(ctx->queue, x, &zero, sizeof zero, 0, (size_t)n * 8, 0, NULL, NULL), done);
  EF_CALL_GOTO(ef_cl_amg_refresh(amg), done);
  EF_CALL_GOTO(ef_cl_amg_timing_get(amg, &tm), done);
  const int launches_refresh = tm.launches;
  EF_CALL_GOTO(bench_solve(pcg, amg, whole, &ps, b, x, &res), done);
  EF_CALL_GOTO(ef_cl_amg_timing_get(amg, &tm), done);
  const double launches_apply = tm.applies > 0 ? (double)(tm.launches - launches_refresh) / tm.applies : 0.0;
  ef_cl_amg_set_profiling(amg, 0);
  /* Launch probe: preconditioner applies enqueued back to back; the host's enqueue time against
   * the time until the queue drains tells a host-bound cycle (equal) from a device-bound one. */
  const int probe = 50;
  EF_CL_CALL_GOTO(clFinish(ctx->queue), done);
  double tp0 = ef_wtime();
  for (int r = 0; r < probe; ++r) EF_CALL_GOTO(ef_cl_amg_apply(amg, b, x), done);
  double tp1 = ef_wtime();
  EF_CL_CALL_GOTO(clFinish(ctx->queue), done);
  double tp2 = ef_wtime();
  const double probe_launches = launches_apply > 0.0 ? probe * launches_apply : 1.0;
  const double enqueue_us = 1e6 * (tp1 - tp0) / probe_launches, drain_us = 1e6 * (tp2 - tp0) / probe_launches;
  double hier = 0.0, work = 0.0, fine = 0.0, opc = 0.0;
  ef_amg_memory(h, NULL, &fine, NULL, &opc);
  ef_cl_amg_memory(amg, &hier, &work);
  /* Jacobi-CG, same matrix, same run. */
  double jac_time = 0.0, jac_true = 0.0;
  int jac_it = 0;
  if (o->jacobi) {
    ef_cl_cg_settings s;
    ef_cl_cg_settings_default(&s);
    s.rtol = o->rtol;
    s.max_iterations = 20000;
    s.check_every = 8;
    s.tune = 0;
    EF_CALL_GOTO(ef_cl_cg_create(ctx, &A, &s, &cg), done);
    ef_cl_cg_result cr;
    for (int r = -1; r < reps; ++r) {
      EF_CL_CALL_GOTO(clEnqueueFillBuffer(ctx->queue, x, &zero, sizeof zero, 0, (size_t)n * 8, 0, NULL, NULL), done);
      EF_CL_CALL_GOTO(clFinish(ctx->queue), done);
      EF_CALL_GOTO(ef_cl_cg_solve(cg, b, x, &cr), done);
      if (r >= 0) times[r] = cr.seconds;
    }
    qsort(times, reps, sizeof times[0], cmp_double);
    jac_time = times[reps / 2];
    jac_it = cr.iterations;
    jac_true = cr.true_relres_unscaled;
  }
  printf("device            %s\n", ctx->device_name);
  printf("matrix            %s: n %lld, nnz %lld\n", o->file, (long long)n, (long long)sys->nnz);
  printf("hierarchy         %d levels:", h->n_levels);
  for (int l = 0; l < h->n_levels; ++l) printf(" %lld", (long long)h->lev[l].n);
  printf("; operator complexity %.3f; memory %.1f %% of the fine matrix (work vectors %.1f %%)\n", opc,
         100.0 * hier / fine, 100.0 * work / fine);
  printf("set-up            %.4f s (host hierarchy %.4f s, upload + first refresh the rest)\n", setup, host_setup);
  printf("refresh           %.6f s (device, median of %d)\n", refresh, nref);
  printf("AMG-%s           %d iterations, true residual %.3e, solve %.6f s (median of %d, min %.6f)%s\n",
         ps.flexible ? "FCG" : "PCG", res.iterations, res.true_relres, solve, reps, solve_min,
         whole ? "; whole solve in one work-group" : "");
  printf("phases (profiled) smooth %.6f restrict %.6f post %.6f krylov %.6f coarse %.6f s; %d applies, %d launches\n",
         tm.smooth_seconds, tm.restrict_seconds, tm.post_seconds, tm.krylov_seconds, tm.coarse_seconds, tm.applies,
         tm.launches);
  printf("launches          %d per refresh, %.1f per preconditioner apply, %.1f per outer iteration (+4: PCG spmv, "
         "update, dot, direction)\n", launches_refresh, launches_apply, launches_apply + 4.0);
  printf("launch probe      %d applies back to back: host enqueue %.2f us per launch, until drained %.2f us per "
         "launch\n", probe, enqueue_us, drain_us);
  if (o->jacobi)
    printf("Jacobi-CG         %d iterations, true residual %.3e, solve %.6f s; ratio Jacobi / AMG %.2f\n", jac_it,
           jac_true, jac_time, jac_time / solve);
  FILE *jf = o->json ? fopen(o->json, "w") : stdout;
  if (!jf) jf = stdout;
  fprintf(jf,
          "{\"device\": \"%s\", \"file\": \"%s\", \"n\": %lld, \"nnz\": %lld, \"cycle\": \"%s\", \"levels\": %d, "
          "\"coarsest\": %lld, \"operator_complexity\": %.4f, \"hierarchy_memory_ratio\": %.4f, "
          "\"work_memory_ratio\": %.4f, \"setup_s\": %.6f, \"host_setup_s\": %.6f, \"refresh_s\": %.6f, "
          "\"iterations\": %d, \"true_relres\": %.3e, \"solve_s\": %.6f, \"solve_min_s\": %.6f, "
          "\"smooth_s\": %.6f, \"restrict_s\": %.6f, \"post_s\": %.6f, \"krylov_s\": %.6f, \"coarse_s\": %.6f, "
          "\"launches\": %d, \"launches_per_refresh\": %d, \"launches_per_iteration\": %.1f, \"jacobi_iterations\": %d, \"jacobi_true_relres\": %.3e, \"jacobi_solve_s\": %.6f, "
          "\"probe_enqueue_us_per_launch\": %.3f, \"probe_drain_us_per_launch\": %.3f, \"whole_solve\": %d}\n",
          ctx->device_name, o->file, (long long)n, (long long)sys->nnz, ps.flexible ? "K" : "V", h->n_levels,
          (long long)h->nc, opc, hier / fine, work / fine, setup, host_setup, refresh, res.iterations,
          res.true_relres, solve, solve_min, tm.smooth_seconds, tm.restrict_seconds, tm.post_seconds,
          tm.krylov_seconds, tm.coarse_seconds, tm.launches, launches_refresh, launches_apply + 4.0, jac_it, jac_true, jac_time,
          enqueue_us, drain_us, whole);
  if (jf != stdout) fclose(jf);
done:
  if (b) clReleaseMemObject(b);
  if (x) clReleaseMemObject(x);
  ef_cl_cg_destroy(&cg);
  ef_cl_pcg_destroy(&pcg);
  ef_cl_amg_destroy(&amg);
  ef_cl_csr_release(&A);
  ef_cl_context_destroy(&ctx);
  ef_linear_system_destroy(&sys);
  return err;
}

int main(int argc, char **argv) {
  options o;
  int p = parse(argc, argv, &o);
  if (p) return p == 2 ? 0 : 2;
  int no_device = 0;
  int err = run(&o, &no_device);
  if (err) {
    fprintf(stderr, "ef_amg_bench: %s\n", ef_error_message());
    return no_device ? 77 : 1;
  }
  return 0;
}
