/* test_opencl_cg.c -- the device CG against host references, for every SpMV
 * configuration the tuner would try; stopping rules; breakdowns; the tuner cache and its report,
 * and its time budget (tune_budget: a tiny one times the default shape only, and says so).
 * With --tiny it runs only a tiny SpMV + short CG (for oclgrind). */
#include <unistd.h>

#include "matrix_io.h"
#include "edgeflow/ef_util.h"
#include "opencl_cg_tuner.h"
#include "test_opencl_common.h"

/* Under oclgrind (--tiny) vectors are kept until the end: oclgrind 21.10 reports
 * values in buffers that reuse the memory of a released one as uninitialised
 * (seen with correct results), which would hide real reports. */
static int keep_vectors = 0;
static cl_mem kept[64];
static int n_kept = 0;

/* Release now, or at the end under oclgrind. */
static void release_vector(cl_mem v) {
  if (keep_vectors && n_kept < 64) kept[n_kept++] = v;
  else clReleaseMemObject(v);
}

/* Neumaier's compensated sum of x_i y_i (the dot reference) and sum |x_i y_i|. */
static double compensated_dot(const double *x, const double *y, int64_t n, double *abs_sum) {
  double s = 0.0, c = 0.0, a = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double v = x[i] * y[i], t = s + v;
    c += fabs(s) >= fabs(v) ? (s - t) + v : (v - t) + s;
    s = t;
    a += fabs(v);
  }
  *abs_sum = a;
  return s + c;
}

/* Device SpMV and dot against the host for the solver's configuration. */
static int check_spmv_dot(ef_cl_context *ctx, ef_cl_cg *cg, const test_csr *m, uint64_t seed) {
  int64_t n = m->n;
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *ref = malloc(n * sizeof *ref);
  ASSERT(x && y && ref, "oom");
  for (int64_t i = 0; i < n; ++i) x[i] = ef_test_uniform(&seed), y[i] = ef_test_uniform(&seed);
  cl_mem dx, dy;
  ASSERT_OK(ef_cl_vector_create(ctx, n, x, &dx));
  ASSERT_OK(ef_cl_vector_create(ctx, n, y, &dy));
  ef_cl_cg_config c;
  ef_cl_cg_get_config(cg, &c, NULL);
  /* SpMV: per row, |dev - host| <= 4 nnz_i eps (|A||x|)_i (both sums of nnz_i
   * products in different orders, each within nnz_i eps (|A||x|)_i of the exact). */
  ASSERT_OK(ef_cl_cg_spmv(cg, dx, dy));
  ASSERT_OK(ef_cl_vector_read(ctx, dy, n, y));
  test_spmv(m, x, ref);
  for (int64_t i = 0; i < n; ++i) {
    double a = 0.0;
    for (int64_t j = m->rp[i]; j < m->rp[i + 1]; ++j) a += fabs(m->val[j] * x[m->col[j]]);
    double tol = 4.0 * (double)(m->rp[i + 1] - m->rp[i]) * DBL_EPSILON * a;
    ASSERT(fabs(y[i] - ref[i]) <= tol, "config %d/%d/%d row %ld: %.17g vs %.17g", c.wgs_bits,
           c.rows_bits, c.groups, (long)i, y[i], ref[i]);
  }
  /* Dot: within (log2 n + 2) eps sum|x_i y_i| of a compensated sum: a tree or
   * blocked summation of n terms errs by about log2(n) eps sum|terms|; + 2 for the
   * products and the final rounding. */
  ASSERT_OK(ef_cl_vector_write(ctx, dy, n, y));
  double dot, abs_sum;
  ASSERT_OK(ef_cl_cg_dot(cg, dx, dy, &dot));
  double exact = compensated_dot(x, y, n, &abs_sum);
  double tol = (log2((double)n) + 2.0) * DBL_EPSILON * abs_sum;
  ASSERT(fabs(dot - exact) <= tol, "config %d/%d/%d dot %.17g vs %.17g (tol %.3g)", c.wgs_bits,
         c.rows_bits, c.groups, dot, exact, tol);
  release_vector(dx);
  release_vector(dy);
  free(x), free(y), free(ref);
  return 0;
}

