/* test_fs_solver.c -- host CG, the assembled pressure matrix, divergence detection,
 * settings checks, boundary-value scaling and the reaction balance.
 *  1. CG on a Dirichlet Poisson matrix: converged scaled residual below rtol (recomputed
 *     here), error vs the known solution below 1e-6 (rtol 1e-10 times a condition number
 *     ~1e3, with margin); warm start from the solution takes 0 iterations.
 *  2. Indefinite matrix -> EF_ERR_SOLVER "not positive definite"; max_it too small ->
 *     EF_ERR_SOLVER; singular Neumann matrix with constant_null_space solves A x = b - mean b.
 *  3. Executor's H with fixed pressures: sorted rows with the diagonal inside, H == H^T
 *     exactly, identity rows at fixed nodes, int32 offsets equal to the int64 ones.
 *  4. Divergence: a NaN or a velocity above the bound fails with EF_ERR_DIVERGED naming a
 *     node, and the caller's arrays are unchanged.
 *  5. eval_fixed pressures are scaled by fixed_pressure_scale.
 *  6. Hydrostatics: closed box with body force b, no slip: at rest, the reactions add up to
 *     |Omega| b (the fluid's weight on the walls), relative 1e-6, and p is linear with
 *     grad p = b within 1e-6 relative (the scheme reproduces a linear pressure exactly). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edge_data.h"
#include "edgeflow/ef_error.h"
#include "fractional_step.h"
#include "host_cg.h"
#include "ef_test_mesh.h"

#include "ef_test.h"

/* 5-point Laplacian on an N x N grid; boundary rows identity (neumann = 0) or a
 * pure-Neumann graph Laplacian (neumann = 1); diagonal shifted by `shift`. */
typedef struct {
  int64_t n;
  int64_t *rp;
  int32_t *col;
  double *val;
  ef_csr A;
} grid_matrix;

/* A 5-point grid Laplacian (Dirichlet identity rows or pure Neumann). */
static void grid_build(int N, int neumann, double shift, grid_matrix *g) {
  g->n = (int64_t)N * N;
  g->rp = malloc((size_t)(g->n + 1) * sizeof(int64_t));
  g->col = malloc((size_t)g->n * 5 * sizeof(int32_t));
  g->val = malloc((size_t)g->n * 5 * sizeof(double));
  int64_t k = 0;
  g->rp[0] = 0;
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < N; ++i) {
      const int64_t r = (int64_t)j * N + i;
      const int bnd = i == 0 || j == 0 || i == N - 1 || j == N - 1;
      if (bnd && !neumann) {
        g->col[k] = (int32_t)r;
        g->val[k++] = 1.0;
      } else {
        const int64_t nb[4] = {j > 0 ? r - N : -1, i > 0 ? r - 1 : -1, i < N - 1 ? r + 1 : -1, j < N - 1 ? r + N : -1};
        int cnt = 0;
        for (int q = 0; q < 4; ++q) cnt += nb[q] >= 0;
        for (int q = 0; q < 4; ++q) {
          if (q == 2) {
            g->col[k] = (int32_t)r;
            g->val[k++] = cnt + shift;
          }
          if (nb[q] < 0) continue;
          const int nbnd = !neumann && (nb[q] % N == 0 || nb[q] / N == 0 || nb[q] % N == N - 1 || nb[q] / N == N - 1);
          if (nbnd) continue; /* symmetric elimination of Dirichlet columns */
          g->col[k] = (int32_t)nb[q];
          g->val[k++] = -1.0;
        }
      }
      g->rp[r + 1] = k;
    }
  memset(&g->A, 0, sizeof g->A);
  g->A.n = g->n;
  g->A.nnz = k;
  g->A.row_ptr = g->rp;
  g->A.col = g->col;
  g->A.val = g->val;
  g->A.constant_null_space = neumann && shift == 0.0;
}

/* Free a grid matrix. */
static void grid_free(grid_matrix *g) {
  free(g->rp);
  free(g->col);
  free(g->val);
}

