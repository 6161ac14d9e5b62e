/* test_amg_opencl.h -- the device half of test_amg.c (included there, OpenCL builds only). */
#include "opencl_amg.h"
#include "opencl_cg.h"
#include "opencl_context.h"
#include "opencl_pcg.h"

/* A quiet context on the default device, or EF_TEST_SKIP. */
static int amg_test_context(ef_cl_context **ctx, const char *cache) {
  int count = 0;
  if (ef_cl_count_devices(&count) || count == 0) {
    fprintf(stderr, "no OpenCL device: skipping\n");
    return EF_TEST_SKIP;
  }
  ef_cl_settings s;
  ef_cl_settings_default(&s);
  s.verbose = 0;
  s.cache_dir = cache && *cache ? cache : "";
  int err = ef_cl_context_create(&s, ctx);
  if (err == EF_ERR_NOT_FOUND || err == EF_ERR_UNSUPPORTED) {
    fprintf(stderr, "no usable OpenCL device (%s): skipping\n", ef_error_message());
    return EF_TEST_SKIP;
  }
  ASSERT_OK(err);
  return 0;
}

static int amg_device_apply(void *ctx, cl_mem r, cl_mem z) { return ef_cl_amg_apply(ctx, r, z); }

static int amg_test_tiny = 0; /* run_tiny (under oclgrind): leave out the solver-scheduling checks */

/* max |a - b| / max |b|. */
static double rel_diff(int64_t n, const double *a, const double *b) {
  double d = 0.0, m = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    if (fabs(a[i] - b[i]) > d) d = fabs(a[i] - b[i]);
    if (fabs(b[i]) > m) m = fabs(b[i]);
  }
  return m > 0.0 ? d / m : d;
}

/* Device against host for one case and one cycle:
 *  - same hierarchy (the device uploads the host's aggregates) and refreshed coarse values
 *    equal bit for bit (the same sums in the same order); the coarsest inverse to 1e-12
 *    (Gauss-Jordan with and without contracted a*b+c);
 *  - after new fine values on the device, the device refresh equals the host refresh;
 *  - the device cycle equals the host cycle to 1e-12 relative (contractions, the dense
 *    solve's summation order), and the V-cycle is symmetric and positive on the device;
 *  - device (F)CG reaches a true residual <= 2e-8 (rtol 1e-8, recurrence drift) within one
 *    iteration of the host's count. */