/* Solve on the device from x0 and compare with the host CG on the scaled system:
 * the same iteration count (the stop is evaluated after every iteration on both
 * sides when check_every = 1, and the device freezes at the first stop for larger
 * check_every), the same iterate within rel_tol, the true residual below rtol. */
static int check_solve(ef_cl_context *ctx, ef_cl_cg *cg, const test_csr *m, const double *b,
                       const double *x0, ef_cg_variant variant, double rtol, int max_it, int every,
                       double rel_tol, int *iterations_out, double *x_out) {
  int64_t n = m->n;
  double *xd = malloc(n * sizeof *xd), *xh = malloc(n * sizeof *xh);
  ASSERT(xd && xh, "oom");
  memcpy(xh, x0, n * sizeof *xh);
  int host_it = test_host_cg(m, b, xh, rtol, max_it);
  ASSERT(host_it >= 0, "host CG failed");
  cl_mem db, dx;
  ASSERT_OK(ef_cl_vector_create(ctx, n, b, &db));
  ASSERT_OK(ef_cl_vector_create(ctx, n, x0, &dx));
  ef_cl_cg_config c;
  ef_cl_cg_get_config(cg, &c, NULL);
  ASSERT_OK(ef_cl_cg_set_stopping(cg, rtol, max_it, every));
  ef_cl_cg_result res;
  ASSERT_OK(ef_cl_cg_solve(cg, db, dx, &res));
  ASSERT_OK(ef_cl_vector_read(ctx, dx, n, xd));
  const char *vname = variant == EF_CG_STANDARD ? "standard" : "three-term";
  ASSERT(res.iterations == host_it, "%s config %d/%d/%d every %d: %d iterations, host %d", vname,
         c.wgs_bits, c.rows_bits, c.groups, every, res.iterations, host_it);
  ASSERT(host_it == max_it || res.converged, "%s: converged flag not set", vname);
  if (host_it < max_it) {
    ASSERT(res.converged && res.relres < rtol, "%s: not converged (relres %.3e)", vname, res.relres);
    /* The recurrence and true residuals of the scaled system agree to rounding
     * (factor 10 leaves room for the three-term drift at these sizes). */
    ASSERT(res.true_relres < 10.0 * rtol, "%s: true residual %.3e", vname, res.true_relres);
  }
  double diff = 0.0, ref = 0.0;
  for (int64_t i = 0; i < n; ++i) diff += (xd[i] - xh[i]) * (xd[i] - xh[i]), ref += xh[i] * xh[i];
  ASSERT(diff <= rel_tol * rel_tol * ref + 1e-300, "%s config %d/%d/%d: x differs from host by %.3e",
         vname, c.wgs_bits, c.rows_bits, c.groups, ref > 0 ? sqrt(diff / ref) : sqrt(diff));
  if (iterations_out) *iterations_out = res.iterations;
  if (x_out) memcpy(x_out, xd, n * sizeof *xd);
  release_vector(db);
  release_vector(dx);
  free(xd), free(xh);
  return 0;
}

/* A solver with explicit SpMV parameters, no tuning. */
static int make_solver(ef_cl_context *ctx, const ef_cl_csr *A, ef_cg_variant v, int w, int r, int g,
                       ef_cl_cg **cg) {
  ef_cl_cg_settings s;
  ef_cl_cg_settings_default(&s);
  s.variant = v;
  s.wgs_bits = w;
  s.rows_bits = r;
  s.groups = g;
  s.tune = 0;
  s.verbose = 0;
  return ef_cl_cg_create(ctx, A, &s, cg);
}