/* Host CG: convergence, warm start, failures and the singular case. */
static void test_cg(void) {
  const int N = 40;
  grid_matrix g;
  grid_build(N, 0, 0.0, &g);
  const int64_t n = g.n;
  double *xs = malloc((size_t)n * sizeof(double)), *b = malloc((size_t)n * sizeof(double));
  double *x = calloc((size_t)n, sizeof(double)), *r = malloc((size_t)n * sizeof(double));
  for (int64_t i = 0; i < n; ++i) xs[i] = sin(0.1 * (double)i) + 0.01 * (double)(i % 7);
  ef_csr_multiply(&g.A, xs, b);
  ef_host_cg *cg = NULL;
  EXPECT(ef_host_cg_create(n, &cg) == 0, "create");
  int its = -1;
  double res = -1.0;
  int err = ef_host_cg_solve(cg, &g.A, b, x, 1e-10, 1000, &its, &res);
  EXPECT(!err && its > 0 && res < 1e-10, "CG: err %d its %d res %g: %s", err, its, res, ef_error_message());
  ef_csr_multiply(&g.A, x, r);
  double rr = 0.0, bb = 0.0, ee = 0.0, xx = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double d = 0.0;
    for (int64_t k = g.rp[i]; k < g.rp[i + 1]; ++k)
      if (g.col[k] == i) d = g.val[k];
    rr += (b[i] - r[i]) * (b[i] - r[i]) / d;
    bb += b[i] * b[i] / d;
    ee += (x[i] - xs[i]) * (x[i] - xs[i]);
    xx += xs[i] * xs[i];
  }
  EXPECT(sqrt(rr / bb) < 1.0001e-10, "recomputed scaled residual %g", sqrt(rr / bb));
  EXPECT(sqrt(ee / xx) < 1e-6, "CG error %g", sqrt(ee / xx));
  int its2 = -1;
  double secs = -1.0;
  ef_host_cg_last(cg, &its2, &secs);
  EXPECT(its2 == its && secs >= 0.0, "last stats");
  /* Warm start at the solution. */
  memcpy(x, xs, (size_t)n * sizeof(double));
  err = ef_host_cg_solve(cg, &g.A, b, x, 1e-8, 1000, &its, &res);
  EXPECT(!err && its == 0, "warm start took %d iterations", its);
  /* Too few iterations. */
  memset(x, 0, (size_t)n * sizeof(double));
  err = ef_host_cg_solve(cg, &g.A, b, x, 1e-12, 3, &its, &res);
  EXPECT(err == EF_ERR_SOLVER && strstr(ef_error_message(), "no convergence"), "max_it: %d %s", err,
         ef_error_message());
  /* Size mismatch. */
  grid_matrix small;
  grid_build(5, 0, 0.0, &small);
  EXPECT(ef_host_cg_solve(cg, &small.A, b, x, 1e-8, 10, NULL, NULL) == EF_ERR_PARAMETER, "size mismatch accepted");
  grid_free(&small);
  /* Indefinite: shift the diagonal down so it stays positive but the matrix is not SPD. */
  grid_matrix ind;
  grid_build(N, 1, -0.5, &ind);
  memset(x, 0, (size_t)n * sizeof(double));
  err = ef_host_cg_solve(cg, &ind.A, b, x, 1e-10, 5000, &its, &res);
  EXPECT(err == EF_ERR_SOLVER && strstr(ef_error_message(), "not positive definite"), "indefinite: %d %s", err,
         ef_error_message());
  grid_free(&ind);
  /* Singular Neumann Laplacian: b with a non-zero mean; A x = b - mean(b). */
  grid_matrix neu;
  grid_build(N, 1, 0.0, &neu);
  double mean = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    b[i] = cos(0.05 * (double)i) + 0.3;
    mean += b[i];
  }
  mean /= (double)n;
  memset(x, 0, (size_t)n * sizeof(double));
  err = ef_host_cg_solve(cg, &neu.A, b, x, 1e-10, 5000, &its, &res);
  EXPECT(!err, "Neumann: %s", ef_error_message());
  ef_csr_multiply(&neu.A, x, r);
  double emax = 0.0, bmax = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    emax = fmax(emax, fabs(r[i] - (b[i] - mean)));
    bmax = fmax(bmax, fabs(b[i] - mean));
  }
  EXPECT(emax < 1e-7 * bmax, "Neumann residual %g", emax);
  grid_free(&neu);
  ef_host_cg_destroy(&cg);
  EXPECT(cg == NULL, "destroy");
  ef_host_cg_destroy(NULL);
  grid_free(&g);
  free(xs);
  free(b);
  free(x);
  free(r);
}

static double pressure_value = 0.0;
/* Fixed-value callback writing a physical pressure at node 0. */
static int pressure_bc(void *ctx, double t, double *velocity, double *pressure) {
  (void)ctx;
  (void)t;
  (void)velocity;
  pressure[0] = pressure_value; /* physical */
  return 0;
}

