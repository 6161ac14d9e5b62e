/* test_amg.c -- the aggregation multigrid preconditioner (custom_utilities/amg.h) on real
 * pressure systems (tests/data/amg) and a variable-coefficient grid Laplacian.
 *   test_amg host     host set-up, refresh and apply (OpenMP)
 *   test_amg opencl   the device hierarchy and device (flexible) CG against the host
 *   test_amg --tiny   a tiny device run for oclgrind (tests/data/amg/oclgrind_amg.sh)
 * Each check states its tolerance and why.  Iterations measured to 1e-8 (Jacobi-CG, AMG-CG with
 * the V-cycle, AMG-FCG with the K-cycle): cavity2d 81/22/22, cavity3d 131/28/21, grid Laplacian
 * 24^3 248/39/25 with the sequential matching; with the parallel matching (mutual proposals,
 * leftovers joining pairs) 81/25/25, 131/27/20, 248/32/29; the bounds in load_cases (unchanged)
 * leave about 20 % margin over the first set. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amg.h"
#include "edgeflow/ef_error.h"
#include "ef_test.h"
#include "host_pcg.h"
#include "matrix_io.h"

#include <stdlib.h> /* abs */


/* A test system: matrix, right-hand side, null-space flag and the measured iteration bound. */
typedef struct {
  const char *name;
  ef_linear_system *sys;
  int null_space;
  /* AMG-(F)CG iterations must not exceed this fraction of Jacobi-CG's (measured ratio with a
   * margin, see main). */
  double max_ratio_v, max_ratio_k;
} amg_case;

/* Uniform in [0, 1), deterministic. */
static double unit_random(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) / 9007199254740992.0;
}

/* 7-point Laplacian of an m^3 grid with edge weights 10^(2u - 1) (u uniform) and the x = 0
 * plane fixed (identity rows, columns eliminated); rhs random with zeros on fixed rows. */
static int grid_laplacian(int m, ef_linear_system **out) {
  ef_linear_system *s = calloc(1, sizeof *s);
  const int64_t n = (int64_t)m * m * m;
  s->n = n;
  s->row_ptr = calloc((size_t)n + 1, sizeof *s->row_ptr);
  s->col = malloc((size_t)n * 7 * sizeof *s->col);
  s->values = malloc((size_t)n * 7 * sizeof *s->values);
  s->rhs = malloc((size_t)n * sizeof *s->rhs);
  double *w = malloc((size_t)n * 3 * sizeof *w);
  if (!s->row_ptr || !s->col || !s->values || !s->rhs || !w) return 1;
  uint64_t seed = 7;
  for (int64_t i = 0; i < 3 * n; ++i) w[i] = pow(10.0, 2.0 * unit_random(&seed) - 1.0);
#define ID(x, y, z) (((int64_t)(z) * m + (y)) * m + (x))
  int64_t k = 0;
  for (int z = 0; z < m; ++z)
    for (int y = 0; y < m; ++y)
      for (int x = 0; x < m; ++x) {
        const int64_t i = ID(x, y, z);
        s->row_ptr[i] = k;
        s->rhs[i] = x == 0 ? 0.0 : unit_random(&seed) - 0.5;
        if (x == 0) {
          s->col[k] = (int32_t)i;
          s->values[k++] = 1.0;
          continue;
        }
        /* neighbours by increasing index, with the weight of the edge to them */
        int64_t nb[7];
        double wt[7];
        int c = 0;
        if (z > 0) nb[c] = ID(x, y, z - 1), wt[c++] = w[3 * ID(x, y, z - 1) + 2];
        if (y > 0) nb[c] = ID(x, y - 1, z), wt[c++] = w[3 * ID(x, y - 1, z) + 1];
        if (x > 0) nb[c] = ID(x - 1, y, z), wt[c++] = w[3 * ID(x - 1, y, z)];
        nb[c] = i, wt[c++] = 0.0;
        if (x + 1 < m) nb[c] = ID(x + 1, y, z), wt[c++] = w[3 * i];
        if (y + 1 < m) nb[c] = ID(x, y + 1, z), wt[c++] = w[3 * i + 1];
        if (z + 1 < m) nb[c] = ID(x, y, z + 1), wt[c++] = w[3 * i + 2];
        double d = 0.0;
        for (int q = 0; q < c; ++q) d += wt[q];
        for (int q = 0; q < c; ++q) {
          if (nb[q] != i && nb[q] % m == 0) continue; /* fixed neighbour: column eliminated */
          s->col[k] = (int32_t)nb[q];
          s->values[k++] = nb[q] == i ? d : -wt[q];
        }
      }
#undef ID
  s->row_ptr[n] = k;
  s->nnz = k;
  free(w);
  *out = s;
  return 0;
}