/* The oclgrind run: tiny matrix, lane-parallel and scalar rows, both variants. */
static int run_tiny(void) {
  ef_cl_context *ctx = NULL;
  int skip = test_context(&ctx, "");
  if (skip) return skip;
  keep_vectors = 1;
  test_csr m;
  ASSERT(!test_laplacian(7, 5, 1, 11, &m), "matrix");
  ef_csr_matrix A = test_view(&m);
  ef_cl_csr dA;
  ASSERT_OK(ef_cl_csr_upload(ctx, &A, &dA));
  double *b = malloc(m.n * sizeof *b), *x0 = calloc(m.n, sizeof *x0);
  uint64_t seed = 5;
  for (int64_t i = 0; i < m.n; ++i) b[i] = ef_test_uniform(&seed);
  const int configs[2][3] = {{6, 3, 2}, {6, 6, 1}};
  for (int c = 0; c < 2; ++c)
    for (int v = 0; v < 2; ++v) {
      ef_cl_cg *cg = NULL;
      ASSERT_OK(make_solver(ctx, &dA, (ef_cg_variant)v, configs[c][0], configs[c][1], configs[c][2], &cg));
      if (v == 0 && check_spmv_dot(ctx, cg, &m, 3)) return 1;
      /* Twelve iterations of a 35-row system: both variants reach 1e-10. */
      if (check_solve(ctx, cg, &m, b, x0, (ef_cg_variant)v, 1e-10, 60, 3, 1e-8, NULL, NULL)) return 1;
      ef_cl_cg_destroy(&cg);
    }
  for (int i = 0; i < n_kept; ++i) clReleaseMemObject(kept[i]);
  ef_cl_csr_release(&dA);
  test_csr_free(&m);
  free(b), free(x0);
  ef_cl_context_destroy(&ctx);
  return 0;
}