static int check_device_case(ef_cl_context *ctx, const amg_case *c, const ef_amg_settings *st, int *iters) {
  const ef_linear_system *s = c->sys;
  const int64_t n = s->n;
  ef_csr_matrix hm = ef_linear_system_matrix(s);
  ef_cl_csr A;
  ASSERT_OK(ef_cl_csr_upload(ctx, &hm, &A));
  ef_amg_matrix M = amg_matrix_of(c);
  ef_amg *host = NULL;
  ef_cl_amg *dev = NULL;
  ASSERT_OK(ef_amg_create(st, &M, &host));
  ASSERT_OK(ef_cl_amg_create(ctx, &A, &M, c->null_space, st, &dev));
  const ef_amg *dh = ef_cl_amg_host(dev);
  ASSERT(dh->n_levels == host->n_levels, "%s: level counts differ", c->name);
  if (amg_test_tiny) { /* the levels that run_tiny's comment names */
    printf("tiny hierarchy:");
    for (int l = 0; l < host->n_levels; ++l) printf(" %lld", (long long)host->lev[l].n);
    printf(" rows\n");
  }
  double *buf = malloc((size_t)(host->lev[1 < host->n_levels ? 1 : 0].nnz + host->nc * host->nc + n) * 8);
  ASSERT(buf, "out of memory");
  /* New values: symmetric scaling, on both sides. */
  double *v2 = malloc(s->nnz * sizeof *v2), *w = malloc(n * sizeof *w);
  ASSERT(v2 && w, "out of memory");
  uint64_t seed = 3;
  for (int64_t i = 0; i < n; ++i) w[i] = pow(2.0, 2.0 * unit_random(&seed) - 1.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = s->row_ptr[i]; j < s->row_ptr[i + 1]; ++j) v2[j] = s->values[j] * w[i] * w[s->col[j]];
  if (c->null_space) /* keep A 1 = 0: diagonal = -(sum of the scaled off-diagonal entries) */
    for (int64_t i = 0; i < n; ++i) {
      double off = 0.0;
      int64_t d = -1;
      for (int64_t j = s->row_ptr[i]; j < s->row_ptr[i + 1]; ++j)
        if (s->col[j] == i) d = j;
        else off += v2[j];
      ASSERT(d >= 0, "%s: row %lld has no diagonal", c->name, (long long)i);
      v2[d] = -off;
    }
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {
      ASSERT_OK(ef_cl_vector_write(ctx, A.values, s->nnz, v2));
      ASSERT_OK(ef_cl_amg_refresh(dev));
      ASSERT_OK(ef_amg_refresh_host(host, v2));
    }
    for (int l = 1; l < host->n_levels; ++l) {
      ASSERT_OK(ef_cl_amg_read_values(dev, l, buf));
      ASSERT(memcmp(buf, host->lev[l].val, host->lev[l].nnz * 8) == 0, "%s: device values of level %d differ (%s)",
             c->name, l, pass ? "after the refresh" : "at set-up");
    }
    ASSERT_OK(ef_cl_amg_read_values(dev, -1, buf));
    const double dw = rel_diff(host->nc * host->nc, buf, host->coarse_inv);
    ASSERT(dw <= 1e-12, "%s: device coarsest inverse differs by %.3e", c->name, dw);
  }
  /* Applies. */
  double *r = malloc(n * 8), *zh = malloc(n * 8), *zd = malloc(n * 8), *y = malloc(n * 8), *my = malloc(n * 8);
  ASSERT(r && zh && zd && y && my, "out of memory");
  cl_mem dr, dz;
  for (int64_t i = 0; i < n; ++i) r[i] = unit_random(&seed) - 0.5, y[i] = unit_random(&seed) - 0.5;
  ASSERT_OK(ef_cl_vector_create(ctx, n, r, &dr));
  memset(zh, 0, n * 8); /* vectors from host data: oclgrind counts a filled buffer as uninitialised */
  ASSERT_OK(ef_cl_vector_create(ctx, n, zh, &dz));
  ASSERT_OK(ef_cl_amg_apply(dev, dr, dz));
  ASSERT_OK(ef_cl_vector_read(ctx, dz, n, zd));
  ASSERT_OK(ef_amg_apply_host(host, r, zh));
  const double dzr = rel_diff(n, zd, zh);
  ASSERT(dzr <= 1e-12, "%s: device apply differs from the host's by %.3e", c->name, dzr);
  if (st->cycle == EF_AMG_CYCLE_V) {
    ASSERT_OK(ef_cl_vector_write(ctx, dr, n, y));
    ASSERT_OK(ef_cl_amg_apply(dev, dr, dz));
    ASSERT_OK(ef_cl_vector_read(ctx, dz, n, my));
    const double xmy = dot(n, r, my), ymx = dot(n, y, zd), xmx = dot(n, r, zd), ymy = dot(n, y, my);
    ASSERT(xmx > 0.0 && ymy > 0.0, "%s: device V-cycle not positive", c->name);
    const double rel = fabs(xmy - ymx) / sqrt(xmx * ymy);
    ASSERT(rel <= 1e-12, "%s: device V-cycle not symmetric: %.3e", c->name, rel);
  }
  /* Solves (with the new values on both sides). */
  ef_cl_pcg_settings ps;
  ef_cl_pcg_settings_default(&ps);
  ps.rtol = 1e-8;
  ps.max_iterations = 500;
  ps.flexible = st->cycle == EF_AMG_CYCLE_K;
  ps.null_space = c->null_space;
  ef_cl_pcg *pcg = NULL;
  ASSERT_OK(ef_cl_pcg_create(ctx, &A, &ps, amg_device_apply, dev, &pcg));
  cl_mem db, dx;
  ASSERT_OK(ef_cl_vector_create(ctx, n, s->rhs, &db));
  memset(zd, 0, n * 8);
  ASSERT_OK(ef_cl_vector_create(ctx, n, zd, &dx));
  ef_cl_pcg_result res;
  ASSERT_OK(ef_cl_pcg_solve(pcg, db, dx, &res));
  ef_csr Ah = {n, s->nnz, s->row_ptr, NULL, s->col, v2, NULL, c->null_space};
  ef_host_pcg_settings hs = {1e-8, 500, ps.flexible, NULL};
  ef_host_pcg_result hres;
  memset(zh, 0, n * 8);
  ASSERT_OK(ef_host_pcg_solve(&Ah, amg_apply, host, &hs, s->rhs, zh, &hres));
  ASSERT(res.converged && res.true_relres <= 2e-8, "%s: device %s: %d iterations, true residual %.3e", c->name,
         ps.flexible ? "FCG" : "PCG", res.iterations, res.true_relres);
  ASSERT(abs(res.iterations - hres.iterations) <= 1, "%s: device %d iterations, host %d", c->name, res.iterations,
         hres.iterations);
  *iters = res.iterations;
  /* The solver starts each solve with as many iterations as its last one took (ef_cl_pcg_solve); the iterate
   * and the count must be those of a solver without that history: from zero again at 1e-8 (the same count),
   * at 1e-6 (fewer: the first read comes late) and at 1e-10 (more).  Not under oclgrind (--tiny): host-side
   * scheduling only, and six more solves there would take minutes. */
  const double tols[3] = {1e-8, 1e-6, 1e-10};
  for (int t = 0, before = res.iterations; t < (amg_test_tiny ? 0 : 3); ++t) {
    ef_cl_pcg_settings pt = ps;
    pt.rtol = tols[t];
    ASSERT_OK(ef_cl_pcg_set_settings(pcg, &pt));
    ef_cl_pcg *fresh = NULL;
    ASSERT_OK(ef_cl_pcg_create(ctx, &A, &pt, amg_device_apply, dev, &fresh));
    ef_cl_pcg_result r1, r2;
    memset(zd, 0, n * 8);
    ASSERT_OK(ef_cl_vector_write(ctx, dx, n, zd));
    ASSERT_OK(ef_cl_pcg_solve(pcg, db, dx, &r1));
    ASSERT_OK(ef_cl_vector_read(ctx, dx, n, y));
    ASSERT_OK(ef_cl_vector_write(ctx, dx, n, zd));
    ASSERT_OK(ef_cl_pcg_solve(fresh, db, dx, &r2));
    ASSERT_OK(ef_cl_vector_read(ctx, dx, n, my));
    ef_cl_pcg_destroy(&fresh);
    ASSERT(r1.converged && r2.converged && r1.iterations == r2.iterations && !memcmp(y, my, n * 8),
           "%s: rtol %g after a solve of %d iterations: %d iterations, a fresh solver %d, iterates %s", c->name,
           tols[t], before, r1.iterations, r2.iterations, memcmp(y, my, n * 8) ? "differ" : "equal");
    before = r1.iterations;
  }
  ASSERT_OK(ef_cl_pcg_set_settings(pcg, &ps));
  if (ef_cl_amg_solves_whole(dev)) { /* the same solve in one work-group: same iteration, fixed-order sums */
    ef_cl_pcg_result wres;
    memset(zd, 0, n * 8);
    ASSERT_OK(ef_cl_vector_write(ctx, dx, n, zd));
    ASSERT_OK(ef_cl_amg_solve(dev, &ps, db, dx, &wres));
    ASSERT(wres.converged && !wres.breakdown && wres.true_relres <= 2e-8,
           "%s: whole solve in one group: %d iterations, true residual %.3e", c->name, wres.iterations,
           wres.true_relres);
    ASSERT(abs(wres.iterations - res.iterations) <= 1, "%s: whole solve %d iterations, multi-launch PCG %d", c->name,
           wres.iterations, res.iterations);
    ASSERT_OK(ef_cl_vector_read(ctx, dx, n, y));
    double xr = 0.0;
    for (int64_t i = 0; i < n; ++i) xr += y[i] * y[i];
    ASSERT(isfinite(xr) && xr > 0.0, "%s: whole solve: no solution", c->name);
  }
  clReleaseMemObject(dr), clReleaseMemObject(dz), clReleaseMemObject(db), clReleaseMemObject(dx);
  ef_cl_pcg_destroy(&pcg);
  ef_cl_amg_destroy(&dev);
  ef_amg_destroy(&host);
  ef_cl_csr_release(&A);
  free(buf), free(v2), free(w), free(r), free(zh), free(zd), free(y), free(my);
  return 0;
}