static ef_amg_matrix amg_matrix_of(const amg_case *c) {
  ef_amg_matrix M = {c->sys->n, c->sys->nnz, c->sys->row_ptr, c->sys->col, c->sys->values, c->null_space};
  return M;
}

static ef_csr csr_of(const amg_case *c) {
  ef_csr A = {c->sys->n, c->sys->nnz, c->sys->row_ptr, NULL, c->sys->col, c->sys->values, NULL, c->null_space};
  return A;
}

/* z = D^-1 r. */
static int jacobi_apply(void *ctx, const double *r, double *z) {
  const ef_linear_system *s = ctx;
  for (int64_t i = 0; i < s->n; ++i)
    for (int64_t j = s->row_ptr[i]; j < s->row_ptr[i + 1]; ++j)
      if (s->col[j] == i) z[i] = r[i] / s->values[j];
  return 0;
}

static int amg_apply(void *ctx, const double *r, double *z) { return ef_amg_apply_host(ctx, r, z); }

static double dot(int64_t n, const double *x, const double *y) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}

/* The V-cycle is symmetric and positive: |x.My - y.Mx| <= 1e-12 sqrt(x.Mx y.My) (rounding of
 * a few hundred operations per entry, well inside 1e-12) and x.Mx > 0, for random x, y. */
static int check_symmetry_host(const amg_case *c, double *asym) {
  ef_amg_settings st;
  ef_amg_settings_default(&st);
  st.cycle = EF_AMG_CYCLE_V;
  ef_amg_matrix M = amg_matrix_of(c);
  ef_amg *h = NULL;
  ASSERT_OK(ef_amg_create(&st, &M, &h));
  const int64_t n = c->sys->n;
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *mx = malloc(n * sizeof *mx),
         *my = malloc(n * sizeof *my);
  ASSERT(x && y && mx && my, "out of memory");
  uint64_t seed = 11;
  *asym = 0.0;
  for (int trial = 0; trial < 3; ++trial) {
    for (int64_t i = 0; i < n; ++i) x[i] = unit_random(&seed) - 0.5, y[i] = unit_random(&seed) - 0.5;
    ASSERT_OK(ef_amg_apply_host(h, x, mx));
    ASSERT_OK(ef_amg_apply_host(h, y, my));
    const double xmy = dot(n, x, my), ymx = dot(n, y, mx), xmx = dot(n, x, mx), ymy = dot(n, y, my);
    ASSERT(xmx > 0.0 && ymy > 0.0, "%s: V-cycle not positive: x.Mx = %g, y.My = %g", c->name, xmx, ymy);
    const double rel = fabs(xmy - ymx) / sqrt(xmx * ymy);
    ASSERT(rel <= 1e-12, "%s: V-cycle not symmetric: |x.My - y.Mx| / sqrt(x.Mx y.My) = %.3e", c->name, rel);
    if (rel > *asym) *asym = rel;
  }
  free(x), free(y), free(mx), free(my);
  ef_amg_destroy(&h);
  return 0;
}

/* AMG-CG (V-cycle, plain CG) and AMG-FCG (K-cycle) reach ||b - A x|| / ||b|| <= 1e-8 (the
 * recurrence residual is the stopping test; the true one may exceed it by rounding, allowed
 * 2x) in at most max_ratio times Jacobi-CG's iterations. */