/* Pressure matrix, divergence, BC scaling and hydrostatic reactions. */
static void test_executor(void) {
  ef_test_mesh m;
  if (ef_test_mesh_2d(20, 18, 1.0, 1.0, 0.2, 31, &m)) {
    ++failures;
    return;
  }
  const int64_t n = m.n_nodes;
  ef_edge_data ed;
  if (ef_edge_data_build(2, n, m.coords, m.n_elements, 3, m.elements, &ed)) {
    ++failures;
    return;
  }
  double *u = calloc(3 * (size_t)n, sizeof(double)), *p = calloc((size_t)n, sizeof(double));
  double *reaction = calloc(3 * (size_t)n, sizeof(double)), *body = calloc(3 * (size_t)n, sizeof(double));
  uint8_t *vfix = calloc(3 * (size_t)n, 1), *pfix = calloc((size_t)n, 1);
  const double bvec[3] = {1.5, -9.81, 0.0};
  for (int64_t i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c) {
      vfix[3 * i + c] = m.boundary[i] != 0;
      body[3 * i + c] = bvec[c];
    }
    pfix[i] = m.boundary[i] == EF_TM_YMAX; /* for the matrix check only */
  }
  ef_fs_settings s;
  ef_fs_settings_default(&s);
  ef_fs *fs = NULL;
  s.nu = -1.0;
  EXPECT(ef_fs_create(&ed, &s, &fs) == EF_ERR_PARAMETER && fs == NULL, "negative viscosity accepted");
  s.nu = 0.05;
  s.velocity_fixed = vfix;
  s.pressure_fixed = pfix;
  s.body_force = body;
  s.pressure_rtol = 1e-12;
  EXPECT(ef_fs_create(&ed, &s, &fs) == 0, "create: %s", ef_error_message());

  /* 3. The pressure matrix with fixed pressures. */
  const double dt = 0.01;
  for (int64_t i = 0; i < n; ++i) {
    u[3 * i] = m.boundary[i] ? 0.0 : sin(m.coords[3 * i + 1] * 3.0);
    p[i] = m.coords[3 * i] * m.coords[3 * i + 1];
  }
  int err = ef_fs_prepare(fs, dt, u, p);
  if (!err) err = ef_fs_assemble_pressure(fs, dt, u, p, p, NULL);
  EXPECT(!err, "assemble: %s", ef_error_message());
  const ef_csr *H = ef_fs_pressure_matrix(fs);
  EXPECT(H->nnz == ed.n_edges + n && H->row_ptr32 && !H->constant_null_space, "H shape");
  for (int64_t i = 0; i < n && !err; ++i) {
    EXPECT(H->row_ptr32[i] == H->row_ptr[i], "int32 offsets");
    EXPECT(H->col[H->diag[i]] == i, "diagonal position of row %lld", (long long)i);
    for (int64_t k = H->row_ptr[i]; k < H->row_ptr[i + 1]; ++k) {
      if (k > H->row_ptr[i]) EXPECT(H->col[k - 1] < H->col[k], "row %lld not sorted", (long long)i);
      const int64_t j = H->col[k];
      double hji = NAN;
      for (int64_t q = H->row_ptr[j]; q < H->row_ptr[j + 1]; ++q)
        if (H->col[q] == i) hji = H->val[q];
      EXPECT(H->val[k] == hji, "H not symmetric at %lld-%lld: %g vs %g", (long long)i, (long long)j, H->val[k], hji);
      if (pfix[i]) EXPECT(H->val[k] == (j == i ? 1.0 : 0.0), "fixed row %lld is not identity", (long long)i);
    }
    if (pfix[i]) EXPECT(ef_fs_pressure_rhs(fs)[i] == p[i], "fixed rhs");
  }

  /* 4. Divergence: NaN and bound. */
  double *u2 = malloc(3 * (size_t)n * sizeof(double)), *p2 = malloc((size_t)n * sizeof(double));
  memcpy(u2, u, 3 * (size_t)n * sizeof(double));
  memcpy(p2, p, (size_t)n * sizeof(double));
  const int64_t victim = n / 2 + 3;
  u2[3 * victim] = NAN;
  ef_fs_dt_settings dcfl = {0, 0.0, 0.5, 1e-9, 1.0, 0.0};
  double dtx = 0.0;
  err = ef_fs_compute_dt(fs, u2, &dcfl, &dtx, NULL, NULL);
  EXPECT(err == EF_ERR_DIVERGED && strstr(ef_error_message(), "not finite"), "dt with NaN: %d %s", err,
         ef_error_message());
  err = ef_fs_step(fs, 0.0, dt, u2, p2, NULL, NULL);
  EXPECT(err == EF_ERR_DIVERGED && strstr(ef_error_message(), "node"), "NaN: %d %s", err, ef_error_message());
  EXPECT(isnan(u2[3 * victim]) && memcmp(p2, p, (size_t)n * sizeof(double)) == 0, "arrays changed on failure");
  u2[3 * victim] = 50.0;
  s.velocity_bound = 10.0;
  ef_fs_set_settings(fs, &s);
  err = ef_fs_step(fs, 0.0, 1e-5, u2, p2, NULL, NULL);
  EXPECT(err == EF_ERR_DIVERGED && strstr(ef_error_message(), "bound"), "bound: %d %s", err, ef_error_message());
  EXPECT(u2[3 * victim] == 50.0, "velocity changed on failure");
  free(u2);
  free(p2);

  /* 5. Physical pressure from eval_fixed scaled to kinematic. */
  uint8_t *pf1 = calloc((size_t)n, 1);
  pf1[0] = 1;
  s.velocity_bound = 1e6;
  s.pressure_fixed = pf1;
  s.eval_fixed = pressure_bc;
  s.fixed_pressure_scale = 1.0 / 1000.0;
  pressure_value = 2500.0;
  ef_fs_set_settings(fs, &s);
  double *uh = malloc(3 * (size_t)n * sizeof(double)), *pnew = malloc((size_t)n * sizeof(double));
  err = ef_fs_momentum(fs, 0.0, dt, u, p, uh, pnew, NULL);
  EXPECT(!err && pnew[0] == 2.5 && pnew[1] == p[1], "scaled fixed pressure %g", pnew[0]);
  free(uh);
  free(pnew);
  free(pf1);

  /* 6. Hydrostatics: closed box, no fixed pressure.  (i) From rest: whatever the transient,
   * the reactions carry the weight once du/dt has decayed (checked after 200 steps at 1e-6
   * relative).  (ii) From the hydrostatic state p = b.x: it is an exact discrete steady state
   * (M b + P(p) = 0 at interior nodes) when tau is uniform, so with nu = 0 (tau = dt/c1
   * everywhere) u stays below 1e-10 and p moves by less than 1e-8 relative (CG tolerance
   * 1e-12) over 20 steps; the reactions equal |Omega| b to 1e-9.  (With nu > 0, tau varies
   * with h_I, the edge-averaged tau_IJ terms no longer cancel on a linear pressure, test (b)
   * of test_fs_signs, and a small steady spurious current appears: ~6e-4 here.) */
  s.pressure_fixed = NULL;
  s.eval_fixed = NULL;
  s.fixed_pressure_scale = 1.0;
  s.pressure_rtol = 1e-12;
  ef_fs_set_settings(fs, &s);
  const double area = 1.0, bn = hypot(bvec[0], bvec[1]);
  for (int phase = 0; phase < 2; ++phase) {
    memset(u, 0, 3 * (size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; ++i)
      p[i] = phase == 0 ? 0.0 : 3.0 + bvec[0] * m.coords[3 * i] + bvec[1] * m.coords[3 * i + 1];
    s.nu = phase == 0 ? 0.05 : 0.0;
    ef_fs_set_settings(fs, &s);
    ef_fs_dt_settings dts = {0, 0.0, 0.8, 1e-6, 0.01, 0.0};
    double t = 0.0;
    const int steps = phase == 0 ? 200 : 20;
    for (int k = 0; k < steps && !err; ++k) {
      double h;
      err = ef_fs_compute_dt(fs, u, &dts, &h, NULL, NULL);
      if (!err) err = ef_fs_step(fs, t, h, u, p, reaction, NULL);
      t += h;
    }
    EXPECT(!err, "hydrostatic run: %s", ef_error_message());
    double fx = 0.0, fy = 0.0, umax = 0.0, perr = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      fx += reaction[3 * i];
      fy += reaction[3 * i + 1];
      umax = fmax(umax, fabs(u[3 * i]) + fabs(u[3 * i + 1]));
      const double ex = bvec[0] * (m.coords[3 * i] - m.coords[0]) + bvec[1] * (m.coords[3 * i + 1] - m.coords[1]);
      perr = fmax(perr, fabs(p[i] - p[0] - ex));
    }
    const double tol = phase == 0 ? 1e-6 : 1e-9;
    EXPECT(fabs(fx - area * bvec[0]) <= tol * bn && fabs(fy - area * bvec[1]) <= tol * bn,
           "phase %d: sum of reactions (%.12g, %.12g), |Omega| b = (%g, %g); max |u| %g", phase, fx, fy,
           area * bvec[0], area * bvec[1], umax);
    if (phase == 1) {
      EXPECT(umax < 1e-10, "hydrostatic state moved: max |u| %g", umax);
      EXPECT(perr < 1e-8 * bn, "hydrostatic pressure changed by %g", perr);
    }
    if (getenv("EF_TEST_VERBOSE"))
      printf("hydrostatic %d: t %.3f  sum reaction (%.12f, %.12f)  max|u| %.3e  p err %.3e\n", phase, t, fx, fy,
             umax, perr);
  }

  ef_fs_destroy(&fs);
  ef_fs_destroy(&fs);
  ef_fs_destroy(NULL);
  ef_edge_data_free(&ed);
  ef_test_mesh_free(&m);
  free(u);
  free(p);
  free(reaction);
  free(body);
  free(vfix);
  free(pfix);
}

/* Solver and executor checks. */
int main(void) {
  test_cg();
  test_executor();
  return failures ? 1 : 0;
}