static int run_opencl(const char *cache) {
  ef_cl_context *ctx = NULL;
  int rc = amg_test_context(&ctx, cache);
  if (rc) return rc;
  amg_case cases[4];
  int count = 0;
  if (load_cases(cases, &count)) return 1;
  for (int i = 0; i < count; ++i) {
    /* small_rows: 0 (every level in multi-group launches), the default (the levels below it in
     * one group) and 65536 (every level in one group: the whole solve in one launch too), all
     * against the same host cycle; and small_rows 0 with refresh_direct 2, where the refresh
     * finds all but the first two places of every coarse row by its search (the byte's limit,
     * 254, is rarely reached by these matrices). */
    for (int small = 0; small < 4; ++small) {
      int it[2];
      int64_t rows = 0;
      for (int cycle = 0; cycle < 2; ++cycle) {
        ef_amg_settings st;
        ef_amg_settings_default(&st);
        st.cycle = cycle ? EF_AMG_CYCLE_K : EF_AMG_CYCLE_V;
        if (small != 1) st.small_rows = small == 2 ? 65536 : 0;
        if (small == 3) st.refresh_direct = 2;
        rows = st.small_rows;
        if (check_device_case(ctx, &cases[i], &st, &it[cycle])) return 1;
      }
      printf("%-24s device (small_rows %5lld%s): AMG-CG (V) %3d, AMG-FCG (K) %3d iterations (values rescaled)\n",
             cases[i].name, (long long)rows, small == 3 ? ", refresh_direct 2" : "", it[0], it[1]);
    }
  }
  for (int i = 0; i < count; ++i) ef_linear_system_destroy(&cases[i].sys);
  ef_cl_context_destroy(&ctx);
  return 0;
}