/* Every configuration, then one in depth, breakdowns, the tuner. */
int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--tiny")) return run_tiny();
  const char *cache = argc > 1 ? argv[1] : "";
  if (cache[0]) ASSERT_OK(ef_make_folders(cache));
  unsetenv("EDGEFLOW_OPENCL_DEVICE");
  unsetenv("EDGEFLOW_KERNEL_DIR");
  ef_cl_context *ctx = NULL;
  int skip = test_context(&ctx, cache);
  if (skip) return skip;

  /* A 3D Laplacian-like matrix (7-point, scaled rows, fixed face). */
  test_csr m;
  ASSERT(!test_laplacian(13, 11, 9, 7, &m), "matrix");
  const int64_t n = m.n;
  ef_csr_matrix A = test_view(&m);
  ef_cl_csr dA;
  ASSERT_OK(ef_cl_csr_upload(ctx, &A, &dA));
  ASSERT(!dA.row_ptr_64, "int32 offsets expected for a small matrix");
  double *b = malloc(n * sizeof *b), *x0 = calloc(n, sizeof *x0), *xa = malloc(n * sizeof *xa);
  double *xb = malloc(n * sizeof *xb);
  ASSERT(b && x0 && xa && xb, "oom");
  uint64_t seed = 99;
  for (int64_t i = 0; i < n; ++i) b[i] = ef_test_uniform(&seed);

  /* Export of the device system (with a solution block) reads back exactly. */
  if (cache[0]) {
    char path[1200];
    snprintf(path, sizeof path, "%s/export_%ld.bin", cache, (long)getpid());
    cl_mem db, dx;
    ASSERT_OK(ef_cl_vector_create(ctx, n, b, &db));
    ASSERT_OK(ef_cl_vector_create(ctx, n, b, &dx));
    ASSERT_OK(ef_cl_system_export(ctx, &dA, db, dx, path));
    ef_linear_system *sys = NULL;
    ASSERT_OK(ef_linear_system_read(path, &sys));
    ASSERT(sys->n == n && sys->nnz == m.nnz && sys->solution != NULL, "export sizes");
    for (int64_t i = 0; i <= n; ++i) ASSERT(sys->row_ptr[i] == m.rp[i], "export row_ptr[%ld]", (long)i);
    for (int64_t k = 0; k < m.nnz; ++k)
      ASSERT(sys->col[k] == m.col[k] && sys->values[k] == m.val[k], "export entry %ld", (long)k);
    for (int64_t i = 0; i < n; ++i)
      ASSERT(sys->rhs[i] == b[i] && sys->solution[i] == b[i], "export vectors at %ld", (long)i);
    ef_linear_system_destroy(&sys);
    remove(path);
    clReleaseMemObject(db);
    clReleaseMemObject(dx);
  }

  /* Every configuration the tuner would try. */
  ef_cl_cg_config list[256];
  int count = 0;
  ASSERT_OK(ef_cl_cg_candidates(ctx, &dA, list, 256, &count));
  ASSERT(count >= 8, "only %d candidates", count);
  for (int i = 0; i < count; ++i) {
    for (int v = 0; v < 2; ++v) {
      ef_cl_cg *cg = NULL;
      ASSERT_OK(make_solver(ctx, &dA, (ef_cg_variant)v, list[i].wgs_bits, list[i].rows_bits,
                            list[i].groups, &cg));
      if (v == 0 && check_spmv_dot(ctx, cg, &m, 1000 + i)) return 1;
      /* k = 1: exactly the host CG's iteration count.  Iterates agree to 1e-7: both
       * are the same CG steps, differing by rounding amplified by the condition
       * number (~1e3 here) over ~100 iterations. */
      if (check_solve(ctx, cg, &m, b, x0, (ef_cg_variant)v, 1e-9, 2000, 1, 1e-7, NULL, NULL)) return 1;
      ef_cl_cg_destroy(&cg);
      ASSERT(cg == NULL, "destroy must clear the handle");
    }
  }

  /* One configuration in depth. */
  for (int v = 0; v < 2; ++v) {
    ef_cl_cg *cg = NULL;
    ASSERT_OK(make_solver(ctx, &dA, (ef_cg_variant)v, 7, 4, 0, &cg));
    int it1 = 0, it7 = 0;
    /* Reading the state every 7 iterations gives the identical iterate and count
     * (the device freezes at the first stop; reductions are deterministic). */
    if (check_solve(ctx, cg, &m, b, x0, (ef_cg_variant)v, 1e-8, 2000, 1, 1e-7, &it1, xa)) return 1;
    if (check_solve(ctx, cg, &m, b, x0, (ef_cg_variant)v, 1e-8, 2000, 7, 1e-7, &it7, xb)) return 1;
    ASSERT(it1 == it7 && !memcmp(xa, xb, n * sizeof *xa), "check_every 7 changed the result");
    /* Running out of iterations: not converged, x equals the host's after 5 steps. */
    if (check_solve(ctx, cg, &m, b, x0, (ef_cg_variant)v, 1e-14, 5, 2, 1e-9, &it1, NULL)) return 1;
    ASSERT(it1 == 5, "max_iterations not honoured (%d)", it1);
    /* Warm start from a nearby guess: fewer iterations, the same as the host's. */
    for (int64_t i = 0; i < n; ++i) xb[i] = xa[i] * (1.0 + 1e-5 * ef_test_uniform(&seed));
    int warm = 0;
    if (check_solve(ctx, cg, &m, b, xb, (ef_cg_variant)v, 1e-8, 2000, 3, 1e-6, &warm, NULL)) return 1;
    ASSERT(warm < it7, "warm start took %d iterations, cold %d", warm, it7);
    /* Zero right-hand side: x = 0 at once. */
    double *zero = calloc(n, sizeof *zero);
    cl_mem dz, dxx;
    ASSERT_OK(ef_cl_vector_create(ctx, n, zero, &dz));
    ASSERT_OK(ef_cl_vector_create(ctx, n, b, &dxx));
    ef_cl_cg_result res;
    ASSERT_OK(ef_cl_cg_solve(cg, dz, dxx, &res));
    ASSERT_OK(ef_cl_vector_read(ctx, dxx, n, xb));
    ASSERT(res.iterations == 0 && res.converged, "zero rhs: %d iterations", res.iterations);
    for (int64_t i = 0; i < n; ++i) ASSERT(xb[i] == 0.0, "zero rhs: x[%ld] = %g", (long)i, xb[i]);
    clReleaseMemObject(dz);
    clReleaseMemObject(dxx);
    free(zero);
    ef_cl_cg_destroy(&cg);
  }

  /* 64-bit row offsets (-D EF_ROW_PTR_64): the same answers. */
  {
    cl_int st;
    ef_cl_csr wide = dA;
    wide.row_ptr_64 = 1;
    wide.row_ptr = clCreateBuffer(ctx->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                  (size_t)(n + 1) * sizeof(int64_t), m.rp, &st);
    ASSERT(st == CL_SUCCESS, "int64 row_ptr buffer: %d", (int)st);
    for (int v = 0; v < 2; ++v) {
      ef_cl_cg *cg = NULL;
      ASSERT_OK(make_solver(ctx, &wide, (ef_cg_variant)v, 8, 5, 0, &cg));
      if (v == 0 && check_spmv_dot(ctx, cg, &m, 77)) return 1;
      if (check_solve(ctx, cg, &m, b, x0, (ef_cg_variant)v, 1e-9, 2000, 4, 1e-7, NULL, NULL)) return 1;
      ef_cl_cg_destroy(&cg);
    }
    clReleaseMemObject(wide.row_ptr);
  }

  /* Breakdown: an indefinite matrix with a positive diagonal ([[1,2],[2,1]] blocks)
   * gives p.Ap < 0 in the first iteration: EF_ERR_SOLVER, for both variants. */
  {
    int64_t rp[5] = {0, 2, 4, 6, 8};
    int32_t col[8] = {0, 1, 0, 1, 2, 3, 2, 3};
    double val[8] = {1, 2, 2, 1, 1, 2, 2, 1}, bi[4] = {1, -1, 1, -1}, xi[4] = {0, 0, 0, 0};
    ef_csr_matrix I = {4, 8, rp, col, val};
    ef_cl_csr dI;
    ASSERT_OK(ef_cl_csr_upload(ctx, &I, &dI));
    for (int v = 0; v < 2; ++v) {
      ef_cl_cg *cg = NULL;
      ASSERT_OK(make_solver(ctx, &dI, (ef_cg_variant)v, 6, 5, 1, &cg));
      cl_mem db, dx;
      ASSERT_OK(ef_cl_vector_create(ctx, 4, bi, &db));
      ASSERT_OK(ef_cl_vector_create(ctx, 4, xi, &dx));
      ef_cl_cg_result res;
      ASSERT_OK(ef_cl_cg_set_stopping(cg, 1e-10, 50, 4));
      int err = ef_cl_cg_solve(cg, db, dx, &res);
      ASSERT(err == EF_ERR_SOLVER && res.breakdown && !res.converged &&
                 strstr(ef_error_message(), "positive definite"), "%s", ef_error_message());
      clReleaseMemObject(db);
      clReleaseMemObject(dx);
      ef_cl_cg_destroy(&cg);
    }
    /* A non-positive diagonal is refused when the solver scales the matrix. */
    val[3] = -1.0;
    ef_cl_csr_release(&dI);
    ASSERT_OK(ef_cl_csr_upload(ctx, &I, &dI));
    ef_cl_cg *cg = NULL;
    ASSERT(make_solver(ctx, &dI, EF_CG_STANDARD, 6, 5, 1, &cg) == EF_ERR_SOLVER && cg == NULL &&
               strstr(ef_error_message(), "row 1"), "%s", ef_error_message());
    ef_cl_csr_release(&dI);
  }

  /* The tuner: verifies, times, caches; the second solver reads the cache. */
  if (cache[0]) {
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/tune_%ld", cache, (long)getpid());
    ef_cl_settings cs;
    ef_cl_settings_default(&cs);
    cs.verbose = 0;
    cs.cache_dir = dir;
    cs.ignore_environment = 1;
    ef_cl_context *tctx = NULL;
    ASSERT_OK(ef_cl_context_create(&cs, &tctx));
    ef_cl_csr tA; /* buffers belong to one context */
    ASSERT_OK(ef_cl_csr_upload(tctx, &A, &tA));
    ef_cl_cg_settings s;
    ef_cl_cg_settings_default(&s);
    s.verbose = 0;
    ef_cl_cg *cg1 = NULL, *cg2 = NULL, *cg3 = NULL;
    ASSERT_OK(ef_cl_cg_create(tctx, &tA, &s, &cg1));
    ef_cl_cg_config c1, c2;
    double t1 = 0, t2 = 0;
    ef_cl_cg_get_config(cg1, &c1, &t1);
    ASSERT(t1 > 0.0 && c1.seconds_per_iteration > 0.0, "tuner did not run");
    ASSERT_OK(ef_cl_cg_create(tctx, &tA, &s, &cg2));
    ef_cl_cg_get_config(cg2, &c2, &t2);
    ASSERT(t2 == 0.0 && c2.wgs_bits == c1.wgs_bits && c2.rows_bits == c1.rows_bits &&
               c2.groups == c1.groups, "tuning cache not used");
    if (check_solve(tctx, cg2, &m, b, x0, EF_CG_STANDARD, 1e-8, 2000, 8, 1e-7, NULL, NULL)) return 1;
    s.force_retune = 1;
    ASSERT_OK(ef_cl_cg_create(tctx, &tA, &s, &cg3));
    ef_cl_cg_get_config(cg3, NULL, &t2);
    ASSERT(t2 > 0.0, "force_retune ignored");
    /* The tuner's report: every candidate counted once; the cached solver did not tune. */
    ef_cl_cg_tune_report r1, r2, r3;
    ef_cl_cg_get_tune_report(cg1, &r1);
    ef_cl_cg_get_tune_report(cg2, &r2);
    ef_cl_cg_get_tune_report(cg3, &r3);
    ASSERT(r1.candidates > 1 && r1.timed >= 1 && r1.timed + r1.skipped + r1.pruned + r1.over_budget == r1.candidates &&
               r1.budget > 0.0 && r1.seconds == t1,
           "report of the first tuning: %d candidates = %d timed + %d skipped + %d pruned + %d over budget (%g s of %g)",
           r1.candidates, r1.timed, r1.skipped, r1.pruned, r1.over_budget, r1.seconds, r1.budget);
    ASSERT(r2.candidates == 0 && r2.timed == 0, "the cached solver reports %d candidates", r2.candidates);
    ASSERT(r3.candidates == r1.candidates && r3.timed + r3.skipped + r3.pruned + r3.over_budget == r3.candidates,
           "report of the forced retune: %d candidates", r3.candidates);
    /* A budget smaller than any timing (tune_budget_seconds): the default shape is timed, the
     * tuner stops before the next candidate and says so; the solver it leaves solves. */
    {
      s.tune_budget = 1e-9;
      s.verbose = 1;
      char logpath[1300], text[4096] = "";
      snprintf(logpath, sizeof logpath, "%s/tuner.log", dir);
      FILE *log = fopen(logpath, "w+"), *old_log = tctx->log;
      ASSERT(log, "cannot open %s", logpath);
      tctx->log = log;
      ef_cl_cg *cg4 = NULL;
      int err = ef_cl_cg_create(tctx, &tA, &s, &cg4);
      tctx->log = old_log;
      rewind(log);
      size_t got = fread(text, 1, sizeof text - 1, log);
      text[got] = '\0';
      fclose(log);
      ASSERT_OK(err);
      ef_cl_cg_tune_report r4;
      ef_cl_cg_get_tune_report(cg4, &r4);
      ASSERT(r4.budget == 1e-9 && r4.timed == 1 && r4.pruned == 0 && r4.candidates == r1.candidates &&
                 r4.over_budget > 0 && r4.over_budget == r4.candidates - r4.timed - r4.skipped,
             "budget 1e-9 s: %d candidates = %d timed + %d skipped + %d pruned + %d over budget", r4.candidates,
             r4.timed, r4.skipped, r4.pruned, r4.over_budget);
      char said[200];
      snprintf(said, sizeof said, "1 of %d candidates timed", r4.candidates);
      ASSERT(strstr(text, said), "the tuner's message does not say '%s': %s", said, text);
      snprintf(said, sizeof said, "%d left when the budget ran out", r4.over_budget);
      ASSERT(strstr(text, said), "the tuner's message does not say '%s': %s", said, text);
      if (check_solve(tctx, cg4, &m, b, x0, EF_CG_STANDARD, 1e-8, 2000, 8, 1e-7, NULL, NULL)) return 1;
      ef_cl_cg_destroy(&cg4);
    }
    ef_cl_cg_destroy(&cg1);
    ef_cl_cg_destroy(&cg2);
    ef_cl_cg_destroy(&cg3);
    ef_cl_csr_release(&tA);
    ef_cl_context_destroy(&tctx);
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "note: could not remove %s\n", dir);
  }

  ef_cl_csr_release(&dA);
  test_csr_free(&m);
  free(b), free(x0), free(xa), free(xb);
  ef_cl_context_destroy(&ctx);
  return 0;
}