static int check_convergence_host(const amg_case *c, int *jac_it, int *v_it, int *k_it) {
  const int64_t n = c->sys->n;
  ef_csr A = csr_of(c);
  double *x = calloc(n, sizeof *x);
  ASSERT(x, "out of memory");
  ef_host_pcg_settings ps = {1e-8, 5000, 0, NULL};
  ef_host_pcg_result res;
  ASSERT_OK(ef_host_pcg_solve(&A, jacobi_apply, c->sys, &ps, c->sys->rhs, x, &res));
  ASSERT(res.converged && res.true_relres <= 2e-8, "%s: Jacobi-CG: %d iterations, true residual %.3e", c->name,
         res.iterations, res.true_relres);
  *jac_it = res.iterations;
  for (int cycle = 0; cycle < 2; ++cycle) {
    ef_amg_settings st;
    ef_amg_settings_default(&st);
    st.cycle = cycle ? EF_AMG_CYCLE_K : EF_AMG_CYCLE_V;
    /* The bounds were measured with a coarsest level of up to 256 rows, the default until the
     * device's dense coarsest inverse was measured at 4-12 ms per refresh at that size (with the
     * default 128 the V-cycle takes 33 / 32 iterations here instead of 25 / 27). */
    st.coarse_enough = 256;
    ef_amg_matrix M = amg_matrix_of(c);
    ef_amg *h = NULL;
    ASSERT_OK(ef_amg_create(&st, &M, &h));
    memset(x, 0, n * sizeof *x);
    ps.flexible = cycle;
    ASSERT_OK(ef_host_pcg_solve(&A, amg_apply, h, &ps, c->sys->rhs, x, &res));
    const double ratio = cycle ? c->max_ratio_k : c->max_ratio_v;
    ASSERT(res.converged && res.true_relres <= 2e-8, "%s: AMG %s: %d iterations, true residual %.3e", c->name,
           cycle ? "K" : "V", res.iterations, res.true_relres);
    ASSERT(res.iterations <= ratio * *jac_it, "%s: AMG %s took %d iterations, more than %.2f x Jacobi's %d",
           c->name, cycle ? "K" : "V", res.iterations, ratio, *jac_it);
    *(cycle ? k_it : v_it) = res.iterations;
    ef_amg_destroy(&h);
  }
  free(x);
  return 0;
}

/* After the fine values change (symmetric scaling w_i a_ij w_j, w in [0.5, 2]), the refreshed
 * coarse values equal P^T A P computed here from scratch, entry by entry over the fine rows in
 * increasing order: the same sums in the same order, so bit for bit; and the refreshed coarsest
 * inverse equals the inverse of the coarsest matrix computed here. */