/* A tiny system with several levels and the K-cycle, for oclgrind (every kernel runs). */
static int run_tiny(const char *cache) {
  amg_test_tiny = 1;
  ef_cl_context *ctx = NULL;
  int rc = amg_test_context(&ctx, cache);
  if (rc) return rc;
  amg_case c = {"grid_laplacian_6", NULL, 0, 1.0, 1.0};
  ASSERT(grid_laplacian(6, &c.sys) == 0, "out of memory");
  ef_amg_settings st;
  ef_amg_settings_default(&st);
  st.coarse_enough = 4;
  st.passes = 2;
  st.small_group = 32; /* oclgrind simulates every item of the one-group kernels at every barrier */
  /* Every kernel: all levels multi-group, one sweep, the K-cycle on levels 1 and 2 (the fused first
   * sweep and residual; the K-cycle's q formed in amg_down_q; level 2's combination formed by level
   * 1's amg_post_k, level 1's launched, amg_k_combine); small levels from level 1 (K-cycle inside
   * the one-group kernel, two sweeps); small levels from level 2 below a multi-group K-cycle with two
   * sweeps (amg_smooth0, amg_sweep, amg_residual, amg_k_second; the restriction inside the one-group
   * launch); all levels in one group (the caller's fine values read by the one-group kernels).
   * The hierarchy: 216, 27, 5, 1 rows (printed). */
  const struct {
    int64_t small_rows;
    int sweeps, kcycle_levels;
  } cfg[] = {{0, 1, 2}, {60, 2, 1}, {20, 2, 1}, {4096, 2, 1}};
  const char *only = getenv("EF_AMG_TINY_CONFIG"); /* some configurations (their indices, e.g. "02"), for debugging */
  for (size_t k = 0; k < sizeof cfg / sizeof cfg[0]; ++k) {
    if (only && *only && !strchr(only, (int)('0' + k))) continue;
    st.small_rows = cfg[k].small_rows;
    st.sweeps = cfg[k].sweeps;
    st.kcycle_levels = cfg[k].kcycle_levels;
    int it = 0;
    if (check_device_case(ctx, &c, &st, &it)) return 1;
    printf("tiny (small_rows %lld, %d sweeps, K-cycle on levels 1..%d): FCG %d iterations\n",
           (long long)cfg[k].small_rows, cfg[k].sweeps, cfg[k].kcycle_levels, it);
  }
  ef_linear_system_destroy(&c.sys);
  ef_cl_context_destroy(&ctx);
  return 0;
}