static int check_refresh_host(const amg_case *c) {
  ef_amg_settings st;
  ef_amg_settings_default(&st);
  ef_amg_matrix M = amg_matrix_of(c);
  ef_amg *h = NULL;
  ASSERT_OK(ef_amg_create(&st, &M, &h));
  const ef_linear_system *s = c->sys;
  double *v2 = malloc(s->nnz * sizeof *v2), *w = malloc(s->n * sizeof *w);
  ASSERT(v2 && w, "out of memory");
  uint64_t seed = 5;
  for (int64_t i = 0; i < s->n; ++i) w[i] = pow(2.0, 2.0 * unit_random(&seed) - 1.0);
  for (int64_t i = 0; i < s->n; ++i)
    for (int64_t j = s->row_ptr[i]; j < s->row_ptr[i + 1]; ++j) v2[j] = s->values[j] * w[i] * w[s->col[j]];
  ASSERT_OK(ef_amg_refresh_host(h, v2));
  const double *fine = v2;
  for (int l = 0; l + 1 < h->n_levels; ++l) {
    const ef_amg_level *F = &h->lev[l], *C = &h->lev[l + 1];
    double *ref = calloc(C->nnz ? C->nnz : 1, sizeof *ref);
    ASSERT(ref, "out of memory");
    for (int64_t i = 0; i < F->n; ++i) {
      const int32_t I = F->agg[i];
      const int64_t b = F->row_ptr64 ? F->row_ptr64[i] : F->row_ptr[i];
      const int64_t e = F->row_ptr64 ? F->row_ptr64[i + 1] : F->row_ptr[i + 1];
      for (int64_t j = b; I >= 0 && j < e; ++j) {
        const int32_t J = F->agg[F->col[j]];
        if (J < 0) continue;
        int64_t k = C->row_ptr[I];
        while (k < C->row_ptr[I + 1] && C->col[k] != J) ++k;
        ASSERT(k < C->row_ptr[I + 1], "%s: coarse entry (%d, %d) of level %d missing", c->name, I, J, l + 1);
        ref[k] += fine[j];
      }
    }
    ASSERT(memcmp(ref, C->val, C->nnz * sizeof *ref) == 0, "%s: refreshed values of level %d differ from P^T A P",
           c->name, l + 1);
    free(ref);
    fine = C->val;
  }
  const ef_amg_level *Lc = &h->lev[h->n_levels - 1];
  double *W = malloc((size_t)(h->nc * h->nc) * sizeof *W);
  ASSERT(W, "out of memory");
  ef_amg_dense_fill(h->nc, Lc->row_ptr, Lc->col, Lc->val, h->constant_null_space, W);
  ASSERT_OK(ef_amg_dense_invert(h->nc, W));
  ASSERT(memcmp(W, h->coarse_inv, (size_t)(h->nc * h->nc) * sizeof *W) == 0,
         "%s: refreshed coarsest inverse differs", c->name);
  free(W);
  ef_amg_destroy(&h);
  free(v2), free(w);
  return 0;
}

static int load_cases(amg_case *cases, int *count) {
  static const struct {
    const char *file;
    int null_space;
    double rv, rk;
  } files[] = {{"cavity2d_pressure.bin", 1, 0.35, 0.35}, {"cavity3d_pressure.bin", 0, 0.25, 0.20}};
  int k = 0;
  for (size_t f = 0; f < sizeof files / sizeof files[0]; ++f) {
    char path[1024];
    snprintf(path, sizeof path, "%s/amg/%s", EF_TEST_DATA, files[f].file);
    amg_case c = {files[f].file, NULL, files[f].null_space, files[f].rv, files[f].rk};
    ASSERT_OK(ef_linear_system_read(path, &c.sys));
    cases[k++] = c;
  }
  amg_case g = {"grid_laplacian_24", NULL, 0, 0.20, 0.12};
  ASSERT(grid_laplacian(24, &g.sys) == 0, "out of memory building the grid Laplacian");
  cases[k++] = g;
  *count = k;
  return 0;
}

static int run_host(void) {
  amg_case cases[4];
  int count = 0;
  if (load_cases(cases, &count)) return 1;
  for (int i = 0; i < count; ++i) {
    double asym = 0.0;
    int jac = 0, v = 0, k = 0;
    if (check_symmetry_host(&cases[i], &asym)) return 1;
    if (check_convergence_host(&cases[i], &jac, &v, &k)) return 1;
    if (check_refresh_host(&cases[i])) return 1;
    printf("%-24s n %7lld: Jacobi-CG %4d, AMG-CG (V) %3d, AMG-FCG (K) %3d iterations; V-cycle asymmetry %.1e\n",
           cases[i].name, (long long)cases[i].sys->n, jac, v, k, asym);
  }
  for (int i = 0; i < count; ++i) ef_linear_system_destroy(&cases[i].sys);
  return 0;
}

#ifdef EF_HAVE_OPENCL
#include "test_amg_opencl.h"
#endif

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "host";
  if (strcmp(mode, "host") == 0) return run_host();
#ifdef EF_HAVE_OPENCL
  if (strcmp(mode, "opencl") == 0) return run_opencl(argc > 2 ? argv[2] : "");
  if (strcmp(mode, "--tiny") == 0) return run_tiny(argc > 2 ? argv[2] : "");
  fprintf(stderr, "usage: test_amg host|opencl [CACHE]|--tiny [CACHE]\n");
  return 2;
#else
  fprintf(stderr, "built without OpenCL: skipping '%s'\n", mode);
  return EF_TEST_SKIP;
#endif
}
